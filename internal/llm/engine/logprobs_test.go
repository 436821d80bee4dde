package engine

import (
	"math"
	"slices"
	"testing"

	"github.com/weftlabs/weft/internal/llm/model"
	"github.com/weftlabs/weft/internal/llm/tokenizer"
)

// directLogprobs runs tokens through the model with package model alone
// and returns, for each position, log_softmax of its logits in float64:
// over the first vocab ids, the rest −Inf (vocab 0: the whole row).
func directLogprobs(t *testing.T, dir string, tokens []int, vocab int) [][]float64 {
	t.Helper()
	m, err := model.Load(dir, model.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ids := make([]int32, len(tokens))
	for i, id := range tokens {
		ids[i] = int32(id)
	}
	out, err := m.Forward(&model.Batch{Seqs: []model.Sequence{{ID: 1, Tokens: ids, AllLogits: true}}},
		model.NewContiguousCache(m.Config, len(tokens)))
	if err != nil {
		t.Fatal(err)
	}
	v := m.Config.VocabSize
	if vocab <= 0 {
		vocab = v
	}
	rows := make([][]float64, len(tokens))
	for i := range rows {
		row := out[0][i*v : i*v+vocab]
		maxv := math.Inf(-1)
		for _, x := range row {
			maxv = math.Max(maxv, float64(x))
		}
		sum := 0.0
		for _, x := range row {
			sum += math.Exp(float64(x) - maxv)
		}
		lse := maxv + math.Log(sum)
		rows[i] = make([]float64, v)
		for j := range rows[i] {
			rows[i][j] = math.Inf(-1)
		}
		for j, x := range row {
			rows[i][j] = float64(x) - lse
		}
	}
	return rows
}

// checkLogprobs compares a reported entry with a row of direct logprobs.
func checkLogprobs(t *testing.T, e *Engine, what string, got *Logprobs, row []float64, token, top int) {
	t.Helper()
	const tol = 1e-4
	if got.ID != token || math.Abs(float64(got.Logprob)-row[token]) > tol {
		t.Fatalf("%s: token %d logprob %g, want token %d %g", what, got.ID, got.Logprob, token, row[token])
	}
	rank := 0
	for _, lp := range row {
		if lp >= row[token] {
			rank++
		}
	}
	if got.Rank != rank {
		t.Fatalf("%s: rank %d, want %d", what, got.Rank, rank)
	}
	if want := e.Tokenizer().Decode([]int{token}, tokenizer.DecodeOptions{}); got.Token != want {
		t.Fatalf("%s: token text %q, want %q", what, got.Token, want)
	}
	// The top ids by a selection pass each (most likely first, lower id on
	// ties).
	var order []int
	for range top {
		best := -1
		for id, lp := range row {
			if !slices.Contains(order, id) && (best < 0 || lp > row[best]) {
				best = id
			}
		}
		order = append(order, best)
	}
	if len(got.Top) != top {
		t.Fatalf("%s: %d top logprobs, want %d", what, len(got.Top), top)
	}
	for i, tl := range got.Top {
		if tl.ID != order[i] || math.Abs(float64(tl.Logprob)-row[order[i]]) > tol || tl.Rank != i+1 {
			t.Fatalf("%s: top %d is %d (%g, rank %d), want %d (%g)", what, i, tl.ID, tl.Logprob, tl.Rank, order[i], row[order[i]])
		}
	}
}

func TestLogprobsAreLogSoftmaxOfTheModel(t *testing.T) {
	for _, tc := range []struct {
		name string
		dir  func(testing.TB) string
	}{{"llama", llamaDir}, {"qwen3", qwen3Dir}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := tc.dir(t)
			// Prompts longer than a pass's budget are scored chunk by chunk.
			e := open(t, dir, ModelConfig{MaxBatchTokens: 12, MaxSeqs: 8})
			req := Request{Prompt: prompt(e, texts[7]), MaxTokens: 12, Temperature: ptr(0.8), Seed: ptr(int64(3)),
				IgnoreEOS: true, Logprobs: true, TopLogprobs: 5, PromptLogprobs: true, PromptTopLogprobs: 3,
				RepetitionPenalty: ptr(1.3), LogitBias: map[int]float64{7: 5}} // processing must not touch logprobs
			res := run(t, e, req)
			ch := res.Choices[0]
			all := append(append([]int(nil), req.Prompt...), ch.TokenIDs...)
			// Over the tokenizer's ids: the Qwen3 rows past them pad.
			rows := directLogprobs(t, dir, all[:len(all)-1], e.Tokenizer().VocabSize())
			p := len(req.Prompt)
			if len(ch.Logprobs) != len(ch.TokenIDs) {
				t.Fatalf("%d logprobs for %d tokens", len(ch.Logprobs), len(ch.TokenIDs))
			}
			for i, id := range ch.TokenIDs {
				checkLogprobs(t, e, "output", &ch.Logprobs[i], rows[p-1+i], id, 5)
			}
			if len(res.PromptLogprobs) != p || res.PromptLogprobs[0] != nil {
				t.Fatalf("%d prompt logprobs (first %v), want %d with the first nil", len(res.PromptLogprobs), res.PromptLogprobs[0], p)
			}
			for i := 1; i < p; i++ {
				checkLogprobs(t, e, "prompt", res.PromptLogprobs[i], rows[i-1], req.Prompt[i], 3)
			}
			// Scoring the prompt means not reading the prefix cache.
			again := run(t, e, req)
			if again.Usage.CachedTokens != 0 {
				t.Fatalf("prompt logprobs request reports %d cached tokens", again.Usage.CachedTokens)
			}
			if err := sameChoice(ch, again.Choices[0]); err != nil {
				t.Fatal(err)
			}
		})
	}
}
