package model

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weftlabs/weft/internal/llm/safetensors"
)

// copyGolden copies a golden model directory and lets edit change its
// config.json (as a generic map) before it is written.
func copyGolden(t *testing.T, name string, edit func(map[string]any)) string {
	t.Helper()
	dir := t.TempDir()
	src := goldenDir(name)
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if e.Name() == "config.json" && edit != nil {
			var cfg map[string]any
			if err := json.Unmarshal(data, &cfg); err != nil {
				t.Fatal(err)
			}
			edit(cfg)
			if data, err = json.Marshal(cfg); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestLoadErrorsNameTheField(t *testing.T) {
	cases := []struct {
		name   string
		edit   func(map[string]any)
		target error
		field  string
	}{
		{"architecture", func(c map[string]any) { c["architectures"] = []string{"Phi3ForCausalLM"} }, ErrUnsupported, "architectures"},
		{"activation", func(c map[string]any) { c["hidden_act"] = "gelu" }, ErrUnsupported, "hidden_act"},
		{"rope type", func(c map[string]any) { c["rope_scaling"] = map[string]any{"rope_type": "longrope", "factor": 2} }, ErrUnsupported, "rope_scaling.rope_type"},
		{"rope factor", func(c map[string]any) { c["rope_scaling"] = map[string]any{"type": "linear"} }, ErrInvalid, "rope_scaling.factor"},
		{"llama3 knobs", func(c map[string]any) {
			c["rope_scaling"] = map[string]any{"rope_type": "llama3", "factor": 8, "low_freq_factor": 1, "original_max_position_embeddings": 8192}
		}, ErrInvalid, "rope_scaling.high_freq_factor"},
		{"missing size", func(c map[string]any) { delete(c, "hidden_size") }, ErrInvalid, "hidden_size"},
		{"kv heads", func(c map[string]any) { c["num_key_value_heads"] = 3 }, ErrInvalid, "num_key_value_heads"},
		{"sliding window", func(c map[string]any) { c["use_sliding_window"] = true }, ErrUnsupported, "use_sliding_window"},
		{"layer types", func(c map[string]any) { c["layer_types"] = []string{"full_attention", "sliding_attention"} }, ErrUnsupported, "layer_types[1]"},
		{"quantised", func(c map[string]any) { c["quantization_config"] = map[string]any{"quant_method": "gptq"} }, ErrUnsupported, "quantization_config"},
		{"partial rotary", func(c map[string]any) { c["partial_rotary_factor"] = 0.5 }, ErrUnsupported, "partial_rotary_factor"},
		{"weight shape", func(c map[string]any) { c["intermediate_size"] = 48 }, ErrInvalid, "model.layers.0.mlp.gate_proj.weight"},
		{"missing weight", func(c map[string]any) { c["num_hidden_layers"] = 3 }, safetensors.ErrNotFound, "model.layers.2.input_layernorm.weight"},
		{"untied without lm_head", func(c map[string]any) { c["tie_word_embeddings"] = false }, safetensors.ErrNotFound, "lm_head.weight"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := "llama3-rope"
			if tc.name == "untied without lm_head" {
				src = "llama-linear-tied"
			}
			_, err := Load(copyGolden(t, src, tc.edit), Options{})
			if !errors.Is(err, tc.target) {
				t.Fatalf("err = %v, want %v", err, tc.target)
			}
			if !strings.Contains(err.Error(), tc.field) {
				t.Fatalf("error %q does not name %s", err, tc.field)
			}
		})
	}
}

func TestLoadedConfig(t *testing.T) {
	m := loadGolden(t, "qwen3-f16", Options{})
	c := m.Config
	if c.Architecture != Qwen3 || !c.QKNorm || !c.TiedEmbedding || c.HeadDim != 16 || c.HiddenSize/c.Heads == c.HeadDim {
		t.Fatalf("config %+v", c)
	}
	if c.RopeScaling == nil || c.RopeScaling.Type != "yarn" {
		t.Fatalf("rope scaling %+v", c.RopeScaling)
	}
	if _, err := Load(goldenDir("llama3-rope"), Options{MaxLen: 1000}); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("max length beyond max_position_embeddings without dynamic scaling: %v", err)
	}
}

func TestForwardRejectsBadBatches(t *testing.T) {
	m := loadGolden(t, "llama3-rope", Options{})
	cache := NewContiguousCache(m.Config, 64)
	cases := []struct {
		name   string
		seqs   []Sequence
		target error
	}{
		{"token out of vocabulary", []Sequence{{ID: 1, Tokens: []int32{5, 96}}}, ErrBatch},
		{"negative token", []Sequence{{ID: 1, Tokens: []int32{-1}}}, ErrBatch},
		{"no tokens", []Sequence{{ID: 1}}, ErrBatch},
		{"twice", []Sequence{{ID: 1, Tokens: []int32{1}}, {ID: 1, Tokens: []int32{2}}}, ErrBatch},
		{"past the model's length", []Sequence{{ID: 1, Tokens: make([]int32, 65)}}, ErrBatch},
		{"gap in the cache", []Sequence{{ID: 2, Tokens: []int32{1}, Start: 3}}, ErrBatch},
	}
	for _, tc := range cases {
		if _, err := m.Forward(&Batch{Seqs: tc.seqs}, cache); !errors.Is(err, tc.target) {
			t.Errorf("%s: err = %v, want %v", tc.name, err, tc.target)
		}
	}
	small := NewContiguousCache(m.Config, 4)
	if _, err := m.Forward(&Batch{Seqs: []Sequence{{ID: 1, Tokens: make([]int32, 5)}}}, small); !errors.Is(err, ErrCacheFull) {
		t.Errorf("over the cache's capacity: %v", err)
	}
}

func TestParseConfigRopeParameters(t *testing.T) {
	data := []byte(`{"architectures":["Qwen3ForCausalLM"],"vocab_size":8,"hidden_size":16,"intermediate_size":32,
		"num_hidden_layers":1,"num_attention_heads":2,"max_position_embeddings":64,
		"rope_parameters":{"rope_type":"linear","factor":2.0,"rope_theta":500000.0}}`)
	c, err := ParseConfig(data)
	if err != nil {
		t.Fatal(err)
	}
	if c.RopeTheta != 500000 || c.RopeScaling == nil || c.RopeScaling.Type != "linear" || c.KVHeads != 2 || c.HeadDim != 8 {
		t.Fatalf("config %+v, scaling %+v", c, c.RopeScaling)
	}
	inv, scaling := c.ropeFrequencies(0)
	if len(inv) != 4 || inv[0] != 0.5 || scaling != 1 {
		t.Fatalf("inv_freq %v, scaling %g", inv, scaling)
	}
	bad := []byte(`{"architectures":["LlamaForCausalLM"],"vocab_size":8,"hidden_size":16,"intermediate_size":32,
		"num_hidden_layers":1,"num_attention_heads":2,"max_position_embeddings":64,
		"rope_parameters":{"rope_type":"mrope","rope_theta":10000.0}}`)
	if _, err := ParseConfig(bad); !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "rope_parameters.rope_type") {
		t.Fatalf("err = %v", err)
	}
}
