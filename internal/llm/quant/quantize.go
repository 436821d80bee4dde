package quant

import (
	"encoding/binary"
	"math"
)

// The block encoders of the reference implementation (gguf-py's quantize,
// which gives the bytes of llama.cpp's reference quantisers). Their float32
// steps are rounded as the reference rounds them: a product is converted
// on its own before it is added to.

func putHalf(b []byte, f float32) { binary.LittleEndian.PutUint16(b, FloatToHalf(f)) }

func quantizeF32(dst []byte, src []float32) {
	binary.LittleEndian.PutUint32(dst, math.Float32bits(src[0]))
}

func quantizeF16(dst []byte, src []float32) { putHalf(dst, src[0]) }

func quantizeBF16(dst []byte, src []float32) {
	binary.LittleEndian.PutUint16(dst, FloatToBFloat(src[0]))
}

// inverse is 1/d, or 0 for a zero scale.
func inverse(d float32) float32 {
	if d == 0 {
		return 0
	}
	return 1 / d
}

// signedMax is the element of largest magnitude, the first of equals. A
// block of zeros gives its first, as gguf-py does (llama.cpp's C quantiser
// gives +0 there, so for a block of zeros led by −0 the two store scales
// of opposite sign).
func signedMax(src []float32) float32 {
	m := src[0]
	amax := float32(math.Abs(float64(m)))
	for _, v := range src[1:] {
		if a := float32(math.Abs(float64(v))); a > amax {
			amax, m = a, v
		}
	}
	return m
}

// Q8_0: d = max|x|/127, q = x/d rounded half away from zero.
func quantizeQ8_0(dst []byte, src []float32) {
	var amax float32
	for _, v := range src {
		amax = max(amax, float32(math.Abs(float64(v))))
	}
	d := amax / 127
	id := inverse(d)
	putHalf(dst, d)
	for i, v := range src {
		dst[2+i] = byte(int8(math.Round(float64(float32(v * id)))))
	}
}

// truncLevel is trunc(x·id + offset) clamped to [0, top]: the levels of
// Q4_0/Q5_0 (offset 8.5, 16.5) and Q4_1/Q5_1 (0.5, on x − min).
func truncLevel(x, id, offset float32, top int) int {
	v := float32(float32(x*id) + offset)
	return min(top, max(0, int(v)))
}

// Q4_0: d = m/−8 for m the element of largest magnitude, levels
// trunc(x/d + 8.5) up to 15.
func quantizeQ4_0(dst []byte, src []float32) {
	d := signedMax(src) / -8
	id := inverse(d)
	putHalf(dst, d)
	for i := range 16 {
		lo := truncLevel(src[i], id, 8.5, 15)
		hi := truncLevel(src[i+16], id, 8.5, 15)
		dst[2+i] = byte(lo | hi<<4)
	}
}

// Q5_0: as Q4_0 with d = m/−16, levels trunc(x/d + 16.5) up to 31.
func quantizeQ5_0(dst []byte, src []float32) {
	d := signedMax(src) / -16
	id := inverse(d)
	putHalf(dst, d)
	var qh uint32
	for i := range 16 {
		lo := truncLevel(src[i], id, 16.5, 31)
		hi := truncLevel(src[i+16], id, 16.5, 31)
		dst[6+i] = byte(lo&0xf | hi<<4)
		qh |= uint32(lo>>4)<<i | uint32(hi>>4)<<(i+16)
	}
	binary.LittleEndian.PutUint32(dst[2:], qh)
}

// minMax is the least and greatest element.
func minMax(src []float32) (lo, hi float32) {
	lo, hi = src[0], src[0]
	for _, v := range src[1:] {
		lo, hi = min(lo, v), max(hi, v)
	}
	return lo, hi
}

// Q4_1: d = (max − min)/15, m = min, levels trunc((x − min)/d + 0.5).
func quantizeQ4_1(dst []byte, src []float32) {
	lo, hi := minMax(src)
	d := (hi - lo) / 15
	id := inverse(d)
	putHalf(dst, d)
	putHalf(dst[2:], lo)
	for i := range 16 {
		a := truncLevel(src[i]-lo, id, 0.5, 15)
		b := truncLevel(src[i+16]-lo, id, 0.5, 15)
		dst[4+i] = byte(a | b<<4)
	}
}

// Q5_1: as Q4_1 with d = (max − min)/31, levels up to 31.
func quantizeQ5_1(dst []byte, src []float32) {
	lo, hi := minMax(src)
	d := (hi - lo) / 31
	id := inverse(d)
	putHalf(dst, d)
	putHalf(dst[2:], lo)
	var qh uint32
	for i := range 16 {
		a := truncLevel(src[i]-lo, id, 0.5, 31)
		b := truncLevel(src[i+16]-lo, id, 0.5, 31)
		dst[8+i] = byte(a&0xf | b<<4)
		qh |= uint32(a>>4)<<i | uint32(b>>4)<<(i+16)
	}
	binary.LittleEndian.PutUint32(dst[4:], qh)
}
