package gguf

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"os"

	"github.com/weftlabs/weft/internal/llm/quant"
)

// TensorData is a tensor to write: its name, type, dimensions (innermost
// first, as Tensor.Dims) and bytes.
type TensorData struct {
	Name string
	Type quant.Type
	Dims []int
	Data []byte
}

// Write writes a version 3 file: the metadata in the order given, then the
// tensors, each aligned to general.alignment (32 unless kvs set it).
func Write(w io.Writer, kvs []KV, tensors []TensorData) error {
	align := DefaultAlignment
	for _, kv := range kvs {
		if kv.Key == AlignmentKey {
			a, ok := kv.Value.Uint()
			if !ok || a == 0 || a&(a-1) != 0 {
				return fmt.Errorf("gguf: %s %s is not a power of two", AlignmentKey, kv.Value)
			}
			align = int(a)
		}
	}
	bw := bufio.NewWriter(w)
	e := &encoder{w: bw}
	e.raw([]byte(Magic))
	e.u32(3)
	e.u64(uint64(len(tensors)))
	e.u64(uint64(len(kvs)))
	for _, kv := range kvs {
		e.str(kv.Key)
		e.u32(uint32(kv.Value.Type))
		e.value(kv.Value)
	}
	var offset uint64
	offsets := make([]uint64, len(tensors))
	for i, t := range tensors {
		if !t.Type.Defined() || len(t.Dims) == 0 || t.Dims[0]%t.Type.BlockSize() != 0 {
			return fmt.Errorf("gguf: tensor %s: type %s and dimensions %v do not make whole blocks", t.Name, t.Type, t.Dims)
		}
		size := t.Type.RowBytes(t.Dims[0])
		for _, d := range t.Dims[1:] {
			size *= d
		}
		if size != len(t.Data) {
			return fmt.Errorf("gguf: tensor %s: %d bytes, %s %v needs %d", t.Name, len(t.Data), t.Type, t.Dims, size)
		}
		e.str(t.Name)
		e.u32(uint32(len(t.Dims)))
		for _, d := range t.Dims {
			e.u64(uint64(d))
		}
		e.u32(uint32(t.Type))
		e.u64(offset)
		offsets[i] = offset
		offset += uint64(padded(size, align))
	}
	e.raw(make([]byte, padded(e.n, align)-e.n))
	for _, t := range tensors {
		e.raw(t.Data)
		e.raw(make([]byte, padded(len(t.Data), align)-len(t.Data)))
	}
	if e.err != nil {
		return e.err
	}
	return bw.Flush()
}

// WriteFile writes a file at path (see Write).
func WriteFile(path string, kvs []KV, tensors []TensorData) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := Write(f, kvs, tensors); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func padded(n, align int) int { return (n + align - 1) / align * align }

// encoder writes little-endian values, keeping the first error and the
// count of bytes written.
type encoder struct {
	w   io.Writer
	n   int
	err error
}

func (e *encoder) raw(b []byte) {
	if e.err != nil {
		return
	}
	var n int
	n, e.err = e.w.Write(b)
	e.n += n
}

func (e *encoder) u32(v uint32) { e.raw(binary.LittleEndian.AppendUint32(nil, v)) }
func (e *encoder) u64(v uint64) { e.raw(binary.LittleEndian.AppendUint64(nil, v)) }
func (e *encoder) str(s string) { e.u64(uint64(len(s))); e.raw([]byte(s)) }

func (e *encoder) value(v Value) {
	switch v.Type {
	case TypeString:
		e.str(v.str)
	case TypeArray:
		e.u32(uint32(v.elem))
		e.u64(uint64(v.Len()))
		e.arrayBody(v)
	default:
		b := binary.LittleEndian.AppendUint64(nil, v.bits)
		e.raw(b[:v.Type.size()])
	}
}

// arrayBody writes an array's elements (after its type and length).
func (e *encoder) arrayBody(v Value) {
	switch v.elem {
	case TypeString:
		for _, s := range v.strs {
			e.str(s)
		}
	case TypeArray:
		for _, item := range v.items {
			e.u32(uint32(item.elem))
			e.u64(uint64(item.Len()))
			e.arrayBody(item)
		}
	default:
		e.raw(v.raw)
	}
}
