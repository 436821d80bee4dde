package model

import (
	"errors"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/weftlabs/weft/internal/llm/safetensors"
)

// TestGemma3ConfigDefaults: a Gemma 3 config.json may leave out every field
// Gemma3TextConfig defaults (the configs of the published checkpoints do);
// model_type gemma3_text alone names the architecture.
func TestGemma3ConfigDefaults(t *testing.T) {
	for _, raw := range []string{`{"architectures": ["Gemma3ForCausalLM"]}`, `{"model_type": "gemma3_text"}`} {
		c, err := ParseConfig([]byte(raw))
		if err != nil {
			t.Fatal(err)
		}
		if c.Architecture != Gemma3 || c.VocabSize != 262208 || c.HiddenSize != 2304 || c.Layers != 26 || c.Heads != 8 ||
			c.KVHeads != 4 || c.HeadDim != 256 || c.MaxPositions != 131072 || c.RopeTheta != 1e6 || c.LocalRopeTheta != 1e4 ||
			c.QueryPreAttnScalar != 256 || c.SlidingWindow != 4096 || !c.TiedEmbedding || !c.GELU || !c.SandwichNorms || !c.QKNorm ||
			c.AttnSoftcap != 0 || c.FinalSoftcap != 0 || c.EmbedScale != float32(math.Sqrt(2304)) {
			t.Fatalf("%s: config %+v", raw, c)
		}
		// Every sixth layer is global.
		for i, sliding := range c.SlidingLayers {
			if sliding != ((i+1)%6 != 0) {
				t.Fatalf("%s: layer %d sliding %v", raw, i, sliding)
			}
		}
	}
}

// TestGemma3RopeParameters: transformers' newer rope_parameters, one entry
// per layer type, says what rope_theta, rope_local_base_freq and
// rope_scaling say.
func TestGemma3RopeParameters(t *testing.T) {
	old, err := ReadConfig(goldenDir("gemma3-bf16"))
	if err != nil {
		t.Fatal(err)
	}
	newer := copyGolden(t, "gemma3-bf16", func(c map[string]any) {
		c["rope_parameters"] = map[string]any{
			"full_attention":    map[string]any{"rope_type": "linear", "factor": 2.0, "rope_theta": c["rope_theta"]},
			"sliding_attention": map[string]any{"rope_type": "default", "rope_theta": c["rope_local_base_freq"]},
		}
		for _, k := range []string{"rope_scaling", "rope_theta", "rope_local_base_freq"} {
			delete(c, k)
		}
	})
	got, err := ReadConfig(newer)
	if err != nil {
		t.Fatal(err)
	}
	if got.RopeTheta != old.RopeTheta || got.LocalRopeTheta != old.LocalRopeTheta || got.RopeScaling == nil ||
		got.RopeScaling.Type != "linear" || *got.RopeScaling.Factor != *old.RopeScaling.Factor {
		t.Fatalf("rope_parameters read as %+v (scaling %+v), rope_scaling as %+v", got, got.RopeScaling, old)
	}
}

func TestGemma3ConfigErrorsNameTheField(t *testing.T) {
	cases := []struct {
		name   string
		edit   func(map[string]any)
		target error
		field  string
	}{
		{"activation", func(c map[string]any) { c["hidden_activation"] = "gelu" }, ErrUnsupported, "hidden_activation"},
		{"layer types", func(c map[string]any) { c["layer_types"] = []string{"sliding_attention"} }, ErrInvalid, "layer_types"},
		{"layer type", func(c map[string]any) {
			c["layer_types"] = []string{"full_attention", "chunked_attention", "full_attention"}
		}, ErrUnsupported, "layer_types[1]"},
		{"pattern", func(c map[string]any) { c["sliding_window_pattern"] = 0 }, ErrInvalid, "sliding_window_pattern"},
		{"query scalar", func(c map[string]any) { c["query_pre_attn_scalar"] = 0 }, ErrInvalid, "query_pre_attn_scalar"},
		{"softcap", func(c map[string]any) { c["final_logit_softcapping"] = -1 }, ErrInvalid, "final_logit_softcapping"},
		{"bidirectional", func(c map[string]any) { c["use_bidirectional_attention"] = true }, ErrUnsupported, "use_bidirectional_attention"},
		{"local rope scaling", func(c map[string]any) {
			c["rope_parameters"] = map[string]any{
				"full_attention":    map[string]any{"rope_type": "default", "rope_theta": 1e6},
				"sliding_attention": map[string]any{"rope_type": "linear", "factor": 2, "rope_theta": 1e4},
			}
			delete(c, "rope_scaling")
		}, ErrUnsupported, "rope_parameters.sliding_attention.rope_type"},
		{"text config field", func(c map[string]any) {
			text := cloneConfig(c)
			text["hidden_activation"] = "relu"
			for k := range c {
				delete(c, k)
			}
			c["architectures"], c["text_config"] = []string{gemma3Multimodal}, text
		}, ErrUnsupported, "text_config.hidden_activation"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadConfig(copyGolden(t, "gemma3-bf16", tc.edit))
			if !errors.Is(err, tc.target) || !strings.Contains(err.Error(), tc.field) {
				t.Fatalf("err = %v, want %v naming %s", err, tc.target, tc.field)
			}
		})
	}
}

// cloneConfig copies a config object.
func cloneConfig(c map[string]any) map[string]any {
	out := make(map[string]any, len(c))
	for k, v := range c {
		out[k] = v
	}
	return out
}

// TestGemma3MultimodalLoadsItsLanguageModel: a Gemma3ForConditionalGeneration
// directory — the text model's config as text_config, its weights under
// language_model (either layout of transformers) beside a vision tower's —
// serves the language model: the golden logits of the text model, to the
// bit.
func TestGemma3MultimodalLoadsItsLanguageModel(t *testing.T) {
	const name = "gemma3-bf16"
	want := runLogits(t, loadGolden(t, name, Options{}), readGolden(t, name))
	ckpt, err := safetensors.OpenDir(goldenDir(name))
	if err != nil {
		t.Fatal(err)
	}
	defer ckpt.Close()
	edit := func(c map[string]any) {
		text := cloneConfig(c)
		delete(text, "architectures")
		for k := range c {
			delete(c, k)
		}
		c["architectures"], c["model_type"], c["text_config"] = []string{gemma3Multimodal}, "gemma3", text
		c["vision_config"] = map[string]any{"model_type": "siglip_vision_model", "hidden_size": 8}
	}
	for _, prefix := range languageModelPrefixes {
		t.Run(prefix, func(t *testing.T) {
			dir := copyGolden(t, name, edit)
			entries := []safetensors.Entry{{Name: "vision_tower.vision_model.post_layernorm.weight", DType: safetensors.F32, Shape: []int{8}, Data: make([]float32, 8)}}
			for _, n := range ckpt.Names() {
				w, err := ckpt.Tensor(n)
				if err != nil {
					t.Fatal(err)
				}
				entries = append(entries, safetensors.Entry{Name: prefix + strings.TrimPrefix(n, "model."), DType: w.DType, Shape: w.Shape, Data: w.Float32()})
			}
			if err := safetensors.WriteFile(filepath.Join(dir, "model.safetensors"), entries, nil); err != nil {
				t.Fatal(err)
			}
			m, err := Load(dir, Options{MaxLen: 64})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			if !m.Config.Multimodal {
				t.Fatalf("config %+v", m.Config)
			}
			got := runLogits(t, m, readGolden(t, name))
			if !slices.Equal(got, want) {
				t.Fatal("the language model's logits differ from the text model's")
			}
		})
	}
}

// runLogits is every logit runGolden compares, in order.
func runLogits(t *testing.T, m *Model, g *golden) []float32 {
	t.Helper()
	cache := NewContiguousCache(m.Config, 64)
	out, err := m.Forward(&Batch{Seqs: []Sequence{{ID: 1, Tokens: g.Prompt, AllLogits: true}}}, cache)
	if err != nil {
		t.Fatal(err)
	}
	all := slices.Clone(out[0])
	for _, step := range g.Decode {
		out, err := m.Forward(&Batch{Seqs: []Sequence{{ID: 1, Tokens: []int32{step.Token}, Start: step.Position}}}, cache)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, out[0]...)
	}
	return all
}
