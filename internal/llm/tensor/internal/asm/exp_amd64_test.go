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
	// Lengths that end in a masked step: the lanes past n are neither
	// read into a stored value nor written.
	for _, n := range []int{1, 7, 8, 15, 17, 31, 33, 100} {
		src := xs[len(xs)-n:]
		got := make([]float32, n+16)
		for i := range got {
			got[i] = -7
		}
		expAVX512(&got[0], &src[0], n, 3.25)
		narrow := make([]float32, (n+7)&^7)
		padded := append(append([]float32(nil), src...), make([]float32, len(narrow)-n)...)
		expAVX2(&narrow[0], &padded[0], len(narrow), 3.25)
		for i := range n {
			if math.Float32bits(got[i]) != math.Float32bits(narrow[i]) {
				t.Fatalf("n=%d: e^(%v−3.25) is %v on 16 lanes, %v on 8", n, src[i], got[i], narrow[i])
			}
		}
		for i := n; i < len(got); i++ {
			if got[i] != -7 {
				t.Fatalf("n=%d: wrote element %d", n, i)
			}
		}
	}
}
