package engine

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/weftlabs/weft/internal/llm/constrain"
)

// reasoningStartText and reasoningEndText are the tokens that open and
// close a thinking model's reasoning (Qwen3's <think> and </think>, added
// tokens of their own).
const (
	reasoningStartText = "<think>"
	reasoningEndText   = "</think>"
)

// constraints is an engine's constraint compiler, built on first use:
// indexing the vocabulary (a trie of every token's bytes) costs a fraction
// of a second and memory that engines never asked for structured output
// need not pay.
type constraints struct {
	once     sync.Once
	compiler *constrain.Compiler
}

// Compiler is the engine's constraint compiler: one per engine, over the
// model's vocabulary, with the engine's end-of-sequence ids as the tokens
// that end a complete output. It caches compiled constraints by their
// canonical text (ModelConfig.Structured.CacheSize), so a repeated schema
// is compiled once.
func (e *Engine) Compiler() *constrain.Compiler {
	e.constraints.once.Do(func() {
		vocab := constrain.NewVocabulary(e.tok, e.EOSTokenIDs(), e.VocabSize())
		e.constraints.compiler = constrain.NewCompiler(vocab, e.cfg.Structured)
	})
	return e.constraints.compiler
}

// Compile compiles spec for this engine (from the cache when it was
// compiled before), for Request.Constraint, within the bounds of
// ModelConfig.Structured. A constraint that is malformed, uses what the
// compiler does not implement or is too large is an error wrapping both
// ErrInvalidRequest (a 400) and package constrain's ErrInvalid,
// ErrUnsupported or ErrTooComplex, whose message names the keyword or
// construct. A compile that found no turn among the others running is an
// OverloadedError (a 503 to retry); one whose ctx ended, ctx's error.
func (e *Engine) Compile(ctx context.Context, spec constrain.Spec) (*constrain.Constraint, error) {
	c, err := e.Compiler().CompileContext(ctx, spec)
	switch {
	case err == nil:
		return c, nil
	case errors.Is(err, constrain.ErrBusy):
		return nil, &OverloadedError{RetryAfter: time.Second, Reason: "constraint compiles"}
	case ctx.Err() != nil:
		return nil, err
	}
	return nil, &constraintError{err: err}
}

// ReasoningEnd is the token that ends the model's reasoning, after which a
// ConstrainAfterReasoning request's constraint applies: the vocabulary's
// </think>. ok is false for a model without one.
func (e *Engine) ReasoningEnd() (id int, ok bool) { return e.reasoningEnd, e.reasoningEnd >= 0 }

// constraintError is a constraint the compiler refused: a request error
// whose message is the compiler's.
type constraintError struct{ err error }

func (e *constraintError) Error() string   { return e.err.Error() }
func (e *constraintError) Unwrap() []error { return []error{ErrInvalidRequest, e.err} }

// follow moves a constrained choice past its sampled token. Before the
// constraint applies (ConstrainAfterReasoning) it only watches for the
// reasoning end. It reports that the constraint has ended the output: an
// end-of-sequence token was accepted, or the output is complete and
// nothing may follow (vLLM stops such a choice there).
func (s *sequence) follow(tok int) (done bool, err error) {
	if s.mayOpen {
		s.mayOpen = false
		if tok == s.req.reasoningStart {
			s.guided = false // it reasons: the constraint waits for the end
			return false, nil
		}
	}
	if !s.guided {
		s.guided = tok == s.req.reasoningEnd
		return false, nil
	}
	if err := s.guide.Advance(tok); err != nil {
		return false, err
	}
	return s.guide.Ended() || s.guide.Complete() && !s.guide.CanContinue(), nil
}

// allowed is the step's mask of the tokens the constraint lets through,
// nil when none applies (yet).
func (s *sequence) allowed() []uint64 {
	if s.guide == nil || !s.guided {
		return nil
	}
	s.guide.Mask(s.mask)
	if s.mayOpen {
		start := s.req.reasoningStart
		s.mask[start/64] |= 1 << (start % 64)
	}
	return s.mask
}
