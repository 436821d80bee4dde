package sample

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkNext reports the cost of one token on real vocabulary sizes with
// logits spread like a language model's (normal, a few standing out).
func BenchmarkNext(b *testing.B) {
	for _, vocab := range []int{32000, 151936} {
		r := rand.New(rand.NewPCG(1, 1))
		logits := make([]float32, vocab)
		for i := range logits {
			logits[i] = float32(r.NormFloat64() * 3)
		}
		history := Tokens{Prompt: make([]int, 512), Output: make([]int, 64)}
		for i := range history.Prompt {
			history.Prompt[i] = r.IntN(vocab)
		}
		for i := range history.Output {
			history.Output[i] = r.IntN(vocab)
		}
		seed := int64(1)
		topP := DefaultParams()
		topP.TopP, topP.Temperature, topP.Seed = 0.9, 0.8, &seed
		penalised := topP
		penalised.RepetitionPenalty, penalised.PresencePenalty = 1.1, 0.5
		for _, c := range []struct {
			name string
			p    Params
		}{
			{"greedy", greedy()},
			{"top_p", topP},
			{"top_p+penalties", penalised},
		} {
			b.Run(fmt.Sprintf("vocab=%d/%s", vocab, c.name), func(b *testing.B) {
				s, err := New(c.p, vocab)
				if err != nil {
					b.Fatal(err)
				}
				for b.Loop() {
					if _, err := s.Next(logits, history); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
