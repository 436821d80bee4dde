package quant

import (
	"encoding/binary"
	"math"
)

// The block decoders. Each computes an element with the float32 operations
// of the reference implementation, in its order; an explicit float32(…)
// rounds a product on its own, so that the compiler does not fuse it with
// the sum that follows (which would change the last bit).

func half(b []byte) float32 { return HalfToFloat(binary.LittleEndian.Uint16(b)) }

func dequantizeF32(dst []float32, b []byte) {
	dst[0] = math.Float32frombits(binary.LittleEndian.Uint32(b))
}

func dequantizeF16(dst []float32, b []byte) { dst[0] = half(b) }

func dequantizeBF16(dst []float32, b []byte) {
	dst[0] = BFloatToFloat(binary.LittleEndian.Uint16(b))
}

// Q8_0: d (f16), then 32 int8 weights: d·q.
func dequantizeQ8_0(dst []float32, b []byte) {
	d := half(b)
	for i, q := range b[2:34] {
		dst[i] = float32(int8(q)) * d
	}
}

// Q4_0: d (f16), then 16 bytes whose low nibbles are weights 0–15 and high
// nibbles 16–31, offset by 8: d·(q−8).
func dequantizeQ4_0(dst []float32, b []byte) {
	d := half(b)
	for i, q := range b[2:18] {
		dst[i] = d * float32(int(q&0xf)-8)
		dst[i+16] = d * float32(int(q>>4)-8)
	}
}

// Q4_1: d and m (f16), then nibbles as Q4_0, unsigned: d·q + m.
func dequantizeQ4_1(dst []float32, b []byte) {
	d, m := half(b), half(b[2:])
	for i, q := range b[4:20] {
		dst[i] = float32(d*float32(q&0xf)) + m
		dst[i+16] = float32(d*float32(q>>4)) + m
	}
}

// Q5_0: d (f16), the fifth bits of the 32 weights (a little-endian uint32,
// bit i for weight i), then their low nibbles as Q4_0, offset by 16.
func dequantizeQ5_0(dst []float32, b []byte) {
	d := half(b)
	qh := binary.LittleEndian.Uint32(b[2:])
	for i, q := range b[6:22] {
		lo := int(q&0xf) | int(qh>>i&1)<<4
		hi := int(q>>4) | int(qh>>(i+16)&1)<<4
		dst[i] = d * float32(lo-16)
		dst[i+16] = d * float32(hi-16)
	}
}

// Q5_1: d and m (f16), the fifth bits, then the low nibbles, unsigned:
// d·q + m.
func dequantizeQ5_1(dst []float32, b []byte) {
	d, m := half(b), half(b[2:])
	qh := binary.LittleEndian.Uint32(b[4:])
	for i, q := range b[8:24] {
		lo := q&0xf | byte(qh>>i&1)<<4
		hi := q>>4 | byte(qh>>(i+16)&1)<<4
		dst[i] = float32(d*float32(lo)) + m
		dst[i+16] = float32(d*float32(hi)) + m
	}
}

// ScaleMinK4 unpacks the 6-bit scale and minimum of sub-block j (0–7) of a
// Q4_K or Q5_K super-block from its 12 packed bytes: bytes 0–3 hold the low
// six bits of scales 0–3, bytes 4–7 those of minima 0–3; sub-blocks 4–7
// take their low four bits from the nibbles of bytes 8–11 and their top two
// from the spare bits of bytes 0–7.
func ScaleMinK4(scales []byte, j int) (sc, m uint8) {
	if j < 4 {
		return scales[j] & 63, scales[j+4] & 63
	}
	return scales[j+4]&0xf | scales[j-4]>>6<<4, scales[j+4]>>4 | scales[j]>>6<<4
}

// Q4_K: d and dmin (f16), 12 bytes of sub-block scales and minima, then 128
// bytes of nibbles: each 32 bytes hold two sub-blocks of 32, the first in
// the low nibbles. Weight i of sub-block j is (d·sc_j)·q − dmin·m_j.
func dequantizeQ4_K(dst []float32, b []byte) {
	d, dmin := half(b), half(b[2:])
	scales, qs := b[4:16], b[16:144]
	for j := 0; j < 8; j += 2 {
		sc0, m0 := ScaleMinK4(scales, j)
		sc1, m1 := ScaleMinK4(scales, j+1)
		d0, min0 := d*float32(sc0), dmin*float32(m0)
		d1, min1 := d*float32(sc1), dmin*float32(m1)
		out, in := dst[32*j:32*j+64], qs[16*j:16*j+32]
		for i, q := range in {
			out[i] = float32(d0*float32(q&0xf)) - min0
			out[i+32] = float32(d1*float32(q>>4)) - min1
		}
	}
}

// Q5_K: as Q4_K with a fifth bit per weight: 32 bytes after the scales,
// bit j of byte i belonging to weight i of sub-block j.
func dequantizeQ5_K(dst []float32, b []byte) {
	d, dmin := half(b), half(b[2:])
	scales, qh, qs := b[4:16], b[16:48], b[48:176]
	for j := 0; j < 8; j += 2 {
		sc0, m0 := ScaleMinK4(scales, j)
		sc1, m1 := ScaleMinK4(scales, j+1)
		d0, min0 := d*float32(sc0), dmin*float32(m0)
		d1, min1 := d*float32(sc1), dmin*float32(m1)
		out, in := dst[32*j:32*j+64], qs[16*j:16*j+32]
		for i, q := range in {
			lo := q&0xf | qh[i]>>j&1<<4
			hi := q>>4 | qh[i]>>(j+1)&1<<4
			out[i] = float32(d0*float32(lo)) - min0
			out[i+32] = float32(d1*float32(hi)) - min1
		}
	}
}

// Q6_K: 128 bytes of low nibbles, 64 bytes of high bit pairs, 16 int8
// sub-block scales (one per 16 weights), then d (f16). Each half of 128
// weights takes 64 low-nibble bytes and 32 high-bit bytes: weight 32r+i of
// the half (r 0–3) has its low four bits in byte i+32(r%2), low nibble for
// r < 2, and its high two in bits 2r, 2r+1 of byte i, offset by 32:
// (d·sc)·(q−32).
func dequantizeQ6_K(dst []float32, b []byte) {
	ql, qh, sc := b[0:128], b[128:192], b[192:208]
	d := half(b[208:])
	for h := range 2 {
		for r := range 4 {
			lo := ql[64*h+32*(r%2):]
			shift := 4 * (r / 2)
			at := 128*h + 32*r
			for i := range 32 {
				q := int(lo[i]>>shift&0xf) | int(qh[32*h+i]>>(2*r)&3)<<4
				dst[at+i] = d * float32(int8(sc[(at+i)/16])) * float32(q-32)
			}
		}
	}
}
