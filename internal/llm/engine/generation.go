package engine

import (
	"context"
	"io"
	"strings"
	"sync"
)

// FinishReason is why a choice ended, as vLLM reports it.
type FinishReason string

const (
	// FinishStop: an end-of-sequence token, a stop token or a stop string.
	FinishStop FinishReason = "stop"
	// FinishLength: max_tokens generated, or the sequence reached
	// MaxModelLen.
	FinishLength FinishReason = "length"
)

// TokenLogprob is one token with its log-probability: log_softmax of the
// model's raw logits over the whole vocabulary, before temperature,
// penalties and bias. Token is the token's text alone (decode([id]) with
// special tokens kept), which may be U+FFFD for a token holding part of a
// character. Rank is 1-based: how many tokens are at least as likely (for the
// entries of a Top list, their place in it).
type TokenLogprob struct {
	ID      int
	Token   string
	Logprob float32
	Rank    int
}

// Logprobs is the log-probability of one token and the most likely tokens at
// its position, most likely first (ties by lower id), as many as asked.
type Logprobs struct {
	TokenLogprob
	Top []TokenLogprob
}

// Chunk is what one engine step produced for one choice: the new token ids,
// the text they complete and, when asked, their logprobs. Text may be empty
// while a token holds part of a character or text that could begin a stop
// string; it never splits a character. A choice's last chunk carries the
// token that ended it, FinishReason and StopReason, and all text still held
// back (cut at a stop string).
type Chunk struct {
	// Index is the choice, 0 ≤ Index < N.
	Index    int
	TokenIDs []int
	Text     string
	// Logprobs has one entry per TokenIDs entry when the request asked.
	Logprobs []Logprobs
	// FinishReason is empty until the choice's last chunk.
	FinishReason FinishReason
	// StopReason is vLLM's stop_reason on the last chunk: the matched stop
	// string (string), the stop token id (int), or nil (end-of-sequence
	// token, length).
	StopReason any
}

// Usage counts a request's tokens as vLLM's usage does: the prompt once,
// completion tokens summed over the choices, and the prompt tokens whose KV
// came from the prefix cache.
type Usage struct {
	PromptTokens     int
	CompletionTokens int
	CachedTokens     int
}

// Choice is one choice's whole output (see [Generation.Wait]).
type Choice struct {
	Index        int
	TokenIDs     []int
	Text         string
	Logprobs     []Logprobs // nil unless asked
	FinishReason FinishReason
	StopReason   any
}

// Result is a whole generation.
type Result struct {
	Choices []Choice
	Usage   Usage
	// PromptLogprobs is nil unless asked; see [Generation.PromptLogprobs].
	PromptLogprobs []*Logprobs
}

// Generation is a running request: its chunks in the order the engine made
// them, choices interleaved. It is safe to call its methods from one
// goroutine while the engine works; Next is not for concurrent callers.
// Cancelling the context given to Generate, or calling Close, stops it and
// frees its sequences' slots and KV blocks before the engine's next step.
type Generation struct {
	ctx    context.Context
	cancel context.CancelFunc

	mu      sync.Mutex
	notify  chan struct{} // signalled when chunks or the end arrive
	pending []Chunk
	done    bool  // every choice finished, or err set
	err     error // the reason it ended early
	usage   Usage
	prompt  []int
	plp     []*Logprobs
	// admission is the request's place in the engine's order of admissions.
	admission uint64
}

func newGeneration(ctx context.Context, prompt []int) *Generation {
	ctx, cancel := context.WithCancel(ctx)
	return &Generation{ctx: ctx, cancel: cancel, notify: make(chan struct{}, 1), prompt: prompt,
		usage: Usage{PromptTokens: len(prompt)}}
}

// Next returns the next chunk, waiting for the engine. It returns io.EOF
// once every choice has finished and its chunks were returned, the context's
// error once the request was cancelled, or ErrClosed when the engine closed.
func (g *Generation) Next() (Chunk, error) {
	for {
		g.mu.Lock()
		if len(g.pending) > 0 {
			c := g.pending[0]
			g.pending[0] = Chunk{}
			g.pending = g.pending[1:]
			g.mu.Unlock()
			return c, nil
		}
		done, err := g.done, g.err
		g.mu.Unlock()
		if done {
			if err != nil {
				return Chunk{}, err
			}
			return Chunk{}, io.EOF
		}
		select {
		case <-g.notify:
		case <-g.ctx.Done():
			// The engine notices too and frees the sequences; report the
			// cancellation unless everything had already arrived.
			g.mu.Lock()
			if len(g.pending) == 0 && !g.done {
				g.done, g.err = true, g.ctx.Err()
			}
			g.mu.Unlock()
		}
	}
}

// Wait collects every chunk into a Result (for a non-streamed answer).
func (g *Generation) Wait() (*Result, error) {
	n := 0
	byIndex := map[int]*Choice{}
	texts := map[int]*strings.Builder{} // a choice's text, built in linear time
	for {
		c, err := g.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		ch := byIndex[c.Index]
		if ch == nil {
			ch = &Choice{Index: c.Index}
			byIndex[c.Index] = ch
			texts[c.Index] = &strings.Builder{}
			n = max(n, c.Index+1)
		}
		ch.TokenIDs = append(ch.TokenIDs, c.TokenIDs...)
		texts[c.Index].WriteString(c.Text)
		ch.Logprobs = append(ch.Logprobs, c.Logprobs...)
		if c.FinishReason != "" {
			ch.FinishReason, ch.StopReason = c.FinishReason, c.StopReason
		}
	}
	res := &Result{Choices: make([]Choice, n), Usage: g.Usage(), PromptLogprobs: g.PromptLogprobs()}
	for i := range res.Choices {
		if ch := byIndex[i]; ch != nil {
			ch.Text = texts[i].String()
			res.Choices[i] = *ch
		} else {
			res.Choices[i] = Choice{Index: i}
		}
	}
	return res, nil
}

// Close stops the generation if it is still running and frees its
// resources. It is safe to call more than once.
func (g *Generation) Close() { g.cancel() }

// Usage is the token count so far; final once Next has returned io.EOF.
// PromptTokens and CachedTokens are known from the start.
func (g *Generation) Usage() Usage {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.usage
}

// PromptTokens are the request's prompt ids.
func (g *Generation) PromptTokens() []int { return g.prompt }

// PromptLogprobs are the prompt's logprobs when the request asked for them:
// one entry per prompt token, nil for the first (which has no context);
// each entry has the token's logprob and rank and the most likely tokens at
// its position. They are complete once Next has returned a chunk (or io.EOF).
func (g *Generation) PromptLogprobs() []*Logprobs {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.plp
}

// push hands chunks to the reader; called by the engine's loop, which
// never blocks on a slow reader.
func (g *Generation) push(cs ...Chunk) {
	g.mu.Lock()
	g.pending = append(g.pending, cs...)
	for _, c := range cs {
		g.usage.CompletionTokens += len(c.TokenIDs)
	}
	g.mu.Unlock()
	g.signal()
}

// finish marks the end: every choice finished (err nil) or the request
// failed.
func (g *Generation) finish(err error) {
	g.mu.Lock()
	if !g.done {
		g.done, g.err = true, err
	}
	g.mu.Unlock()
	g.signal()
	g.cancel() // detach from the caller's context
}

func (g *Generation) setPromptLogprobs(plp []*Logprobs) {
	g.mu.Lock()
	g.plp = plp
	g.mu.Unlock()
}

func (g *Generation) admit(cached int, admission uint64) {
	g.mu.Lock()
	g.usage.CachedTokens, g.admission = cached, admission
	g.mu.Unlock()
}

func (g *Generation) signal() {
	select {
	case g.notify <- struct{}{}:
	default:
	}
}
