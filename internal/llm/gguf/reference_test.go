package gguf

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/weftlabs/weft/internal/llm/quant"
)

// TestReadsReferenceWriter reads testdata/gguf/types.gguf, written by
// llama.cpp's gguf-py (valuetypes.py), and compares every key and tensor
// with what gguf-py's own reader made of the file (types.json).
func TestReadsReferenceWriter(t *testing.T) {
	dir := filepath.Join("..", "testdata", "gguf")
	raw, err := os.ReadFile(filepath.Join(dir, "types.json"))
	if err != nil {
		t.Fatal(err)
	}
	var want struct {
		Alignment int `json:"alignment"`
		KV        []struct {
			Key   string          `json:"key"`
			Type  []ValueType     `json:"type"`
			Value json.RawMessage `json:"value"`
		} `json:"kv"`
		Tensors []struct {
			Name   string     `json:"name"`
			Type   quant.Type `json:"type"`
			Dims   []int      `json:"dims"`
			Offset uint64     `json:"offset"`
			Data   string     `json:"data"`
		} `json:"tensors"`
	}
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	f, err := Open(filepath.Join(dir, "types.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Alignment != want.Alignment || len(f.KV) != len(want.KV) || len(f.Tensors) != len(want.Tensors) {
		t.Fatalf("alignment %d, %d keys, %d tensors; want %d, %d, %d", f.Alignment, len(f.KV), len(f.Tensors), want.Alignment, len(want.KV), len(want.Tensors))
	}
	for i, w := range want.KV {
		kv := f.KV[i]
		if kv.Key != w.Key || kv.Value.Type != w.Type[0] || (kv.Value.Type == TypeArray && kv.Value.ElemType() != w.Type[1]) {
			t.Errorf("key %d: %s of %s, want %s of %v", i, kv.Key, kv.Value.Type, w.Key, w.Type)
			continue
		}
		got, err := json.Marshal(plain(kv.Value))
		if err != nil {
			t.Fatal(err)
		}
		if !sameJSON(t, got, w.Value) {
			t.Errorf("%s = %s, gguf-py reads %s", kv.Key, got, w.Value)
		}
	}
	for i, w := range want.Tensors {
		tn := f.Tensors[i]
		if tn.Name != w.Name || tn.Type != w.Type || !slices.Equal(tn.Dims, w.Dims) || tn.Offset != w.Offset || hex.EncodeToString(tn.Data) != w.Data {
			t.Errorf("tensor %d: %s %s %v at %d, want %s %s %v at %d (or other bytes)", i, tn.Name, tn.Type, tn.Dims, tn.Offset, w.Name, w.Type, w.Dims, w.Offset)
		}
	}
}

// plain turns a value into what encoding/json writes as gguf-py's dump does.
func plain(v Value) any {
	switch {
	case v.Type == TypeArray:
		items := v.Items()
		out := make([]any, len(items))
		for i, item := range items {
			out[i] = plain(item)
		}
		return out
	case v.Type == TypeString:
		s, _ := v.Text()
		return s
	case v.Type == TypeBool:
		b, _ := v.Bool()
		return b
	case v.Type == TypeFloat32 || v.Type == TypeFloat64:
		return v.mustFloat()
	case signed(v.Type):
		n, _ := v.Int()
		return n
	}
	n, _ := v.Uint()
	return n
}

// sameJSON compares two JSON values, numbers by value.
func sameJSON(t *testing.T, a, b []byte) bool {
	var x, y any
	dec := func(raw []byte, v *any) {
		if err := json.Unmarshal(raw, v); err != nil {
			t.Fatal(err)
		}
	}
	dec(a, &x)
	dec(b, &y)
	return fmt.Sprint(normalize(x)) == fmt.Sprint(normalize(y))
}

func normalize(v any) any {
	switch v := v.(type) {
	case []any:
		for i := range v {
			v[i] = normalize(v[i])
		}
		return v
	case float64:
		if v == math.Trunc(v) && math.Abs(v) < 1e18 {
			return fmt.Sprintf("%.0f", v)
		}
		return fmt.Sprintf("%.17g", v)
	}
	return v
}

func TestFloat32MatchesReference(t *testing.T) {
	f, err := Open(filepath.Join("..", "testdata", "gguf", "types.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, name := range []string{"f32.matrix", "f16.matrix", "bf16.matrix"} {
		tn, _ := f.Tensor(name)
		v, err := tn.Float32()
		if err != nil || len(v) != tn.Elements() {
			t.Fatalf("%s: %d values, %v", name, len(v), err)
		}
		for _, x := range v {
			if math.IsNaN(float64(x)) || math.Abs(float64(x)) > 10 {
				t.Fatalf("%s: %v is not a standard normal draw", name, x)
			}
		}
	}
	q, _ := f.Tensor("q8_0.matrix")
	if _, err := q.Float32(); err == nil {
		t.Fatal("a Q8_0 tensor read as float32")
	}
}
