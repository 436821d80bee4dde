package safetensors

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"slices"

	"github.com/weftlabs/weft/internal/llm/filemap"
)

// maxHeaderBytes bounds the JSON header, as the reference reader does: a
// larger length is a corrupt or hostile file, not a bigger model.
const maxHeaderBytes = 100 << 20

// DType is the element type of a stored tensor, spelled as in the header.
type DType string

// The dtypes this package loads.
const (
	F32  DType = "F32"
	F16  DType = "F16"
	BF16 DType = "BF16"
)

// size is the number of bytes of one element, 0 for a dtype not loaded.
func (d DType) size() int {
	switch d {
	case F32:
		return 4
	case F16, BF16:
		return 2
	}
	return 0
}

// File is one opened safetensors file. Its tensors share the file's memory
// and are valid until Close.
type File struct {
	Path string
	// Metadata is the header's optional __metadata__ string map.
	Metadata map[string]string

	mapping *filemap.Mapping
	tensors map[string]*Tensor
	names   []string // header order is not kept by JSON; sorted by offset
}

// Open maps (or reads) path and validates its header. See the package
// documentation for what is checked.
func Open(path string) (*File, error) {
	m, err := filemap.Open(path)
	if err != nil {
		return nil, fmt.Errorf("safetensors: %w", err)
	}
	file, err := parse(path, m.Data)
	if err != nil {
		_ = m.Close()
		return nil, err
	}
	file.mapping = m
	return file, nil
}

// Close releases the file's memory; its tensors must not be used afterwards.
func (f *File) Close() error {
	if f.mapping == nil {
		return nil
	}
	err := f.mapping.Close()
	f.mapping, f.tensors = nil, nil
	return err
}

// Names lists the file's tensors in the order of their data.
func (f *File) Names() []string { return slices.Clone(f.names) }

// Tensor returns the named tensor (ErrNotFound if the file has none).
func (f *File) Tensor(name string) (*Tensor, error) {
	t, ok := f.tensors[name]
	if !ok {
		return nil, fmt.Errorf("%w: %q in %s", ErrNotFound, name, f.Path)
	}
	return t, nil
}

// headerEntry is one tensor's description in the JSON header.
type headerEntry struct {
	DType       DType   `json:"dtype"`
	Shape       []int64 `json:"shape"`
	DataOffsets []int64 `json:"data_offsets"`
}

func parse(path string, data []byte) (*File, error) {
	invalid := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s: %s", ErrInvalid, path, fmt.Sprintf(format, args...))
	}
	if len(data) < 8 {
		return nil, invalid("%d bytes, shorter than the 8-byte header length", len(data))
	}
	n := binary.LittleEndian.Uint64(data[:8])
	if n > maxHeaderBytes || n > uint64(len(data)-8) {
		return nil, invalid("header length %d exceeds the file (%d bytes) or the %d-byte limit", n, len(data), maxHeaderBytes)
	}
	header := data[8 : 8+n]
	body := data[8+n:]

	var raw map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(header))
	if err := dec.Decode(&raw); err != nil {
		return nil, invalid("header is not a JSON object: %v", err)
	}
	file := &File{Path: path, tensors: make(map[string]*Tensor, len(raw))}
	type span struct {
		name       string
		begin, end int64
	}
	spans := make([]span, 0, len(raw))
	for name, msg := range raw {
		if name == "__metadata__" {
			if err := json.Unmarshal(msg, &file.Metadata); err != nil {
				return nil, invalid("__metadata__ is not a map of strings: %v", err)
			}
			continue
		}
		var e headerEntry
		d := json.NewDecoder(bytes.NewReader(msg))
		d.DisallowUnknownFields()
		if err := d.Decode(&e); err != nil {
			return nil, invalid("tensor %q: %v", name, err)
		}
		if e.DType == "" {
			return nil, invalid("tensor %q: dtype missing", name)
		}
		if e.Shape == nil {
			return nil, invalid("tensor %q: shape missing", name)
		}
		if len(e.DataOffsets) != 2 {
			return nil, invalid("tensor %q: data_offsets has %d values, want 2", name, len(e.DataOffsets))
		}
		begin, end := e.DataOffsets[0], e.DataOffsets[1]
		if begin < 0 || end < begin || end > int64(len(body)) {
			return nil, invalid("tensor %q: data_offsets [%d, %d] outside the %d bytes of data", name, begin, end, len(body))
		}
		count := int64(1)
		shape := make([]int, len(e.Shape))
		for i, s := range e.Shape {
			if s < 0 || (s > 0 && count > math.MaxInt32*int64(1<<20)/s) {
				return nil, invalid("tensor %q: shape %v has an invalid dimension %d", name, e.Shape, s)
			}
			count *= s
			shape[i] = int(s)
		}
		size := e.DType.size()
		if size == 0 {
			return nil, fmt.Errorf("%w: %s: tensor %q: dtype %s (F32, F16 and BF16 are supported)", ErrUnsupported, path, name, e.DType)
		}
		if end-begin != count*int64(size) {
			return nil, invalid("tensor %q: data_offsets [%d, %d] hold %d bytes, shape %v of %s needs %d",
				name, begin, end, end-begin, e.Shape, e.DType, count*int64(size))
		}
		file.tensors[name] = &Tensor{Name: name, DType: e.DType, Shape: shape, raw: body[begin:end:end], file: path}
		spans = append(spans, span{name, begin, end})
	}
	slices.SortFunc(spans, func(a, b span) int {
		if a.begin != b.begin {
			return int(a.begin - b.begin)
		}
		return int(a.end - b.end)
	})
	for i, s := range spans {
		if i > 0 && s.begin < spans[i-1].end {
			return nil, invalid("tensors %q and %q overlap", spans[i-1].name, s.name)
		}
		file.names = append(file.names, s.name)
	}
	return file, nil
}
