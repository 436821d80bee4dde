package engine

import (
	"math"
	"testing"

	"github.com/weftlabs/weft/internal/llm/llmtest"
)

// A model's vocabulary padded past its tokenizer's last token (Qwen3's
// 151,936 rows for 151,669 tokens) never yields a padding id: not sampled
// (greedy or at temperature 1), not in top_logprobs, not in the prompt's
// top alternatives, and the logprobs are normalised over the tokens. The
// model here makes the padding rows the likeliest: the tied embedding's
// rows past the tokenizer are scaled up, so their logits dwarf the rest.
func TestPaddingIDsAreNeverProduced(t *testing.T) {
	weights := llmtest.RandomWeights(tinyQwen3, 1)
	probe := open(t, qwen3Dir(t), ModelConfig{})
	tokens := probe.Tokenizer().VocabSize()
	if tokens >= tinyQwen3.VocabSize {
		t.Fatalf("the tokenizer has %d tokens, the model %d rows: nothing is padding", tokens, tinyQwen3.VocabSize)
	}
	embed := weights["model.embed_tokens.weight"]
	for i := tokens * tinyQwen3.HiddenSize; i < len(embed); i++ {
		embed[i] *= 50
	}
	dir := llmtest.ModelDir{Dims: tinyQwen3, Weights: weights, Tokenizer: llmtest.TokenizerQwen3}.Write(t)
	e := open(t, dir, ModelConfig{MaxLogprobs: -1})
	ids := prompt(e, texts[2])

	// The model as it is prefers padding.
	rows := directLogprobs(t, dir, ids, 0)
	if best := argmax64(rows[len(rows)-1]); best < tokens {
		t.Fatalf("the model's likeliest next id is %d, a token: the padding does not dominate", best)
	}

	padding := func(what string, id int) {
		t.Helper()
		if id >= tokens {
			t.Fatalf("%s: id %d is past the tokenizer's last token %d", what, id, tokens-1)
		}
	}
	for _, temperature := range []float64{0, 1} {
		n := 4
		if temperature == 0 {
			n = 1
		}
		res := run(t, e, Request{Prompt: ids, N: n, MaxTokens: 16, Temperature: ptr(temperature), Seed: ptr(int64(5)), IgnoreEOS: true,
			Logprobs: true, TopLogprobs: 5, PromptLogprobs: true, PromptTopLogprobs: 5})
		for _, ch := range res.Choices {
			for i, id := range ch.TokenIDs {
				padding("sampled", id)
				for _, top := range ch.Logprobs[i].Top {
					padding("top_logprobs", top.ID)
				}
			}
		}
		for _, lp := range res.PromptLogprobs[1:] {
			for _, top := range lp.Top {
				padding("prompt top_logprobs", top.ID)
			}
		}
		// Normalised over the tokens alone, as the direct model's row cut
		// at the tokenizer is.
		cut := directLogprobs(t, dir, append(ids, res.Choices[0].TokenIDs[0]), tokens)
		first := res.Choices[0].Logprobs[0]
		if want := cut[len(ids)-1][first.ID]; math.Abs(float64(first.Logprob)-want) > 1e-4 {
			t.Fatalf("temperature %g: the first token's logprob %g, want %g over the tokens", temperature, first.Logprob, want)
		}
	}
	// top_logprobs -1 lists every token and nothing else.
	res := run(t, e, Request{Prompt: ids, MaxTokens: 1, Temperature: ptr(1.0), Seed: ptr(int64(1)), Logprobs: true, TopLogprobs: -1})
	if got := len(res.Choices[0].Logprobs[0].Top); got != tokens {
		t.Fatalf("top_logprobs -1 listed %d ids, want the %d tokens", got, tokens)
	}
}

func argmax64(row []float64) int {
	best := 0
	for i, v := range row {
		if v > row[best] {
			best = i
		}
	}
	return best
}
