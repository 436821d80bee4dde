package safetensors

import (
	"encoding/binary"
	"math"
	"unsafe"

	"github.com/weftlabs/weft/internal/llm/tensor"
)

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
	n := t.Len()
	if n == 0 {
		return []float32{}
	}
	if t.DType == F32 && littleEndian() && uintptr(unsafe.Pointer(&t.raw[0]))%4 == 0 {
		return unsafe.Slice((*float32)(unsafe.Pointer(&t.raw[0])), n)
	}
	out := make([]float32, n)
	switch t.DType {
	case F32:
		for i := range out {
			out[i] = math.Float32frombits(binary.LittleEndian.Uint32(t.raw[4*i:]))
		}
	case F16:
		tensor.F16ToF32(out, t.halves())
	case BF16:
		tensor.BF16ToF32(out, t.halves())
	}
	return out
}

// halves returns the 16-bit elements of an F16 or BF16 tensor, as a view
// when the bytes allow it.
func (t *Tensor) halves() []uint16 {
	n := len(t.raw) / 2
	if littleEndian() && uintptr(unsafe.Pointer(&t.raw[0]))%2 == 0 {
		return unsafe.Slice((*uint16)(unsafe.Pointer(&t.raw[0])), n)
	}
	out := make([]uint16, n)
	for i := range out {
		out[i] = binary.LittleEndian.Uint16(t.raw[2*i:])
	}
	return out
}

func littleEndian() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}
