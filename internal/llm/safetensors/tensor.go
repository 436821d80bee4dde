package safetensors

import "github.com/weftlabs/weft/internal/llm/filemap"

// Tensor is one stored tensor: its dtype, shape and bytes (little-endian),
// which belong to the File it came from.
type Tensor struct {
	Name  string
	DType DType
	Shape []int

	raw  []byte
	file string
}

// Len is the number of elements.
func (t *Tensor) Len() int { return len(t.raw) / t.DType.size() }

// Bytes returns the stored bytes, little-endian, shared with the file.
func (t *Tensor) Bytes() []byte { return t.raw }

// Float32 returns the elements as float32. An F32 tensor whose bytes are
// 4-byte aligned on a little-endian machine is a view of the file's memory,
// which must not be written; anything else is a new slice, f16 and bf16
// widened exactly.
func (t *Tensor) Float32() []float32 {
	switch t.DType {
	case F16:
		return filemap.F16(t.raw)
	case BF16:
		return filemap.BF16(t.raw)
	}
	return filemap.F32(t.raw)
}
