package lora

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/weftlabs/weft/internal/llm/tensor"
)

// Shape is what an adapter must know of the model it adapts: the number of
// decoder layers and each target's input and output widths.
type Shape struct {
	Layers  int
	In, Out [NumTargets]int
}

// Factors are one adapted projection's low-rank factors, row-major:
// A [Rank × In], B [Out × Rank].
type Factors struct {
	Rank, In, Out int
	A, B          []float32
}

// Adapter is a set of factors over a model's decoder layers.
type Adapter struct {
	// Config is the adapter's configuration with defaults applied.
	Config Config
	// Scale multiplies every delta (Config.Scale()).
	Scale float32
	// BaseModel names the model the adapter was trained on, as the layout's
	// base_model_name_or_path records it; informational.
	BaseModel string
	// Layers holds each decoder layer's factors by target, nil for a target
	// the adapter leaves alone.
	Layers [][NumTargets]*Factors
}

// New returns an untrained adapter for a model of the given shape: each
// A drawn uniformly from ±1/√In with rng (Kaiming-uniform with a = √5),
// each B zero, so the adapted model computes what the base model does.
func New(cfg Config, shape Shape, rng *rand.Rand) (*Adapter, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if shape.Layers < 1 {
		return nil, fmt.Errorf("%w: a model of %d layers", ErrInvalid, shape.Layers)
	}
	a := &Adapter{Config: cfg, Scale: cfg.Scale(), Layers: make([][NumTargets]*Factors, shape.Layers)}
	for l := range a.Layers {
		for _, t := range cfg.Targets {
			f := NewFactors(cfg.Rank, shape.In[t], shape.Out[t])
			bound := 1 / math.Sqrt(float64(f.In))
			for i := range f.A {
				f.A[i] = float32((2*rng.Float64() - 1) * bound)
			}
			a.Layers[l][t] = f
		}
	}
	return a, nil
}

// NewFactors returns zero factors of the given shape.
func NewFactors(rank, in, out int) *Factors {
	return &Factors{Rank: rank, In: in, Out: out, A: make([]float32, rank*in), B: make([]float32, out*rank)}
}

// Fits reports whether the adapter can be applied to a model of shape s.
func (a *Adapter) Fits(s Shape) error {
	if len(a.Layers) != s.Layers {
		return fmt.Errorf("%w: the adapter has %d layers, the model %d", ErrInvalid, len(a.Layers), s.Layers)
	}
	for l, ly := range a.Layers {
		for t, f := range ly {
			if f != nil && (f.In != s.In[t] || f.Out != s.Out[t]) {
				return fmt.Errorf("%w: layer %d %s is %d→%d, the model's is %d→%d",
					ErrInvalid, l, Target(t), f.In, f.Out, s.In[t], s.Out[t])
			}
		}
	}
	return nil
}

// Factors returns layer l's factors of target t, nil if not adapted.
func (a *Adapter) Factors(l int, t Target) *Factors { return a.Layers[l][t] }

// Params is the number of trainable values.
func (a *Adapter) Params() int {
	n := 0
	for _, ly := range a.Layers {
		for _, f := range ly {
			if f != nil {
				n += len(f.A) + len(f.B)
			}
		}
	}
	return n
}

// Down writes ax = x·Aᵀ, [rows × Rank], for rows rows of x [rows × In]:
// the adapter's rank-r activations.
func (f *Factors) Down(ax, x []float32, rows int) {
	tensor.MatMulT(ax[:rows*f.Rank], x[:rows*f.In], f.A, rows, f.Rank, f.In)
}

// TransposeB writes Bᵀ [Rank × Out] to bT, the layout Up multiplies by.
func (f *Factors) TransposeB(bT []float32) {
	tensor.Transpose(bT[:f.Rank*f.Out], f.B, f.Out, f.Rank)
}

// Up adds scale · ax·Bᵀ to y [rows × Out], bT holding Bᵀ (TransposeB),
// using tmp (at least rows × Out) as scratch. The product is a sum of Rank
// outer products (a row of ax times a row of Bᵀ), not Out dot products of
// Rank terms each, which a rank of 8 would leave mostly to horizontal sums.
func (f *Factors) Up(y, ax, bT []float32, rows int, scale float32, tmp []float32) {
	n := rows * f.Out
	tensor.MatMulStrided(tmp, f.Out, ax, f.Rank, bT, f.Out, rows, f.Out, f.Rank)
	tensor.Axpy(scale, tmp[:n], y[:n])
}

// Apply adds the adapter's delta scale · (x·Aᵀ)·Bᵀ to y for rows rows. ax
// (rows × Rank) receives x·Aᵀ; bT holds Bᵀ (TransposeB); tmp (rows × Out)
// is scratch.
func (f *Factors) Apply(y, x []float32, rows int, scale float32, ax, bT, tmp []float32) {
	f.Down(ax, x, rows)
	f.Up(y, ax, bT, rows, scale, tmp)
}
