package filemap

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"unsafe"

	"github.com/weftlabs/weft/internal/llm/tensor"
)

// Mapping is a file's bytes in memory, valid until Close.
type Mapping struct {
	Path string
	// Data is the whole file, read-only.
	Data    []byte
	release func() error
}

// Open maps path read-only (or reads it where mapping is not available).
func Open(path string) (*Mapping, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	data, release, err := mapFile(f, info.Size())
	if err != nil {
		return nil, err
	}
	return &Mapping{Path: path, Data: data, release: release}, nil
}

// Close releases the mapping; slices of Data must not be used afterwards.
func (m *Mapping) Close() error {
	if m.release == nil {
		return nil
	}
	err := m.release()
	m.release, m.Data = nil, nil
	return err
}

// readFile is the fallback of mapFile: the file's bytes in memory.
func readFile(f *os.File, size int64) ([]byte, func() error, error) {
	data := make([]byte, size)
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, nil, fmt.Errorf("reading %s: %w", f.Name(), err)
	}
	return data, func() error { return nil }, nil
}

// F32 returns little-endian float32 data as float32: a view of raw when
// its bytes are aligned on a little-endian machine, else a copy.
func F32(raw []byte) []float32 {
	n := len(raw) / 4
	if n == 0 {
		return []float32{}
	}
	if littleEndian() && uintptr(unsafe.Pointer(&raw[0]))%4 == 0 {
		return unsafe.Slice((*float32)(unsafe.Pointer(&raw[0])), n)
	}
	out := make([]float32, n)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	return out
}

// F16 widens little-endian IEEE half-precision data to float32.
func F16(raw []byte) []float32 {
	out := make([]float32, len(raw)/2)
	tensor.F16ToF32(out, halves(raw))
	return out
}

// BF16 widens little-endian bfloat16 data to float32.
func BF16(raw []byte) []float32 {
	out := make([]float32, len(raw)/2)
	tensor.BF16ToF32(out, halves(raw))
	return out
}

// halves returns 16-bit little-endian elements, as a view when the bytes
// allow it.
func halves(raw []byte) []uint16 {
	n := len(raw) / 2
	if n == 0 {
		return nil
	}
	if littleEndian() && uintptr(unsafe.Pointer(&raw[0]))%2 == 0 {
		return unsafe.Slice((*uint16)(unsafe.Pointer(&raw[0])), n)
	}
	out := make([]uint16, n)
	for i := range out {
		out[i] = binary.LittleEndian.Uint16(raw[2*i:])
	}
	return out
}

func littleEndian() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}
