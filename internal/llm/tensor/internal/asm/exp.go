package asm

import (
	"fmt"
	"math"
)

// Exp sets dst[i] = e^x[i] for the softmax and SiLU of package tensor: a
// degree-5 minimax polynomial on the reduced argument (the classic single-
// precision exp of the Cephes library), within 2 ulps of the true value over
// the float32 range (see TestExpAccuracy); results below 2^-126 come out as
// subnormals rounded once, x > 88.72284 gives +Inf, x < -103.972084 gives 0
// and NaN stays NaN. A value's result does not depend on its position in x.
// It panics if dst is shorter than x; dst may be x.
func Exp(dst, x []float32) {
	if len(dst) < len(x) {
		panic(fmt.Sprintf("asm.Exp: dst has %d elements, x %d", len(dst), len(x)))
	}
	exp(dst[:len(x)], x, 0)
}

// ExpShifted sets dst[i] = e^(x[i]−shift), the difference rounded to
// float32 first: Exp of the differences without writing them (x − 0 is x,
// so a shift of 0 is Exp). Shifted by a row's maximum, it is the numerator
// of a softmax. It panics if dst is shorter than x; dst may be x.
func ExpShifted(dst, x []float32, shift float32) {
	if len(dst) < len(x) {
		panic(fmt.Sprintf("asm.ExpShifted: dst has %d elements, x %d", len(dst), len(x)))
	}
	exp(dst[:len(x)], x, shift)
}

// Max returns the largest element of x, −Inf for none; with a NaN in x
// the result is unspecified (NaN or another element).
func Max(x []float32) float32 {
	if len(x) == 0 {
		return float32(math.Inf(-1))
	}
	return maxOf(x)
}

func maxGeneric(x []float32) float32 {
	m := x[0]
	for _, v := range x[1:] {
		m = max(m, v)
	}
	return m
}

// The constants of the reduction e^x = 2^n · e^r, r = x − n·ln 2 (ln 2 split
// so that n·ln2Hi is exact), and of e^r ≈ 1 + r + r²·P(r).
const (
	expOverflow  = 88.72284    // just above ln(MaxFloat32)
	expUnderflow = -103.972084 // ln of half the smallest subnormal
	log2e        = 1.44269504
	ln2Hi        = 0.693359375
	ln2Lo        = -2.12194440e-4
	expP0        = 1.9875691500e-4
	expP1        = 1.3981999507e-3
	expP2        = 8.3334519073e-3
	expP3        = 4.1665795894e-2
	expP4        = 1.6666665459e-1
	expP5        = 5.0000001201e-1
)

func expGeneric(dst, x []float32, shift float32) {
	dst = dst[:len(x)]
	for i, v := range x {
		dst[i] = exp32(v - shift)
	}
}

// exp32 is one element of Exp; the assembly follows the same steps with
// fused multiply-adds.
func exp32(x float32) float32 {
	switch {
	case x != x:
		return x
	case x > expOverflow:
		return float32(math.Inf(1))
	case x < expUnderflow:
		return 0
	}
	n := float32(math.RoundToEven(float64(x * log2e)))
	r := x - float32(n*ln2Hi)
	r -= float32(n * ln2Lo)
	z := float32(r * r)
	p := float32(expP0)
	p = float32(p*r) + expP1
	p = float32(p*r) + expP2
	p = float32(p*r) + expP3
	p = float32(p*r) + expP4
	p = float32(p*r) + expP5
	y := float32(p*z) + r + 1
	// 2^n in two factors, each a normal float32 for n in [-150, 128], so a
	// subnormal result is rounded only by the last product.
	ni := int32(n)
	n1 := ni >> 1
	n2 := ni - n1
	y *= math.Float32frombits(uint32(n1+127) << 23)
	return y * math.Float32frombits(uint32(n2+127)<<23)
}
