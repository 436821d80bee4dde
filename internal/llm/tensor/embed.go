package tensor

import (
	"fmt"

	"github.com/weftlabs/weft/internal/llm/quant"
)

// Embedding copies row ids[t] of table (rows of dim elements) to row t of
// dst. A token id outside the table is ErrTokenRange; dst too short is
// ErrShape. Nothing is written on error.
func Embedding(dst, table []float32, dim int, ids []int32) error {
	return embed(dst, table, dim, ids, func(out []float32, row []float32) { copy(out, row) })
}

// EmbeddingF16 is Embedding over a table of IEEE half-precision values,
// widened exactly as F16ToF32 does.
func EmbeddingF16(dst []float32, table []uint16, dim int, ids []int32) error {
	return embed(dst, table, dim, ids, F16ToF32)
}

// EmbeddingBF16 is Embedding over a table of bfloat16 values.
func EmbeddingBF16(dst []float32, table []uint16, dim int, ids []int32) error {
	return embed(dst, table, dim, ids, BF16ToF32)
}

// EmbeddingMatrix is Embedding over a table held in a GGUF block format (or
// half precision): only the rows looked up are dequantised, each to the
// values quant.Dequantize gives, so a quantised table costs its own bytes
// in memory, not four a weight.
func EmbeddingMatrix(dst []float32, table *quant.Matrix, ids []int32) error {
	dim := table.Cols
	if dim <= 0 || len(dst) < len(ids)*dim {
		return fmt.Errorf("%w: table of %d×%d, dst %d for %d tokens", ErrShape, table.Rows, dim, len(dst), len(ids))
	}
	for _, id := range ids {
		if id < 0 || int(id) >= table.Rows {
			return fmt.Errorf("%w: %d of %d", ErrTokenRange, id, table.Rows)
		}
	}
	for t, id := range ids {
		table.DequantizeRow(dst[t*dim:(t+1)*dim], int(id))
	}
	return nil
}

func embed[T any](dst []float32, table []T, dim int, ids []int32, widen func([]float32, []T)) error {
	if dim <= 0 || len(table)%dim != 0 || len(dst) < len(ids)*dim {
		return fmt.Errorf("%w: table of %d, dim %d, dst %d for %d tokens", ErrShape, len(table), dim, len(dst), len(ids))
	}
	vocab := len(table) / dim
	for _, id := range ids {
		if id < 0 || int(id) >= vocab {
			return fmt.Errorf("%w: %d of %d", ErrTokenRange, id, vocab)
		}
	}
	for t, id := range ids {
		widen(dst[t*dim:(t+1)*dim], table[int(id)*dim:(int(id)+1)*dim])
	}
	return nil
}
