package inprocess

import (
	"github.com/weftlabs/weft/internal/llm/engine"
	"github.com/weftlabs/weft/internal/llm/toolcall"
)

// Reading a local model's text back as vLLM's reasoning and tool parsers
// do: the reasoning of a think block (the prompt's or the model's own) up
// to </think>, the rest content,
// or tool calls in the model's own format (tool_choice auto) or in the
// shape a constraint forced (required, named).

// wireToolCall is one tool call of a whole answer.
type wireToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function wireFunction `json:"function"`
}

type wireFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// wireToolCallDelta is one piece of a streamed tool call: the first of an
// index carries its id, type and name, the later ones fragments of its
// arguments.
type wireToolCallDelta struct {
	Index    int               `json:"index"`
	ID       string            `json:"id,omitempty"`
	Type     string            `json:"type,omitempty"`
	Function wireFunctionDelta `json:"function"`
}

type wireFunctionDelta struct {
	Name      string  `json:"name,omitempty"`
	Arguments *string `json:"arguments,omitempty"`
}

// answerText is a whole choice's message as the parsers read it.
type answerText struct {
	reasoning, content *string
	calls              []wireToolCall
}

// readWhole reads a whole choice's text.
func (p *outputPlan) readWhole(text string) answerText {
	var a answerText
	content := &text
	if p.thinking {
		a.reasoning, content = toolcall.SplitReasoning(text, p.reasoningOpen)
	}
	a.content = content
	if content == nil {
		return p.withoutHiddenReasoning(a)
	}
	var calls []toolcall.Call
	switch p.tools {
	case toolsAuto:
		var r toolcall.Result
		switch p.format {
		case formatHermes:
			r = toolcall.ParseHermes(*content, nil)
		case formatLlama3:
			r = toolcall.ParseLlama3(*content, nil)
		default:
			r = toolcall.Result{Content: content}
		}
		a.content, calls = r.Content, r.ToolCalls
	case toolsRequired:
		// Cut short, the calls as far as written, as a stream sends them.
		calls, a.content = toolcall.ParseRequired(*content, nil).ToolCalls, new(string)
	case toolsNamed:
		calls, a.content = toolcall.ParseNamed(p.named, *content, nil).ToolCalls, new(string)
	}
	if !p.parallel && len(calls) > 1 {
		calls = calls[:1]
	}
	for _, c := range calls {
		a.calls = append(a.calls, wireToolCall{ID: c.ID, Type: "function", Function: wireFunction{Name: c.Name, Arguments: c.Arguments}})
	}
	return p.withoutHiddenReasoning(a)
}

func (p *outputPlan) withoutHiddenReasoning(a answerText) answerText {
	if !p.includeReasoning {
		a.reasoning = nil
	}
	return a
}

// finishReason is vLLM's finish reason for a choice: "tool_calls" when
// calls were read under tool_choice auto or required and the engine
// stopped of its own accord (a named function keeps "stop", as OpenAI
// does).
func (p *outputPlan) finishReason(engineReason engine.FinishReason, called bool) string {
	r := finishReason(engineReason)
	if called && r == "stop" && (p.tools == toolsAuto || p.tools == toolsRequired) {
		return "tool_calls"
	}
	return r
}

// streamReader reads one streamed choice's text piece by piece.
type streamReader struct {
	plan      *outputPlan
	reasoning *toolcall.Reasoning
	tools     toolcall.Parser
	// called: a tool-call delta was sent.
	called bool
}

// streamDeltaText is what a piece of text lets through.
type streamDeltaText struct {
	reasoning, content string
	calls              []wireToolCallDelta
}

func (s streamDeltaText) empty() bool {
	return s.reasoning == "" && s.content == "" && len(s.calls) == 0
}

func (p *outputPlan) newStreamReader() *streamReader {
	r := &streamReader{plan: p}
	if p.thinking {
		r.reasoning = toolcall.NewReasoning(p.reasoningOpen)
	}
	switch p.tools {
	case toolsAuto:
		switch p.format {
		case formatHermes:
			r.tools = toolcall.NewHermes(nil)
		case formatLlama3:
			r.tools = toolcall.NewLlama3(nil)
		}
	case toolsRequired:
		r.tools = toolcall.NewRequired(nil)
	case toolsNamed:
		r.tools = toolcall.NewNamed(p.named, nil)
	}
	return r
}

// feed takes the next piece of text; final flushes what was held back in
// case it began a tag.
func (r *streamReader) feed(text string, final bool) streamDeltaText {
	var out streamDeltaText
	content := text
	if r.reasoning != nil {
		rd := r.reasoning.Feed(text)
		if final {
			end := r.reasoning.Finish()
			rd.Reasoning += end.Reasoning
			rd.Content += end.Content
		}
		content = rd.Content
		if r.plan.includeReasoning {
			out.reasoning = rd.Reasoning
		}
	}
	if r.tools == nil {
		out.content = content
		return out
	}
	d := r.tools.Feed(content)
	if final {
		end := r.tools.Finish()
		d.Content += end.Content
		d.ToolCalls = append(d.ToolCalls, end.ToolCalls...)
	}
	out.content = d.Content
	for _, c := range d.ToolCalls {
		if !r.plan.parallel && c.Index != 0 {
			continue
		}
		r.called = true
		if n := len(out.calls); n > 0 && out.calls[n-1].Index == c.Index && out.calls[n-1].ID == "" && c.Name == "" {
			// One fragment entry per call and chunk (a call's opening
			// entry keeps its empty arguments).
			args := *out.calls[n-1].Function.Arguments + c.Arguments
			out.calls[n-1].Function.Arguments = &args
			continue
		}
		args := c.Arguments
		wc := wireToolCallDelta{Index: c.Index, Function: wireFunctionDelta{Arguments: &args}}
		if c.Name != "" {
			wc.ID, wc.Type, wc.Function.Name = c.ID, "function", c.Name
		}
		out.calls = append(out.calls, wc)
	}
	return out
}
