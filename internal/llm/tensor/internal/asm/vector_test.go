package asm

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestAxpyWithinRounding: each element is y + αx rounded once (fused) or
// twice (product, then sum), so it lies within u·(|y+αx| + |αx|) of the exact
// value, u = 2^-24; lengths cover the 32- and 8-wide loops and the scalar tail.
func TestAxpyWithinRounding(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	u := math.Ldexp(1, -24)
	for _, n := range []int{0, 1, 7, 8, 9, 31, 32, 33, 71, 100, 1000} {
		x, y0 := randFloats(r, n), randFloats(r, n)
		alpha := float32(r.NormFloat64())
		for name, f := range map[string]func(float32, []float32, []float32){"dispatch": Axpy, "pure Go": axpyGeneric} {
			y := append([]float32(nil), y0...)
			f(alpha, x, y)
			for i := range y {
				ax := float64(alpha) * float64(x[i])
				exact := float64(y0[i]) + ax
				if diff := math.Abs(float64(y[i]) - exact); diff > u*(math.Abs(exact)+math.Abs(ax)) {
					t.Fatalf("%s n=%d i=%d: %v, exact %v", name, n, i, y[i], exact)
				}
			}
		}
	}
}

// TestAxpyExactOnIntegers: with integers every step is exact.
func TestAxpyExactOnIntegers(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	for _, n := range []int{3, 40, 77} {
		x, y := randInts(r, n, 100), randInts(r, n, 100)
		want := make([]float32, n)
		for i := range want {
			want[i] = y[i] + 3*x[i]
		}
		Axpy(3, x, y)
		for i := range want {
			if y[i] != want[i] {
				t.Fatalf("n=%d i=%d: %v, want %v", n, i, y[i], want[i])
			}
		}
	}
}

// TestScaleIsOneRoundedProduct: each element is αx rounded once, the same
// bits in the assembly and in pure Go; lengths cover the 32- and 8-wide
// loops and the scalar tail.
func TestScaleIsOneRoundedProduct(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for _, n := range []int{0, 1, 7, 8, 9, 31, 32, 33, 71, 100, 1000} {
		x0 := randFloats(r, n)
		alpha := float32(r.NormFloat64())
		for name, f := range map[string]func(float32, []float32){"dispatch": Scale, "pure Go": scaleGeneric} {
			x := append([]float32(nil), x0...)
			f(alpha, x)
			for i := range x {
				if want := float32(float64(alpha) * float64(x0[i])); math.Float32bits(x[i]) != math.Float32bits(want) {
					t.Fatalf("%s n=%d i=%d: %v, want %v", name, n, i, x[i], want)
				}
			}
		}
	}
}

// TestPrefetchChangesNothing: a prefetch of any length leaves every value
// as it was, and a packed product that prefetches the next block meanwhile
// gives the same bits as one that does not, and leaves that block alone.
func TestPrefetchChangesNothing(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	for _, n := range []int{0, 1, 15, 16, 17, 1000} {
		x := randFloats(r, n)
		want := append([]float32(nil), x...)
		Prefetch(x)
		for i := range x {
			if math.Float32bits(x[i]) != math.Float32bits(want[i]) {
				t.Fatalf("n=%d i=%d: %v, was %v", n, i, x[i], want[i])
			}
		}
	}
	const m, k, n = 30, 40, 70
	a, b, next := randFloats(r, m*k), randFloats(r, k*n), randFloats(r, k*n)
	pb, pnext := PackB(b, n, k, n), PackB(next, n, k, n)
	nextWas := append([]float32(nil), pnext.packed...)
	for _, accumulate := range []bool{false, true} {
		want, got := randFloats(r, m*n), make([]float32, m*n)
		copy(got, want)
		if accumulate {
			MatMulAddPacked(want, n, a, k, pb, m)
		} else {
			MatMulPacked(want, n, a, k, pb, m)
		}
		for part := range 3 {
			lo, hi := part*m/3, (part+1)*m/3
			MatMulPackedAhead(accumulate, got[lo*n:], n, a[lo*k:], k, pb, hi-lo, Ahead{Next: pnext, Part: part, Parts: 3})
		}
		if e := sameBits(got, want); e >= 0 {
			t.Fatalf("accumulate=%v element %d: %v prefetching, %v not", accumulate, e, got[e], want[e])
		}
	}
	if e := sameBits(pnext.packed, nextWas); e >= 0 {
		t.Fatalf("the prefetched packing changed at %d", e)
	}
}

// TestSumPathsAgreeBitForBit: the sum uses no fused operation, so the
// assembly and the pure-Go fold must agree exactly; both stay within the
// summation error bound of the float64 sum.
func TestSumPathsAgreeBitForBit(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	for _, n := range []int{0, 1, 63, 64, 65, 128, 1000, 4096, 10007} {
		x := randFloats(r, n)
		got, gen := Sum(x), sumGeneric(x)
		if math.Float32bits(got) != math.Float32bits(gen) {
			t.Fatalf("n=%d: Sum %v, pure Go %v", n, got, gen)
		}
		var exact, abs float64
		for _, v := range x {
			exact += float64(v)
			abs += math.Abs(float64(v))
		}
		d := float64(n/64 + 6 + 64)
		u := math.Ldexp(1, -24)
		if diff := math.Abs(float64(got) - exact); diff > d*u/(1-d*u)*abs {
			t.Fatalf("n=%d: Sum %v, exact %v", n, got, exact)
		}
	}
	ints := randInts(r, 777, 1000)
	var want float32
	for _, v := range ints {
		want += v
	}
	if got := Sum(ints); got != want {
		t.Fatalf("integer sum %v, want %v", got, want)
	}
}

// allHalves returns every 16-bit pattern, behind an odd offset so the
// assembly's 8-wide loop and the scalar tail both run.
func allHalves() []uint16 {
	src := make([]uint16, 3+1<<16)
	for i := 0; i < 1<<16; i++ {
		src[3+i] = uint16(i)
	}
	return src[3:]
}

// f16Reference decodes a half-precision pattern from its fields with
// math.Ldexp, independently of the conversion under test.
func f16Reference(h uint16) (bits uint32, isNaN bool) {
	sign := float64(1)
	if h&0x8000 != 0 {
		sign = -1
	}
	exp, mant := int(h>>10)&0x1f, float64(h&0x3ff)
	switch {
	case exp == 0x1f && mant == 0:
		return math.Float32bits(float32(math.Inf(int(sign)))), false
	case exp == 0x1f:
		return 0, true
	case exp == 0:
		return math.Float32bits(float32(sign * math.Ldexp(mant, -24))), false
	}
	return math.Float32bits(float32(sign * math.Ldexp(1024+mant, exp-25))), false
}

func TestF16ToF32Exhaustive(t *testing.T) {
	src := allHalves()
	for name, f := range map[string]func([]float32, []uint16){"dispatch": F16ToF32, "pure Go": f16ToF32Generic} {
		dst := make([]float32, len(src)+5)
		f(dst, src)
		for i, h := range src {
			got := math.Float32bits(dst[i])
			want, isNaN := f16Reference(h)
			if isNaN {
				// NaN: sign and the 10 payload bits kept, quiet bit set.
				want = uint32(h&0x8000)<<16 | 0x7fc00000 | uint32(h&0x3ff)<<13
				if !math.IsNaN(float64(dst[i])) {
					t.Fatalf("%s: %#04x gave %v, want NaN", name, h, dst[i])
				}
			}
			if got != want {
				t.Fatalf("%s: %#04x gave %#08x (%v), want %#08x", name, h, got, dst[i], want)
			}
		}
		if dst[len(src)] != 0 {
			t.Fatalf("%s wrote past len(src)", name)
		}
	}
}

// bf16Reference decodes a bfloat16 pattern from its fields (8-bit exponent
// biased 127, 7-bit mantissa).
func bf16Reference(h uint16) (bits uint32, isNaN bool) {
	sign := float64(1)
	if h&0x8000 != 0 {
		sign = -1
	}
	exp, mant := int(h>>7)&0xff, float64(h&0x7f)
	switch {
	case exp == 0xff && mant == 0:
		return math.Float32bits(float32(math.Inf(int(sign)))), false
	case exp == 0xff:
		return 0, true
	case exp == 0:
		return math.Float32bits(float32(sign * math.Ldexp(mant, -133))), false
	}
	return math.Float32bits(float32(sign * math.Ldexp(128+mant, exp-134))), false
}

func TestBF16ToF32Exhaustive(t *testing.T) {
	src := allHalves()
	for name, f := range map[string]func([]float32, []uint16){"dispatch": BF16ToF32, "pure Go": bf16ToF32Generic} {
		dst := make([]float32, len(src))
		f(dst, src)
		for i, h := range src {
			got := math.Float32bits(dst[i])
			want, isNaN := bf16Reference(h)
			if isNaN {
				// NaN: bfloat16 is the high half of a float32, payload and all.
				want = uint32(h) << 16
				if !math.IsNaN(float64(dst[i])) {
					t.Fatalf("%s: %#04x gave %v, want NaN", name, h, dst[i])
				}
			}
			if got != want {
				t.Fatalf("%s: %#04x gave %#08x (%v), want %#08x", name, h, got, dst[i], want)
			}
		}
	}
}

// TestF16ReferenceAnchors pins the reference itself to known values.
func TestF16ReferenceAnchors(t *testing.T) {
	for h, want := range map[uint16]float32{
		0x3c00: 1, 0xc000: -2, 0x7bff: 65504, 0x0001: float32(math.Ldexp(1, -24)),
		0x03ff: float32(math.Ldexp(1023, -24)), 0x0400: float32(math.Ldexp(1, -14)), 0x3555: 0.333251953125,
	} {
		if got, _ := f16Reference(h); got != math.Float32bits(want) {
			t.Fatalf("reference %#04x = %v, want %v", h, math.Float32frombits(got), want)
		}
	}
	for h, want := range map[uint16]float32{0x3f80: 1, 0xc000: -2, 0x0001: float32(math.Ldexp(1, -133)), 0x4049: 3.140625} {
		if got, _ := bf16Reference(h); got != math.Float32bits(want) {
			t.Fatalf("bf16 reference %#04x = %v, want %v", h, math.Float32frombits(got), want)
		}
	}
}

func TestPeakCountsOperations(t *testing.T) {
	per := Peak(1)
	if per != 12*2 && per != 12*8*2 && per != 12*16*2 {
		t.Fatalf("Peak(1) = %d operations", per)
	}
	if got := Peak(10); got != 10*per {
		t.Fatalf("Peak(10) = %d, want %d", got, 10*per)
	}
	if Peak(0) != 0 {
		t.Fatal("Peak(0) did work")
	}
}

// TestGatedIsRoundedOnceEachStep: each element is the sum, the quotient
// and the product each rounded once to float32, the same bits in the
// assembly and in pure Go, on lengths covering the 8-wide loop and the
// scalar tail, with gates whose e^(−g) is 0, +Inf and 1, and in place.
func TestGatedIsRoundedOnceEachStep(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 26))
	for _, n := range []int{0, 1, 7, 8, 9, 31, 33, 100, 1000} {
		g, u := randFloats(r, n), randFloats(r, n)
		for i := range g {
			g[i] *= 12
		}
		special := []float32{-200, 200, 0, float32(math.Copysign(0, -1)), 88.5, -88.5}
		for i := 0; i < n && i < len(special); i++ {
			g[n-1-i] = special[i]
		}
		e := make([]float32, n)
		for i, v := range g {
			e[i] = float32(math.Exp(-float64(v)))
		}
		for name, f := range map[string]func(dst, g, e, u []float32){"dispatch": Gated, "pure Go": gatedGeneric} {
			dst := make([]float32, n)
			f(dst, g, e, u)
			inPlace := append([]float32(nil), g...)
			f(inPlace, inPlace, e, u)
			for i := range dst {
				sum := float32(1 + float64(e[i]))
				want := float32(float64(float32(float64(g[i])/float64(sum))) * float64(u[i]))
				if math.Float32bits(dst[i]) != math.Float32bits(want) || math.Float32bits(inPlace[i]) != math.Float32bits(want) {
					t.Fatalf("%s n=%d i=%d: g %v e %v u %v: %v (in place %v), want %v", name, n, i, g[i], e[i], u[i], dst[i], inPlace[i], want)
				}
			}
		}
	}
}
