package toolcall

import (
	"encoding/json"
	"strings"
)

const (
	hermesOpen  = "<tool_call>"
	hermesClose = "</tool_call>"
)

// Hermes parses <tool_call>{json}</tool_call> blocks (Hermes, Qwen2.5,
// Qwen3). Content is the text before the first block; text after a block
// is not content, as in the reference server.
type Hermes struct {
	NewID func() string // NewCallID when nil

	text        strings.Builder
	contentSent int
	calls       []callState
}

// NewHermes returns a Hermes parser that makes ids with newID (NewCallID
// when nil).
func NewHermes(newID func() string) *Hermes { return &Hermes{NewID: newID} }

// Feed takes the next piece of the model's text.
func (h *Hermes) Feed(text string) Delta {
	h.text.WriteString(text)
	return h.step(false)
}

// Finish sends what the end of the text decides: held-back content that
// turned out not to start a block.
func (h *Hermes) Finish() Delta { return h.step(true) }

func (h *Hermes) step(final bool) Delta {
	if h.NewID == nil {
		h.NewID = NewCallID
	}
	s := h.text.String()
	var d Delta
	first := strings.Index(s, hermesOpen)
	sendable := first
	if first < 0 {
		sendable = len(s)
		if !final {
			sendable -= partialSuffix(s, hermesOpen)
		}
	}
	if sendable > h.contentSent {
		d.Content = s[h.contentSent:sendable]
		h.contentSent = sendable
	}
	for i, body := range hermesBodies(s) {
		if i >= len(h.calls) {
			h.calls = append(h.calls, callState{})
		}
		if !streamCall(i, body, &h.calls[i], []string{"arguments"}, h.NewID, &d.ToolCalls) {
			break
		}
	}
	return d
}

// hermesBodies are the texts inside each block, the last possibly open
// (less any partial closing tag).
func hermesBodies(s string) []string {
	var out []string
	for {
		start := strings.Index(s, hermesOpen)
		if start < 0 {
			return out
		}
		s = s[start+len(hermesOpen):]
		end := strings.Index(s, hermesClose)
		if end < 0 {
			out = append(out, strings.TrimLeft(s[:len(s)-partialSuffix(s, hermesClose)], " \t\r\n"))
			return out
		}
		out = append(out, strings.TrimLeft(s[:end], " \t\r\n"))
		s = s[end+len(hermesClose):]
	}
}

// ParseHermes is the non-streaming answer for a whole output. When a block
// holds no valid call (its JSON does not parse, or it has no name), the
// whole output is content and there are no calls, as in the reference
// server.
func ParseHermes(text string, newID func() string) Result {
	if !strings.Contains(text, hermesOpen) {
		return Result{Content: &text}
	}
	calls, content := collect(NewHermes(newID), text)
	bodies := hermesBodies(text)
	if len(calls) != len(bodies) || !validCalls(calls) {
		return Result{Content: &text}
	}
	for _, b := range bodies {
		if !json.Valid([]byte(strings.TrimSpace(b))) {
			return Result{Content: &text}
		}
	}
	r := Result{ToolCalls: calls}
	if content != "" {
		r.Content = &content
	}
	return r
}

func validCalls(calls []Call) bool {
	for _, c := range calls {
		if c.Name == "" || !json.Valid([]byte(c.Arguments)) {
			return false
		}
	}
	return true
}

func jsonUnmarshalString(raw string, s *string) error { return json.Unmarshal([]byte(raw), s) }
