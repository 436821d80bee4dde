package tensor

import (
	"fmt"
	"math"
	"slices"

	"github.com/weftlabs/weft/internal/llm/tensor/internal/asm"
)

// Q8 is a Rows×Cols matrix quantised to int8 in blocks of BlockSize
// consecutive elements of a row, each block with its own scale:
// element (j, p) stands for float32(Data[j*Cols+p]) · Scales[j*(Cols/BlockSize)+p/BlockSize].
// A BlockSize equal to Cols gives one scale per row.
type Q8 struct {
	Data      []int8
	Scales    []float32
	Rows      int
	Cols      int
	BlockSize int
}

// QuantizeQ8 quantises the rows×cols matrix w (row-major) symmetrically:
// each block's scale is its largest magnitude / 127 and each element rounds
// to the nearest multiple of it (halves away from zero), so the error of an
// element is at most half its block's scale. blockSize must be a positive
// multiple of 8 dividing cols (ErrBlockSize); a NaN or infinite weight is
// ErrNonFinite.
func QuantizeQ8(w []float32, rows, cols, blockSize int) (*Q8, error) {
	if blockSize <= 0 || blockSize%8 != 0 || cols%blockSize != 0 {
		return nil, fmt.Errorf("%w: %d for rows of %d", ErrBlockSize, blockSize, cols)
	}
	if len(w) != rows*cols {
		return nil, fmt.Errorf("%w: %d elements for %d×%d", ErrShape, len(w), rows, cols)
	}
	q := &Q8{
		Data:      make([]int8, rows*cols),
		Scales:    make([]float32, rows*(cols/blockSize)),
		Rows:      rows,
		Cols:      cols,
		BlockSize: blockSize,
	}
	for b := range q.Scales {
		block := w[b*blockSize : (b+1)*blockSize]
		scale, ok := asm.QuantizeBlock(q.Data[b*blockSize:(b+1)*blockSize], block)
		if !ok {
			p := slices.IndexFunc(block, func(v float32) bool { return math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) })
			return nil, fmt.Errorf("%w: element %d", ErrNonFinite, b*blockSize+p)
		}
		q.Scales[b] = scale
	}
	return q, nil
}

// ActivationBlock is the block of QuantizeRows and the int8 × int8
// product: both operands of MatMulTQ8Q8Strided have a scale per this many
// consecutive elements along k.
const ActivationBlock = asm.Q8Block

// QuantizeRows quantises the rows×cols matrix x (row-major) into dst as
// QuantizeQ8 does, in blocks of ActivationBlock, reusing dst's storage: the
// activations of a layer, quantised once per pass for MatMulTQ8Q8Strided.
// A NaN or infinite element makes its block's scale NaN (the products that
// read the block are NaN, as the float32 products would be). cols must be a
// multiple of ActivationBlock.
func QuantizeRows(dst *Q8, x []float32, rows, cols int) {
	if cols%ActivationBlock != 0 {
		panic(fmt.Sprintf("tensor.QuantizeRows: %d columns are not a multiple of %d", cols, ActivationBlock))
	}
	n := rows * cols
	x = x[:n]
	if cap(dst.Data) < n {
		dst.Data = make([]int8, n)
	}
	nb := n / ActivationBlock
	if cap(dst.Scales) < nb {
		dst.Scales = make([]float32, nb)
	}
	*dst = Q8{Data: dst.Data[:n], Scales: dst.Scales[:nb], Rows: rows, Cols: cols, BlockSize: ActivationBlock}
	for b := range dst.Scales {
		dst.Scales[b], _ = asm.QuantizeBlock(dst.Data[b*ActivationBlock:(b+1)*ActivationBlock], x[b*ActivationBlock:(b+1)*ActivationBlock])
	}
}

// Dequantize returns the float32 matrix q stands for, element by element as
// the matrix kernels compute it (one rounding of q·scale).
func (q *Q8) Dequantize() []float32 {
	out := make([]float32, q.Rows*q.Cols)
	nb := q.Cols / q.BlockSize
	for j := 0; j < q.Rows; j++ {
		for p := 0; p < q.Cols; p++ {
			out[j*q.Cols+p] = float32(q.Data[j*q.Cols+p]) * q.Scales[j*nb+p/q.BlockSize]
		}
	}
	return out
}

// F16ToF32 widens IEEE half-precision values (as stored in checkpoints) to
// float32, exactly; a NaN keeps its sign and payload and comes out quiet.
// It panics if dst is shorter than src.
func F16ToF32(dst []float32, src []uint16) { asm.F16ToF32(dst, src) }

// BF16ToF32 widens bfloat16 values to float32, exactly (the 16 bits become
// the float32's high half). It panics if dst is shorter than src.
func BF16ToF32(dst []float32, src []uint16) { asm.BF16ToF32(dst, src) }

// F32ToF16 narrows float32 values to IEEE half precision, rounding to
// nearest with ties to even (overflow to ±Inf, NaN kept quiet). It panics if
// dst is shorter than src.
func F32ToF16(dst []uint16, src []float32) { asm.F32ToF16(dst, src) }

// F32ToBF16 narrows float32 values to bfloat16, rounding to nearest with
// ties to even (NaN kept quiet). It panics if dst is shorter than src.
func F32ToBF16(dst []uint16, src []float32) { asm.F32ToBF16(dst, src) }
