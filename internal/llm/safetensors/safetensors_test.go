package safetensors

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeRaw writes a safetensors file from a header (marshalled as given)
// and a data section.
func writeRaw(t *testing.T, path string, header any, body []byte) {
	t.Helper()
	h, err := json.Marshal(header)
	if err != nil {
		t.Fatal(err)
	}
	for len(h)%8 != 0 {
		h = append(h, ' ')
	}
	out := binary.LittleEndian.AppendUint64(nil, uint64(len(h)))
	out = append(out, h...)
	out = append(out, body...)
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

func f32bytes(vs ...float32) []byte {
	var b []byte
	for _, v := range vs {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
	}
	return b
}

func TestOpenReadsEveryDType(t *testing.T) {
	dir := t.TempDir()
	body := f32bytes(1, -2.5, 3, 4)
	body = append(body, 0x00, 0x3c, 0x00, 0xc0) // f16 1, -2
	body = append(body, 0x80, 0x3f, 0x40, 0xc0) // bf16 1, -3
	writeRaw(t, filepath.Join(dir, SingleFile), map[string]any{
		"__metadata__": map[string]string{"format": "pt"},
		"a":            map[string]any{"dtype": "F32", "shape": []int{2, 2}, "data_offsets": []int{0, 16}},
		"h":            map[string]any{"dtype": "F16", "shape": []int{2}, "data_offsets": []int{16, 20}},
		"b":            map[string]any{"dtype": "BF16", "shape": []int{2}, "data_offsets": []int{20, 24}},
	}, body)
	c, err := OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	want := map[string][]float32{"a": {1, -2.5, 3, 4}, "h": {1, -2}, "b": {1, -3}}
	for name, w := range want {
		tt, err := c.Tensor(name)
		if err != nil {
			t.Fatal(err)
		}
		got := tt.Float32()
		if len(got) != len(w) {
			t.Fatalf("%s: %v, want %v", name, got, w)
		}
		for i := range w {
			if got[i] != w[i] {
				t.Fatalf("%s: %v, want %v", name, got, w)
			}
		}
	}
	if a, _ := c.Tensor("a"); len(a.Shape) != 2 || a.Shape[0] != 2 || a.Shape[1] != 2 {
		t.Fatalf("shape %v", a.Shape)
	}
	if got := strings.Join(c.Names(), ","); got != "a,b,h" {
		t.Fatalf("names %s", got)
	}
	if _, err := c.Tensor("missing.weight"); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "missing.weight") {
		t.Fatalf("missing tensor: %v", err)
	}
}

func TestOpenRejectsBadHeaders(t *testing.T) {
	entry := func(dtype string, shape []int, begin, end int) map[string]any {
		return map[string]any{"dtype": dtype, "shape": shape, "data_offsets": []int{begin, end}}
	}
	cases := []struct {
		name   string
		header any
		body   []byte
		target error
		says   []string
	}{
		{"offset past data", map[string]any{"w": entry("F32", []int{2}, 0, 8)}, f32bytes(1), ErrInvalid, []string{`"w"`, "data_offsets"}},
		{"length mismatch", map[string]any{"w": entry("F32", []int{3}, 0, 8)}, f32bytes(1, 2), ErrInvalid, []string{`"w"`, "shape [3]"}},
		{"reversed offsets", map[string]any{"w": entry("F32", []int{0}, 8, 4)}, f32bytes(1, 2), ErrInvalid, []string{`"w"`}},
		{"overlap", map[string]any{"x": entry("F32", []int{2}, 0, 8), "y": entry("F32", []int{1}, 4, 8)}, f32bytes(1, 2), ErrInvalid, []string{`"x"`, `"y"`, "overlap"}},
		{"dtype", map[string]any{"w": entry("I64", []int{1}, 0, 8)}, f32bytes(1, 2), ErrUnsupported, []string{`"w"`, "I64"}},
		{"missing dtype", map[string]any{"w": map[string]any{"shape": []int{1}, "data_offsets": []int{0, 4}}}, f32bytes(1), ErrInvalid, []string{`"w"`, "dtype"}},
		{"negative dim", map[string]any{"w": entry("F32", []int{-1}, 0, 4)}, f32bytes(1), ErrInvalid, []string{`"w"`}},
		{"unknown field", map[string]any{"w": map[string]any{"dtype": "F32", "shape": []int{1}, "data_offsets": []int{0, 4}, "extra": 1}}, f32bytes(1), ErrInvalid, []string{`"w"`, "extra"}},
		{"not an object", []int{1, 2}, nil, ErrInvalid, []string{"header"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "m.safetensors")
			writeRaw(t, path, tc.header, tc.body)
			_, err := Open(path)
			if !errors.Is(err, tc.target) {
				t.Fatalf("err = %v, want %v", err, tc.target)
			}
			for _, s := range tc.says {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not name %s", err, s)
				}
			}
		})
	}
	t.Run("header length beyond file", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "m.safetensors")
		os.WriteFile(path, binary.LittleEndian.AppendUint64(nil, 1<<40), 0o644)
		if _, err := Open(path); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "header length") {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestOpenDirShards(t *testing.T) {
	dir := t.TempDir()
	writeRaw(t, filepath.Join(dir, "model-00001-of-00002.safetensors"),
		map[string]any{"a": map[string]any{"dtype": "F32", "shape": []int{1}, "data_offsets": []int{0, 4}}}, f32bytes(7))
	writeRaw(t, filepath.Join(dir, "model-00002-of-00002.safetensors"),
		map[string]any{"b": map[string]any{"dtype": "F32", "shape": []int{1}, "data_offsets": []int{0, 4}}}, f32bytes(8))
	writeIndex := func(m map[string]string) {
		data, _ := json.Marshal(map[string]any{"metadata": map[string]any{"total_size": 8}, "weight_map": m})
		os.WriteFile(filepath.Join(dir, IndexFile), data, 0o644)
	}
	writeIndex(map[string]string{"a": "model-00001-of-00002.safetensors", "b": "model-00002-of-00002.safetensors"})
	c, err := OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := c.Tensor("a")
	b, _ := c.Tensor("b")
	if a.Float32()[0] != 7 || b.Float32()[0] != 8 {
		t.Fatal("shard contents")
	}
	c.Close()

	writeIndex(map[string]string{"a": "model-00002-of-00002.safetensors"})
	if _, err := OpenDir(dir); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), `weight_map["a"]`) {
		t.Fatalf("tensor in the wrong shard: %v", err)
	}
	writeIndex(map[string]string{"a": "../model-00001-of-00002.safetensors"})
	if _, err := OpenDir(dir); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), `weight_map["a"]`) {
		t.Fatalf("shard outside the directory: %v", err)
	}
	// A directory without weights names the file it looked for, and is no
	// missing tensor.
	empty := t.TempDir()
	if _, err := OpenDir(empty); !errors.Is(err, fs.ErrNotExist) || errors.Is(err, ErrNotFound) ||
		!strings.Contains(err.Error(), filepath.Join(empty, SingleFile)+": no such file") || strings.Contains(err.Error(), "tensor not found") {
		t.Fatalf("empty directory: %v", err)
	}
}

// TestUnalignedBytesAreCopied parses a file held at an odd address, as a
// read fallback may hold it: float32 and f16 values come out by copy, equal.
func TestUnalignedBytesAreCopied(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.safetensors")
	body := append(f32bytes(1.5, -2), 0x00, 0x3c) // f16 1
	writeRaw(t, path, map[string]any{
		"a": map[string]any{"dtype": "F32", "shape": []int{2}, "data_offsets": []int{0, 8}},
		"h": map[string]any{"dtype": "F16", "shape": []int{1}, "data_offsets": []int{8, 10}},
	}, body)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	odd := make([]byte, len(data)+1)[1:]
	copy(odd, data)
	f, err := parse(path, odd)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := f.Tensor("a")
	h, _ := f.Tensor("h")
	if got := a.Float32(); got[0] != 1.5 || got[1] != -2 {
		t.Fatalf("a = %v", got)
	}
	if got := h.Float32(); got[0] != 1 {
		t.Fatalf("h = %v", got)
	}
}
