package model

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/weftlabs/weft/internal/llm/gguf"
	"github.com/weftlabs/weft/internal/llm/quant"
)

// The GGUF files of the golden models and their reference logits, written
// by testdata/gguf/models.py: llama.cpp's converter layout (Llama's
// permuted query and key rows, rope_freqs, rope.scaling.*), matrices in
// F32, F16, BF16, Q8_0 or Q4_0 (gguf-py's quantizers), and PyTorch's
// forward pass over the file's own weights, dequantized by gguf-py.
var ggufGoldens = []string{"llama3-rope.f32", "llama-linear-tied.f16", "qwen2-bf16.bf16", "qwen3-f16.f16", "mistral-swa.f16",
	"llama3-rope.q8_0", "qwen3-f16.q4_0"}

func ggufDir() string { return filepath.Join("..", "testdata", "gguf") }

func readGGUFGolden(t *testing.T, name string) *golden {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(ggufDir(), name+".golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	var g golden
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	return &g
}

// TestGGUFLogitsMatchReference loads each GGUF golden model and compares
// its logits over the prompt and decode steps with PyTorch's, within the
// tolerance of the safetensors goldens.
func TestGGUFLogitsMatchReference(t *testing.T) {
	for _, name := range ggufGoldens {
		t.Run(name, func(t *testing.T) {
			m, err := Load(filepath.Join(ggufDir(), name+".gguf"), Options{Threads: 1})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			g := readGGUFGolden(t, name)
			worst := runGolden(t, m, g)
			t.Logf("%s: max |Δlogit| = %.3g over the prompt and %d decode steps", name, worst, len(g.Decode))
			if worst > goldenTolerance {
				t.Fatalf("max |Δlogit| = %g, tolerance %g", worst, goldenTolerance)
			}
		})
	}
}

// TestGGUFConfigMatchesConfigJSON checks the configuration read from each
// file's metadata against the golden model's config.json, field by field,
// where the converter keeps them.
func TestGGUFConfigMatchesConfigJSON(t *testing.T) {
	for _, name := range ggufGoldens {
		t.Run(name, func(t *testing.T) {
			got, err := ReadConfig(filepath.Join(ggufDir(), name+".gguf"))
			if err != nil {
				t.Fatal(err)
			}
			want, err := ReadConfig(goldenDir(strings.Split(name, ".")[0]))
			if err != nil {
				t.Fatal(err)
			}
			if want.Architecture == Mistral {
				// llama.cpp's converter writes Mistral as Llama, without
				// the window (which llama.cpp's llama does not run).
				want.Architecture, want.SlidingWindow = Llama, 0
			}
			if want.RopeScaling != nil && (want.RopeScaling.Type == "dynamic" || want.RopeScaling.Type == "llama3") {
				// Dynamic scaling has no GGUF form; Llama 3's is rope_freqs.
				if (want.RopeScaling.Type == "llama3") != (got.RopeFreqFactors != nil) {
					t.Errorf("rope_freqs %v for %s scaling", got.RopeFreqFactors, want.RopeScaling.Type)
				}
				want.RopeScaling, got.RopeFreqFactors = nil, nil
			}
			if got.RopeScaling != nil && want.RopeScaling != nil {
				if got.RopeScaling.Type != want.RopeScaling.Type || *got.RopeScaling.Factor != *want.RopeScaling.Factor ||
					got.RopeScaling.OriginalMaxPositions != want.RopeScaling.OriginalMaxPositions {
					t.Errorf("rope scaling %+v, want %+v", *got.RopeScaling, *want.RopeScaling)
				}
				got.RopeScaling, want.RopeScaling = nil, nil
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("config\n got %+v\nwant %+v", *got, *want)
			}
		})
	}
}

func TestGGUFErrors(t *testing.T) {
	src, err := gguf.Open(filepath.Join(ggufDir(), "qwen3-f16.f16.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	rewrite := func(t *testing.T, edit func(kvs []gguf.KV, ts []gguf.TensorData) ([]gguf.KV, []gguf.TensorData)) string {
		var kvs []gguf.KV
		kvs = append(kvs, src.KV...)
		var ts []gguf.TensorData
		for _, tn := range src.Tensors {
			ts = append(ts, gguf.TensorData{Name: tn.Name, Type: tn.Type, Dims: tn.Dims, Data: tn.Data})
		}
		kvs, ts = edit(kvs, ts)
		path := filepath.Join(t.TempDir(), "bad.gguf")
		if err := gguf.WriteFile(path, kvs, ts); err != nil {
			t.Fatal(err)
		}
		return path
	}
	set := func(key string, v gguf.Value) func([]gguf.KV, []gguf.TensorData) ([]gguf.KV, []gguf.TensorData) {
		return func(kvs []gguf.KV, ts []gguf.TensorData) ([]gguf.KV, []gguf.TensorData) {
			for i := range kvs {
				if kvs[i].Key == key {
					kvs[i].Value = v
					return kvs, ts
				}
			}
			return append(kvs, gguf.KV{Key: key, Value: v}), ts
		}
	}
	for _, c := range []struct {
		name string
		edit func([]gguf.KV, []gguf.TensorData) ([]gguf.KV, []gguf.TensorData)
		kind error
		says string
	}{
		{"architecture", set("general.architecture", gguf.String("mamba")), ErrUnsupported, "general.architecture"},
		{"experts", set("qwen3.expert_count", gguf.Uint32(8)), ErrUnsupported, "qwen3.expert_count"},
		{"per-layer heads", set("qwen3.attention.head_count_kv", gguf.Int32s([]int32{2, 2})), ErrUnsupported, "head_count_kv"},
		{"heads", set("qwen3.attention.head_count_kv", gguf.Uint32(3)), ErrInvalid, "qwen3.attention.head_count_kv"},
		{"rope scaling", set("qwen3.rope.scaling.type", gguf.String("longrope")), ErrUnsupported, "rope.scaling.type"},
		{"missing size", func(kvs []gguf.KV, ts []gguf.TensorData) ([]gguf.KV, []gguf.TensorData) {
			return slices.DeleteFunc(kvs, func(kv gguf.KV) bool { return kv.Key == "qwen3.embedding_length" }), ts
		}, ErrInvalid, "qwen3.embedding_length"},
		{"tensor shape", func(kvs []gguf.KV, ts []gguf.TensorData) ([]gguf.KV, []gguf.TensorData) {
			for i := range ts {
				if ts[i].Name == "blk.1.ffn_up.weight" {
					ts[i].Dims = []int{ts[i].Dims[0] * 2, ts[i].Dims[1] / 2}
				}
			}
			return kvs, ts
		}, ErrInvalid, "blk.1.ffn_up.weight"},
		{"quantized", func(kvs []gguf.KV, ts []gguf.TensorData) ([]gguf.KV, []gguf.TensorData) {
			for i := range ts {
				if ts[i].Name == "blk.0.attn_v.weight" {
					ts[i].Type, ts[i].Data = quant.IQ4_NL, make([]byte, quant.IQ4_NL.RowBytes(ts[i].Dims[0])*ts[i].Dims[1])
				}
			}
			return kvs, ts
		}, ErrUnsupported, "blk.0.attn_v.weight is IQ4_NL"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := rewrite(t, c.edit)
			m, err := Load(path, Options{Threads: 1})
			if err == nil {
				m.Close()
			}
			if !errors.Is(err, c.kind) || !strings.Contains(err.Error(), c.says) || !strings.Contains(err.Error(), "bad.gguf") {
				t.Fatalf("got %v, want %v naming %q and the file", err, c.kind, c.says)
			}
		})
	}
}
