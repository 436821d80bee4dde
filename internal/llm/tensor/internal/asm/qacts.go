package asm

import (
	"fmt"
	"math"
)

// QKBlock is the super-block of the K-quants: activations multiplied by
// Q4_K, Q5_K and Q6_K weights share a scale per this many elements.
const QKBlock = 256

// ActKind is how a QActs quantises its rows: the block of elements that
// share a scale, chosen by the weight format they multiply.
type ActKind uint8

const (
	// Act32 has a scale per 32 elements (the blocks of Q8_0, Q4_0, Q4_1,
	// Q5_0 and Q5_1), and each block's sum of values, d·Σq, for the
	// formats with a minimum.
	Act32 ActKind = iota + 1
	// Act256 has a scale per 256 elements (the super-blocks of the
	// K-quants) and the integer sum of each 32 elements, which the
	// minima of Q4_K and Q5_K multiply.
	Act256
)

// QActs are rows of activations quantised to int8 for the products with
// block-quantised weights: element p of row i stands for
// Q[i*Cols+p]·D[(i*Cols+p)/block]. Rows are quantised once and multiplied
// by every weight of one format family; the storage is reused from call to
// call.
type QActs struct {
	Kind       ActKind
	Rows, Cols int
	Q          []int8
	D          []float32 // one scale per block
	// Sums is Σq per 32 elements, which the bias of unsigned levels
	// (Act32) and the minima of Q4_K and Q5_K (Act256) multiply; DSums is
	// d·Σq per block, rounded once (Act32).
	Sums  []int32
	DSums []float32
}

func (k ActKind) block() int {
	if k == Act256 {
		return QKBlock
	}
	return Q8Block
}

// QuantizeActs quantises the rows×cols matrix x (row-major) into dst as
// kind, reusing dst's storage. Each block's scale is d = max|x|/127 and
// each element rounds x·(127/max|x|) to the nearest integer, ties to even
// (the rounding of the vector instructions). A block holding a NaN or an
// infinity gets the scale NaN and zero levels, so every product reading it
// is NaN, as the float32 product would be; one whose 127/max|x| overflows
// (max|x| below 127/MaxFloat32) gets zero levels. cols must be a multiple
// of the kind's block.
func QuantizeActs(dst *QActs, kind ActKind, x []float32, rows, cols int) {
	blk := kind.block()
	if cols%blk != 0 {
		panic(fmt.Sprintf("asm.QuantizeActs: %d columns are not a multiple of %d", cols, blk))
	}
	n := rows * cols
	x = x[:n]
	dst.Kind, dst.Rows, dst.Cols = kind, rows, cols
	dst.Q = grow(dst.Q, n)
	dst.D = grow(dst.D, n/blk)
	dst.Sums = grow(dst.Sums, n/Q8Block)
	if kind == Act256 {
		dst.DSums = dst.DSums[:0]
	} else {
		dst.DSums = grow(dst.DSums, n/Q8Block)
	}
	for b := range dst.D {
		q, v := dst.Q[b*blk:(b+1)*blk], x[b*blk:(b+1)*blk]
		sums := dst.Sums[b*blk/Q8Block : (b+1)*blk/Q8Block]
		d := quantizeActBlock(q, v, sums)
		dst.D[b] = d
		if kind == Act32 {
			dst.DSums[b] = float32(d * float32(sums[0]))
		}
	}
}

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// quantizeActBlockGeneric quantises one block, sets sums[s] to the sum
// of levels s·32 … s·32+31, and returns the block's scale. A block whose
// 127/max|x| is infinite (max|x| below 127/MaxFloat32) gets zero levels
// and the scale max|x|/127.
func quantizeActBlockGeneric(q []int8, v []float32, sums []int32) float32 {
	var amax float32
	for _, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			clear(q)
			clear(sums)
			return float32(math.NaN())
		}
		amax = max(amax, float32(math.Abs(float64(x))))
	}
	if amax == 0 {
		clear(q)
		clear(sums)
		return 0
	}
	id := 127 / amax
	if math.IsInf(float64(id), 0) {
		clear(q)
		clear(sums)
		return amax / 127
	}
	for i, x := range v {
		q[i] = int8(math.RoundToEven(float64(float32(x * id))))
	}
	for s := range sums {
		var sum int32
		for _, l := range q[s*Q8Block : (s+1)*Q8Block] {
			sum += int32(l)
		}
		sums[s] = sum
	}
	return amax / 127
}

// actRow is one row of a QActs.
type actRow struct {
	q     []int8
	d     []float32
	sums  []int32
	dsums []float32 // Act32
}

func (a *QActs) row(i int) actRow {
	blk := a.Kind.block()
	r := actRow{q: a.Q[i*a.Cols : (i+1)*a.Cols], d: a.D[i*a.Cols/blk : (i+1)*a.Cols/blk]}
	r.sums = a.Sums[i*a.Cols/Q8Block : (i+1)*a.Cols/Q8Block]
	if a.Kind == Act32 {
		r.dsums = a.DSums[i*a.Cols/Q8Block : (i+1)*a.Cols/Q8Block]
	}
	return r
}
