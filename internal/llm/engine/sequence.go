package engine

import (
	"github.com/weftlabs/weft/internal/llm/constrain"
	"github.com/weftlabs/weft/internal/llm/model"
	"github.com/weftlabs/weft/internal/llm/sample"
	"github.com/weftlabs/weft/internal/llm/tokenizer"
)

// sequence is one choice of a request: its tokens, how many of them the KV
// cache holds, its sampler (and so its random generator, which survives
// preemption) and its detokenizer.
type sequence struct {
	req   *request
	index int
	id    model.SeqID // valid while it holds KV blocks
	// tokens are the prompt then the generated ids; the last generated id is
	// the next input, so computed < len(tokens) while the choice runs.
	tokens   []int32
	output   []int
	computed int
	sampler  *sample.Sampler
	detok    *detokenizer

	// guide follows the request's constraint over the generated tokens
	// (nil without one); it lives with the sequence, so preemption, which
	// recomputes only the KV cache, keeps its state. guided says the
	// constraint applies: from the start, or once the reasoning ended.
	guide  *constrain.Matcher
	guided bool
	// mayOpen: the first token may open the reasoning instead of
	// following the constraint (ConstrainAfterReasoning without
	// ReasoningOpen).
	mayOpen bool
	mask    []uint64 // the step's allowed tokens, one bit per id

	// scorePrompt: the prompt's logprobs are still to be computed, so the
	// sequence neither reads the prefix cache nor skips a prompt row.
	scorePrompt bool
	plp         []*Logprobs
	committed   bool // the prompt's blocks were registered for sharing
	admitted    bool // its request's Generate has returned
}

func newSequence(r *request, index int, tok *tokenizer.Tokenizer, vocab int) (*sequence, error) {
	s := &sequence{req: r, index: index, tokens: make([]int32, len(r.prompt), len(r.prompt)+16)}
	for i, id := range r.prompt {
		s.tokens[i] = int32(id)
	}
	var err error
	if s.sampler, err = sample.New(r.params[index], vocab); err != nil {
		return nil, samplingError(err)
	}
	s.detok = newDetokenizer(tok, r.prompt, r.skipSpecial, r.stops, r.include, r.minTokens)
	if r.constraint != nil {
		s.guide = r.constraint.NewMatcher()
		s.guided = r.reasoningEnd < 0 || r.reasoningStart >= 0
		s.mayOpen = r.reasoningStart >= 0
		s.mask = make([]uint64, (vocab+63)/64)
	}
	if index == 0 && r.promptTop != noPromptLogprobs {
		s.scorePrompt = true
		s.plp = make([]*Logprobs, len(r.prompt))
	}
	return s, nil
}

// less orders sequences for admission and against preemption: lower
// priority value first, then earlier arrival, then choice index.
func (s *sequence) less(o *sequence) bool {
	if s.req.priority != o.req.priority {
		return s.req.priority < o.req.priority
	}
	if s.req.arrival != o.req.arrival {
		return s.req.arrival < o.req.arrival
	}
	return s.index < o.index
}

// pending is the number of tokens not yet in the KV cache.
func (s *sequence) pending() int { return len(s.tokens) - s.computed }
