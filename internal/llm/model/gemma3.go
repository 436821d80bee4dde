package model

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/weftlabs/weft/internal/llm/quant"
	"github.com/weftlabs/weft/internal/llm/safetensors"
)

// Gemma 3's text decoder is this package's decoder with:
//
//   - RMSNorm weights stored as offsets from 1: the norm multiplies by
//     (1 + w), computed in float32 (the loader adds the 1 to the stored
//     weights; llama.cpp's GGUF files hold the sums already);
//   - the embedding rows scaled by √hidden_size, rounded to the
//     embedding's type as the reference implementation rounds it;
//   - q/k norms, a GELU (tanh) gated MLP and four norms a layer: the
//     attention's and the MLP's outputs are normalised before their
//     residual sums;
//   - attention scaled by 1/√query_pre_attn_scalar;
//   - layers of two kinds: sliding-window layers rotating by
//     rope_local_base_freq without scaling, and global layers rotating by
//     rope_theta and rope_scaling (layer_types, or every
//     sliding_window_pattern-th layer global);
//   - optional tanh softcapping of attention scores and logits;
//   - tied output embeddings by default.
//
// A config.json may leave out any field its configuration class
// (Gemma3TextConfig) has a default for: the defaults are filled in. A
// Gemma3ForConditionalGeneration directory is read as its text_config and
// the weights under its language_model.

// gemma3TextModelType is the model_type of a Gemma3TextConfig.
const gemma3TextModelType = "gemma3_text"

// gemma3Multimodal is the architecture of Gemma 3's image-and-text models.
const gemma3Multimodal = "Gemma3ForConditionalGeneration"

// gemma3Fields are the config.json fields only Gemma 3 reads.
type gemma3Fields struct {
	HiddenActivation          *string         `json:"hidden_activation"`
	QueryPreAttnScalar        *float64        `json:"query_pre_attn_scalar"`
	SlidingWindowPattern      *int            `json:"sliding_window_pattern"`
	RopeLocalBaseFreq         *float64        `json:"rope_local_base_freq"`
	AttnLogitSoftcapping      *float64        `json:"attn_logit_softcapping"`
	FinalLogitSoftcapping     *float64        `json:"final_logit_softcapping"`
	UseBidirectionalAttention *bool           `json:"use_bidirectional_attention"`
	TextConfig                json.RawMessage `json:"text_config"`
}

// multimodal reports whether raw is a Gemma3ForConditionalGeneration's
// configuration.
func multimodal(raw *rawConfig) bool {
	if len(raw.Architectures) == 1 {
		return raw.Architectures[0] == gemma3Multimodal
	}
	return len(raw.Architectures) == 0 && raw.ModelType == "gemma3"
}

// gemma3TextConfig reads a Gemma3ForConditionalGeneration's text_config as
// the configuration of its language model. Errors name text_config's
// fields.
func gemma3TextConfig(outer *rawConfig) (*Config, error) {
	text := rawConfig{}
	if len(outer.TextConfig) > 0 && !bytes.Equal(outer.TextConfig, []byte("null")) {
		if err := json.NewDecoder(bytes.NewReader(outer.TextConfig)).Decode(&text); err != nil {
			return nil, invalid("text_config", "%v", err)
		}
	}
	if text.TieWordEmbeddings == nil {
		text.TieWordEmbeddings = outer.TieWordEmbeddings
	}
	if len(outer.QuantizationConfig) > 0 {
		text.QuantizationConfig = outer.QuantizationConfig
	}
	text.Architectures = []string{string(Gemma3)}
	c, err := text.config(func(field string) string { return "text_config." + field })
	if err != nil {
		return nil, err
	}
	c.Multimodal = true
	return c, nil
}

// gemma3Defaults fills in the fields a Gemma3TextConfig defaults.
func (raw *rawConfig) gemma3Defaults() {
	ints := []struct {
		dst **int
		v   int
	}{
		{&raw.VocabSize, 262208}, {&raw.HiddenSize, 2304}, {&raw.IntermediateSize, 9216},
		{&raw.NumHiddenLayers, 26}, {&raw.NumAttentionHeads, 8}, {&raw.NumKeyValueHeads, 4},
		{&raw.HeadDim, 256}, {&raw.MaxPositionEmbeddings, 131072}, {&raw.SlidingWindow, 4096},
	}
	for _, d := range ints {
		if *d.dst == nil {
			v := d.v
			*d.dst = &v
		}
	}
	floats := []struct {
		dst **float64
		v   float64
	}{
		{&raw.RMSNormEps, 1e-6}, {&raw.RopeTheta, 1e6}, {&raw.QueryPreAttnScalar, 256}, {&raw.RopeLocalBaseFreq, 10000},
	}
	for _, d := range floats {
		if *d.dst == nil {
			v := d.v
			*d.dst = &v
		}
	}
	if raw.TieWordEmbeddings == nil {
		tied := true
		raw.TieWordEmbeddings = &tied
	}
}

// gemma3 reads the fields of Gemma 3's own into c, after the common ones.
func (raw *rawConfig) gemma3(c *Config, field func(string) string) error {
	invalid := func(f, format string, args ...any) error { return invalid(field(f), format, args...) }
	unsupported := func(f, format string, args ...any) error { return unsupported(field(f), format, args...) }
	act := "gelu_pytorch_tanh"
	if raw.HiddenActivation != nil {
		act = *raw.HiddenActivation
	}
	if act != "gelu_pytorch_tanh" {
		return unsupported("hidden_activation", "%q (only gelu_pytorch_tanh)", act)
	}
	if raw.UseBidirectionalAttention != nil && *raw.UseBidirectionalAttention {
		return unsupported("use_bidirectional_attention", "bidirectional attention (an embedding model)")
	}
	c.QKNorm, c.GELU, c.SandwichNorms = true, true, true
	c.EmbedScale = float32(math.Sqrt(float64(c.HiddenSize)))
	if *raw.QueryPreAttnScalar <= 0 {
		return invalid("query_pre_attn_scalar", "%g is not positive", *raw.QueryPreAttnScalar)
	}
	c.QueryPreAttnScalar = *raw.QueryPreAttnScalar
	for _, sc := range []struct {
		field string
		src   *float64
		dst   *float64
	}{
		{"attn_logit_softcapping", raw.AttnLogitSoftcapping, &c.AttnSoftcap},
		{"final_logit_softcapping", raw.FinalLogitSoftcapping, &c.FinalSoftcap},
	} {
		if sc.src == nil {
			continue
		}
		if *sc.src <= 0 {
			return invalid(sc.field, "%g is not positive", *sc.src)
		}
		*sc.dst = *sc.src
	}
	if err := raw.gemma3LayerTypes(c, invalid, unsupported); err != nil {
		return err
	}
	c.LocalRopeTheta = *raw.RopeLocalBaseFreq
	if c.LocalRopeTheta <= 0 {
		return invalid("rope_local_base_freq", "%g is not positive", c.LocalRopeTheta)
	}
	return raw.gemma3Rope(c, field, invalid, unsupported)
}

// gemma3LayerTypes sets the layers' kinds from layer_types, or makes every
// sliding_window_pattern-th layer global (default 6).
func (raw *rawConfig) gemma3LayerTypes(c *Config, invalid, unsupported func(f, format string, args ...any) error) error {
	c.SlidingLayers = make([]bool, c.Layers)
	if raw.LayerTypes != nil {
		if len(raw.LayerTypes) != c.Layers {
			return invalid("layer_types", "%d types for %d layers", len(raw.LayerTypes), c.Layers)
		}
		for i, lt := range raw.LayerTypes {
			switch lt {
			case "sliding_attention":
				c.SlidingLayers[i] = true
			case "full_attention":
			default:
				return unsupported(fmt.Sprintf("layer_types[%d]", i), "%q (sliding_attention or full_attention)", lt)
			}
		}
		return nil
	}
	pattern := 6
	if raw.SlidingWindowPattern != nil {
		pattern = *raw.SlidingWindowPattern
	}
	if pattern <= 0 {
		return invalid("sliding_window_pattern", "%d is not positive", pattern)
	}
	for i := range c.SlidingLayers {
		c.SlidingLayers[i] = (i+1)%pattern != 0
	}
	return nil
}

// gemma3Rope reads the global layers' rope_scaling, or rope_parameters in
// either form: one scheme for the global layers, or one per layer type
// (full_attention, sliding_attention, each with its rope_theta; the
// sliding layers' must be the default scheme).
func (raw *rawConfig) gemma3Rope(c *Config, field func(string) string, invalid, unsupported func(f, format string, args ...any) error) error {
	if err := c.parseRopeScaling(raw.RopeScaling, field("rope_scaling")); err != nil || c.RopeScaling != nil {
		return err
	}
	if len(raw.RopeParameters) == 0 {
		return nil
	}
	var byType map[string]json.RawMessage
	if err := json.Unmarshal(raw.RopeParameters, &byType); err != nil {
		return invalid("rope_parameters", "%v", err)
	}
	full, ok := byType["full_attention"]
	if !ok {
		return c.parseRopeScaling(raw.RopeParameters, field("rope_parameters"))
	}
	if err := c.parseRopeScaling(full, field("rope_parameters")+".full_attention"); err != nil {
		return err
	}
	if sliding, ok := byType["sliding_attention"]; ok {
		local := &Config{RopeTheta: c.LocalRopeTheta}
		if err := local.parseRopeScaling(sliding, field("rope_parameters")+".sliding_attention"); err != nil {
			return err
		}
		if local.RopeScaling != nil {
			return unsupported("rope_parameters.sliding_attention.rope_type", "%q (the sliding layers rotate by the default scheme)", local.RopeScaling.Type)
		}
		c.LocalRopeTheta = local.RopeTheta
	}
	return nil
}

// languageModelPrefixes are where a Gemma3ForConditionalGeneration
// checkpoint keeps its text model's "model." weights (transformers' older
// and newer layouts).
var languageModelPrefixes = []string{"language_model.model.", "model.language_model."}

// gemma3Checkpoint adapts the reading of a Gemma 3 checkpoint: a
// multimodal one's text model is read under its language model's prefix
// (its vision tower is not), and the embedding scale is rounded to the
// embedding's stored type, in which the reference multiplies the rows.
func gemma3Checkpoint(cfg *Config, ckpt *safetensors.Checkpoint, read func(string, ...int) ([]float32, error)) (func(string, ...int) ([]float32, error), error) {
	embed := "model.embed_tokens.weight"
	if cfg.Multimodal {
		names := ckpt.Names()
		i := slices.IndexFunc(languageModelPrefixes, func(p string) bool { return slices.Contains(names, p+"embed_tokens.weight") })
		if i < 0 {
			return nil, invalid("weights", "a Gemma3ForConditionalGeneration checkpoint without %s or %s", languageModelPrefixes[0]+"embed_tokens.weight", languageModelPrefixes[1]+"embed_tokens.weight")
		}
		prefix, inner := languageModelPrefixes[i], read
		read = func(name string, shape ...int) ([]float32, error) {
			if rest, ok := strings.CutPrefix(name, "model."); ok {
				name = prefix + rest
			}
			return inner(name, shape...)
		}
		embed = prefix + "embed_tokens.weight"
	}
	t, err := ckpt.Tensor(embed)
	if err != nil {
		return nil, fmt.Errorf("%w (weight %s)", err, embed)
	}
	switch t.DType {
	case safetensors.F16:
		cfg.EmbedScale = quant.HalfToFloat(quant.FloatToHalf(cfg.EmbedScale))
	case safetensors.BF16:
		cfg.EmbedScale = quant.BFloatToFloat(quant.FloatToBFloat(cfg.EmbedScale))
	}
	return read, nil
}
