package gguf

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/weftlabs/weft/internal/llm/quant"
)

// sample is a file with a value of every type, a nested array and tensors
// of a plain and a block type.
func sample() ([]KV, []TensorData) {
	kvs := []KV{
		{"general.architecture", String("llama")},
		{"u8", Uint8(200)}, {"i8", Int8(-100)}, {"u16", Uint16(60000)}, {"i16", Int16(-30000)},
		{"u32", Uint32(4_000_000_000)}, {"i32", Int32(-2_000_000_000)},
		{"u64", Uint64(1 << 63)}, {"i64", Int64(-1 << 62)},
		{"f32", Float32(1.5)}, {"f64", Float64(-2.25)}, {"yes", Bool(true)}, {"no", Bool(false)},
		{"strings", Strings([]string{"a", "", "▁hé"})},
		{"floats", Float32s([]float32{0.5, -1, float32(math.Inf(1))})},
		{"ints", Int32s([]int32{1, -2, 3})},
		{"nested", Arrays([]Value{Int32s([]int32{7}), Strings([]string{"x", "y"})})},
	}
	f32 := make([]byte, 4*6)
	for i := range 6 {
		binary.LittleEndian.PutUint32(f32[4*i:], math.Float32bits(float32(i)+0.5))
	}
	q8 := make([]byte, 2*34) // two Q8_0 blocks
	for i := range q8 {
		q8[i] = byte(i)
	}
	return kvs, []TensorData{
		{Name: "w", Type: quant.F32, Dims: []int{3, 2}, Data: f32},
		{Name: "q", Type: quant.Q8_0, Dims: []int{64}, Data: q8},
	}
}

func encode(t testing.TB, kvs []KV, tensors []TensorData) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := Write(&b, kvs, tensors); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestRoundTrip(t *testing.T) {
	kvs, tensors := sample()
	f, err := Parse("sample.gguf", encode(t, kvs, tensors))
	if err != nil {
		t.Fatal(err)
	}
	if f.Version != 3 || f.Alignment != DefaultAlignment || len(f.KV) != len(kvs) {
		t.Fatalf("version %d, alignment %d, %d keys", f.Version, f.Alignment, len(f.KV))
	}
	for i, kv := range kvs {
		if f.KV[i].Key != kv.Key || f.KV[i].Value.String() != kv.Value.String() || f.KV[i].Value.Type != kv.Value.Type {
			t.Errorf("key %d: %s = %s, want %s = %s", i, f.KV[i].Key, f.KV[i].Value, kv.Key, kv.Value)
		}
	}
	if n, err := f.Uint("u64"); err != nil || n != 1<<63 {
		t.Errorf("u64 = %d, %v", n, err)
	}
	if n, ok := mustLookup(t, f, "i8").Int(); !ok || n != -100 {
		t.Errorf("i8 = %d", n)
	}
	if _, ok := mustLookup(t, f, "i8").Uint(); ok {
		t.Error("a negative int8 read as unsigned")
	}
	if _, err := f.Uint("f32"); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "f32") {
		t.Errorf("a float read as an integer: %v", err)
	}
	if _, err := f.String("absent"); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "sample.gguf") {
		t.Errorf("missing key: %v", err)
	}
	if s, err := f.Strings("strings"); err != nil || !slices.Equal(s, []string{"a", "", "▁hé"}) {
		t.Errorf("strings = %q, %v", s, err)
	}
	if x, err := f.Floats("floats"); err != nil || x[0] != 0.5 || !math.IsInf(float64(x[2]), 1) {
		t.Errorf("floats = %v, %v", x, err)
	}
	if x, err := f.Ints("ints"); err != nil || !slices.Equal(x, []int64{1, -2, 3}) {
		t.Errorf("ints = %v, %v", x, err)
	}
	nested := mustLookup(t, f, "nested").Items()
	if len(nested) != 2 || nested[1].String() != `[2 × string: "x" "y"]` {
		t.Errorf("nested = %v", nested)
	}
	w, err := f.Tensor("w")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(w.Shape(), []int{2, 3}) || w.Elements() != 6 || !bytes.Equal(w.Data, tensors[0].Data) {
		t.Errorf("tensor w: shape %v, %d bytes", w.Shape(), len(w.Data))
	}
	q, _ := f.Tensor("q")
	if q.Type != quant.Q8_0 || !bytes.Equal(q.Data, tensors[1].Data) || q.Offset%32 != 0 {
		t.Errorf("tensor q: %s at %d, %d bytes", q.Type, q.Offset, len(q.Data))
	}
	if _, err := f.Tensor("nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing tensor: %v", err)
	}
}

func mustLookup(t *testing.T, f *File, key string) Value {
	t.Helper()
	v, ok := f.Lookup(key)
	if !ok {
		t.Fatalf("%s missing", key)
	}
	return v
}

func TestOpenMapsTheFile(t *testing.T) {
	kvs, tensors := sample()
	path := filepath.Join(t.TempDir(), "m.gguf")
	if err := WriteFile(path, append(kvs, KV{AlignmentKey, Uint32(64)}), tensors); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if f.Alignment != 64 {
		t.Errorf("alignment %d", f.Alignment)
	}
	q, _ := f.Tensor("q")
	if q.Offset%64 != 0 || !bytes.Equal(q.Data, tensors[1].Data) {
		t.Errorf("q at %d", q.Offset)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if s, _ := f.String("general.architecture"); s != "llama" {
		t.Errorf("metadata after Close: %q", s)
	}
}

// header starts a file: magic, version and the two counts.
func header(version uint32, tensors, kvs uint64) []byte {
	b := []byte(Magic)
	b = binary.LittleEndian.AppendUint32(b, version)
	b = binary.LittleEndian.AppendUint64(b, tensors)
	return binary.LittleEndian.AppendUint64(b, kvs)
}

func kvString(key string, value string) []byte {
	b := binary.LittleEndian.AppendUint64(nil, uint64(len(key)))
	b = append(b, key...)
	b = binary.LittleEndian.AppendUint32(b, uint32(TypeString))
	b = binary.LittleEndian.AppendUint64(b, uint64(len(value)))
	return append(b, value...)
}

func TestMalformed(t *testing.T) {
	kvs, tensors := sample()
	good := encode(t, kvs, tensors)
	arrayOf := func(elem ValueType, n uint64) []byte {
		b := header(3, 0, 1)
		b = binary.LittleEndian.AppendUint64(b, 1)
		b = append(b, 'k')
		b = binary.LittleEndian.AppendUint32(b, uint32(TypeArray))
		b = binary.LittleEndian.AppendUint32(b, uint32(elem))
		return binary.LittleEndian.AppendUint64(b, n)
	}
	tensorInfo := func(dims []uint64, typ quant.Type, offset uint64) []byte {
		b := header(3, 1, 0)
		b = binary.LittleEndian.AppendUint64(b, 1)
		b = append(b, 't')
		b = binary.LittleEndian.AppendUint32(b, uint32(len(dims)))
		for _, d := range dims {
			b = binary.LittleEndian.AppendUint64(b, d)
		}
		b = binary.LittleEndian.AppendUint32(b, uint32(typ))
		b = binary.LittleEndian.AppendUint64(b, offset)
		return append(b, make([]byte, 64)...)
	}
	for _, c := range []struct {
		name string
		data []byte
		kind error
		says string
	}{
		{"not gguf", []byte("GGML\x03\x00\x00\x00"), ErrInvalid, "magic"},
		{"empty", nil, ErrInvalid, "magic"},
		{"version 1", header(1, 0, 0), ErrUnsupported, "version"},
		{"version 4", header(4, 0, 0), ErrUnsupported, "version"},
		{"big-endian", header(0x03000000, 0, 0), ErrUnsupported, "big-endian"},
		{"2^60 tensors", header(3, 1<<60, 0), ErrInvalid, "cannot fit"},
		{"2^63 keys", header(3, 0, 1<<63), ErrInvalid, "cannot fit"},
		{"both counts wrap", header(3, math.MaxUint64, math.MaxUint64), ErrInvalid, "cannot fit"},
		{"array of 2^60 strings", arrayOf(TypeString, 1<<60), ErrInvalid, "cannot fit"},
		{"array of 2^62 uint64", arrayOf(TypeUint64, 1<<62), ErrInvalid, "cannot fit"},
		{"array of a bad type", arrayOf(77, 1), ErrInvalid, "not a GGUF type"},
		{"key of 2^63 bytes", append(append(header(3, 0, 1), binary.LittleEndian.AppendUint64(nil, 1<<63)...), make([]byte, 16)...), ErrInvalid, "length"},
		{"string of 2^62 bytes", append(append(header(3, 0, 1), kvString("k", "")[:13]...), binary.LittleEndian.AppendUint64(nil, 1<<62)...), ErrInvalid, "exceeds"},
		{"duplicate key", append(append(header(3, 0, 2), kvString("k", "a")...), kvString("k", "b")...), ErrInvalid, "twice"},
		{"bad alignment", append(header(3, 0, 1), kvUint32(AlignmentKey, 24)...), ErrInvalid, AlignmentKey},
		{"five dimensions", tensorInfo([]uint64{1, 1, 1, 1, 1}, quant.F32, 0), ErrInvalid, "dimensions"},
		{"2^60 × 2^60 elements", tensorInfo([]uint64{1 << 40, 1 << 40}, quant.F32, 0), ErrInvalid, "elements"},
		{"unknown tensor type", tensorInfo([]uint64{4}, 99, 0), ErrUnsupported, "tensor type 99"},
		{"partial block", tensorInfo([]uint64{33}, quant.Q8_0, 0), ErrInvalid, "whole blocks"},
		{"misaligned offset", tensorInfo([]uint64{4}, quant.F32, 8), ErrInvalid, "alignment"},
		{"data past the end", tensorInfo([]uint64{1 << 20}, quant.F32, 0), ErrInvalid, "past"},
		{"offset past the end", tensorInfo([]uint64{1}, quant.F32, 1<<62), ErrInvalid, "past"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("bad.gguf", c.data)
			if !errors.Is(err, c.kind) || !strings.Contains(err.Error(), c.says) || !strings.Contains(err.Error(), "bad.gguf") {
				t.Fatalf("got %v, want %v naming %q and the file", err, c.kind, c.says)
			}
		})
	}
	t.Run("overlapping tensors", func(t *testing.T) {
		data := encode(t, nil, []TensorData{
			{Name: "a", Type: quant.F32, Dims: []int{16}, Data: make([]byte, 64)},
			{Name: "b", Type: quant.F32, Dims: []int{16}, Data: make([]byte, 64)},
		})
		// b's offset (64) is the last field of its info: point it at a's.
		at := bytes.LastIndex(data, binary.LittleEndian.AppendUint64(nil, 64))
		copy(data[at:], binary.LittleEndian.AppendUint64(nil, 32))
		if _, err := Parse("bad.gguf", data); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "overlaps") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("every truncation", func(t *testing.T) {
		// The file ends with the last tensor's padding, which may go.
		end := len(good) - (padded(len(tensors[1].Data), DefaultAlignment) - len(tensors[1].Data))
		for n := range end {
			if f, err := Parse("cut.gguf", good[:n]); err == nil {
				t.Fatalf("%d of %d bytes parsed: %d tensors", n, end, len(f.Tensors))
			}
		}
	})
}

func kvUint32(key string, v uint32) []byte {
	b := binary.LittleEndian.AppendUint64(nil, uint64(len(key)))
	b = append(b, key...)
	b = binary.LittleEndian.AppendUint32(b, uint32(TypeUint32))
	return binary.LittleEndian.AppendUint32(b, v)
}

// TestHostileCountsAllocateLittle checks that counts a header claims are
// not allocated before the bytes behind them are seen.
func TestHostileCountsAllocateLittle(t *testing.T) {
	for _, data := range [][]byte{
		header(3, 1<<60, 0),
		header(3, 0, 1<<60),
		append(append(header(3, 0, 1), kvString("k", "")[:13]...), binary.LittleEndian.AppendUint64(nil, 1<<62)...),
	} {
		data = append(data, make([]byte, 4096)...)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := Parse("hostile.gguf", data)
		runtime.ReadMemStats(&after)
		if err == nil {
			t.Fatal("hostile header parsed")
		}
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
			t.Errorf("parsing a %d-byte hostile header allocated %d bytes", len(data), grew)
		}
	}
}

func FuzzParse(f *testing.F) {
	kvs, tensors := sample()
	var b bytes.Buffer
	if err := Write(&b, kvs, tensors); err != nil {
		f.Fatal(err)
	}
	f.Add(b.Bytes())
	f.Add(header(3, 1, 1))
	if seed, err := os.ReadFile(filepath.Join("..", "testdata", "gguf", "types.gguf")); err == nil {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Parse("fuzz.gguf", data)
		if err != nil {
			if !errors.Is(err, ErrInvalid) && !errors.Is(err, ErrUnsupported) {
				t.Fatalf("error of no kind: %v", err)
			}
			return
		}
		// What parses writes back and parses to the same metadata.
		var kvs []KV
		var tensors []TensorData
		kvs = append(kvs, file.KV...)
		for _, t := range file.Tensors {
			tensors = append(tensors, TensorData{Name: t.Name, Type: t.Type, Dims: t.Dims, Data: t.Data})
		}
		var out bytes.Buffer
		if err := Write(&out, kvs, tensors); err != nil {
			t.Fatalf("rewriting a parsed file: %v", err)
		}
		again, err := Parse("again.gguf", out.Bytes())
		if err != nil {
			t.Fatalf("reparsing: %v", err)
		}
		for i, kv := range again.KV {
			if kv.Key != file.KV[i].Key || kv.Value.String() != file.KV[i].Value.String() {
				t.Fatalf("key %d: %s=%s became %s=%s", i, file.KV[i].Key, file.KV[i].Value, kv.Key, kv.Value)
			}
		}
		for i, tn := range again.Tensors {
			if !bytes.Equal(tn.Data, file.Tensors[i].Data) {
				t.Fatalf("tensor %s's data changed", tn.Name)
			}
		}
	})
}
