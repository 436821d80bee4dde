package llmtest

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/weftlabs/weft/internal/llm/arch"
)

// The architectures of package arch a Dims may name.
const (
	Llama   = arch.Llama
	Qwen2   = arch.Qwen2
	Qwen3   = arch.Qwen3
	Mistral = arch.Mistral
)

// Dims is a decoder's shape, with the config.json key of each field. Qwen2
// has q/k/v biases and Qwen3 per-head q/k norms by architecture.
type Dims struct {
	Architecture     arch.Name `json:"-"`
	VocabSize        int       `json:"vocab_size"`
	HiddenSize       int       `json:"hidden_size"`
	IntermediateSize int       `json:"intermediate_size"`
	Layers           int       `json:"num_hidden_layers"`
	Heads            int       `json:"num_attention_heads"`
	KVHeads          int       `json:"num_key_value_heads"`
	HeadDim          int       `json:"head_dim"`
	MaxPositions     int       `json:"max_position_embeddings"`
	RMSNormEps       float64   `json:"rms_norm_eps"`
	RopeTheta        float64   `json:"rope_theta"`
	TiedEmbedding    bool      `json:"tie_word_embeddings"`
	AttentionBias    bool      `json:"attention_bias"`
	// SlidingWindow is Mistral's sliding_window (0: none).
	SlidingWindow int `json:"sliding_window,omitempty"`
}

// Llama15M is llama2.c's 15M configuration (dim 288, 6 layers, 6 heads,
// hidden 768, vocab 32000, classifier tied to the embedding);
// max_position_embeddings is 512 so that a 512-token prefill fits.
var Llama15M = Dims{
	Architecture: Llama, VocabSize: 32000, HiddenSize: 288, IntermediateSize: 768,
	Layers: 6, Heads: 6, KVHeads: 6, HeadDim: 48, MaxPositions: 512,
	RMSNormEps: 1e-5, RopeTheta: 10000, TiedEmbedding: true,
}

// Llama400M is a 0.4B-parameter Llama with grouped-query attention (16
// query heads over 4 key-value heads of 64, hidden 1024, intermediate
// 4096, 24 layers, llama2.c's vocabulary of 32000, untied output): the
// larger shape the engine's speed is measured on against llama.cpp.
var Llama400M = Dims{
	Architecture: Llama, VocabSize: 32000, HiddenSize: 1024, IntermediateSize: 4096,
	Layers: 24, Heads: 16, KVHeads: 4, HeadDim: 64, MaxPositions: 2048,
	RMSNormEps: 1e-5, RopeTheta: 10000,
}

// Qwen3Small is the shape of Qwen3-0.6B.
var Qwen3Small = Dims{
	Architecture: Qwen3, VocabSize: 151936, HiddenSize: 1024, IntermediateSize: 3072,
	Layers: 28, Heads: 16, KVHeads: 8, HeadDim: 128, MaxPositions: 40960,
	RMSNormEps: 1e-6, RopeTheta: 1e6, TiedEmbedding: true,
}

// ConfigJSON is the config.json of the shape.
func (d Dims) ConfigJSON() []byte {
	raw, err := json.Marshal(d)
	if err != nil {
		panic(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		panic(err)
	}
	a, _ := arch.Lookup(d.Architecture)
	m["architectures"] = []string{string(d.Architecture)}
	m["model_type"] = a.ModelType
	m["hidden_act"] = "silu"
	m["torch_dtype"] = "float32"
	out, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		panic(err)
	}
	return out
}

// qkvBias reports whether the shape's q/k/v projections have biases.
func (d Dims) qkvBias() bool { return d.AttentionBias || d.Architecture == Qwen2 }

// tensor is one weight of a shape: its checkpoint name and dimensions and
// the normal distribution RandomWeights draws it from.
type tensor struct {
	name      string
	shape     []int
	mean, std float64
}

// tensors lists the weights of d in checkpoint order.
func (d Dims) tensors() []tensor {
	h, f, hd := d.HiddenSize, d.IntermediateSize, d.HeadDim
	var out []tensor
	vec := func(name string, n int, mean, std float64) {
		out = append(out, tensor{name, []int{n}, mean, std})
	}
	mat := func(name string, rows, cols int) {
		out = append(out, tensor{name, []int{rows, cols}, 0, 1 / math.Sqrt(float64(cols))})
	}
	out = append(out, tensor{"model.embed_tokens.weight", []int{d.VocabSize, h}, 0, 1})
	for l := range d.Layers {
		p := fmt.Sprintf("model.layers.%d.", l)
		vec(p+"input_layernorm.weight", h, 1, 0.1)
		vec(p+"post_attention_layernorm.weight", h, 1, 0.1)
		for _, proj := range []struct {
			name string
			out  int
		}{{"q_proj", d.Heads * hd}, {"k_proj", d.KVHeads * hd}, {"v_proj", d.KVHeads * hd}} {
			mat(p+"self_attn."+proj.name+".weight", proj.out, h)
			if d.qkvBias() {
				vec(p+"self_attn."+proj.name+".bias", proj.out, 0, 0.1)
			}
		}
		mat(p+"self_attn.o_proj.weight", h, d.Heads*hd)
		if d.Architecture == Qwen3 {
			vec(p+"self_attn.q_norm.weight", hd, 1, 0.1)
			vec(p+"self_attn.k_norm.weight", hd, 1, 0.1)
		}
		mat(p+"mlp.gate_proj.weight", f, h)
		mat(p+"mlp.up_proj.weight", f, h)
		mat(p+"mlp.down_proj.weight", h, f)
	}
	vec("model.norm.weight", h, 1, 0.1)
	if !d.TiedEmbedding {
		mat("lm_head.weight", d.VocabSize, h)
	}
	return out
}

// Shapes are the checkpoint dimensions of d's weights by name.
func (d Dims) Shapes() map[string][]int {
	out := map[string][]int{}
	for _, t := range d.tensors() {
		out[t.name] = t.shape
	}
	return out
}

// RandomWeights returns weights for d drawn from seed, named as in a
// checkpoint and scaled as the PyTorch reference generator scales them
// (unit embeddings, linear weights of variance 1/in, norms near 1).
func RandomWeights(d Dims, seed uint64) map[string][]float32 {
	r := rand.New(rand.NewPCG(seed, 0))
	w := map[string][]float32{}
	for _, t := range d.tensors() {
		n := 1
		for _, s := range t.shape {
			n *= s
		}
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(t.mean + t.std*r.NormFloat64())
		}
		w[t.name] = v
	}
	return w
}

// FastRandomWeights fills the weights of d with uniform values of the
// scale RandomWeights uses, quickly enough for a 0.6B-parameter model.
func FastRandomWeights(d Dims) map[string][]float32 {
	r := rand.New(rand.NewPCG(2, 2))
	w := map[string][]float32{}
	for _, t := range d.tensors() {
		n := 1
		for _, s := range t.shape {
			n *= s
		}
		v := make([]float32, n)
		const scale = 1.0 / (1 << 32) * 0.1
		for i := range v {
			v[i] = float32(float64(int32(r.Uint32())) * scale)
		}
		w[t.name] = v
	}
	return w
}

// RandomTokens returns n token ids below vocab from seed.
func RandomTokens(seed uint64, n, vocab int) []int32 {
	r := rand.New(rand.NewPCG(seed, 1))
	ids := make([]int32, n)
	for i := range ids {
		ids[i] = int32(r.IntN(vocab))
	}
	return ids
}
