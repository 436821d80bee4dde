package gguf

import (
	"slices"
	"strings"
)

// llama.cpp's conventions for the tensors of decoder models, shared by the
// readers of GGUF models and the writers of their test fixtures.

// layerTensorNames pairs the names of a decoder block's weights in a
// Hugging Face checkpoint (after "model.layers.N.") with llama.cpp's (after
// "blk.N."), by prefix.
var layerTensorNames = []struct{ hf, gguf string }{
	{"input_layernorm.weight", "attn_norm.weight"},
	{"post_attention_layernorm.weight", "ffn_norm.weight"},
	{"self_attn.q_proj.", "attn_q."}, {"self_attn.k_proj.", "attn_k."},
	{"self_attn.v_proj.", "attn_v."}, {"self_attn.o_proj.", "attn_output."},
	{"self_attn.q_norm.weight", "attn_q_norm.weight"}, {"self_attn.k_norm.weight", "attn_k_norm.weight"},
	{"mlp.gate_proj.", "ffn_gate."}, {"mlp.up_proj.", "ffn_up."}, {"mlp.down_proj.", "ffn_down."},
}

// archLayerTensorNames are the names an architecture gives a block's
// weights otherwise, looked up before layerTensorNames. Gemma 3's
// post_attention_layernorm normalises the attention's output
// (post_attention_norm); its MLP's input norm is pre_feedforward_layernorm.
var archLayerTensorNames = map[string][]struct{ hf, gguf string }{
	"gemma3": {
		{"post_attention_layernorm.weight", "post_attention_norm.weight"},
		{"pre_feedforward_layernorm.weight", "ffn_norm.weight"},
		{"post_feedforward_layernorm.weight", "post_ffw_norm.weight"},
	},
}

// TensorName maps a Hugging Face checkpoint's weight name to the name
// llama.cpp's converter gives it in a file of architecture arch
// (general.architecture): model.layers.3.self_attn.q_proj.weight is
// blk.3.attn_q.weight; the embedding token_embd, the final norm
// output_norm, lm_head output. Other names are returned unchanged.
func TensorName(arch, name string) string {
	if rest, ok := strings.CutPrefix(name, "model.layers."); ok {
		n, rest, _ := strings.Cut(rest, ".")
		for _, r := range slices.Concat(archLayerTensorNames[arch], layerTensorNames) {
			if suffix, ok := strings.CutPrefix(rest, r.hf); ok {
				return "blk." + n + "." + r.gguf + suffix
			}
		}
		return "blk." + n + "." + rest
	}
	switch name {
	case "model.embed_tokens.weight":
		return "token_embd.weight"
	case "model.norm.weight":
		return "output_norm.weight"
	case "lm_head.weight":
		return "output.weight"
	}
	return name
}

// InterleaveRoPERows reorders the rows of a query or key projection
// (weight or bias, heads × headDim rows) as llama.cpp's converter does for
// Llama-family models: within each head, row j·headDim/2+i moves to 2i+j,
// so that a RoPE rotating adjacent pairs (llama.cpp's, llama2.c's) does
// what Hugging Face's rotation of dimension i with i+headDim/2 does.
// Attention scores are unchanged, as queries and keys are reordered alike.
func InterleaveRoPERows(w []float32, heads, headDim int) []float32 {
	out := make([]float32, len(w))
	permuteRoPERows(out, w, heads, headDim, true)
	return out
}

// HalveRoPERows undoes InterleaveRoPERows.
func HalveRoPERows(w []float32, heads, headDim int) []float32 {
	out := make([]float32, len(w))
	HalveRoPERowsTo(out, w, heads, headDim)
	return out
}

// HalveRoPERowsTo is HalveRoPERows writing into dst (len(w) elements, not
// w itself): the outputs of a projection whose rows are interleaved, one
// output row at a time, put back without an allocation.
func HalveRoPERowsTo(dst, w []float32, heads, headDim int) {
	permuteRoPERows(dst, w, heads, headDim, false)
}

func permuteRoPERows(out, w []float32, heads, headDim int, interleave bool) {
	in := len(w) / (heads * headDim)
	half := headDim / 2
	if in == 1 {
		// One output row of a projection (a vector per head): element moves,
		// not a copy call each.
		for h := 0; h < heads*headDim; h += headDim {
			o, v := out[h:h+headDim], w[h:h+headDim]
			for i := range half {
				if interleave {
					o[2*i], o[2*i+1] = v[i], v[half+i]
				} else {
					o[i], o[half+i] = v[2*i], v[2*i+1]
				}
			}
		}
		return
	}
	for h := range heads {
		for i := range half {
			for j := range 2 {
				halved := (h*headDim + j*half + i) * in
				interleaved := (h*headDim + 2*i + j) * in
				src, dst := interleaved, halved
				if interleave {
					src, dst = halved, interleaved
				}
				copy(out[dst:dst+in], w[src:src+in])
			}
		}
	}
}
