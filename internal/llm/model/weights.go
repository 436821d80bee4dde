package model

import (
	"fmt"
	"slices"

	"github.com/weftlabs/weft/internal/llm/quant"
	"github.com/weftlabs/weft/internal/llm/safetensors"
	"github.com/weftlabs/weft/internal/llm/tensor"
)

// WeightType is how the linear layers' weights are held in memory.
type WeightType string

const (
	// Auto keeps every weight in the type its file stores it in, the
	// default: a GGUF file's quantised blocks (Q8_0, Q4_0, Q4_1, Q5_0,
	// Q5_1, Q4_K, Q5_K, Q6_K) and F16 and BF16 tensors are multiplied on
	// their own bytes where they lie in the mapped file, as the types
	// below are, and F32 tensors are float32; a safetensors checkpoint
	// loads as F32. The memory a model takes is then about its file's
	// size.
	Auto WeightType = "auto"
	// F32 keeps weights as float32 (f16 and bf16 checkpoints widened
	// exactly; f32 checkpoints used in place from the mapped file).
	F32 WeightType = "f32"
	// Int8 quantises every linear layer and the output projection to int8
	// in blocks of Int8BlockSize weights of a row, each with its own scale
	// (tensor.QuantizeQ8): a quarter of the bytes to stream per token, at
	// an error of at most half a block's scale per weight. Embedding rows
	// and norms stay float32. Where the blocks are Int8BlockSize, each
	// layer's input is quantised the same way per block of 32 (per row and
	// per pass) and the products are summed in integers
	// (tensor.MatMulTQ8Q8Strided), which adds the activations' rounding,
	// at most half their block's scale per element; a row whose length is
	// not a multiple of 32 gets one scale and the float kernel, exactly the
	// product of the dequantised weights.
	Int8 WeightType = "int8"
	// The GGUF block formats (package quant), quantised at load as
	// llama.cpp's quantisers do, and multiplied on their blocks: Q8_0,
	// Q4_0 (blocks of 32 weights, 8.5 and 4.5 bits a weight), Q4_K, Q5_K
	// and Q6_K (super-blocks of 256; 4.5, 5.5 and 6.56 bits). Each layer's
	// input is quantised to int8 per block of 32 (per 256 for the
	// K-quants) and the products are summed in integers
	// (tensor.MatMulTQuant). A row whose length is not a whole number of
	// the type's blocks takes the type llama-quantize falls back to (Q5_0
	// for Q4_K, Q5_1 for Q5_K, Q8_0 for Q6_K), and stays float32 when it
	// is not a multiple of 32 either. Embedding rows and norms stay
	// float32.
	Q8_0 WeightType = "q8_0"
	Q4_0 WeightType = "q4_0"
	Q4_K WeightType = "q4_k"
	Q5_K WeightType = "q5_k"
	Q6_K WeightType = "q6_k"
	// F16 and BF16 hold the linear layers in half precision (half the
	// bytes of f32 a decode step streams) and widen each weight exactly in
	// the product (tensor.MatMulTHalf), with float32 activations.
	F16  WeightType = "f16"
	BF16 WeightType = "bf16"
)

// WeightTypes are the weight types a model loads with, auto first.
var WeightTypes = []WeightType{Auto, F32, Int8, Q8_0, Q4_0, Q4_K, Q5_K, Q6_K, F16, BF16}

// blockTypes are the block formats of the weight types held in quant's
// formats.
var blockTypes = map[WeightType]quant.Type{
	Q8_0: quant.Q8_0, Q4_0: quant.Q4_0, Q4_K: quant.Q4_K, Q5_K: quant.Q5_K, Q6_K: quant.Q6_K,
	F16: quant.F16, BF16: quant.BF16,
}

// fallbackTypes are the types llama-quantize gives a row that is not a
// whole number of super-blocks.
var fallbackTypes = map[quant.Type]quant.Type{quant.Q4_K: quant.Q5_0, quant.Q5_K: quant.Q5_1, quant.Q6_K: quant.Q8_0}

// Int8BlockSize is the number of consecutive weights of a row that share a
// scale in the Int8 weight type (rows not a multiple of it get one scale).
const Int8BlockSize = tensor.ActivationBlock

// Linear is one linear layer y = x·Wᵀ + b with W stored [Out, In] as in the
// checkpoint: float32 in W, int8 in Q, or a GGUF block format in M.
type Linear struct {
	Out, In int
	W       []float32     // nil when quantised
	Q       *tensor.Q8    // the int8 weight type
	M       *quant.Matrix // a block format or half precision
	Bias    []float32     // nil without bias
	Name    string        // the checkpoint tensor, for errors and gradients
	// RoPEInterleaved, when not 0, is the head size of a query or key
	// projection whose weight rows are stored in llama.cpp's order, each
	// head's two halves interleaved (gguf.InterleaveRoPERows), as a GGUF
	// Llama's are: the products run on the rows where they lie and each
	// output row is put back in the order this package's RoPE rotates
	// (which changes no value). Bias is in that order already.
	RoPEInterleaved int
}

// Bytes is the number of weight bytes one multiplication reads.
func (l *Linear) Bytes() int {
	switch {
	case l.Q != nil:
		return len(l.Q.Data) + 4*len(l.Q.Scales) + 4*len(l.Bias)
	case l.M != nil:
		return len(l.M.Data) + 4*len(l.Bias)
	}
	return 4*len(l.W) + 4*len(l.Bias)
}

// embed sets row t of dst to row ids[t] of the weight, an embedding table
// (float32 or in M's type).
func (l *Linear) embed(dst []float32, ids []int32) error {
	if l.M != nil {
		return tensor.EmbeddingMatrix(dst, l.M, ids)
	}
	return tensor.Embedding(dst, l.W, l.In, ids)
}

// Layer is one decoder block's weights. Norm weights are the factors the
// normalised rows are multiplied by (Gemma 3's stored offsets plus 1).
type Layer struct {
	// InputNorm is the attention's input norm (input_layernorm), MLPNorm
	// the MLP's (post_attention_layernorm; Gemma 3's
	// pre_feedforward_layernorm).
	InputNorm, MLPNorm []float32
	// AttnOutNorm and MLPOutNorm normalise the attention's and the MLP's
	// outputs before their residual sums (Gemma 3's
	// post_attention_layernorm and post_feedforward_layernorm); nil
	// otherwise.
	AttnOutNorm, MLPOutNorm []float32
	QNorm, KNorm            []float32 // Qwen3 and Gemma 3: RMSNorm weights of head_dim
	Q, K, V, O              *Linear
	Gate, Up, Down          *Linear
}

// loader reads named weights, checking their shapes against config.json,
// and stores linear layers as the chosen weight type.
type loader struct {
	// read returns the named weight as float32 after checking its shape.
	read func(name string, shape ...int) ([]float32, error)
	// stored, when not nil, returns a rows×cols weight as its file stores
	// it, after checking its shape (a GGUF file's tensors).
	stored func(name string, rows, cols int) (*quant.Matrix, error)
	// interleaved, when not nil, gives the RoPEInterleaved of a linear
	// layer's weight by name.
	interleaved func(name string) int
	weightType  WeightType
	// normShift is added to every norm weight as it is read: 1 for Gemma
	// 3's checkpoints, whose norms multiply by 1 + w (llama.cpp's files
	// hold the sums).
	normShift float32
}

// newLoader is the loader of a checkpoint's weights (not a GGUF file's) for
// cfg.
func newLoader(cfg *Config, read func(string, ...int) ([]float32, error), wt WeightType) *loader {
	l := &loader{read: read, weightType: wt}
	if cfg.Architecture == Gemma3 {
		l.normShift = 1
	}
	return l
}

// checkpointReader reads weights from a safetensors checkpoint.
func checkpointReader(ckpt *safetensors.Checkpoint) func(string, ...int) ([]float32, error) {
	return func(name string, shape ...int) ([]float32, error) {
		t, err := ckpt.Tensor(name)
		if err != nil {
			return nil, fmt.Errorf("%w (weight %s)", err, name)
		}
		if !slices.Equal(t.Shape, shape) {
			return nil, invalid(name, "shape %v, config.json gives %v", t.Shape, shape)
		}
		return t.Float32(), nil
	}
}

// mapReader reads weights from memory, each a flat row-major slice.
func mapReader(weights map[string][]float32) func(string, ...int) ([]float32, error) {
	return func(name string, shape ...int) ([]float32, error) {
		w, ok := weights[name]
		if !ok {
			return nil, fmt.Errorf("%w: weight %s missing", ErrInvalid, name)
		}
		n := 1
		for _, s := range shape {
			n *= s
		}
		if len(w) != n {
			return nil, invalid(name, "%d elements, config.json gives shape %v", len(w), shape)
		}
		return w, nil
	}
}

// vector reads a 1-D weight of n elements.
func (l *loader) vector(name string, n int) ([]float32, error) { return l.read(name, n) }

// norm reads the weight of an RMSNorm of n elements, shifted by
// l.normShift (in float32, as the reference adds 1 to the float32 weight);
// the shift goes to a copy, never to a mapped file.
func (l *loader) norm(name string, n int) ([]float32, error) {
	w, err := l.read(name, n)
	if err != nil || l.normShift == 0 {
		return w, err
	}
	out := make([]float32, len(w))
	for i, v := range w {
		out[i] = l.normShift + v
	}
	return out, nil
}

// linear reads prefix.weight ([out, in]) and, if bias, prefix.bias.
func (l *loader) linear(prefix string, out, in int, bias bool) (*Linear, error) {
	lin, err := l.matrix(prefix+".weight", out, in, l.weightType == Auto)
	if err != nil {
		return nil, err
	}
	if lin.M == nil && lin.W != nil {
		w := lin.W
		lin.W = nil
		if err := l.setWeight(lin, w); err != nil {
			return nil, err
		}
	}
	if l.interleaved != nil {
		lin.RoPEInterleaved = l.interleaved(lin.Name)
	}
	if bias {
		if lin.Bias, err = l.vector(prefix+".bias", out); err != nil {
			return nil, err
		}
	}
	return lin, nil
}

// matrix reads the out×in weight name: as its file stores it (in M) when
// asStored and the file holds it in a type other than F32, else as float32
// (in W).
func (l *loader) matrix(name string, out, in int, asStored bool) (*Linear, error) {
	lin := &Linear{Out: out, In: in, Name: name}
	if l.stored != nil && asStored {
		m, err := l.stored(name, out, in)
		if err != nil {
			return nil, err
		}
		if m.Type != quant.F32 {
			lin.M = m
			return lin, nil
		}
	}
	w, err := l.read(name, out, in)
	if err != nil {
		return nil, err
	}
	lin.W = w
	return lin, nil
}

// embedding reads the token embedding table: as its file stores it, if
// the file has it in another type than F32, whatever the weight type —
// looking up a row gives the same values as looking it up in the
// dequantised table, without the table's four bytes a weight — else as
// float32.
func (l *loader) embedding(vocab, d int) (*Linear, error) {
	return l.matrix("model.embed_tokens.weight", vocab, d, true)
}

// setWeight stores w in lin as the loader's weight type.
func (l *loader) setWeight(lin *Linear, w []float32) error {
	if t, ok := blockTypes[l.weightType]; ok {
		return setMatrix(lin, t, w)
	}
	if l.weightType != Int8 {
		lin.W = w // F32 and Auto
		return nil
	}
	block := Int8BlockSize
	if lin.In%block != 0 {
		block = lin.In
	}
	if block%8 != 0 {
		lin.W = w // the int8 kernels need rows of multiples of 8; keep float32
		return nil
	}
	q, err := tensor.QuantizeQ8(w, lin.Out, lin.In, block)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrInvalid, lin.Name, err)
	}
	lin.Q = q
	return nil
}

// setMatrix stores w in lin quantised to t, or to t's fallback for a row
// that is not a whole number of t's blocks, or as float32 when neither
// fits.
func setMatrix(lin *Linear, t quant.Type, w []float32) error {
	if lin.In%t.BlockSize() != 0 {
		t = fallbackTypes[t]
	}
	if t == 0 || lin.In%t.BlockSize() != 0 {
		lin.W = w
		return nil
	}
	m, err := quant.QuantizeMatrix(t, w, lin.Out, lin.In)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrInvalid, lin.Name, err)
	}
	lin.M = m
	return nil
}

func (l *loader) layer(c *Config, i int) (*Layer, error) {
	p := fmt.Sprintf("model.layers.%d.", i)
	qkvBias := c.AttentionBias || c.Architecture == Qwen2
	d, hd := c.HiddenSize, c.HeadDim
	var (
		ly  Layer
		err error
	)
	mlpNorm := "post_attention_layernorm.weight"
	if c.SandwichNorms {
		mlpNorm = "pre_feedforward_layernorm.weight"
	}
	steps := []func() error{
		func() error { ly.InputNorm, err = l.norm(p+"input_layernorm.weight", d); return err },
		func() error { ly.MLPNorm, err = l.norm(p+mlpNorm, d); return err },
		func() error { ly.Q, err = l.linear(p+"self_attn.q_proj", c.Heads*hd, d, qkvBias); return err },
		func() error { ly.K, err = l.linear(p+"self_attn.k_proj", c.KVHeads*hd, d, qkvBias); return err },
		func() error { ly.V, err = l.linear(p+"self_attn.v_proj", c.KVHeads*hd, d, qkvBias); return err },
		func() error { ly.O, err = l.linear(p+"self_attn.o_proj", d, c.Heads*hd, c.AttentionBias); return err },
		func() error { ly.Gate, err = l.linear(p+"mlp.gate_proj", c.IntermediateSize, d, c.MLPBias); return err },
		func() error { ly.Up, err = l.linear(p+"mlp.up_proj", c.IntermediateSize, d, c.MLPBias); return err },
		func() error { ly.Down, err = l.linear(p+"mlp.down_proj", d, c.IntermediateSize, c.MLPBias); return err },
	}
	if c.QKNorm {
		steps = append(steps,
			func() error { ly.QNorm, err = l.norm(p+"self_attn.q_norm.weight", hd); return err },
			func() error { ly.KNorm, err = l.norm(p+"self_attn.k_norm.weight", hd); return err })
	}
	if c.SandwichNorms {
		steps = append(steps,
			func() error { ly.AttnOutNorm, err = l.norm(p+"post_attention_layernorm.weight", d); return err },
			func() error { ly.MLPOutNorm, err = l.norm(p+"post_feedforward_layernorm.weight", d); return err })
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return nil, err
		}
	}
	return &ly, nil
}
