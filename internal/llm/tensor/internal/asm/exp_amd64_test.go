//go:build amd64 && !purego

package asm

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestExpAVX512IsExpAVX2: the 16-lane exponential runs the 8-lane one's
// steps, so every value — ordinary, overflowing, underflowing to a
// subnormal or to 0, infinite or NaN, under any shift — has the same bits
// on both, and a value's result does not depend on which loop computes it.
func TestExpAVX512IsExpAVX2(t *testing.T) {
	if !useAVX512 {
		t.Skip("no AVX-512 on this CPU: the 16-lane loop is never run")
	}
	r := rand.New(rand.NewPCG(41, 42))
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	xs := []float32{0, -0.0, 1, 88.72, 88.7229, 89, 1e30, inf, -inf, -103.9, -104, -1e30, nan, 0.5, -87.5, -100}
	for range 1 << 14 {
		xs = append(xs, float32(r.Float64()*220-110))
	}
	xs = xs[:len(xs)&^15]
	for _, shift := range []float32{0, 3.25, -20} {
		wide, narrow := make([]float32, len(xs)), make([]float32, len(xs))
		expAVX512(&wide[0], &xs[0], len(xs), shift)
		expAVX2(&narrow[0], &xs[0], len(xs), shift)
		for i := range xs {
			if math.Float32bits(wide[i]) != math.Float32bits(narrow[i]) {
				t.Fatalf("shift %v: e^(%v−shift) is %v on 16 lanes, %v on 8", shift, xs[i], wide[i], narrow[i])
			}
		}
	}
}
