package toolcall

import "strings"

const (
	thinkOpen  = "<think>"
	thinkClose = "</think>"
)

// Reasoning splits Qwen3's output into reasoning and content. With
// thinking on (the template's default) everything before </think> is
// reasoning — the template may put <think> in the prompt, and a <think>
// the model writes itself is dropped — and an output that never closes
// its thinking is all reasoning. With enable_thinking false the template
// has closed the thinking in the prompt and everything is content.
type Reasoning struct {
	thinking bool

	text    strings.Builder
	closed  bool // </think> seen
	sent    int  // bytes of text accounted for
	started bool // past any leading <think>
}

// NewReasoning returns a parser; thinking is chat_template_kwargs'
// enable_thinking (true when the request leaves it out).
func NewReasoning(thinking bool) *Reasoning { return &Reasoning{thinking: thinking} }

// ReasoningDelta is what one Feed or Finish lets through.
type ReasoningDelta struct {
	Reasoning, Content string
}

// Feed takes the next piece of the model's text.
func (r *Reasoning) Feed(text string) ReasoningDelta {
	r.text.WriteString(text)
	return r.step(false)
}

// Finish flushes text held back in case it began a tag.
func (r *Reasoning) Finish() ReasoningDelta { return r.step(true) }

func (r *Reasoning) step(final bool) ReasoningDelta {
	s := r.text.String()
	var d ReasoningDelta
	if !r.thinking || r.closed {
		d.Content = s[r.sent:]
		r.sent = len(s)
		return d
	}
	if !r.started {
		rest := s[r.sent:]
		trimmed := strings.TrimLeft(rest, " \t\r\n")
		switch {
		case strings.HasPrefix(trimmed, thinkOpen):
			r.sent += len(rest) - len(trimmed) + len(thinkOpen)
			r.started = true
		case strings.HasPrefix(thinkOpen, trimmed) && !final:
			return d // might still be <think>
		default:
			r.started = true
		}
	}
	rest := s[r.sent:]
	if i := strings.Index(rest, thinkClose); i >= 0 {
		d.Reasoning = rest[:i]
		d.Content = rest[i+len(thinkClose):]
		r.closed = true
		r.sent = len(s)
		return d
	}
	keep := 0
	if !final {
		keep = partialSuffix(rest, thinkClose)
	}
	d.Reasoning = rest[:len(rest)-keep]
	r.sent += len(d.Reasoning)
	return d
}

// SplitReasoning is the non-streaming answer: reasoning and content, each
// nil when the reference server reports it as null (absent or empty
// content, no reasoning).
func SplitReasoning(text string, thinking bool) (reasoning, content *string) {
	r := NewReasoning(thinking)
	a, b := r.Feed(text), r.Finish()
	rs, cs := a.Reasoning+b.Reasoning, a.Content+b.Content
	if thinking {
		reasoning = &rs
	}
	if cs != "" || !thinking {
		content = &cs
	}
	return reasoning, content
}
