package chattemplate

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/weftlabs/weft/internal/llm/chattemplate/jinja"
)

// Message is one chat message as a request gives it.
type Message struct {
	Role string
	// Content is the message text; Parts, when not nil, replace it (content
	// given as a list of parts). NullContent marks content that was null.
	Content     string
	Parts       []ContentPart
	NullContent bool
	// ToolCalls of an assistant message; their arguments are JSON text.
	ToolCalls []ToolCall
	// ToolCallID of a tool message; empty means absent.
	ToolCallID string
	// Name of the message's author; empty means absent.
	Name string
	// Reasoning of an earlier assistant turn; the template sees it as both
	// reasoning and reasoning_content. Nil means absent.
	Reasoning *string
}

// ContentPart is one part of a message's content. Parts of another type
// than "text" reach templates that walk parts as {"type": Type}.
type ContentPart struct {
	Type string
	Text string
}

// ToolCall is a function call an assistant message made.
type ToolCall struct {
	ID        string
	Type      string // "function" when empty
	Name      string
	Arguments string // JSON text; anything else reaches the template as {}
}

// ContentFormat is how message content reaches the template.
type ContentFormat string

const (
	// ContentFormatAuto picks ContentFormatOpenAI for templates that loop over
	// a message's content and ContentFormatString for the others.
	ContentFormatAuto ContentFormat = ""
	// ContentFormatString: content is a string; text parts are joined with
	// "\n" and null content is "".
	ContentFormatString ContentFormat = "string"
	// ContentFormatOpenAI: content is a list of parts; a string becomes one
	// text part and null content an empty list.
	ContentFormatOpenAI ContentFormat = "openai"
)

// Input is everything a render takes besides the template.
type Input struct {
	Messages []Message
	// Tools and Documents are JSON objects, passed in order; nil leaves the
	// template's tools / documents variable None.
	Tools     []json.RawMessage
	Documents []json.RawMessage
	// AddGenerationPrompt and ContinueFinalMessage are exclusive.
	AddGenerationPrompt  bool
	ContinueFinalMessage bool
	// Kwargs are extra template variables (a request's
	// chat_template_kwargs, e.g. enable_thinking). Values are JSON-like Go
	// values or json.RawMessage. They override special tokens and, as in
	// vLLM, add_generation_prompt, continue_final_message and documents;
	// chat_template and tokenize are refused.
	Kwargs map[string]any
	// Special overrides special-token variables from the tokenizer config.
	Special map[string]string
	// ChatTemplate, when not empty, names one of the model's templates or
	// is a template to use instead of the model's.
	ChatTemplate  string
	ContentFormat ContentFormat
	// Now is the clock of strftime_now (default time.Now).
	Now func() time.Time
}

// Render renders the conversation into the prompt text. Every error is
// the request's or the template's: ErrNoTemplate, ErrInvalidInput, a
// template's *RaiseError, or a *jinja.SyntaxError / *jinja.RenderError
// (with jinja.ErrLimit for a render that went over its limits).
func (t *Template) Render(in Input) (string, error) {
	kwargs, documents, err := in.applyKwargs()
	if err != nil {
		return "", err
	}
	if in.AddGenerationPrompt && in.ContinueFinalMessage {
		return "", fmt.Errorf("%w: continue_final_message and add_generation_prompt are not compatible; use continue_final_message when you want the model to continue the final message, and add_generation_prompt when you want to add a header that will prompt it to start a new assistant message instead", ErrInvalidInput)
	}
	tpl, err := t.choose(in.ChatTemplate, in.Tools != nil)
	if err != nil {
		return "", err
	}
	format := in.ContentFormat
	if format == ContentFormatAuto {
		format = DetectContentFormat(tpl)
	}
	vars := make(map[string]jinja.Value, len(t.special)+len(in.Kwargs)+4)
	for k, v := range t.special {
		vars[k] = v
	}
	for k, v := range in.Special {
		vars[k] = v
	}
	for k, v := range kwargs {
		vars[k] = v
	}
	messages := make([]jinja.Value, len(in.Messages))
	for i, m := range in.Messages {
		messages[i] = messageValue(m, format)
	}
	vars["messages"] = jinja.NewList(messages...)
	if vars["tools"], err = jsonList(in.Tools, "tools"); err != nil {
		return "", err
	}
	if documents != nil {
		vars["documents"] = documents
	} else if vars["documents"], err = jsonList(in.Documents, "documents"); err != nil {
		return "", err
	}
	vars["add_generation_prompt"] = in.AddGenerationPrompt
	out, err := tpl.Execute(vars, jinja.Options{Limits: t.config.Limits, Now: in.Now})
	if err != nil {
		return "", fmt.Errorf("chattemplate: %w", err)
	}
	if in.ContinueFinalMessage && len(messages) > 0 {
		last, _ := messages[len(messages)-1].(*jinja.Dict).Get("content")
		return continueFinal(out, last)
	}
	return out, nil
}

// applyKwargs converts the kwargs to template values and lets those that
// vLLM passes on as apply_chat_template's own parameters override the
// input's. It returns the kwargs' documents when they give some.
func (in *Input) applyKwargs() (map[string]jinja.Value, jinja.Value, error) {
	vars := make(map[string]jinja.Value, len(in.Kwargs))
	var documents jinja.Value
	for k, v := range in.Kwargs {
		val, err := goValue(v)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: chat_template_kwargs %s: %v", ErrInvalidInput, k, err)
		}
		switch k {
		case "chat_template", "tokenize":
			return nil, nil, fmt.Errorf("%w: unexpected chat template kwarg %q", ErrInvalidInput, k)
		case "add_generation_prompt", "continue_final_message":
			b, ok := val.(bool)
			if !ok {
				return nil, nil, fmt.Errorf("%w: chat_template_kwargs %s must be a boolean", ErrInvalidInput, k)
			}
			if k == "add_generation_prompt" {
				in.AddGenerationPrompt = b
			} else {
				in.ContinueFinalMessage = b
			}
			continue
		case "documents":
			documents = val
			continue
		}
		vars[k] = val
	}
	return vars, documents, nil
}

// DetectContentFormat tells which content format a template expects: openai
// when it loops over messages' content, string otherwise.
func DetectContentFormat(tpl *jinja.Template) ContentFormat {
	if tpl.LoopsOverField("messages", "content") {
		return ContentFormatOpenAI
	}
	return ContentFormatString
}

func jsonList(raw []json.RawMessage, what string) (jinja.Value, error) {
	if raw == nil {
		return nil, nil
	}
	items := make([]jinja.Value, len(raw))
	for i, r := range raw {
		v, err := jinja.FromJSON(r)
		if err != nil {
			return nil, fmt.Errorf("%w: %s[%d]: %v", ErrInvalidInput, what, i, err)
		}
		if _, ok := v.(*jinja.Dict); !ok {
			return nil, fmt.Errorf("%w: %s[%d] must be an object", ErrInvalidInput, what, i)
		}
		items[i] = v
	}
	return jinja.NewList(items...), nil
}

// messageValue builds the message as vLLM hands it to templates: role and
// content; for an assistant, tool_calls (when there are any, arguments
// parsed from their JSON text, {} when that is not JSON) and reasoning /
// reasoning_content; for a tool, tool_call_id; name when given.
func messageValue(m Message, format ContentFormat) jinja.Value {
	d := jinja.NewDict()
	d.Set("role", m.Role)
	content := contentValue(m, format)
	if m.Role == "tool" {
		// vLLM gives tool results as text whatever the format, unless they
		// hold parts other than text.
		content = contentValue(m, toolContentFormat(m, format))
	}
	d.Set("content", content)
	switch m.Role {
	case "assistant":
		if len(m.ToolCalls) > 0 {
			calls := make([]jinja.Value, len(m.ToolCalls))
			for i, tc := range m.ToolCalls {
				calls[i] = toolCallValue(tc)
			}
			d.Set("tool_calls", jinja.NewList(calls...))
		}
		if m.Reasoning != nil {
			d.Set("reasoning", *m.Reasoning)
			d.Set("reasoning_content", *m.Reasoning)
		}
	case "tool":
		if m.ToolCallID != "" {
			d.Set("tool_call_id", m.ToolCallID)
		}
	}
	if m.Name != "" {
		d.Set("name", m.Name)
	}
	return d
}

func toolContentFormat(m Message, format ContentFormat) ContentFormat {
	for _, p := range m.Parts {
		if p.Type != "" && p.Type != "text" {
			return format
		}
	}
	return ContentFormatString
}

func toolCallValue(tc ToolCall) jinja.Value {
	// Arguments that are not JSON become {}, as vLLM does.
	args, err := jinja.FromJSON([]byte(tc.Arguments))
	if err != nil {
		args = jinja.NewDict()
	}
	fn := jinja.NewDict()
	fn.Set("name", tc.Name)
	fn.Set("arguments", args)
	call := jinja.NewDict()
	if tc.ID != "" {
		call.Set("id", tc.ID)
	}
	typ := tc.Type
	if typ == "" {
		typ = "function"
	}
	call.Set("type", typ)
	call.Set("function", fn)
	return call
}

func contentValue(m Message, format ContentFormat) jinja.Value {
	if format == ContentFormatOpenAI {
		switch {
		case m.Parts != nil:
			parts := make([]jinja.Value, len(m.Parts))
			for i, p := range m.Parts {
				part := jinja.NewDict()
				typ := p.Type
				if typ == "" {
					typ = "text"
				}
				part.Set("type", typ)
				if typ == "text" {
					part.Set("text", p.Text)
				}
				parts[i] = part
			}
			return jinja.NewList(parts...)
		case m.NullContent:
			return jinja.NewList()
		}
		part := jinja.NewDict()
		part.Set("type", "text")
		part.Set("text", m.Content)
		return jinja.NewList(part)
	}
	if m.Parts != nil {
		var texts []string
		for _, p := range m.Parts {
			if p.Type == "" || p.Type == "text" {
				texts = append(texts, p.Text)
			}
		}
		return strings.Join(texts, "\n")
	}
	return m.Content
}

// goValue converts a JSON-like Go value (what encoding/json decodes into
// any, or json.RawMessage) to a template value. Map keys are sorted, having
// no order of their own.
func goValue(v any) (jinja.Value, error) {
	switch x := v.(type) {
	case nil, bool, string, int64, float64:
		return x, nil
	case int:
		return int64(x), nil
	case json.Number:
		return jinja.FromJSON([]byte(x))
	case json.RawMessage:
		return jinja.FromJSON(x)
	case []any:
		items := make([]jinja.Value, len(x))
		for i, it := range x {
			val, err := goValue(it)
			if err != nil {
				return nil, err
			}
			items[i] = val
		}
		return jinja.NewList(items...), nil
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		d := jinja.NewDict()
		for _, k := range keys {
			val, err := goValue(x[k])
			if err != nil {
				return nil, err
			}
			d.Set(k, val)
		}
		return d, nil
	}
	return nil, fmt.Errorf("unsupported value of type %T", v)
}

// continueFinal cuts the rendered prompt right after the final message's
// text, so the model continues that message instead of starting a new one:
// transformers' algorithm, which keeps the message's trailing whitespace
// only where the template kept it.
func continueFinal(rendered string, content jinja.Value) (string, error) {
	final, ok := content.(string)
	if list, isList := content.(*jinja.List); isList {
		ok = false
		for i := len(list.Items) - 1; i >= 0; i-- {
			part, isDict := list.Items[i].(*jinja.Dict)
			if !isDict {
				continue
			}
			if text, has := part.Get("text"); has {
				final, ok = text.(string)
				break
			}
		}
	}
	if !ok {
		return "", fmt.Errorf("%w: continue_final_message is set but there is no text to continue in the final message", ErrInvalidInput)
	}
	stripped := strings.TrimFunc(final, jinja.IsSpace)
	loc := strings.LastIndex(rendered, stripped)
	if loc < 0 {
		return "", fmt.Errorf("%w: continue_final_message is set but the final message does not appear in the chat after applying the chat template", ErrInvalidInput)
	}
	leftTrimmed := strings.TrimLeftFunc(final, jinja.IsSpace)
	if end := loc + len(leftTrimmed); end <= len(rendered) && rendered[loc:end] == final {
		return rendered[:end], nil
	}
	return rendered[:loc+len(stripped)], nil
}
