package toolcall

import "strings"

const (
	thinkOpen  = "<think>"
	thinkClose = "</think>"
)

// Reasoning splits a thinking model's output into reasoning and content.
// Reasoning is the text of a think block: one the prompt left open (a
// generation prompt ending in <think>, as Qwen3-Thinking-2507's and the
// DeepSeek-R1 distills' templates write it) or one the model opens with
// <think>. It ends at </think>, and everything else is content, so a
// model that never thinks answers in content whatever its vocabulary. One
// block is read: text after its </think> is content, tags included.
//
// White space before the model's own <think> at the start of its output
// is dropped, and so is a <think> the model writes at the start of a
// block the prompt left open (the tag is already there).
type Reasoning struct {
	text  strings.Builder
	sent  int  // bytes of text accounted for
	in    bool // inside the block
	after bool // past its </think>
	// seen: a block was open (the reasoning is not null); started: past
	// the start of the output, where a <think> (or the white space before
	// one) is still special.
	seen, started bool
}

// NewReasoning returns a parser; open is whether the prompt left a think
// block open (see PromptLeavesReasoningOpen).
func NewReasoning(open bool) *Reasoning { return &Reasoning{in: open, seen: open} }

// PromptLeavesReasoningOpen reports whether a rendered prompt ends inside a
// think block: its last <think> is not followed by a </think>.
func PromptLeavesReasoningOpen(prompt string) bool {
	open := strings.LastIndex(prompt, thinkOpen)
	return open >= 0 && strings.LastIndex(prompt, thinkClose) < open
}

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
	if !r.started {
		rest := s[r.sent:]
		trimmed := strings.TrimLeft(rest, " \t\r\n")
		switch {
		case strings.HasPrefix(trimmed, thinkOpen):
			r.sent += len(rest) - len(trimmed) + len(thinkOpen)
			r.started, r.in, r.seen = true, true, true
		case strings.HasPrefix(thinkOpen, trimmed) && !final:
			return d // might still be <think>
		default:
			r.started = true
		}
	}
	if !r.in && !r.after {
		// Content until the model opens a block.
		rest := s[r.sent:]
		i := strings.Index(rest, thinkOpen)
		if i < 0 {
			keep := 0
			if !final {
				keep = partialSuffix(rest, thinkOpen)
			}
			d.Content = rest[:len(rest)-keep]
			r.sent += len(d.Content)
			return d
		}
		d.Content = rest[:i]
		r.sent += i + len(thinkOpen)
		r.in, r.seen = true, true
	}
	if r.in {
		rest := s[r.sent:]
		i := strings.Index(rest, thinkClose)
		if i < 0 {
			keep := 0
			if !final {
				keep = partialSuffix(rest, thinkClose)
			}
			d.Reasoning = rest[:len(rest)-keep]
			r.sent += len(d.Reasoning)
			return d
		}
		d.Reasoning = rest[:i]
		r.sent += i + len(thinkClose)
		r.in, r.after = false, true
	}
	d.Content += s[r.sent:]
	r.sent = len(s)
	return d
}

// SplitReasoning is the non-streaming answer of NewReasoning(open):
// reasoning and content, each nil when the reference server reports it
// as null (no think block; a think block and no content after it).
func SplitReasoning(text string, open bool) (reasoning, content *string) {
	r := NewReasoning(open)
	a, b := r.Feed(text), r.Finish()
	rs, cs := a.Reasoning+b.Reasoning, a.Content+b.Content
	if r.seen {
		reasoning = &rs
	}
	if cs != "" || !r.seen {
		content = &cs
	}
	return reasoning, content
}
