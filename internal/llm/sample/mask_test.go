package sample

import (
	"math"
	"testing"
)

// A step mask narrows the draw to its tokens, across word boundaries, and
// the reported log-probabilities are those of the masked row.
func TestNextMaskedDrawsOnlyAllowedTokens(t *testing.T) {
	const vocab = 130 // three mask words, the last partial
	allowed := make([]uint64, 3)
	for _, id := range []int{3, 64, 129} {
		allowed[id/64] |= 1 << (id % 64)
	}
	logits := make([]float32, vocab)
	for i := range logits {
		logits[i] = float32(i%7) * 0.5
	}
	s := newSampler(t, seeded(7), vocab)
	seen := map[int]bool{}
	for range 400 {
		c, err := s.NextMasked(logits, Tokens{}, allowed)
		if err != nil {
			t.Fatal(err)
		}
		if c.Token != 3 && c.Token != 64 && c.Token != 129 {
			t.Fatalf("sampled masked token %d", c.Token)
		}
		seen[c.Token] = true
		// log_softmax over the three allowed logits only.
		var z float64
		for _, id := range []int{3, 64, 129} {
			z += math.Exp(float64(logits[id]))
		}
		want := float64(logits[c.Token]) - math.Log(z)
		if math.Abs(float64(c.Logprob)-want) > 1e-5 {
			t.Fatalf("logprob %v, want %v (masked row)", c.Logprob, want)
		}
	}
	if len(seen) != 3 {
		t.Errorf("drew %d of the 3 allowed tokens", len(seen))
	}

	g := newSampler(t, greedy(), vocab)
	c, err := g.NextMasked(logits, Tokens{}, allowed)
	if err != nil || c.Token != 3 { // 3 and 129 tie above 64 (i%7 = 3, 3, 1); ties go to the lower id
		t.Fatalf("greedy under mask: %d, %v; want 3", c.Token, err)
	}
	if _, err := g.NextMasked(logits, Tokens{}, allowed[:2]); err == nil {
		t.Error("a mask shorter than the vocabulary was accepted")
	}
	// nil mask is Next.
	a, b := newSampler(t, seeded(3), vocab), newSampler(t, seeded(3), vocab)
	for range 50 {
		x, _ := a.Next(logits, Tokens{})
		y, _ := b.NextMasked(logits, Tokens{}, nil)
		if x.Token != y.Token || x.Logprob != y.Logprob {
			t.Fatal("NextMasked with a nil mask differs from Next")
		}
	}
}
