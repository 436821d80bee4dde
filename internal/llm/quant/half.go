package quant

import "math"

// HalfToFloat widens an IEEE half-precision value to float32 exactly
// (subnormals, infinities and signed zeros included); a NaN keeps its sign
// and payload and comes out quiet.
func HalfToFloat(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f && mant == 0: // ±Inf
		return math.Float32frombits(sign | 0x7f800000)
	case exp == 0x1f: // NaN: same payload, quiet bit set
		return math.Float32frombits(sign | 0x7fc00000 | mant<<13)
	case exp != 0: // normal: rebias 15 → 127
		return math.Float32frombits(sign | (exp+112)<<23 | mant<<13)
	case mant == 0: // ±0
		return math.Float32frombits(sign)
	}
	// Subnormal: mant·2^-24; shift the leading one up to bit 10 and lower
	// the exponent once per shift.
	e := uint32(113) // biased exponent of 2^-14
	for mant&0x400 == 0 {
		mant <<= 1
		e--
	}
	return math.Float32frombits(sign | e<<23 | (mant&0x3ff)<<13)
}

// FloatToHalf narrows a float32 to half precision, rounding to nearest with
// ties to even (as numpy's astype(float16) and the F16C instruction do):
// values past the largest half become ±Inf, small ones subnormal or ±0; a
// NaN stays a quiet NaN of the same sign with the top bits of its payload.
func FloatToHalf(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int(b>>23) & 0xff
	mant := b & 0x7fffff
	if exp == 0xff {
		if mant == 0 {
			return sign | 0x7c00
		}
		return sign | 0x7e00 | uint16(mant>>13)
	}
	e := exp - 112 // the half's biased exponent
	if e >= 0x1f {
		return sign | 0x7c00
	}
	if e <= 0 {
		// Subnormal half: the value is m·2^(exp−150) = (m >> shift)·2^-24.
		shift := uint(14 - e)
		if shift > 24 {
			return sign // below half the smallest subnormal
		}
		return sign | roundShift(mant|0x800000, shift)
	}
	return sign | roundShift(uint32(e)<<23|mant, 13)
}

// roundShift returns m >> shift rounded to nearest, ties to even; a carry
// out of the mantissa moves into the exponent, as the encoding wants.
func roundShift(m uint32, shift uint) uint16 {
	q := m >> shift
	rem := m & (1<<shift - 1)
	half := uint32(1) << (shift - 1)
	if rem > half || rem == half && q&1 == 1 {
		q++
	}
	return uint16(q)
}

// BFloatToFloat widens a bfloat16 value to float32: its 16 bits become the
// float32's high half, exactly.
func BFloatToFloat(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// FloatToBFloat narrows a float32 to bfloat16 as GGML does: rounding to
// nearest with ties to even, a NaN made quiet with the rest of its high
// half kept.
func FloatToBFloat(f float32) uint16 {
	n := math.Float32bits(f)
	if n&0x7fffffff > 0x7f800000 {
		n = n&0xffff0000 | 0x400000
	}
	return uint16((uint64(n) + 0x7fff + uint64(n>>16&1)) >> 16)
}
