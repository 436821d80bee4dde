package tensor

import (
	"fmt"

	"github.com/weftlabs/weft/internal/llm/quant"
	"github.com/weftlabs/weft/internal/llm/tensor/internal/asm"
)

// QActs are rows of activations quantised to int8 for products with
// block-quantised weights (asm.QActs): a scale per 32 elements for the
// weights of blocks of 32 (Q8_0, Q4_0, Q4_1, Q5_0, Q5_1), per 256 for the
// K-quants (Q4_K, Q5_K, Q6_K), as llama.cpp quantises them (its Q8_0 and
// Q8_K). Each scale is max|x|/127 over its block and each level the
// nearest integer to x/scale, so an element is off by at most half its
// block's scale; a block with a NaN or an infinity makes the products
// reading it NaN.
type QActs = asm.QActs

// Quantized reports whether weights of type t multiply quantised
// activations (QuantizeActs, MatMulTQuant), rather than float32 ones
// (MatMulTHalf for F16 and BF16, MatMulT for F32).
func Quantized(t quant.Type) bool {
	_, ok := asm.ActKindOf(t)
	return ok
}

// SameActs reports whether weights of types a and b take the same
// quantised activations, so that one QuantizeActs serves both.
func SameActs(a, b quant.Type) bool {
	ka, oka := asm.ActKindOf(a)
	kb, okb := asm.ActKindOf(b)
	return oka && okb && ka == kb
}

// QuantizeActs quantises the rows×cols matrix x (row-major) into dst for
// products with weights of type t, reusing dst's storage. Every row is
// quantised on its own. cols must be a whole number of t's blocks.
func QuantizeActs(dst *QActs, t quant.Type, x []float32, rows, cols int) {
	kind, ok := asm.ActKindOf(t)
	if !ok {
		panic(fmt.Sprintf("tensor.QuantizeActs: %v weights take float32 activations", t))
	}
	asm.QuantizeActs(dst, kind, x, rows, cols)
}

// MatMulTQuant sets row i of dst (at dst[i*ldd:]) to row i of x times the
// transpose of rows [from, from+n) of w, on the calling thread: one band of
// a layer's output columns. x comes from QuantizeActs for w's type. Each
// element is summed in integers block by block and in float32 across
// blocks in an order fixed by w's type and row length (package asm), so a
// row's result does not depend on the other rows, on the band or on the
// thread that computes it. Against the float32 product of x's values and
// the dequantised weights it differs by float32 rounding only; against the
// activations before QuantizeActs, by their quantisation.
func MatMulTQuant(dst []float32, ldd int, x *QActs, w *quant.Matrix, from, n int) {
	if x.Cols != w.Cols || from < 0 || from+n > w.Rows {
		panic(fmt.Sprintf("tensor.MatMulTQuant: activations of %d columns, rows [%d, %d) of a %d×%d matrix", x.Cols, from, from+n, w.Rows, w.Cols))
	}
	rb := w.RowBytes()
	asm.MatMulTQuant(w.Type, dst, ldd, x, w.Data[from*rb:(from+n)*rb], n)
}

// MatMulTHalf sets row i of dst (at dst[i*ldd:]) to row i of a (m rows of
// w.Cols, packed) times the transpose of rows [from, from+n) of w, an F16
// or BF16 matrix, on the calling thread. Weights are widened exactly and
// each element is summed in MatMulT's order with its products rounded
// before they are added (asm.MatMulTHalf).
func MatMulTHalf(dst []float32, ldd int, a []float32, m int, w *quant.Matrix, from, n int) {
	if from < 0 || from+n > w.Rows {
		panic(fmt.Sprintf("tensor.MatMulTHalf: rows [%d, %d) of a %d×%d matrix", from, from+n, w.Rows, w.Cols))
	}
	rb := w.RowBytes()
	asm.MatMulTHalf(w.Type, dst, ldd, a, w.Cols, w.Data[from*rb:(from+n)*rb], m, n, w.Cols)
}

// MatMulTMatrix sets dst[m×w.Rows] = a[m×w.Cols] · wᵀ for a block-quantised,
// F16 or BF16 weight, splitting the output columns over the pool's threads.
// acts is the workspace of the activations' quantisation (reused; unused
// for F32, F16 and BF16). The result does not depend on the thread count.
func (p *Pool) MatMulTMatrix(dst, a []float32, m int, w *quant.Matrix, acts *QActs) {
	n, k := w.Rows, w.Cols
	if len(a) < m*k || len(dst) < m*n {
		panic(fmt.Sprintf("tensor.MatMulTMatrix: a %d, dst %d elements for %d×%d·(%d×%d)ᵀ", len(a), len(dst), m, k, n, k))
	}
	band := func(lo, hi int) { MatMulTHalf(dst[lo:], n, a, m, w, lo, hi-lo) }
	if Quantized(w.Type) {
		QuantizeActs(acts, w.Type, a, m, k)
		band = func(lo, hi int) { MatMulTQuant(dst[lo:], n, acts, w, lo, hi-lo) }
	}
	if m*n*k < minParallelMACs || p.threads == 1 {
		band(0, n)
		return
	}
	p.Parallel(n, columnGrain, band)
}
