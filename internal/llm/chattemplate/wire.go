package chattemplate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// WireMessage is one chat message in the OpenAI request form, as a chat
// completion request or a stored conversation carries it.
type WireMessage struct {
	Role             string          `json:"role"`
	Content          json.RawMessage `json:"content"`
	Name             *string         `json:"name"`
	ToolCallID       *string         `json:"tool_call_id"`
	Reasoning        *string         `json:"reasoning"`
	ReasoningContent *string         `json:"reasoning_content"`
	ToolCalls        []struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
}

// ContentError is content a template cannot be given: Part is the index of
// the offending content part, or -1 when the content is neither a string nor
// a list (List reports a list that does not parse).
type ContentError struct {
	Part int
	List bool
	Err  error
}

func (e *ContentError) Error() string {
	if e.Part >= 0 {
		return fmt.Sprintf("content part %d: %v", e.Part, e.Err)
	}
	return "content: " + e.Err.Error()
}

func (e *ContentError) Unwrap() error { return e.Err }

// Message reads the wire message as the template sees it. Content that is
// not text (images, audio, ...) is refused: local models read text only.
func (w *WireMessage) Message() (Message, error) {
	msg := Message{Role: w.Role}
	switch {
	case len(w.Content) == 0 || bytes.Equal(w.Content, []byte("null")):
		msg.NullContent = true
	case w.Content[0] == '"':
		_ = json.Unmarshal(w.Content, &msg.Content)
	case w.Content[0] == '[':
		var parts []json.RawMessage
		if err := json.Unmarshal(w.Content, &parts); err != nil {
			return msg, &ContentError{Part: -1, List: true, Err: errors.New("not a valid list")}
		}
		msg.Parts = make([]ContentPart, 0, len(parts))
		for j, raw := range parts {
			part, err := textPart(raw)
			if err != nil {
				return msg, &ContentError{Part: j, Err: err}
			}
			msg.Parts = append(msg.Parts, part)
		}
	default:
		return msg, &ContentError{Part: -1, Err: errors.New("not a string or a list of content parts")}
	}
	if w.Name != nil {
		msg.Name = *w.Name
	}
	if w.ToolCallID != nil {
		msg.ToolCallID = *w.ToolCallID
	}
	msg.Reasoning = w.Reasoning
	if msg.Reasoning == nil {
		msg.Reasoning = w.ReasoningContent
	}
	for _, tc := range w.ToolCalls {
		msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: tc.ID, Type: tc.Type, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
	}
	return msg, nil
}

// textPart reads a content part: {"type": "text", "text": ...}, a refusal,
// or a bare string.
func textPart(raw json.RawMessage) (ContentPart, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return ContentPart{Type: "text", Text: s}, nil
	}
	var p struct {
		Type    string  `json:"type"`
		Text    *string `json:"text"`
		Refusal *string `json:"refusal"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return ContentPart{}, errors.New("a content part must be a string or an object")
	}
	switch {
	case (p.Type == "text" || p.Type == "") && p.Text != nil:
		return ContentPart{Type: "text", Text: *p.Text}, nil
	case p.Type == "refusal" && p.Refusal != nil:
		return ContentPart{Type: "text", Text: *p.Refusal}, nil
	}
	kind := p.Type
	if kind == "" {
		kind = "untyped"
	}
	return ContentPart{}, fmt.Errorf("content of type %q is not supported: local models read text only", kind)
}

// ToolError is a tool that is not {"type": "function", "function": {"name",
// ...}}; Index is its position in the list.
type ToolError struct{ Index int }

func (e *ToolError) Error() string {
	return fmt.Sprintf("tool %d: a tool is {\"type\": \"function\", \"function\": {\"name\", ...}}", e.Index)
}

// WireTools dumps request tools as templates get them (as vLLM hands them
// over): {"type": "function", "function": {"name", "description",
// "parameters"}}, absent members as null, in that order. nil stays nil.
func WireTools(tools []json.RawMessage) ([]json.RawMessage, error) {
	if tools == nil {
		return nil, nil
	}
	out := make([]json.RawMessage, len(tools))
	for i, raw := range tools {
		var t struct {
			Type     string `json:"type"`
			Function *struct {
				Name        *string         `json:"name"`
				Description json.RawMessage `json:"description"`
				Parameters  json.RawMessage `json:"parameters"`
			} `json:"function"`
		}
		if err := json.Unmarshal(raw, &t); err != nil || t.Function == nil || t.Function.Name == nil {
			return nil, &ToolError{Index: i}
		}
		if t.Type == "" {
			t.Type = "function"
		}
		orNull := func(v json.RawMessage) json.RawMessage {
			if len(v) == 0 {
				return json.RawMessage("null")
			}
			return v
		}
		var b bytes.Buffer
		b.WriteString(`{"type":`)
		b.Write(jsonString(t.Type))
		b.WriteString(`,"function":{"name":`)
		b.Write(jsonString(*t.Function.Name))
		b.WriteString(`,"description":`)
		b.Write(orNull(t.Function.Description))
		b.WriteString(`,"parameters":`)
		b.Write(orNull(t.Function.Parameters))
		b.WriteString("}}")
		out[i] = b.Bytes()
	}
	return out, nil
}

func jsonString(s string) []byte {
	b, _ := json.Marshal(s)
	return b
}
