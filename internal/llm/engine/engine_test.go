package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/weftlabs/weft/internal/llm/llmtest"
)

// Tiny random-weight models in the Hugging Face layout with real tokenizers:
// a Llama with the 32,000-token SentencePiece-style vocabulary and a Qwen3
// with its byte-level one (vocabulary as large as the real model's).
var (
	tinyLlama = llmtest.Dims{Architecture: llmtest.Llama, VocabSize: 32000, HiddenSize: 32, IntermediateSize: 64,
		Layers: 2, Heads: 4, KVHeads: 2, HeadDim: 8, MaxPositions: 256, RMSNormEps: 1e-5, RopeTheta: 10000}
	tinyQwen3 = llmtest.Dims{Architecture: llmtest.Qwen3, VocabSize: 151936, HiddenSize: 16, IntermediateSize: 32,
		Layers: 2, Heads: 2, KVHeads: 1, HeadDim: 8, MaxPositions: 256, RMSNormEps: 1e-6, RopeTheta: 1e6,
		TiedEmbedding: true}
)

func llamaDir(t testing.TB) string {
	return llmtest.ModelDir{Dims: tinyLlama, Tokenizer: llmtest.TokenizerLlama2}.Write(t)
}

func qwen3Dir(t testing.TB) string {
	return llmtest.ModelDir{Dims: tinyQwen3, Tokenizer: llmtest.TokenizerQwen3}.Write(t)
}

func open(t testing.TB, dir string, cfg ModelConfig) *Engine {
	t.Helper()
	if cfg.Threads == 0 {
		cfg.Threads = 1
	}
	e, err := Open(dir, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

func ptr[T any](v T) *T { return &v }

// prompt tokenizes text as a completion prompt (with the BOS the tokenizer
// adds).
func prompt(e *Engine, text string) []int { return e.Tokenizer().Encode(text, true) }

// run generates req to the end, also checking that the streamed chunks add
// up to the result Wait would give.
func run(t testing.TB, e *Engine, req Request) *Result {
	t.Helper()
	g, err := e.Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	res, err := g.Wait()
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// chunks generates req and returns every chunk, in order, checking that
// none splits a character.
func chunks(t testing.TB, e *Engine, req Request) []Chunk {
	t.Helper()
	g, err := e.Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	var out []Chunk
	for {
		c, err := g.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if !utf8.ValidString(c.Text) {
			t.Fatalf("chunk text %q is not whole characters", c.Text)
		}
		out = append(out, c)
	}
}

// concurrently runs the requests at once and returns their results in
// order.
func concurrently(t testing.TB, e *Engine, reqs []Request) []*Result {
	t.Helper()
	out := make([]*Result, len(reqs))
	errs := make([]error, len(reqs))
	var wg sync.WaitGroup
	for i, req := range reqs {
		wg.Go(func() {
			g, err := e.Generate(context.Background(), req)
			if err != nil {
				errs[i] = err
				return
			}
			out[i], errs[i] = g.Wait()
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// sameChoice compares two choices' ids, text and logprobs bit for bit.
func sameChoice(a, b Choice) error {
	if !slices.Equal(a.TokenIDs, b.TokenIDs) {
		return fmt.Errorf("token ids differ:\n%v\n%v", a.TokenIDs, b.TokenIDs)
	}
	if a.Text != b.Text || a.FinishReason != b.FinishReason || a.StopReason != b.StopReason {
		return fmt.Errorf("text or finish differ: %q %s %v / %q %s %v", a.Text, a.FinishReason, a.StopReason,
			b.Text, b.FinishReason, b.StopReason)
	}
	if len(a.Logprobs) != len(b.Logprobs) {
		return fmt.Errorf("%d vs %d logprobs", len(a.Logprobs), len(b.Logprobs))
	}
	for i := range a.Logprobs {
		if a.Logprobs[i].Logprob != b.Logprobs[i].Logprob || !slices.Equal(a.Logprobs[i].Top, b.Logprobs[i].Top) {
			return fmt.Errorf("logprobs of token %d differ", i)
		}
	}
	return nil
}

var texts = []string{
	"Once upon a time",
	"The quick brown fox jumps over the lazy dog, and then",
	"1, 2, 3,",
	"Il était une fois une petite fille qui",
	"def fibonacci(n):",
	"東京は",
	"Hello",
	"A long time ago in a galaxy far, far away there lived",
}

func TestGreedyBatchedEqualsAlone(t *testing.T) {
	for _, tc := range []struct {
		name string
		dir  func(testing.TB) string
	}{{"llama", llamaDir}, {"qwen3", qwen3Dir}} {
		t.Run(tc.name, func(t *testing.T) {
			// A small batch budget forces the longer prompts into chunks
			// that share passes with other sequences' decode rows.
			e := open(t, tc.dir(t), ModelConfig{MaxBatchTokens: 12, MaxSeqs: 8})
			var reqs []Request
			for _, text := range texts {
				reqs = append(reqs, Request{Prompt: prompt(e, text), MaxTokens: 24, Temperature: ptr(0.0),
					IgnoreEOS: true, Logprobs: true, TopLogprobs: 3})
			}
			alone := make([]*Result, len(reqs))
			for i, req := range reqs {
				alone[i] = run(t, e, req)
			}
			// Streamed chunks (whole characters each) add up to the result.
			for i := range 2 {
				text := ""
				for _, c := range chunks(t, e, reqs[i]) {
					text += c.Text
				}
				if text != alone[i].Choices[0].Text {
					t.Errorf("streamed %q, whole %q", text, alone[i].Choices[0].Text)
				}
			}
			before := e.Stats()
			together := concurrently(t, e, reqs)
			after := e.Stats()
			for i := range reqs {
				if err := sameChoice(alone[i].Choices[0], together[i].Choices[0]); err != nil {
					t.Errorf("prompt %q: %v", texts[i], err)
				}
				if n := len(together[i].Choices[0].TokenIDs); n != 24 {
					t.Errorf("prompt %q: %d tokens, want 24", texts[i], n)
				}
			}
			steps, rows := after.Steps-before.Steps, after.Rows-before.Rows
			if rows < 2*steps {
				t.Errorf("%d rows in %d steps: the concurrent requests were hardly batched", rows, steps)
			}
		})
	}
}

func TestSeedSameAloneAndAmongSeven(t *testing.T) {
	e := open(t, llamaDir(t), ModelConfig{})
	sampled := func(text string, seed int64) Request {
		return Request{Prompt: prompt(e, text), MaxTokens: 32, Temperature: ptr(1.0), TopP: ptr(0.95),
			Seed: ptr(seed), IgnoreEOS: true, Logprobs: true}
	}
	target := sampled(texts[0], 42)
	alone := run(t, e, target)
	again := run(t, e, target)
	if err := sameChoice(alone.Choices[0], again.Choices[0]); err != nil {
		t.Fatalf("same seed twice: %v", err)
	}
	reqs := []Request{target}
	for i, text := range texts[1:] {
		reqs = append(reqs, sampled(text, int64(100+i)))
	}
	together := concurrently(t, e, reqs)
	if err := sameChoice(alone.Choices[0], together[0].Choices[0]); err != nil {
		t.Fatalf("alone vs among 7: %v", err)
	}
	other := run(t, e, sampled(texts[0], 43))
	if slices.Equal(other.Choices[0].TokenIDs, alone.Choices[0].TokenIDs) {
		t.Fatal("seeds 42 and 43 gave the same 32 tokens")
	}
}

func TestChoicesWithSeedDifferAndRepeat(t *testing.T) {
	e := open(t, llamaDir(t), ModelConfig{})
	req := Request{Prompt: prompt(e, texts[1]), N: 4, MaxTokens: 16, Temperature: ptr(1.0), Seed: ptr(int64(7)), IgnoreEOS: true}
	first := run(t, e, req)
	second := run(t, e, req)
	if len(first.Choices) != 4 {
		t.Fatalf("%d choices", len(first.Choices))
	}
	for i, c := range first.Choices {
		if c.Index != i || len(c.TokenIDs) != 16 {
			t.Fatalf("choice %d: index %d, %d tokens", i, c.Index, len(c.TokenIDs))
		}
		if err := sameChoice(c, second.Choices[i]); err != nil {
			t.Errorf("choice %d differs between runs: %v", i, err)
		}
		for j := range i {
			if slices.Equal(c.TokenIDs, first.Choices[j].TokenIDs) {
				t.Errorf("choices %d and %d are the same", j, i)
			}
		}
	}
	// Choice i samples with seed+i, as vLLM's parallel sampling does.
	one := run(t, e, Request{Prompt: req.Prompt, MaxTokens: 16, Temperature: ptr(1.0), Seed: ptr(int64(9)), IgnoreEOS: true})
	if err := sameChoice(one.Choices[0], first.Choices[2]); err != nil {
		t.Errorf("choice 2 of seed 7 vs seed 9 alone: %v", err)
	}
	if first.Usage.PromptTokens != len(req.Prompt) || first.Usage.CompletionTokens != 64 {
		t.Errorf("usage %+v", first.Usage)
	}
}

func TestInvalidRequests(t *testing.T) {
	e := open(t, llamaDir(t), ModelConfig{MaxModelLen: 64})
	p := prompt(e, "Hello")
	for _, tc := range []struct {
		name  string
		req   Request
		want  error
		param string
	}{
		{"empty prompt", Request{}, ErrInvalidRequest, "prompt"},
		{"token outside the vocabulary", Request{Prompt: []int{1, 32000}}, ErrInvalidRequest, "prompt"},
		{"greedy with n", Request{Prompt: p, N: 2, Temperature: ptr(0.0)}, ErrInvalidRequest, "n"},
		{"empty stop", Request{Prompt: p, Stop: []string{""}}, ErrInvalidRequest, "stop"},
		{"stop id outside", Request{Prompt: p, StopTokenIDs: []int{-1}}, ErrInvalidRequest, "stop_token_ids"},
		{"top_p", Request{Prompt: p, TopP: ptr(0.0)}, ErrInvalidRequest, "top_p"},
		{"logit_bias outside", Request{Prompt: p, LogitBias: map[int]float64{40000: 1}}, ErrInvalidRequest, "logit_bias"},
		{"too many logprobs", Request{Prompt: p, Logprobs: true, TopLogprobs: 21}, ErrInvalidRequest, "top_logprobs"},
		{"min over max", Request{Prompt: p, MaxTokens: 4, MinTokens: 5}, ErrInvalidRequest, "min_tokens"},
		{"prompt too long", Request{Prompt: make([]int, 64)}, ErrPromptTooLong, "input_tokens"},
		{"max_tokens too large", Request{Prompt: p, MaxTokens: 64}, ErrPromptTooLong, "max_tokens"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.Generate(context.Background(), tc.req)
			if !errors.Is(err, tc.want) || Param(err) != tc.param {
				t.Fatalf("got %v (param %v), want %v naming %s", err, Param(err), tc.want, tc.param)
			}
		})
	}
	_, err := e.Generate(context.Background(), Request{Prompt: p, MaxTokens: 63})
	var long *PromptTooLongError
	if !errors.As(err, &long) || long.PromptTokens != len(p) || long.MaxTokens != 63 || long.MaxModelLen != 64 {
		t.Fatalf("got %v", err)
	}
	want := fmt.Sprintf("'max_tokens' or 'max_completion_tokens' is too large: 63. This model's maximum context length is 64 tokens and your request has %d input tokens (63 > 64 - %d).", len(p), len(p))
	if err.Error() != want {
		t.Fatalf("message %q", err)
	}
}
