package safetensors

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/weftlabs/weft/internal/llm/tensor"
)

// Entry is a tensor to write: float32 values stored as DType (F32, or F16
// and BF16 rounded to nearest even).
type Entry struct {
	Name  string
	DType DType
	Shape []int
	Data  []float32
}

// WriteFile writes entries as one safetensors file at path, in name order,
// with metadata as the header's __metadata__ (omitted when empty). The file
// is written beside path and renamed into place, so a reader never sees a
// partial file.
func WriteFile(path string, entries []Entry, metadata map[string]string) error {
	data, err := Encode(entries, metadata)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// Encode returns the bytes of a safetensors file holding entries (see
// WriteFile).
func Encode(entries []Entry, metadata map[string]string) ([]byte, error) {
	sorted := slices.Clone(entries)
	slices.SortFunc(sorted, func(a, b Entry) int { return strings.Compare(a.Name, b.Name) })
	header := make(map[string]any, len(sorted)+1)
	if len(metadata) > 0 {
		header["__metadata__"] = metadata
	}
	var body []byte
	for i, e := range sorted {
		if e.Name == "" || e.Name == "__metadata__" {
			return nil, fmt.Errorf("%w: tensor name %q", ErrInvalid, e.Name)
		}
		if i > 0 && sorted[i-1].Name == e.Name {
			return nil, fmt.Errorf("%w: tensor %q given twice", ErrInvalid, e.Name)
		}
		n := 1
		for _, s := range e.Shape {
			if s < 0 {
				return nil, fmt.Errorf("%w: tensor %q: shape %v", ErrInvalid, e.Name, e.Shape)
			}
			n *= s
		}
		if n != len(e.Data) {
			return nil, fmt.Errorf("%w: tensor %q: shape %v holds %d values, %d given", ErrInvalid, e.Name, e.Shape, n, len(e.Data))
		}
		begin := len(body)
		switch e.DType {
		case F32:
			for _, v := range e.Data {
				body = binary.LittleEndian.AppendUint32(body, math.Float32bits(v))
			}
		case F16, BF16:
			halves := make([]uint16, n)
			if e.DType == F16 {
				tensor.F32ToF16(halves, e.Data)
			} else {
				tensor.F32ToBF16(halves, e.Data)
			}
			for _, h := range halves {
				body = binary.LittleEndian.AppendUint16(body, h)
			}
		default:
			return nil, fmt.Errorf("%w: tensor %q: dtype %q (F32, F16 or BF16)", ErrUnsupported, e.Name, e.DType)
		}
		shape := e.Shape
		if shape == nil {
			shape = []int{}
		}
		header[e.Name] = headerEntry{DType: e.DType, Shape: int64s(shape), DataOffsets: []int64{int64(begin), int64(len(body))}}
	}
	h, err := json.Marshal(header)
	if err != nil {
		return nil, err
	}
	// The data starts 8-aligned, as other writers leave it, so that
	// readers may view it in place.
	h = append(h, bytes.Repeat([]byte{' '}, (8-len(h)%8)%8)...)
	out := binary.LittleEndian.AppendUint64(make([]byte, 0, 8+len(h)+len(body)), uint64(len(h)))
	out = append(out, h...)
	return append(out, body...), nil
}

func int64s(s []int) []int64 {
	out := make([]int64, len(s))
	for i, v := range s {
		out[i] = int64(v)
	}
	return out
}
