package model

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/weftlabs/weft/internal/llm/arch"
)

// Architecture is the model family a config.json names (package arch
// lists them).
type Architecture = arch.Name

// The architectures this package runs. They share one decoder: they differ
// in attention biases (Qwen2 always has q/k/v biases; Llama and Qwen3 when
// attention_bias is set), Qwen3's per-head RMSNorm of queries and keys,
// Mistral's sliding window, and Gemma 3's norms, activation and layers of
// two kinds (gemma3.go).
const (
	Llama = arch.Llama
	Qwen2 = arch.Qwen2
	Qwen3 = arch.Qwen3
	// Mistral is Llama's decoder with sliding window attention.
	Mistral = arch.Mistral
	// Gemma3 is Gemma 3's text decoder (Gemma3ForCausalLM; the language
	// model of a Gemma3ForConditionalGeneration directory loads as it).
	Gemma3 = arch.Gemma3
)

// Config is the part of config.json the forward pass depends on, with the
// defaults of the reference configuration classes filled in.
type Config struct {
	Architecture     Architecture
	VocabSize        int
	HiddenSize       int
	IntermediateSize int
	Layers           int
	Heads            int
	KVHeads          int // num_key_value_heads; defaults to Heads
	HeadDim          int // head_dim; defaults to HiddenSize / Heads
	MaxPositions     int // max_position_embeddings
	RMSNormEps       float32
	RopeTheta        float64 // rope_theta; default 10000
	// PartialRotary is the share of each head's dimensions that rotate
	// (partial_rotary_factor; default 1).
	PartialRotary float64
	RopeScaling   *RopeScaling // nil: plain RoPE
	// RopeFreqFactors, when set, divide the inverse frequencies, one per
	// rotated pair: how GGUF files carry Llama 3's scaling (rope_freqs).
	RopeFreqFactors []float32
	TiedEmbedding   bool // tie_word_embeddings; default false for all three families
	AttentionBias   bool // q/k/v/o biases (Llama, Qwen3); Qwen2 has q/k/v biases always
	MLPBias         bool // gate/up/down biases (mlp_bias)
	QKNorm          bool // Qwen3's and Gemma 3's q_norm and k_norm
	// SlidingWindow, when positive, is how many positions a query sees:
	// its own and those before it (Mistral's and Gemma 3's
	// sliding_window), in the layers SlidingLayers marks.
	SlidingWindow int
	// SlidingLayers marks the layers with a sliding window (Gemma 3's
	// layer_types); nil means every layer (Mistral).
	SlidingLayers []bool
	// LocalRopeTheta, when positive, is the RoPE base of the sliding-window
	// layers, which rotate without RopeScaling (Gemma 3's
	// rope_local_base_freq); RopeTheta and RopeScaling are the others'.
	LocalRopeTheta float64
	// GELU gates the MLP with GELU's tanh approximation (Gemma 3's
	// gelu_pytorch_tanh) instead of SiLU.
	GELU bool
	// SandwichNorms adds Gemma 3's norms of the attention's and the MLP's
	// outputs before their residual sums (post_attention_layernorm,
	// post_feedforward_layernorm); the MLP's input norm is then
	// pre_feedforward_layernorm.
	SandwichNorms bool
	// EmbedScale, when not 0, multiplies the embedding rows (Gemma 3:
	// √hidden_size in float32, which Load rounds to the embedding's stored
	// type as the reference implementation does).
	EmbedScale float32
	// QueryPreAttnScalar, when positive, replaces head_dim in the attention
	// scale 1/√head_dim (Gemma 3's query_pre_attn_scalar).
	QueryPreAttnScalar float64
	// AttnSoftcap and FinalSoftcap, when positive, cap attention scores and
	// logits to c·tanh(x/c) (attn_logit_softcapping,
	// final_logit_softcapping).
	AttnSoftcap, FinalSoftcap float64
	// Multimodal: the directory is a Gemma3ForConditionalGeneration, whose
	// text model's weights are under its language_model.
	Multimodal bool
}

// RopeScaling is config.json's rope_scaling (or rope_parameters): the scheme and its knobs, as
// the reference implementation reads them.
type RopeScaling struct {
	Type                 string   `json:"rope_type"`
	LegacyType           string   `json:"type"`
	Factor               *float64 `json:"factor"`
	OriginalMaxPositions int      `json:"original_max_position_embeddings"`
	LowFreqFactor        *float64 `json:"low_freq_factor"`
	HighFreqFactor       *float64 `json:"high_freq_factor"`
	AttentionFactor      *float64 `json:"attention_factor"`
	BetaFast             *float64 `json:"beta_fast"`
	BetaSlow             *float64 `json:"beta_slow"`
	Mscale               *float64 `json:"mscale"`
	MscaleAllDim         *float64 `json:"mscale_all_dim"`
	Truncate             *bool    `json:"truncate"`
	RopeTheta            *float64 `json:"rope_theta"` // in rope_parameters only
}

// rawConfig mirrors config.json; pointers tell a missing field from a zero.
type rawConfig struct {
	Architectures         []string        `json:"architectures"`
	ModelType             string          `json:"model_type"`
	VocabSize             *int            `json:"vocab_size"`
	HiddenSize            *int            `json:"hidden_size"`
	IntermediateSize      *int            `json:"intermediate_size"`
	NumHiddenLayers       *int            `json:"num_hidden_layers"`
	NumAttentionHeads     *int            `json:"num_attention_heads"`
	NumKeyValueHeads      *int            `json:"num_key_value_heads"`
	HeadDim               *int            `json:"head_dim"`
	MaxPositionEmbeddings *int            `json:"max_position_embeddings"`
	RMSNormEps            *float64        `json:"rms_norm_eps"`
	RopeTheta             *float64        `json:"rope_theta"`
	PartialRotaryFactor   *float64        `json:"partial_rotary_factor"`
	RopeScaling           json.RawMessage `json:"rope_scaling"`
	RopeParameters        json.RawMessage `json:"rope_parameters"`
	TieWordEmbeddings     *bool           `json:"tie_word_embeddings"`
	AttentionBias         *bool           `json:"attention_bias"`
	MLPBias               *bool           `json:"mlp_bias"`
	HiddenAct             *string         `json:"hidden_act"`
	UseSlidingWindow      *bool           `json:"use_sliding_window"`
	SlidingWindow         *int            `json:"sliding_window"`
	LayerTypes            []string        `json:"layer_types"`
	QuantizationConfig    json.RawMessage `json:"quantization_config"`
	gemma3Fields
}

// ParseConfig reads config.json. Every field the forward pass needs must be
// present (Gemma 3's have defaults) and consistent; a field asking for
// something this package does not run (another architecture, an
// activation other than the architecture's, Qwen2's sliding window
// attention, quantised checkpoints, an unknown RoPE scaling) is
// ErrUnsupported naming it.
func ParseConfig(data []byte) (*Config, error) {
	var raw rawConfig
	if err := json.NewDecoder(bytes.NewReader(data)).Decode(&raw); err != nil {
		return nil, fmt.Errorf("%w: config.json: %v", ErrInvalid, err)
	}
	if multimodal(&raw) {
		return gemma3TextConfig(&raw)
	}
	if len(raw.Architectures) == 0 && raw.ModelType == gemma3TextModelType {
		raw.Architectures = []string{string(Gemma3)}
	}
	return raw.config(func(field string) string { return field })
}

// config checks the fields and fills in the defaults. field names a
// config.json field in errors as the source of the values calls it.
func (raw *rawConfig) config(field func(string) string) (*Config, error) {
	invalid := func(f, format string, args ...any) error { return invalid(field(f), format, args...) }
	unsupported := func(f, format string, args ...any) error { return unsupported(field(f), format, args...) }
	if len(raw.Architectures) != 1 {
		return nil, invalid("architectures", "want exactly one architecture, got %q", raw.Architectures)
	}
	c := &Config{Architecture: Architecture(raw.Architectures[0])}
	switch c.Architecture {
	case Llama, Qwen2:
	case Qwen3:
		c.QKNorm = true
	case Mistral, Gemma3:
		if c.Architecture == Gemma3 {
			raw.gemma3Defaults()
		}
		if raw.SlidingWindow != nil {
			if *raw.SlidingWindow < 0 {
				return nil, invalid("sliding_window", "%d is negative", *raw.SlidingWindow)
			}
			c.SlidingWindow = *raw.SlidingWindow
		}
	default:
		return nil, unsupported("architectures", "%q (supported: %s)", c.Architecture, strings.Join(arch.Names(), ", "))
	}
	required := []struct {
		field string
		src   *int
		dst   *int
	}{
		{"vocab_size", raw.VocabSize, &c.VocabSize},
		{"hidden_size", raw.HiddenSize, &c.HiddenSize},
		{"intermediate_size", raw.IntermediateSize, &c.IntermediateSize},
		{"num_hidden_layers", raw.NumHiddenLayers, &c.Layers},
		{"num_attention_heads", raw.NumAttentionHeads, &c.Heads},
		{"max_position_embeddings", raw.MaxPositionEmbeddings, &c.MaxPositions},
	}
	for _, r := range required {
		if r.src == nil {
			return nil, invalid(r.field, "missing")
		}
		if *r.src <= 0 {
			return nil, invalid(r.field, "%d is not positive", *r.src)
		}
		*r.dst = *r.src
	}
	c.KVHeads = c.Heads
	if raw.NumKeyValueHeads != nil {
		c.KVHeads = *raw.NumKeyValueHeads
	}
	if c.KVHeads <= 0 || c.Heads%c.KVHeads != 0 {
		return nil, invalid("num_key_value_heads", "%d does not divide num_attention_heads %d", c.KVHeads, c.Heads)
	}
	if raw.HeadDim != nil {
		c.HeadDim = *raw.HeadDim
	} else if c.HiddenSize%c.Heads == 0 {
		c.HeadDim = c.HiddenSize / c.Heads
	}
	if c.HeadDim <= 0 || c.HeadDim%2 != 0 {
		return nil, invalid("head_dim", "%d (or hidden_size / num_attention_heads) is not a positive even number", c.HeadDim)
	}
	c.RMSNormEps = 1e-6
	if raw.RMSNormEps != nil {
		c.RMSNormEps = float32(*raw.RMSNormEps)
	}
	c.RopeTheta = 10000
	if raw.RopeTheta != nil {
		c.RopeTheta = *raw.RopeTheta
	}
	if c.RopeTheta <= 0 {
		return nil, invalid("rope_theta", "%g is not positive", c.RopeTheta)
	}
	c.PartialRotary = 1
	if raw.PartialRotaryFactor != nil {
		c.PartialRotary = *raw.PartialRotaryFactor
	}
	if c.PartialRotary != 1 {
		// The Llama and Qwen decoders rotate whole heads; their code has no
		// partial rotation.
		return nil, unsupported("partial_rotary_factor", "%g (only 1)", c.PartialRotary)
	}
	if raw.TieWordEmbeddings != nil {
		c.TiedEmbedding = *raw.TieWordEmbeddings
	}
	// Qwen2 has q/k/v biases and none on o_proj whatever attention_bias
	// says; its reference code does not read the field.
	if raw.AttentionBias != nil && c.Architecture != Qwen2 {
		c.AttentionBias = *raw.AttentionBias
	}
	if raw.MLPBias != nil {
		c.MLPBias = *raw.MLPBias
	}
	if len(raw.QuantizationConfig) > 0 && !bytes.Equal(raw.QuantizationConfig, []byte("null")) {
		return nil, unsupported("quantization_config", "quantised checkpoints (load f32, f16 or bf16 weights; int8 is a load option)")
	}
	if c.Architecture == Gemma3 {
		// Gemma 3 reads hidden_activation, has layers of two kinds and
		// its own rope_parameters.
		if err := raw.gemma3(c, field); err != nil {
			return nil, err
		}
		return c, nil
	}
	if raw.HiddenAct != nil && *raw.HiddenAct != "silu" {
		return nil, unsupported("hidden_act", "%q (only silu)", *raw.HiddenAct)
	}
	if raw.UseSlidingWindow != nil && *raw.UseSlidingWindow {
		return nil, unsupported("use_sliding_window", "sliding window attention")
	}
	for i, lt := range raw.LayerTypes {
		if lt != "full_attention" {
			return nil, unsupported(fmt.Sprintf("layer_types[%d]", i), "%q (only full_attention)", lt)
		}
	}
	if err := c.parseRopeScaling(raw.RopeScaling, field("rope_scaling")); err != nil {
		return nil, err
	}
	if c.RopeScaling == nil && len(raw.RopeParameters) > 0 {
		// Newer files keep rope_theta and the scaling in rope_parameters.
		if err := c.parseRopeScaling(raw.RopeParameters, field("rope_parameters")); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// windowStart is the first position a query at pos attends to in layer.
func (c *Config) windowStart(layer, pos int) int {
	if c.SlidingWindow > 0 && (c.SlidingLayers == nil || c.SlidingLayers[layer]) {
		return max(0, pos+1-c.SlidingWindow)
	}
	return 0
}

// localRope reports whether layer rotates by the local RoPE base.
func (c *Config) localRope(layer int) bool {
	return c.LocalRopeTheta > 0 && c.SlidingLayers != nil && c.SlidingLayers[layer]
}

// attentionScale is what attention scores are multiplied by: the inverse
// square root of head_dim, or of query_pre_attn_scalar.
func (c *Config) attentionScale() float32 {
	if c.QueryPreAttnScalar > 0 {
		return float32(1 / math.Sqrt(c.QueryPreAttnScalar))
	}
	return float32(1 / math.Sqrt(float64(c.HeadDim)))
}

// rotaryDim is the number of dimensions of each head that rotate.
func (c *Config) rotaryDim() int { return int(float64(c.HeadDim) * c.PartialRotary) }

// ropeTypes lists the rope_scaling schemes implemented (rope_type, or type
// in older files).
func ropeTypes() []string { return []string{"default", "linear", "dynamic", "yarn", "llama3"} }

func (c *Config) parseRopeScaling(msg json.RawMessage, field string) error {
	if len(msg) == 0 || bytes.Equal(msg, []byte("null")) {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(msg))
	rs := &RopeScaling{}
	if err := dec.Decode(rs); err != nil {
		return invalid(field, "%v", err)
	}
	if rs.RopeTheta != nil {
		if *rs.RopeTheta <= 0 {
			return invalid(field+".rope_theta", "%g is not positive", *rs.RopeTheta)
		}
		c.RopeTheta = *rs.RopeTheta
	}
	if rs.Type == "" {
		rs.Type = rs.LegacyType
	}
	if !slices.Contains(ropeTypes(), rs.Type) {
		return unsupported(field+".rope_type", "%q (supported: %v)", rs.Type, ropeTypes())
	}
	if rs.Type == "default" {
		return nil
	}
	needFactor := rs.Type != "yarn" || rs.OriginalMaxPositions == 0
	if rs.Factor == nil && needFactor {
		return invalid(field+".factor", "missing for rope_type %q", rs.Type)
	}
	if rs.Factor != nil && *rs.Factor < 1 && rs.Type != "linear" {
		return invalid(field+".factor", "%g is below 1", *rs.Factor)
	}
	if rs.Factor != nil && *rs.Factor <= 0 {
		return invalid(field+".factor", "%g is not positive", *rs.Factor)
	}
	if rs.Type == "llama3" {
		switch {
		case rs.LowFreqFactor == nil:
			return invalid(field+".low_freq_factor", "missing for rope_type llama3")
		case rs.HighFreqFactor == nil:
			return invalid(field+".high_freq_factor", "missing for rope_type llama3")
		case rs.OriginalMaxPositions <= 0:
			return invalid(field+".original_max_position_embeddings", "missing for rope_type llama3")
		case *rs.HighFreqFactor <= *rs.LowFreqFactor:
			return invalid(field+".high_freq_factor", "%g is not above low_freq_factor %g", *rs.HighFreqFactor, *rs.LowFreqFactor)
		}
	}
	c.RopeScaling = rs
	return nil
}
