package gguf

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"slices"

	"github.com/weftlabs/weft/internal/llm/filemap"
	"github.com/weftlabs/weft/internal/llm/quant"
)

// Magic is the first four bytes of every GGUF file.
const Magic = "GGUF"

// DefaultAlignment is the alignment of tensor data when general.alignment
// does not set one.
const DefaultAlignment = 32

// AlignmentKey is the metadata key that sets the alignment of tensor data.
const AlignmentKey = "general.alignment"

// maxDims is the most dimensions a tensor may have (ggml's GGML_MAX_DIMS).
const maxDims = 4

// maxNesting bounds how deeply arrays may nest: the format allows arrays of
// arrays, no file in use goes past one level, and a hostile file must not
// recurse without end.
const maxNesting = 8

// File is an opened GGUF file: its metadata and tensor directory, and the
// tensors' data, which stays in the mapped file and is valid until Close.
type File struct {
	Path    string
	Version uint32
	// Alignment is the alignment of the tensor data (general.alignment).
	Alignment int
	// KV is the metadata in file order.
	KV []KV
	// Tensors are the tensors in file order.
	Tensors []*Tensor

	keys    map[string]int
	names   map[string]int
	mapping *filemap.Mapping
}

// Tensor is one tensor of a file: its name, type, dimensions and bytes.
type Tensor struct {
	Name string
	Type quant.Type
	// Dims are the dimensions as the file stores them, innermost first:
	// Dims[0] is the length of a row (ggml's ne[0]). A matrix of Dims
	// [in, out] is PyTorch's [out, in].
	Dims []int
	// Offset is where the data starts, relative to the data section.
	Offset uint64
	// Data is the tensor's bytes: a view of the file, not to be written.
	Data []byte
}

// Shape is the dimensions outermost first, as PyTorch and safetensors
// write them.
func (t *Tensor) Shape() []int {
	s := slices.Clone(t.Dims)
	slices.Reverse(s)
	return s
}

// Elements is the number of elements.
func (t *Tensor) Elements() int {
	n := 1
	for _, d := range t.Dims {
		n *= d
	}
	return n
}

// Open maps path (or reads it where mapping is not available) and parses
// its header and tensor directory. Nothing of the tensors' data is read.
func Open(path string) (*File, error) {
	m, err := filemap.Open(path)
	if err != nil {
		return nil, fmt.Errorf("gguf: %w", err)
	}
	f, err := Parse(path, m.Data)
	if err != nil {
		_ = m.Close()
		return nil, err
	}
	f.mapping = m
	return f, nil
}

// Close releases the file's memory; its tensors' Data must not be used
// afterwards. Metadata values stay valid.
func (f *File) Close() error {
	if f.mapping == nil {
		return nil
	}
	err := f.mapping.Close()
	f.mapping = nil
	for _, t := range f.Tensors {
		t.Data = nil
	}
	return err
}

// Lookup returns the value of a metadata key.
func (f *File) Lookup(key string) (Value, bool) {
	i, ok := f.keys[key]
	if !ok {
		return Value{}, false
	}
	return f.KV[i].Value, true
}

// Tensor returns the named tensor, or an error wrapping ErrNotFound.
func (f *File) Tensor(name string) (*Tensor, error) {
	i, ok := f.names[name]
	if !ok {
		return nil, fmt.Errorf("%w: tensor %q in %s", ErrNotFound, name, f.Path)
	}
	return f.Tensors[i], nil
}

// Parse reads a GGUF file held in data (path names it in errors). The
// tensors' Data are views of data. Every count and length is checked
// against the bytes that remain before anything is allocated for it, so a
// hostile header costs no more memory than the file's own size.
func Parse(path string, data []byte) (*File, error) {
	r := &reader{path: path, data: data}
	f := &File{Path: path, keys: map[string]int{}, names: map[string]int{}}
	magic, err := r.bytes("magic", 4)
	if err != nil {
		return nil, err
	}
	if string(magic) != Magic {
		return nil, fieldError(ErrInvalid, path, "magic", "%q, not %q: not a GGUF file", magic, Magic)
	}
	if f.Version, err = r.u32("version"); err != nil {
		return nil, err
	}
	switch {
	case f.Version == 2 || f.Version == 3:
	case f.Version&0xffff == 0 && bits.ReverseBytes32(f.Version) <= 3:
		return nil, fieldError(ErrUnsupported, path, "version", "a big-endian file (version %d byte-swapped); convert it to little-endian", bits.ReverseBytes32(f.Version))
	case f.Version == 1:
		return nil, fieldError(ErrUnsupported, path, "version", "1 (32-bit counts; versions 2 and 3 are read)")
	default:
		return nil, fieldError(ErrUnsupported, path, "version", "%d (versions 2 and 3 are read)", f.Version)
	}
	nTensors, err := r.u64("tensor_count")
	if err != nil {
		return nil, err
	}
	nKV, err := r.u64("metadata_kv_count")
	if err != nil {
		return nil, err
	}
	// A key-value pair takes at least 13 bytes (key length, value type, one
	// byte of value) and a tensor info 24 (name length, dimension count,
	// type, offset): larger counts cannot be in the file.
	const minKV, minTensor = 13, 24
	if rest := uint64(r.remaining()); nKV > rest/minKV || nTensors > rest/minTensor || nKV*minKV+nTensors*minTensor > rest {
		return nil, fieldError(ErrInvalid, path, "header", "%d metadata entries and %d tensors cannot fit in the %d bytes that follow", nKV, nTensors, rest)
	}
	f.KV = make([]KV, 0, nKV)
	for i := range nKV {
		key, err := r.str(fmt.Sprintf("metadata[%d].key", i))
		if err != nil {
			return nil, err
		}
		if _, dup := f.keys[key]; dup {
			return nil, fieldError(ErrInvalid, path, key, "key appears twice")
		}
		typ, err := r.u32(key + ".type")
		if err != nil {
			return nil, err
		}
		v, err := r.value(key, ValueType(typ), 0)
		if err != nil {
			return nil, err
		}
		f.keys[key] = len(f.KV)
		f.KV = append(f.KV, KV{Key: key, Value: v})
	}
	if f.Alignment, err = alignment(f); err != nil {
		return nil, err
	}
	f.Tensors = make([]*Tensor, 0, nTensors)
	for i := range nTensors {
		t, err := r.tensorInfo(i)
		if err != nil {
			return nil, err
		}
		if _, dup := f.names[t.Name]; dup {
			return nil, fieldError(ErrInvalid, path, "tensor "+t.Name, "name appears twice")
		}
		f.names[t.Name] = len(f.Tensors)
		f.Tensors = append(f.Tensors, t)
	}
	if err := f.placeData(data, r.off); err != nil {
		return nil, err
	}
	return f, nil
}

// alignment reads general.alignment: a power of two, 32 when absent.
func alignment(f *File) (int, error) {
	v, ok := f.Lookup(AlignmentKey)
	if !ok {
		return DefaultAlignment, nil
	}
	a, ok := v.Uint()
	if v.Type != TypeUint32 || !ok || a == 0 || a&(a-1) != 0 {
		return 0, fieldError(ErrInvalid, f.Path, AlignmentKey, "%s %s, want a uint32 power of two", v.Type, v)
	}
	return int(a), nil
}

// placeData points each tensor at its bytes: the data section starts at the
// first multiple of the alignment after the header, every tensor's offset is
// a multiple of it, and tensors lie inside the file without overlapping.
func (f *File) placeData(data []byte, headerEnd int) error {
	start := (headerEnd + f.Alignment - 1) / f.Alignment * f.Alignment
	if len(f.Tensors) == 0 {
		return nil
	}
	if start > len(data) {
		return fieldError(ErrInvalid, f.Path, "data", "the data section would start at byte %d, past the end of the %d-byte file", start, len(data))
	}
	section := uint64(len(data) - start)
	for _, t := range f.Tensors {
		size := uint64(t.Type.RowBytes(t.Dims[0]))
		for _, d := range t.Dims[1:] {
			size *= uint64(d) // bounded by the element count check of tensorInfo
		}
		switch {
		case t.Offset%uint64(f.Alignment) != 0:
			return fieldError(ErrInvalid, f.Path, "tensor "+t.Name, "offset %d is not a multiple of the alignment %d", t.Offset, f.Alignment)
		case t.Offset > section || size > section-t.Offset:
			return fieldError(ErrInvalid, f.Path, "tensor "+t.Name, "%d bytes at offset %d run past the %d bytes of data", size, t.Offset, section)
		}
		begin := start + int(t.Offset)
		t.Data = data[begin : begin+int(size) : begin+int(size)]
	}
	byOffset := slices.Clone(f.Tensors)
	slices.SortFunc(byOffset, func(a, b *Tensor) int { return cmp.Compare(a.Offset, b.Offset) })
	for i := 1; i < len(byOffset); i++ {
		prev, t := byOffset[i-1], byOffset[i]
		if prev.Offset+uint64(len(prev.Data)) > t.Offset {
			return fieldError(ErrInvalid, f.Path, "tensor "+t.Name, "its data overlaps tensor %s's", prev.Name)
		}
	}
	return nil
}

// reader decodes the little-endian header of a file held in memory.
type reader struct {
	path string
	data []byte
	off  int
}

func (r *reader) remaining() int { return len(r.data) - r.off }

func (r *reader) bytes(field string, n int) ([]byte, error) {
	if n < 0 || n > r.remaining() {
		return nil, fieldError(ErrInvalid, r.path, field, "needs %d bytes at offset %d, the file has %d", n, r.off, len(r.data))
	}
	b := r.data[r.off : r.off+n]
	r.off += n
	return b, nil
}

func (r *reader) u32(field string) (uint32, error) {
	b, err := r.bytes(field, 4)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(b), nil
}

func (r *reader) u64(field string) (uint64, error) {
	b, err := r.bytes(field, 8)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b), nil
}

// str reads a string: a uint64 length and that many bytes.
func (r *reader) str(field string) (string, error) {
	n, err := r.u64(field + " length")
	if err != nil {
		return "", err
	}
	if n > uint64(r.remaining()) {
		return "", fieldError(ErrInvalid, r.path, field, "length %d exceeds the %d bytes left in the file", n, r.remaining())
	}
	b, _ := r.bytes(field, int(n))
	return string(b), nil
}

// value reads a value of type t; depth counts the arrays it is inside.
func (r *reader) value(field string, t ValueType, depth int) (Value, error) {
	if size := t.size(); size > 0 {
		b, err := r.bytes(field, size)
		if err != nil {
			return Value{}, err
		}
		if t == TypeBool && b[0] > 1 {
			return Value{}, fieldError(ErrInvalid, r.path, field, "bool byte %d is neither 0 nor 1", b[0])
		}
		return scalar(t, b), nil
	}
	switch t {
	case TypeString:
		s, err := r.str(field)
		return String(s), err
	case TypeArray:
		return r.array(field, depth)
	}
	return Value{}, fieldError(ErrInvalid, r.path, field, "value type %d is not a GGUF type", uint32(t))
}

func (r *reader) array(field string, depth int) (Value, error) {
	if depth >= maxNesting {
		return Value{}, fieldError(ErrUnsupported, r.path, field, "arrays nested more than %d deep", maxNesting)
	}
	typ, err := r.u32(field + " element type")
	if err != nil {
		return Value{}, err
	}
	elem := ValueType(typ)
	n, err := r.u64(field + " length")
	if err != nil {
		return Value{}, err
	}
	min := elem.minSize()
	if min == 0 {
		return Value{}, fieldError(ErrInvalid, r.path, field, "element type %d is not a GGUF type", typ)
	}
	if n > uint64(r.remaining()/min) {
		return Value{}, fieldError(ErrInvalid, r.path, field, "%d elements of %s cannot fit in the %d bytes left", n, elem, r.remaining())
	}
	v := Value{Type: TypeArray, elem: elem}
	switch elem {
	case TypeString:
		v.strs = make([]string, n)
		for i := range v.strs {
			if v.strs[i], err = r.str(fmt.Sprintf("%s[%d]", field, i)); err != nil {
				return Value{}, err
			}
		}
	case TypeArray:
		v.items = make([]Value, n)
		for i := range v.items {
			if v.items[i], err = r.array(fmt.Sprintf("%s[%d]", field, i), depth+1); err != nil {
				return Value{}, err
			}
		}
	default:
		b, _ := r.bytes(field, int(n)*min)
		if elem == TypeBool {
			for i, x := range b {
				if x > 1 {
					return Value{}, fieldError(ErrInvalid, r.path, fmt.Sprintf("%s[%d]", field, i), "bool byte %d is neither 0 nor 1", x)
				}
			}
		}
		v.raw = slices.Clone(b) // the metadata outlives the mapping
	}
	return v, nil
}

// tensorInfo reads the i-th entry of the tensor directory.
func (r *reader) tensorInfo(i uint64) (*Tensor, error) {
	name, err := r.str(fmt.Sprintf("tensor[%d].name", i))
	if err != nil {
		return nil, err
	}
	field := "tensor " + name
	nDims, err := r.u32(field + " dimension count")
	if err != nil {
		return nil, err
	}
	if nDims > maxDims {
		return nil, fieldError(ErrInvalid, r.path, field, "%d dimensions, at most %d", nDims, maxDims)
	}
	t := &Tensor{Name: name, Dims: make([]int, nDims)}
	elements := uint64(1)
	for d := range t.Dims {
		n, err := r.u64(fmt.Sprintf("%s dimension %d", field, d))
		if err != nil {
			return nil, err
		}
		// Any tensor that fits in memory has fewer than 2^53 elements.
		if n > 1<<53 || (n > 0 && elements > (1<<53)/n) {
			return nil, fieldError(ErrInvalid, r.path, field, "dimension %d of %d makes more elements than any file holds", d, n)
		}
		elements *= n
		t.Dims[d] = int(n)
	}
	typ, err := r.u32(field + " type")
	if err != nil {
		return nil, err
	}
	t.Type = quant.Type(typ)
	if !t.Type.Defined() {
		return nil, fieldError(ErrUnsupported, r.path, field, "tensor type %d is not one this package knows", typ)
	}
	if len(t.Dims) == 0 {
		t.Dims = []int{1} // a scalar
	}
	if t.Dims[0]%t.Type.BlockSize() != 0 {
		return nil, fieldError(ErrInvalid, r.path, field, "rows of %d elements are not whole blocks of %d (%s)", t.Dims[0], t.Type.BlockSize(), t.Type)
	}
	if t.Offset, err = r.u64(field + " offset"); err != nil {
		return nil, err
	}
	if t.Offset > math.MaxInt64 {
		return nil, fieldError(ErrInvalid, r.path, field, "offset %d is beyond any file", t.Offset)
	}
	return t, nil
}

// Float32 returns an F32, F16 or BF16 tensor's elements as float32: an
// aligned F32 tensor as a view of the file (not to be written), the others
// widened exactly. Any other type is ErrUnsupported.
func (t *Tensor) Float32() ([]float32, error) {
	switch t.Type {
	case quant.F32:
		return filemap.F32(t.Data), nil
	case quant.F16:
		return filemap.F16(t.Data), nil
	case quant.BF16:
		return filemap.BF16(t.Data), nil
	}
	return nil, fmt.Errorf("%w: tensor %s is %s, not F32, F16 or BF16", ErrUnsupported, t.Name, t.Type)
}
