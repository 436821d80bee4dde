package model

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// randomWeights returns weights for cfg drawn from a fixed seed, scaled as
// the generator of testdata/torch scales them (unit embeddings, linear
// weights of variance 1/in, norms near 1).
func randomWeights(cfg *Config, seed uint64) map[string][]float32 {
	r := rand.New(rand.NewPCG(seed, 0))
	w := map[string][]float32{}
	fill := func(name string, n int, mean, std float64) {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(mean + std*r.NormFloat64())
		}
		w[name] = v
	}
	d, f, hd := cfg.HiddenSize, cfg.IntermediateSize, cfg.HeadDim
	mat := func(name string, out, in int) { fill(name, out*in, 0, 1/math.Sqrt(float64(in))) }
	fill("model.embed_tokens.weight", cfg.VocabSize*d, 0, 1)
	qkvBias := cfg.AttentionBias || cfg.Architecture == Qwen2
	for l := range cfg.Layers {
		p := fmt.Sprintf("model.layers.%d.", l)
		fill(p+"input_layernorm.weight", d, 1, 0.1)
		fill(p+"post_attention_layernorm.weight", d, 1, 0.1)
		for _, proj := range []struct {
			name string
			out  int
		}{{"q_proj", cfg.Heads * hd}, {"k_proj", cfg.KVHeads * hd}, {"v_proj", cfg.KVHeads * hd}} {
			mat(p+"self_attn."+proj.name+".weight", proj.out, d)
			if qkvBias {
				fill(p+"self_attn."+proj.name+".bias", proj.out, 0, 0.1)
			}
		}
		mat(p+"self_attn.o_proj.weight", d, cfg.Heads*hd)
		if cfg.QKNorm {
			fill(p+"self_attn.q_norm.weight", hd, 1, 0.1)
			fill(p+"self_attn.k_norm.weight", hd, 1, 0.1)
		}
		mat(p+"mlp.gate_proj.weight", f, d)
		mat(p+"mlp.up_proj.weight", f, d)
		mat(p+"mlp.down_proj.weight", d, f)
	}
	fill("model.norm.weight", d, 1, 0.1)
	if !cfg.TiedEmbedding {
		mat("lm_head.weight", cfg.VocabSize, d)
	}
	return w
}

// randomModel builds a model of cfg with random weights.
func randomModel(tb testing.TB, cfg *Config, opts Options) *Model {
	tb.Helper()
	m, err := FromWeights(cfg, randomWeights(cfg, 1), opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { m.Close() })
	return m
}

// randomTokens returns n token ids below vocab from seed.
func randomTokens(seed uint64, n, vocab int) []int32 {
	r := rand.New(rand.NewPCG(seed, 1))
	ids := make([]int32, n)
	for i := range ids {
		ids[i] = int32(r.IntN(vocab))
	}
	return ids
}
