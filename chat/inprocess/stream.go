package inprocess

import (
	"context"
	"encoding/json"
	"errors"
	"io"

	"github.com/weftlabs/weft/chat"
	"github.com/weftlabs/weft/internal/llm/engine"
)

// The streamed answer of a local model: vLLM's chunk sequence, pushed into
// the relay's sink frame by frame as the engine generates it. Each chunk is dumped
// as vLLM dumps it with exclude_unset: only the members vLLM sets, explicit
// nulls kept.

type streamDelta struct {
	Role             string              `json:"role,omitempty"`
	Content          *string             `json:"content,omitempty"`
	Reasoning        *string             `json:"reasoning,omitempty"`
	ReasoningContent *string             `json:"reasoning_content,omitempty"`
	ToolCalls        []wireToolCallDelta `json:"tool_calls,omitempty"`
}

type streamChoice struct {
	Index        int             `json:"index"`
	Delta        streamDelta     `json:"delta"`
	Logprobs     *wireLogprobs   `json:"logprobs"`
	FinishReason *string         `json:"finish_reason"`
	StopReason   json.RawMessage `json:"stop_reason,omitempty"`
	TokenIDs     json.RawMessage `json:"token_ids,omitempty"`
}

type streamChunk struct {
	ID             string          `json:"id"`
	Object         string          `json:"object"`
	Created        int64           `json:"created"`
	Model          string          `json:"model"`
	Choices        []streamChoice  `json:"choices"`
	Usage          json.RawMessage `json:"usage,omitempty"`
	PromptTokenIDs json.RawMessage `json:"prompt_token_ids,omitempty"`
	PromptText     json.RawMessage `json:"prompt_text,omitempty"`
}

var jsonNull = json.RawMessage("null")

// streamWriter turns one generation's engine chunks into frames.
type streamWriter struct {
	o         *answerOptions
	prompt    int
	generated []int // tokens per choice so far
	// readers read each choice's text back when the plan parses it
	// (reasoning, tool calls); nil when the text is content as it is.
	readers []*streamReader
	// sink takes the frames.
	sink frameSink
}

func (s *streamWriter) chunk(choices []streamChoice, usage json.RawMessage) streamChunk {
	return streamChunk{ID: s.o.id, Object: "chat.completion.chunk", Created: s.o.created, Model: s.o.model, Choices: choices, Usage: usage}
}

// continuousUsage is the running usage of one choice on every chunk with
// stream_options.continuous_usage_stats.
func (s *streamWriter) continuousUsage(i int) json.RawMessage {
	if !s.o.continuousUsage {
		return nil
	}
	b, _ := json.Marshal(struct {
		PromptTokens            int             `json:"prompt_tokens"`
		TotalTokens             int             `json:"total_tokens"`
		CompletionTokens        int             `json:"completion_tokens"`
		CompletionTokensDetails json.RawMessage `json:"completion_tokens_details"`
	}{s.prompt, s.prompt + s.generated[i], s.generated[i], jsonNull})
	return b
}

func (s *streamWriter) event(v any) { s.sink.send(v) }

// localFrames is the stream of one generation: a role chunk per choice,
// the echoed text, a chunk per engine step and choice, each choice's finish
// chunk and the usage chunk when asked. An engine failure becomes one
// error frame, the last.
type localFrames struct {
	gen    *engine.Generation
	cancel context.CancelFunc
	n      int
	w      streamWriter
	opened bool // the role chunks are out
	ended  bool // the generation has ended: frames left are the last
}

func newLocalFrames(gen *engine.Generation, cancel context.CancelFunc, o *answerOptions, n int) *localFrames {
	f := &localFrames{gen: gen, cancel: cancel, n: n,
		w: streamWriter{o: o, prompt: len(gen.PromptTokens()), generated: make([]int, n)}}
	if o.plan.parsed() {
		f.w.readers = make([]*streamReader, n)
		for i := range f.w.readers {
			f.w.readers[i] = o.plan.newStreamReader()
		}
	}
	return f
}

// Stream sends the frames of each engine chunk as the engine makes it,
// until the generation ends or the client goes away.
func (f *localFrames) Stream(sink chat.FrameSink) error {
	f.w.sink = frameSink{to: sink}
	for !f.ended && f.w.sink.err == nil {
		f.step()
	}
	return f.w.sink.err
}

// step reads one engine chunk and sends its frames.
func (f *localFrames) step() {
	s := &f.w
	c, err := f.gen.Next()
	if err == nil {
		if !f.opened {
			s.opening(f.n)
			f.opened = true
		}
		s.step(c)
		return
	}
	f.ended = true
	if !errors.Is(err, io.EOF) {
		// As vLLM: an engine failure before any output is the first
		// event, with no role chunk.
		s.event(failureFrame(err))
	}
	if f.opened && s.o.includeUsage {
		// vLLM writes this chunk with exclude_none.
		u := s.o.usage(f.gen.Usage())
		b, _ := json.Marshal(struct {
			PromptTokens        int               `json:"prompt_tokens"`
			TotalTokens         int               `json:"total_tokens"`
			CompletionTokens    int               `json:"completion_tokens"`
			PromptTokensDetails *wireCachedTokens `json:"prompt_tokens_details,omitempty"`
		}{u.PromptTokens, u.TotalTokens, u.CompletionTokens, u.PromptTokensDetails})
		s.event(s.chunk([]streamChoice{}, b))
	}
}

// frameSink sends a stream's chunks to the relay's sink; err is the
// sink's first error (the client went away), after which nothing is sent.
type frameSink struct {
	to  chat.FrameSink
	err error
}

func (s *frameSink) send(chunk any) {
	if s.err != nil {
		return
	}
	b, _ := json.Marshal(chunk)
	s.err = s.to(b)
}

// failureFrame is the frame of an engine failure mid-stream, as vLLM
// streams one.
func failureFrame(err error) any {
	return map[string]any{"error": map[string]any{"message": err.Error(), "type": "InternalServerError", "param": nil, "code": 500}}
}

// Close ends the generation (the client went away) and frees it.
func (f *localFrames) Close() error {
	f.cancel()
	f.gen.Close()
	return nil
}

// opening writes the role chunk of every choice and the echoed text.
func (s *streamWriter) opening(n int) {
	empty := ""
	for i := range n {
		c := s.chunk([]streamChoice{{Index: i, Delta: streamDelta{Role: s.o.role, Content: &empty}}}, s.continuousUsage(i))
		c.PromptTokenIDs, c.PromptText = jsonNull, jsonNull
		if s.o.tokenIDs {
			c.PromptTokenIDs, _ = json.Marshal(nonNil(s.o.promptIDs))
		}
		s.event(c)
	}
	if s.o.echo == "" {
		return
	}
	for i := range n {
		echo := s.o.echo
		s.event(s.chunk([]streamChoice{{Index: i, Delta: streamDelta{Content: &echo}}}, s.continuousUsage(i)))
	}
}

// step writes one engine chunk: its text, token ids and logprobs, and the
// finish reason on a choice's last one. An empty step before any token
// (nothing to say yet) is skipped, as vLLM skips it.
func (s *streamWriter) step(c engine.Chunk) {
	if c.Index < 0 || c.Index >= len(s.generated) {
		return
	}
	if c.Text == "" && len(c.TokenIDs) == 0 && s.generated[c.Index] == 0 && c.FinishReason == "" {
		return
	}
	s.generated[c.Index] += len(c.TokenIDs)
	text := c.Text
	choice := streamChoice{Index: c.Index, Delta: streamDelta{Content: &text}, TokenIDs: jsonNull}
	reason := finishReason(c.FinishReason)
	if s.readers != nil {
		r := s.readers[c.Index]
		d := r.feed(c.Text, c.FinishReason != "")
		if d.empty() && c.FinishReason == "" && !s.o.logprobs && !s.o.tokenIDs {
			return // nothing to say yet (text held back in case it begins a tag)
		}
		choice.Delta = streamDelta{ToolCalls: d.calls}
		if d.reasoning != "" {
			choice.Delta.Reasoning, choice.Delta.ReasoningContent = &d.reasoning, &d.reasoning
		}
		if d.content != "" || d.empty() {
			choice.Delta.Content = &d.content
		}
		reason = s.o.plan.finishReason(c.FinishReason, r.called)
	}
	if s.o.logprobs {
		choice.Logprobs = s.o.logprobsOf(c.Logprobs)
	}
	if s.o.tokenIDs {
		choice.TokenIDs, _ = json.Marshal(nonNil(c.TokenIDs))
	}
	if c.FinishReason != "" {
		choice.FinishReason = &reason
		choice.StopReason, _ = json.Marshal(c.StopReason)
	}
	s.event(s.chunk([]streamChoice{choice}, s.continuousUsage(c.Index)))
}
