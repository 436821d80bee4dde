package gguf

import (
	"slices"
	"testing"
)

func TestTensorName(t *testing.T) {
	for hf, want := range map[string]string{
		"model.embed_tokens.weight":                      "token_embd.weight",
		"model.layers.12.self_attn.q_proj.bias":          "blk.12.attn_q.bias",
		"model.layers.0.self_attn.k_norm.weight":         "blk.0.attn_k_norm.weight",
		"model.layers.3.post_attention_layernorm.weight": "blk.3.ffn_norm.weight",
		"model.layers.1.mlp.down_proj.weight":            "blk.1.ffn_down.weight",
		"model.norm.weight":                              "output_norm.weight",
		"lm_head.weight":                                 "output.weight",
	} {
		if got := TensorName("llama", hf); got != want {
			t.Errorf("%s → %s, want %s", hf, got, want)
		}
	}
	// Gemma 3's four norms a block, as gguf-py's tensor map names them.
	for hf, want := range map[string]string{
		"model.layers.2.input_layernorm.weight":            "blk.2.attn_norm.weight",
		"model.layers.2.post_attention_layernorm.weight":   "blk.2.post_attention_norm.weight",
		"model.layers.2.pre_feedforward_layernorm.weight":  "blk.2.ffn_norm.weight",
		"model.layers.2.post_feedforward_layernorm.weight": "blk.2.post_ffw_norm.weight",
		"model.layers.2.self_attn.q_norm.weight":           "blk.2.attn_q_norm.weight",
	} {
		if got := TensorName("gemma3", hf); got != want {
			t.Errorf("gemma3: %s → %s, want %s", hf, got, want)
		}
	}
}

// TestInterleaveRoPERows checks the permutation against llama.cpp's
// converter's, written out: reshape (heads, 2, half, in), swap the two
// middle axes.
func TestInterleaveRoPERows(t *testing.T) {
	// in = 1 is a projection's output vector, which takes its own loop.
	for _, in := range []int{3, 1} {
		interleaveRoPERows(t, in)
	}
}

func interleaveRoPERows(t *testing.T, in int) {
	const heads, headDim = 2, 8
	half := headDim / 2
	w := make([]float32, heads*headDim*in)
	for i := range w {
		w[i] = float32(i)
	}
	want := make([]float32, len(w))
	for h := range heads {
		for a := range 2 {
			for b := range half {
				// element [h][b][a] of the swapped view is [h][a][b] of w
				copy(want[((h*half+b)*2+a)*in:][:in], w[((h*2+a)*half+b)*in:][:in])
			}
		}
	}
	got := InterleaveRoPERows(w, heads, headDim)
	if !slices.Equal(got, want) {
		t.Fatalf("in %d: got %v\nwant %v", in, got, want)
	}
	if back := HalveRoPERows(got, heads, headDim); !slices.Equal(back, w) {
		t.Fatalf("in %d: HalveRoPERows does not invert it: %v", in, back)
	}
}
