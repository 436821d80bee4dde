package asm

import (
	"fmt"

	"github.com/weftlabs/weft/internal/llm/quant"
)

// ActKindOf is the activation quantisation the products with weights of
// type t take, and false for a type they do not cover (F32, F16 and BF16
// multiply float32 activations).
func ActKindOf(t quant.Type) (ActKind, bool) {
	switch t {
	case quant.Q8_0, quant.Q4_0, quant.Q4_1, quant.Q5_0, quant.Q5_1:
		return Act32, true
	case quant.Q4_K, quant.Q5_K, quant.Q6_K:
		return Act256, true
	}
	return 0, false
}

// MatMulTQuant sets dst[i*ldd+j] = Σ_p x(i, p)·w(j, p) for i < x.Rows and
// j < n: quantised activations x times the transpose of w, n rows of
// x.Cols weights of type t stored as GGUF stores them, row after row.
// The package comment gives the order of the sums; the result does not
// depend on n, on x.Rows or on the tile that computes it, and the
// assembly gives the pure-Go version's bits. x must be of t's ActKindOf.
func MatMulTQuant(t quant.Type, dst []float32, ldd int, x *QActs, w []byte, n int) {
	kind, ok := ActKindOf(t)
	if !ok || x.Kind != kind {
		panic(fmt.Sprintf("asm.MatMulTQuant: %v weights with activations of kind %d", t, x.Kind))
	}
	rowBytes, err := t.Bytes(x.Cols)
	if err != nil {
		panic(fmt.Sprintf("asm.MatMulTQuant: %v", err))
	}
	m := x.Rows
	switch {
	case n < 0:
		panic(fmt.Sprintf("asm.MatMulTQuant: n=%d", n))
	case len(w) < n*rowBytes:
		panic(fmt.Sprintf("asm.MatMulTQuant: %d weight bytes for %d rows of %d", len(w), n, rowBytes))
	case ldd < n || m > 0 && len(dst) < (m-1)*ldd+n:
		panic(fmt.Sprintf("asm.MatMulTQuant: dst of %d with stride %d for %d×%d", len(dst), ldd, m, n))
	}
	if m == 0 || n == 0 {
		return
	}
	matmulTQuant(t, dst, ldd, x, w, rowBytes, n)
}

// matmulTQuantGeneric is the pure-Go product, one output at a time.
func matmulTQuantGeneric(t quant.Type, dst []float32, ldd int, x *QActs, w []byte, rowBytes, n int) {
	dot := genericDots[t]
	for i := range x.Rows {
		r := x.row(i)
		for j := range n {
			dst[i*ldd+j] = dot(r, w[j*rowBytes:(j+1)*rowBytes])
		}
	}
}

// genericDots are the pure-Go dot products of one row of activations (its
// levels, scales and sums) with one row of weights.
var genericDots = map[quant.Type]func(x actRow, w []byte) float32{
	quant.Q8_0: dotQ8_0,
	quant.Q4_0: dotQ4_0,
	quant.Q4_1: dotQ4_1,
	quant.Q5_0: dotQ5_0,
	quant.Q5_1: dotQ5_1,
	quant.Q4_K: dotQ4_K,
	quant.Q5_K: dotQ5_K,
	quant.Q6_K: dotQ6_K,
}

func half(b []byte) float32 { return quant.HalfToFloat(uint16(b[0]) | uint16(b[1])<<8) }

// dot32 is the product of the blocks-of-32 formats: each block's exact
// integer Σ w·x over its 32 elements, converted, times d_w·d_x (rounded
// once), rounded, is added to one accumulator in block order; the formats
// with a minimum add m_w·(d_x·Σq_x), one product a block, to a running sum
// in block order, added last. One integer a block, not lanes of one, lets
// a kernel keep a register's lanes for columns (or rows) and convert and
// scale sixteen products at once.
func dot32(x actRow, w []byte, size int, levels func(dst *[32]int8, blk []byte) (dw, mw float32, hasMin bool)) float32 {
	var acc, mins float32
	var lv [32]int8
	for b, dx := range x.d {
		blk := w[b*size : (b+1)*size]
		dw, mw, hasMin := levels(&lv, blk)
		q := x.q[32*b : 32*b+32]
		var s int32
		for e, v := range lv {
			s += int32(v) * int32(q[e])
		}
		acc += float32(float32(s) * float32(dw*dx))
		if hasMin {
			mins += float32(mw * x.dsums[b])
		}
	}
	return acc + mins
}

func dotQ8_0(x actRow, w []byte) float32 {
	return dot32(x, w, 34, func(lv *[32]int8, blk []byte) (float32, float32, bool) {
		for i, v := range blk[2:34] {
			lv[i] = int8(v)
		}
		return half(blk), 0, false
	})
}

func dotQ4_0(x actRow, w []byte) float32 {
	return dot32(x, w, 18, func(lv *[32]int8, blk []byte) (float32, float32, bool) {
		for i, v := range blk[2:18] {
			lv[i], lv[i+16] = int8(v&0xf)-8, int8(v>>4)-8
		}
		return half(blk), 0, false
	})
}

func dotQ4_1(x actRow, w []byte) float32 {
	return dot32(x, w, 20, func(lv *[32]int8, blk []byte) (float32, float32, bool) {
		for i, v := range blk[4:20] {
			lv[i], lv[i+16] = int8(v&0xf), int8(v>>4)
		}
		return half(blk), half(blk[2:]), true
	})
}

func highBits(blk []byte) uint32 {
	return uint32(blk[0]) | uint32(blk[1])<<8 | uint32(blk[2])<<16 | uint32(blk[3])<<24
}

func dotQ5_0(x actRow, w []byte) float32 {
	return dot32(x, w, 22, func(lv *[32]int8, blk []byte) (float32, float32, bool) {
		qh := highBits(blk[2:])
		for i, v := range blk[6:22] {
			lv[i] = int8(v&0xf|byte(qh>>i&1)<<4) - 16
			lv[i+16] = int8(v>>4|byte(qh>>(i+16)&1)<<4) - 16
		}
		return half(blk), 0, false
	})
}

func dotQ5_1(x actRow, w []byte) float32 {
	return dot32(x, w, 24, func(lv *[32]int8, blk []byte) (float32, float32, bool) {
		qh := highBits(blk[4:])
		for i, v := range blk[8:24] {
			lv[i] = int8(v&0xf | byte(qh>>i&1)<<4)
			lv[i+16] = int8(v>>4 | byte(qh>>(i+16)&1)<<4)
		}
		return half(blk), half(blk[2:]), true
	})
}

// dotK is the product of the K-quants. Per super-block, lane l (0–7)
// takes the exact integer p[l] = Σ over the eight sub-blocks of 32 of
// scale(l's sub-block part)·Σ_{e=4l}^{4l+3} w·x, and, for the formats with
// minima, n[l] = min_l·Σx over sub-block l; then acc[l] += p[l]·(d_w·d_x)
// − n[l]·(dmin_w·d_x), each product and the difference rounded once. The
// result folds acc as reduceLanes does.
func dotK(x actRow, w []byte, size int, super func(p, n *[8]int32, blk []byte, x []int8, sums []int32) (dw, dminw float32)) float32 {
	var acc [8]float32
	for b, dx := range x.d {
		var p, n [8]int32
		var sums []int32
		if x.sums != nil {
			sums = x.sums[8*b : 8*b+8]
		}
		dw, dmin := super(&p, &n, w[b*size:(b+1)*size], x.q[QKBlock*b:QKBlock*(b+1)], sums)
		scale, scaleMin := float32(dw*dx), float32(dmin*dx)
		for l := range acc {
			acc[l] += float32(float32(float32(p[l])*scale) - float32(float32(n[l])*scaleMin))
		}
	}
	return reduceLanes(&acc)
}

// subLanes adds scale·Σ_{e=4l}^{4l+3} w[e]·x[e] to p[l] for one sub-block
// of 32 (scale per 16 elements: lo for lanes 0–3, hi for 4–7).
func subLanes(p *[8]int32, w *[32]int8, x []int8, lo, hi int32) {
	x = x[:32]
	for l := range p {
		e := 4 * l
		s := int32(w[e])*int32(x[e]) + int32(w[e+1])*int32(x[e+1]) + int32(w[e+2])*int32(x[e+2]) + int32(w[e+3])*int32(x[e+3])
		if l < 4 {
			p[l] += lo * s
		} else {
			p[l] += hi * s
		}
	}
}

func dotQ4_K(x actRow, w []byte) float32 {
	return dotK(x, w, 144, func(p, n *[8]int32, blk []byte, x []int8, sums []int32) (float32, float32) {
		scales, qs := blk[4:16], blk[16:144]
		var lv [32]int8
		for j := range 8 {
			sc, m := quant.ScaleMinK4(scales, j)
			in, shift := qs[32*(j/2):32*(j/2)+32], 4*(j%2)
			for i, v := range in {
				lv[i] = int8(v >> shift & 0xf)
			}
			subLanes(p, &lv, x[32*j:], int32(sc), int32(sc))
			n[j] = int32(m) * sums[j]
		}
		return half(blk), half(blk[2:])
	})
}

func dotQ5_K(x actRow, w []byte) float32 {
	return dotK(x, w, 176, func(p, n *[8]int32, blk []byte, x []int8, sums []int32) (float32, float32) {
		scales, qh, qs := blk[4:16], blk[16:48], blk[48:176]
		var lv [32]int8
		for j := range 8 {
			sc, m := quant.ScaleMinK4(scales, j)
			in, shift := qs[32*(j/2):32*(j/2)+32], 4*(j%2)
			for i, v := range in {
				lv[i] = int8(v>>shift&0xf | qh[i]>>j&1<<4)
			}
			subLanes(p, &lv, x[32*j:], int32(sc), int32(sc))
			n[j] = int32(m) * sums[j]
		}
		return half(blk), half(blk[2:])
	})
}

func dotQ6_K(x actRow, w []byte) float32 {
	return dotK(x, w, 210, func(p, n *[8]int32, blk []byte, x []int8, _ []int32) (float32, float32) {
		ql, qh, sc := blk[0:128], blk[128:192], blk[192:208]
		var lv [32]int8
		for c := range 8 {
			h, r := c/4, c%4
			lo, shift := ql[64*h+32*(r%2):], 4*(r/2)
			for i := range 32 {
				lv[i] = int8(lo[i]>>shift&0xf|qh[32*h+i]>>(2*r)&3<<4) - 32
			}
			subLanes(p, &lv, x[32*c:], int32(int8(sc[2*c])), int32(int8(sc[2*c+1])))
		}
		return half(blk[208:]), 0
	})
}
