package asm

import "math"

// The pure-Go kernels: the only ones under the purego tag and on other
// architectures, and the reference the assembly is tested against. They
// follow the summation order of the package comment.

// dotGeneric is one output element of MatMulT in the package's order.
func dotGeneric(a, b []float32) float32 {
	k := len(a)
	b = b[:k]
	var s [8]float32
	p := 0
	for ; p+8 <= k; p += 8 {
		aa, bb := a[p:p+8:p+8], b[p:p+8:p+8]
		s[0] += aa[0] * bb[0]
		s[1] += aa[1] * bb[1]
		s[2] += aa[2] * bb[2]
		s[3] += aa[3] * bb[3]
		s[4] += aa[4] * bb[4]
		s[5] += aa[5] * bb[5]
		s[6] += aa[6] * bb[6]
		s[7] += aa[7] * bb[7]
	}
	if t := k - p; t > 0 {
		// Lane l >= 8-t takes element k-8+l, as the assembly's overlapping
		// tail load does.
		for l := 8 - t; l < 8; l++ {
			s[l] += a[k-8+l] * b[k-8+l]
		}
	}
	return reduceLanes(&s)
}

// reduceLanes folds eight lanes as the assembly does:
// ((s0+s4)+(s2+s6)) + ((s1+s5)+(s3+s7)).
func reduceLanes(s *[8]float32) float32 {
	v0, v1, v2, v3 := s[0]+s[4], s[1]+s[5], s[2]+s[6], s[3]+s[7]
	return (v0 + v2) + (v1 + v3)
}

func matmulTGeneric(dst []float32, ldd int, a []float32, lda int, b []float32, ldb, m, n, k int) {
	for i := 0; i < m; i++ {
		ar := a[i*lda : i*lda+k]
		dr := dst[i*ldd : i*ldd+n]
		for j := range dr {
			dr[j] = dotGeneric(ar, b[j*ldb:j*ldb+k])
		}
	}
}

func matmulTQ8Generic(dst []float32, ldd int, a []float32, b []int8, scales []float32, m, n, k, blockSize int) {
	nb := k / blockSize
	w := make([]float32, k)
	for j := 0; j < n; j++ {
		dequantRow(w, b[j*k:j*k+k], scales[j*nb:j*nb+nb], blockSize)
		for i := 0; i < m; i++ {
			dst[i*ldd+j] = dotGeneric(a[i*k:i*k+k], w)
		}
	}
}

// dequantRow sets w[p] = float32(q[p])·scale of p's block, one rounding.
func dequantRow(w []float32, q []int8, scales []float32, blockSize int) {
	for blk, s := range scales {
		lo := blk * blockSize
		for p := lo; p < lo+blockSize; p++ {
			w[p] = float32(q[p]) * s
		}
	}
}

func gatedGeneric(dst, g, e, u []float32) {
	e, u, dst = e[:len(g)], u[:len(g)], dst[:len(g)]
	for i, v := range g {
		dst[i] = (v / (1 + e[i])) * u[i]
	}
}

func scaleGeneric(alpha float32, x []float32) {
	for i := range x {
		x[i] *= alpha
	}
}

func axpyGeneric(alpha float32, x, y []float32) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] += alpha * v
	}
}

// sumGeneric folds 64 interleaved partial sums pairwise, as the assembly's
// eight 8-lane accumulators do, then adds the remainder in turn.
func sumGeneric(x []float32) float32 {
	var s [64]float32
	main := len(x) &^ 63
	for i := 0; i < main; i += 64 {
		xx := x[i : i+64 : i+64]
		for l := range s {
			s[l] += xx[l]
		}
	}
	return foldSum64(&s) + sumTail(x[main:])
}

// foldSum64 folds the 64 partial sums (accumulator r = lanes 8r..8r+7):
// r0+=r4, r1+=r5, r2+=r6, r3+=r7, r0+=r2, r1+=r3, r0+=r1, then the lane tree.
func foldSum64(s *[64]float32) float32 {
	var acc [8]float32
	for l := 0; l < 8; l++ {
		r0, r1, r2, r3 := s[l]+s[32+l], s[8+l]+s[40+l], s[16+l]+s[48+l], s[24+l]+s[56+l]
		r0 += r2
		r1 += r3
		acc[l] = r0 + r1
	}
	return reduceLanes(&acc)
}

func sumTail(x []float32) float32 {
	var t float32
	for _, v := range x {
		t += v
	}
	return t
}

// f16ToF32Generic widens IEEE half-precision bit patterns by their fields.
func f16ToF32Generic(dst []float32, src []uint16) {
	dst = dst[:len(src)]
	for i, h := range src {
		dst[i] = math.Float32frombits(f16Bits(h))
	}
}

// f16Bits returns the float32 bit pattern of the half-precision value h.
func f16Bits(h uint16) uint32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f && mant == 0: // ±Inf
		return sign | 0x7f800000
	case exp == 0x1f: // NaN: same payload, quiet bit set
		return sign | 0x7fc00000 | mant<<13
	case exp != 0: // normal: rebias 15 → 127
		return sign | (exp+112)<<23 | mant<<13
	case mant == 0: // ±0
		return sign
	}
	// Subnormal: mant·2^-24; shift the leading one up to bit 10 and lower the
	// exponent once per shift.
	e := uint32(113) // biased exponent of 2^-14
	for mant&0x400 == 0 {
		mant <<= 1
		e--
	}
	return sign | e<<23 | (mant&0x3ff)<<13
}

func bf16ToF32Generic(dst []float32, src []uint16) {
	dst = dst[:len(src)]
	for i, h := range src {
		dst[i] = math.Float32frombits(uint32(h) << 16)
	}
}

// peakGeneric is Peak for the pure-Go kernels: 12 independent scalar
// multiply-add chains.
func peakGeneric(rounds int) int {
	var acc [12]float32
	x, y := float32(0.999), float32(1e-3)
	for range rounds {
		for i := range acc {
			acc[i] = acc[i]*x + y
		}
	}
	if acc[0] < 0 { // never (all terms are positive); keeps the loop's result live
		return 0
	}
	return rounds * 12 * 2
}

func f32ToF16Generic(dst []uint16, src []float32) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = f16FromBits(math.Float32bits(v))
	}
}

// f16FromBits rounds the float32 with bits b to half precision, to nearest
// with ties to even.
func f16FromBits(b uint32) uint16 {
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23) & 0xff
	mant := b & 0x7fffff
	switch {
	case exp == 0xff && mant != 0: // NaN: quiet, top payload bits
		return sign | 0x7e00 | uint16(mant>>13)
	case exp == 0xff:
		return sign | 0x7c00
	}
	e := exp - 127 + 15 // half-precision biased exponent
	if e >= 0x1f {
		return sign | 0x7c00 // overflow (also what rounds up past the largest half)
	}
	if e <= 0 {
		// Subnormal half (or zero): the value is m·2^(e-1-10-13) with the
		// implicit bit; shift right by 14-e bits of the 24-bit significand.
		if e < -10 {
			return sign // below half the smallest subnormal, ties included
		}
		m := mant | 0x800000
		shift := uint32(14 - e)
		return sign | roundShift(m, shift)
	}
	// Normal: drop 13 bits, rounding; a carry out of the mantissa bumps the
	// exponent (up to Inf), which the bit layout does by itself.
	v := uint32(e)<<10 | mant>>13
	rest := mant & 0x1fff
	if rest > 0x1000 || (rest == 0x1000 && v&1 == 1) {
		v++
	}
	return sign | uint16(v)
}

// roundShift returns m >> shift rounded to nearest, ties to even.
func roundShift(m, shift uint32) uint16 {
	v := m >> shift
	rest := m & (1<<shift - 1)
	half := uint32(1) << (shift - 1)
	if rest > half || (rest == half && v&1 == 1) {
		v++
	}
	return uint16(v)
}

// bf16Bits rounds the float32 with bits b to bfloat16, to nearest with ties
// to even.
func bf16Bits(b uint32) uint16 {
	if b&0x7fffffff > 0x7f800000 { // NaN
		return uint16(b>>16) | 0x40
	}
	return uint16((b + 0x7fff + (b>>16)&1) >> 16)
}
