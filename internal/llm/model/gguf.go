package model

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/weftlabs/weft/internal/llm/arch"
	"github.com/weftlabs/weft/internal/llm/gguf"
	"github.com/weftlabs/weft/internal/llm/quant"
)

// ggufKeys names the GGUF metadata key (after "<architecture>.") that
// holds each config.json field.
var ggufKeys = map[string]string{
	"vocab_size":              "vocab_size",
	"hidden_size":             "embedding_length",
	"intermediate_size":       "feed_forward_length",
	"num_hidden_layers":       "block_count",
	"num_attention_heads":     "attention.head_count",
	"num_key_value_heads":     "attention.head_count_kv",
	"head_dim":                "attention.key_length",
	"max_position_embeddings": "context_length",
	"rms_norm_eps":            "attention.layer_norm_rms_epsilon",
	"rope_theta":              "rope.freq_base",
	"rope_scaling":            "rope.scaling.type",
}

// ConfigFromGGUF reads a GGUF file's hyperparameters as the configuration
// the equivalent config.json gives: the architecture from
// general.architecture ("llama", "qwen2", "qwen3" or "gemma3", whose own
// keys ggufGemma3 reads), the sizes from
// <arch>.embedding_length, feed_forward_length, block_count,
// attention.head_count(_kv), attention.key_length and context_length, the
// norm epsilon and rope.freq_base, linear or yarn rope.scaling.*, Llama 3's
// scaling from the rope_freqs tensor; biases and tied embeddings from the
// tensors present. Errors name the file and the key.
func ConfigFromGGUF(f *gguf.File) (*Config, error) {
	name, err := f.String("general.architecture")
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	a, ok := arch.FromGGUF(name)
	if !ok {
		return nil, unsupported(f.Path+": general.architecture", "%q (supported: %s)", name, strings.Join(arch.GGUFNames(), ", "))
	}
	key := func(field string) string {
		if k, ok := ggufKeys[field]; ok {
			return name + "." + k
		}
		return field
	}
	field := func(f string) string { return key(f) }
	raw := rawConfig{Architectures: []string{string(a.Name)}}
	ints := map[string]**int{
		"vocab_size": &raw.VocabSize, "hidden_size": &raw.HiddenSize, "intermediate_size": &raw.IntermediateSize,
		"num_hidden_layers": &raw.NumHiddenLayers, "num_attention_heads": &raw.NumAttentionHeads,
		"num_key_value_heads": &raw.NumKeyValueHeads, "head_dim": &raw.HeadDim,
		"max_position_embeddings": &raw.MaxPositionEmbeddings,
	}
	for fieldName, dst := range ints {
		if _, ok := f.Lookup(key(fieldName)); !ok {
			continue
		}
		v, err := f.Uint(key(fieldName))
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrUnsupported, err) // e.g. per-layer head counts
		}
		n := int(min(v, 1<<40))
		*dst = &n
	}
	for fieldName, dst := range map[string]**float64{"rms_norm_eps": &raw.RMSNormEps, "rope_theta": &raw.RopeTheta} {
		if _, ok := f.Lookup(key(fieldName)); !ok {
			continue
		}
		v, err := f.Float(key(fieldName))
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
		}
		*dst = &v
	}
	if raw.VocabSize == nil {
		// Files without <arch>.vocab_size size it by the token list or
		// the embedding.
		if tokens, err := f.Strings("tokenizer.ggml.tokens"); err == nil {
			n := len(tokens)
			raw.VocabSize = &n
		} else if t, err := f.Tensor("token_embd.weight"); err == nil && len(t.Dims) == 2 {
			n := t.Dims[1]
			raw.VocabSize = &n
		}
	}
	if err := ggufUnsupported(f, name); err != nil {
		return nil, err
	}
	if a.Name == Gemma3 {
		if err := ggufGemma3(f, &raw); err != nil {
			return nil, err
		}
	}
	_, err = f.Tensor("output.weight")
	tied := errors.Is(err, gguf.ErrNotFound)
	raw.TieWordEmbeddings = &tied
	_, err = f.Tensor("blk.0.attn_output.bias")
	bias := err == nil
	raw.AttentionBias = &bias
	if raw.RopeScaling, err = ggufRopeScaling(f, name); err != nil {
		return nil, err
	}
	c, err := raw.config(field)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.Path, err)
	}
	if t, err := f.Tensor("rope_freqs.weight"); err == nil {
		if c.RopeFreqFactors, err = t.Float32(); err != nil || len(c.RopeFreqFactors) != c.rotaryDim()/2 {
			return nil, invalid(f.Path+": rope_freqs.weight", "%d %s factors, want %d float32 (one per rotated pair)", t.Elements(), t.Type, c.rotaryDim()/2)
		}
		c.RopeFreqFactors = slices.Clone(c.RopeFreqFactors)
	}
	return c, nil
}

// ggufGemma3 reads a Gemma 3 file's own hyperparameters as llama.cpp
// reads them: attention.sliding_window; every sixth layer global, the
// others rotating by base 10000 unscaled; scores scaled by 1/√key_length
// (by 1/√(embedding_length/head_count) for the 62 layers of the 27B model,
// whose query_pre_attn_scalar that is). No softcapping: Gemma 3 has none.
// The converter stores the norms' weights as 1 + w, the factors the norms
// multiply by, so they are read as they are.
func ggufGemma3(f *gguf.File, raw *rawConfig) error {
	const arch = "gemma3"
	window, err := f.Uint(arch + ".attention.sliding_window")
	if err != nil {
		return fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	w := int(min(window, 1<<40))
	raw.SlidingWindow = &w
	pattern, local := 6, 10000.0
	raw.SlidingWindowPattern, raw.RopeLocalBaseFreq = &pattern, &local
	if raw.HiddenSize == nil || raw.NumAttentionHeads == nil || *raw.NumAttentionHeads <= 0 {
		return nil // config reports the missing size
	}
	perHead := *raw.HiddenSize / *raw.NumAttentionHeads
	if raw.HeadDim == nil {
		raw.HeadDim = &perHead
	}
	scalar := float64(*raw.HeadDim)
	if raw.NumHiddenLayers != nil && *raw.NumHiddenLayers == 62 {
		scalar = float64(perHead)
	}
	raw.QueryPreAttnScalar = &scalar
	return nil
}

// ggufUnsupported rejects hyperparameters of features the decoder lacks:
// mixtures of experts, partial rotation, keys and values of different
// widths.
func ggufUnsupported(f *gguf.File, arch string) error {
	if n, err := f.Uint(arch + ".expert_count"); err == nil && n > 0 {
		return unsupported(f.Path+": "+arch+".expert_count", "%d experts (mixtures of experts are not run)", n)
	}
	keyLen, errK := f.Uint(arch + ".attention.key_length")
	valLen, errV := f.Uint(arch + ".attention.value_length")
	if errK == nil && errV == nil && keyLen != valLen {
		return unsupported(f.Path+": "+arch+".attention.value_length", "%d differs from key_length %d", valLen, keyLen)
	}
	if rot, err := f.Uint(arch + ".rope.dimension_count"); err == nil {
		head := keyLen
		if errK != nil {
			embd, _ := f.Uint(arch + ".embedding_length")
			heads, _ := f.Uint(arch + ".attention.head_count")
			if heads > 0 {
				head = embd / heads
			}
		}
		if rot != head {
			return unsupported(f.Path+": "+arch+".rope.dimension_count", "%d of head size %d rotate (only whole heads)", rot, head)
		}
	}
	return nil
}

// ggufRopeScaling reads rope.scaling.* as config.json's rope_scaling.
func ggufRopeScaling(f *gguf.File, arch string) ([]byte, error) {
	typ, err := f.String(arch + ".rope.scaling.type")
	if errors.Is(err, gguf.ErrNotFound) || typ == "none" {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	factor, err := f.Float(arch + ".rope.scaling.factor")
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	switch typ {
	case "linear":
		return fmt.Appendf(nil, `{"rope_type":"linear","factor":%v}`, factor), nil
	case "yarn":
		orig, err := f.Uint(arch + ".rope.scaling.original_context_length")
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
		}
		return fmt.Appendf(nil, `{"rope_type":"yarn","factor":%v,"original_max_position_embeddings":%d}`, factor, orig), nil
	}
	return nil, unsupported(f.Path+": "+arch+".rope.scaling.type", "%q (supported: none, linear, yarn)", typ)
}

// LoadGGUF loads the model of a GGUF file: its configuration
// (ConfigFromGGUF) and weights under llama.cpp's tensor names
// (token_embd, blk.N.attn_q, ..., output_norm, output; a file without
// output.weight ties it to the embedding). With the weight type Auto every
// matrix is used in its own type where it lies in the mapped file (F32 as
// float32, F16, BF16 and the block formats of package quant as
// quant.Matrix), the embedding table is looked up row by row in its own
// type whatever the weight type, and a tied output projection is the
// embedding table itself; other weight types widen the matrices to float32
// (exactly as gguf-py dequantizes them) and quantize them again as they
// would a safetensors checkpoint. Llama's converter reorders the rows of
// each query and key head so that llama.cpp's RoPE rotates adjacent pairs:
// those projections are multiplied as stored and their outputs put back in
// the Hugging Face order this package's RoPE rotates (Linear.RoPEInterleaved;
// their biases are reordered at load). A tensor of a type package quant
// does not read is ErrUnsupported naming it and its type.
func LoadGGUF(path string, opts Options) (*Model, error) {
	f, err := gguf.Open(path)
	if err != nil {
		return nil, err
	}
	cfg, err := ConfigFromGGUF(f)
	if err != nil {
		f.Close()
		return nil, err
	}
	l := &loader{read: ggufReader(f, cfg), stored: ggufMatrix(f), weightType: opts.WeightType}
	if cfg.Architecture == Llama {
		l.interleaved = func(name string) int {
			if strings.HasSuffix(name, ".q_proj.weight") || strings.HasSuffix(name, ".k_proj.weight") {
				return cfg.HeadDim
			}
			return 0
		}
	}
	m, err := build(cfg, l, opts, nil)
	if err != nil {
		f.Close()
		return nil, err
	}
	m.files = f
	return m, nil
}

// ggufTensor returns the tensor of a checkpoint name, its shape checked.
func ggufTensor(f *gguf.File, name string, shape ...int) (*gguf.Tensor, error) {
	arch, _ := f.String("general.architecture")
	t, err := f.Tensor(gguf.TensorName(arch, name))
	if err != nil {
		return nil, fmt.Errorf("%w: %v (weight %s)", ErrInvalid, err, name)
	}
	if !slices.Equal(t.Shape(), shape) {
		return nil, invalid(f.Path+": "+t.Name, "shape %v, the metadata gives %v", t.Shape(), shape)
	}
	if !t.Type.Known() {
		return nil, unsupported(f.Path, "tensor %s is %v, a type the engine does not read", t.Name, t.Type)
	}
	return t, nil
}

// ggufMatrix returns matrices by their checkpoint names from a GGUF file as
// they are stored, over the file's bytes.
func ggufMatrix(f *gguf.File) func(string, int, int) (*quant.Matrix, error) {
	return func(name string, rows, cols int) (*quant.Matrix, error) {
		t, err := ggufTensor(f, name, rows, cols)
		if err != nil {
			return nil, err
		}
		m, err := quant.NewMatrix(t.Type, rows, cols, t.Data)
		if err != nil {
			return nil, invalid(f.Path+": "+t.Name, "%v", err)
		}
		return m, nil
	}
}

// ggufReader reads weights by their checkpoint names from a GGUF file as
// float32: F32 tensors as views of the file, others widened. Llama's query
// and key biases are put back in Hugging Face order; their weights are left
// as stored (see LoadGGUF).
func ggufReader(f *gguf.File, c *Config) func(string, ...int) ([]float32, error) {
	return func(name string, shape ...int) ([]float32, error) {
		t, err := ggufTensor(f, name, shape...)
		if err != nil {
			return nil, err
		}
		w, err := t.Float32()
		if err != nil {
			w = make([]float32, t.Elements())
			if err := quant.Dequantize(t.Type, w, t.Data); err != nil {
				return nil, invalid(f.Path+": "+t.Name, "%v", err)
			}
		}
		if c.Architecture == Llama {
			switch {
			case strings.HasSuffix(t.Name, ".attn_q.bias"):
				w = gguf.HalveRoPERows(w, c.Heads, c.HeadDim)
			case strings.HasSuffix(t.Name, ".attn_k.bias"):
				w = gguf.HalveRoPERows(w, c.KVHeads, c.HeadDim)
			}
		}
		return w, nil
	}
}
