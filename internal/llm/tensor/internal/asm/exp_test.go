package asm

import (
	"math"
	"math/rand/v2"
	"testing"
)

// ulps is the distance in units in the last place between got and the
// float64 value want (float32 ulps at want's magnitude).
func ulps(got float32, want float64) float64 {
	w := float32(want)
	ulp := math.Float32frombits(math.Float32bits(w)+1) - w
	if w == 0 || math.IsInf(float64(ulp), 0) {
		ulp = math.Float32frombits(1) // below the normal range: one subnormal step
	}
	return math.Abs(float64(got)-want) / float64(ulp)
}

// TestExpAccuracy sweeps the whole finite input range (every 397th float32
// bit pattern, about 5.6 million values) and random points, on both paths,
// against math.Exp: at most 2 ulps.
func TestExpAccuracy(t *testing.T) {
	var xs []float32
	for b := uint32(0); b < 0x42b20000; b += 397 { // 0 ≤ |x| < 89
		xs = append(xs, math.Float32frombits(b), -math.Float32frombits(b))
	}
	for b := uint32(0x42b20000); b < 0x42d00000; b += 7 { // 89 ≤ |x| < 104: the underflow side
		xs = append(xs, -math.Float32frombits(b))
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 1 << 16 {
		xs = append(xs, float32(r.Float64()*200-104))
	}
	got := make([]float32, len(xs))
	gen := make([]float32, len(xs))
	Exp(got, xs)
	expGeneric(gen, xs, 0)
	worst := map[string]float64{}
	for i, x := range xs {
		want := math.Exp(float64(x))
		if want > math.MaxFloat32 {
			continue // checked below
		}
		for name, v := range map[string]float32{"dispatch": got[i], "pure Go": gen[i]} {
			u := ulps(v, want)
			worst[name] = max(worst[name], u)
			if u > 2 {
				t.Fatalf("%s: Exp(%v) = %v, want %v (%.2f ulps)", name, x, v, want, u)
			}
		}
	}
	t.Logf("worst error: %.3f ulps (dispatch, %s), %.3f ulps (pure Go)", worst["dispatch"], Path(), worst["pure Go"])
}

func TestExpSpecialValues(t *testing.T) {
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	in := []float32{0, -0.0, 1, 88.72, 88.7229, 89, 1e30, inf, -inf, -103.9, -104, -1e30, nan, 0.5}
	// 9 values through the 8-wide loop plus a tail; repeat so both run each.
	xs := append(append([]float32(nil), in...), in...)
	pureGo := func(dst, x []float32) { expGeneric(dst, x, 0) }
	for name, f := range map[string]func([]float32, []float32){"dispatch": Exp, "pure Go": pureGo} {
		got := make([]float32, len(xs))
		f(got, xs)
		for i, x := range xs {
			v := got[i]
			switch {
			case x != x:
				if v == v {
					t.Fatalf("%s: Exp(NaN) = %v", name, v)
				}
			case x == 0 && v != 1:
				t.Fatalf("%s: Exp(%v) = %v, want 1", name, x, v)
			case x > 88.7229 && !math.IsInf(float64(v), 1):
				t.Fatalf("%s: Exp(%v) = %v, want +Inf", name, x, v)
			case x < -103.98 && v != 0:
				t.Fatalf("%s: Exp(%v) = %v, want 0", name, x, v)
			case x == 88.72 && (math.IsInf(float64(v), 0) || ulps(v, math.Exp(float64(float32(88.72)))) > 2):
				t.Fatalf("%s: Exp(88.72) = %v", name, v)
			case x == -103.9 && (v == 0 || ulps(v, math.Exp(float64(float32(-103.9)))) > 1):
				t.Fatalf("%s: Exp(-103.9) = %v, want a subnormal near %v", name, v, math.Exp(-103.9))
			}
		}
	}
}

// TestExpPositionIndependent: the same value gives the same bits in the
// 8-wide part and in the tail.
func TestExpPositionIndependent(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	x := make([]float32, 13)
	for i := range x {
		x[i] = float32(r.NormFloat64() * 20)
	}
	all := make([]float32, len(x))
	Exp(all, x)
	for i := range x {
		one := make([]float32, 1)
		Exp(one, x[i:i+1])
		if math.Float32bits(one[0]) != math.Float32bits(all[i]) {
			t.Fatalf("Exp(%v) alone %v, at position %d of %d: %v", x[i], one[0], i, len(x), all[i])
		}
	}
}

// TestExpShiftedIsExpOfTheDifference: the shifted exponential is Exp of the
// float32 difference bit for bit, on both paths, in the 8-wide part and the
// tail, including the −Inf of a masked logit.
func TestExpShiftedIsExpOfTheDifference(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	x := make([]float32, 37)
	for i := range x {
		x[i] = float32(r.NormFloat64() * 30)
	}
	x[5] = float32(math.Inf(-1))
	for _, shift := range []float32{0, 3.25, -17.5, 60} {
		diff := make([]float32, len(x))
		for i, v := range x {
			diff[i] = v - shift
		}
		want := make([]float32, len(x))
		Exp(want, diff)
		got := make([]float32, len(x))
		ExpShifted(got, x, shift)
		gen := make([]float32, len(x))
		expGeneric(gen, x, shift)
		for i := range x {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("shift %v: ExpShifted(%v) = %v, Exp of the difference %v", shift, x[i], got[i], want[i])
			}
			if ulps(gen[i], math.Exp(float64(diff[i]))) > 2 {
				t.Fatalf("shift %v: pure Go e^(%v) = %v, want %v", shift, diff[i], gen[i], math.Exp(float64(diff[i])))
			}
		}
	}
}

// TestMaxFindsTheLargest puts the largest element at every position of
// vectors that end in each tail length, on both paths.
func TestMaxFindsTheLargest(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 39, 40, 41, 64, 95, 200} {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(r.NormFloat64()) - 10
		}
		for at := range n {
			y := append([]float32(nil), x...)
			y[at] = 5
			if got, gen := Max(y), maxGeneric(y); got != 5 || gen != 5 {
				t.Fatalf("n=%d largest at %d: Max %v, pure Go %v, want 5", n, at, got, gen)
			}
		}
	}
	if got := Max(nil); !math.IsInf(float64(got), -1) {
		t.Fatalf("Max of nothing = %v, want -Inf", got)
	}
}
