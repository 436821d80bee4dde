package safetensors

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
)

// F32Tensor is a float32 tensor to write: its name, shape and values in
// row-major order.
type F32Tensor struct {
	Name   string
	Shape  []int
	Values []float32
}

// WriteF32 writes tensors as one safetensors file, in the order given, with
// the "format": "pt" metadata the reference writer adds. The header is
// padded with spaces to a multiple of 8 bytes so that every tensor starts
// aligned, as the reference writer does.
func WriteF32(w io.Writer, tensors []F32Tensor) error {
	header := map[string]any{"__metadata__": map[string]string{"format": "pt"}}
	var offset int64
	for _, t := range tensors {
		count := 1
		for _, s := range t.Shape {
			count *= s
		}
		if count != len(t.Values) {
			return fmt.Errorf("safetensors: tensor %q: shape %v holds %d values, got %d", t.Name, t.Shape, count, len(t.Values))
		}
		if _, dup := header[t.Name]; dup || t.Name == "__metadata__" {
			return fmt.Errorf("safetensors: tensor name %q given twice or reserved", t.Name)
		}
		size := int64(4 * len(t.Values))
		header[t.Name] = headerEntry{DType: F32, Shape: int64s(t.Shape), DataOffsets: []int64{offset, offset + size}}
		offset += size
	}
	h, err := json.Marshal(header)
	if err != nil {
		return err
	}
	for len(h)%8 != 0 {
		h = append(h, ' ')
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	bw.Write(binary.LittleEndian.AppendUint64(nil, uint64(len(h))))
	bw.Write(h)
	var word [4]byte
	for _, t := range tensors {
		for _, v := range t.Values {
			binary.LittleEndian.PutUint32(word[:], math.Float32bits(v))
			bw.Write(word[:])
		}
	}
	return bw.Flush()
}

// WriteF32File writes tensors to path (see WriteF32).
func WriteF32File(path string, tensors []F32Tensor) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := WriteF32(f, tensors); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func int64s(xs []int) []int64 {
	out := make([]int64, len(xs))
	for i, x := range xs {
		out[i] = int64(x)
	}
	return slices.Clip(out)
}
