package tensor

import (
	"fmt"
	"math"

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
		var amax float32
		for p, v := range block {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				return nil, fmt.Errorf("%w: element %d", ErrNonFinite, b*blockSize+p)
			}
			amax = max(amax, float32(math.Abs(float64(v))))
		}
		if amax == 0 {
			continue
		}
		scale := amax / 127
		q.Scales[b] = scale
		out := q.Data[b*blockSize : (b+1)*blockSize]
		for p, v := range block {
			out[p] = int8(max(-127, min(127, math.Round(float64(v)/float64(scale)))))
		}
	}
	return q, nil
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
