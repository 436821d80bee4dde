package toolcall

import (
	"encoding/json"
	"strings"
)

const pythonTag = "<|python_tag|>"

// Llama3 parses Llama 3's JSON tool calls: output that starts with
// <|python_tag|> or "{" is a list of {"name", "parameters" or "arguments"}
// objects separated by ";". Any other output is content, streamed as it
// comes.
type Llama3 struct {
	NewID func() string // NewCallID when nil

	text        strings.Builder
	mode        int // 0 undecided, 1 content, 2 calls
	contentSent int
	calls       []callState
}

// NewLlama3 returns a Llama 3 parser that makes ids with newID (NewCallID
// when nil).
func NewLlama3(newID func() string) *Llama3 { return &Llama3{NewID: newID} }

// Feed takes the next piece of the model's text.
func (l *Llama3) Feed(text string) Delta {
	l.text.WriteString(text)
	return l.step(false)
}

// Finish sends what the end of the text decides.
func (l *Llama3) Finish() Delta { return l.step(true) }

func (l *Llama3) step(final bool) Delta {
	if l.NewID == nil {
		l.NewID = NewCallID
	}
	s := l.text.String()
	if l.mode == 0 {
		switch {
		case strings.HasPrefix(s, pythonTag) || strings.HasPrefix(s, "{"):
			l.mode = 2
		case len(s) > 0 && !strings.HasPrefix(pythonTag, s) || final:
			l.mode = 1
		default:
			return Delta{} // still a prefix of <|python_tag|>
		}
	}
	var d Delta
	if l.mode == 1 {
		d.Content = s[l.contentSent:]
		l.contentSent = len(s)
		return d
	}
	for i, obj := range llamaObjects(strings.TrimPrefix(s, pythonTag)) {
		if i >= len(l.calls) {
			l.calls = append(l.calls, callState{})
		}
		if !streamCall(i, obj, &l.calls[i], []string{"parameters", "arguments"}, l.NewID, &d.ToolCalls) {
			break
		}
	}
	return d
}

// llamaObjects splits the text of the calls into the text of each object,
// the last possibly unfinished.
func llamaObjects(s string) []string {
	var out []string
	for {
		i := skipSpace(s, 0)
		if i >= len(s) {
			return out
		}
		_, end, ok := scanObject(s[i:])
		if !ok {
			return out
		}
		if end < 0 {
			return append(out, s[i:])
		}
		out = append(out, s[i:i+end])
		s = s[i+end:]
		j := skipSpace(s, 0)
		if j >= len(s) || s[j] != ';' {
			return out
		}
		s = s[j+1:]
	}
}

// ParseLlama3 is the non-streaming answer for a whole output: the calls,
// with content null, or the whole output as content when it holds no
// valid call.
func ParseLlama3(text string, newID func() string) Result {
	calls, content := collect(NewLlama3(newID), text)
	if content != "" || len(calls) == 0 || !validCalls(calls) {
		return Result{Content: &text}
	}
	for _, obj := range llamaObjects(strings.TrimPrefix(text, pythonTag)) {
		if !json.Valid([]byte(obj)) {
			return Result{Content: &text}
		}
	}
	return Result{ToolCalls: calls}
}
