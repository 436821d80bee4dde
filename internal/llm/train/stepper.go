package train

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/weftlabs/weft/internal/llm/lora"
	"github.com/weftlabs/weft/internal/llm/model"
)

// ErrInvalid marks a configuration or call a Stepper cannot run: a
// negative hyper-parameter, gradients of the wrong shape.
var ErrInvalid = errors.New("train: invalid")

// The defaults of Config, those of the reference RL trainer: AdamW with β
// = (0.9, 0.99), ε = 1e-8, weight decay 0.1, gradients clipped to a global
// norm of 0.1.
const (
	DefaultBeta1       = 0.9
	DefaultBeta2       = 0.99
	DefaultEps         = 1e-8
	DefaultWeightDecay = 0.1
	DefaultMaxGradNorm = 0.1
)

// Config is the optimizer's configuration. Zero fields take the defaults;
// a negative WeightDecay or MaxGradNorm means none (no decay, no
// clipping).
type Config struct {
	Beta1, Beta2, Eps float64
	WeightDecay       float64
	MaxGradNorm       float64
	// Seed seeds the adapter's dropout masks (lora.Config.Dropout), a new
	// mask every forward pass.
	Seed uint64
	// LogitsBudget bounds the memory of a pass's softmax rows (see
	// model.TrainOptions; 0 is its default).
	LogitsBudget int
}

// WithDefaults returns c with its zero fields set to the defaults and the
// negative ones that mean "none" set to 0.
func (c Config) WithDefaults() Config {
	def := func(v *float64, d float64) {
		switch {
		case *v == 0:
			*v = d
		case *v < 0:
			*v = 0
		}
	}
	if c.Beta1 == 0 {
		c.Beta1 = DefaultBeta1
	}
	if c.Beta2 == 0 {
		c.Beta2 = DefaultBeta2
	}
	if c.Eps == 0 {
		c.Eps = DefaultEps
	}
	def(&c.WeightDecay, DefaultWeightDecay)
	def(&c.MaxGradNorm, DefaultMaxGradNorm)
	return c
}

// Validate reports hyper-parameters the optimizer cannot use.
func (c Config) Validate() error {
	c = c.WithDefaults()
	for _, p := range []struct {
		name string
		v    float64
	}{{"beta1", c.Beta1}, {"beta2", c.Beta2}} {
		if math.IsNaN(p.v) || p.v < 0 || p.v >= 1 {
			return fmt.Errorf("%w: %s %g (in [0, 1))", ErrInvalid, p.name, p.v)
		}
	}
	if math.IsNaN(c.Eps) || c.Eps < 0 || math.IsNaN(c.WeightDecay) || math.IsNaN(c.MaxGradNorm) {
		return fmt.Errorf("%w: eps %g, weight decay %g, max grad norm %g", ErrInvalid, c.Eps, c.WeightDecay, c.MaxGradNorm)
	}
	return nil
}

// Stepper takes the optimizer steps of one adapter of one model: forward
// passes that give the log-probabilities a loss needs, backward passes that
// accumulate the adapter's gradients over any number of micro-batches, and
// the steps that apply them. A stepper is used from one goroutine; the
// model may serve other work between its calls. (The trainers of jobs are
// training.Trainer's implementations; training/localtrainer runs one
// Stepper per job.)
type Stepper struct {
	model   *model.Model
	adapter *lora.Adapter
	grads   *Gradients
	opt     *AdamW
	cfg     Config
	back    *loraBackward
	rng     *rand.Rand // seeds of dropout masks
}

// New returns a stepper of adapter on m with cfg.
func New(m *model.Model, adapter *lora.Adapter, cfg Config) (*Stepper, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := adapter.Fits(m.LoRAShape()); err != nil {
		return nil, err
	}
	cfg = cfg.WithDefaults()
	g := NewGradients(adapter)
	return &Stepper{
		model: m, adapter: adapter, grads: g, opt: NewAdamW(cfg), cfg: cfg,
		back: &loraBackward{adapter: adapter, grads: g, pool: m.Pool(), buffer: map[string][]float32{}},
		rng:  rand.New(rand.NewPCG(cfg.Seed, 0x5eed)),
	}, nil
}

// Adapter is the adapter being trained (updated in place by Step).
func (t *Stepper) Adapter() *lora.Adapter { return t.adapter }

// Gradients are the gradients accumulated since the last Step.
func (t *Stepper) Gradients() *Gradients { return t.grads }

// TargetsPerPass is the most targets a micro-batch may have for its pass
// to keep all its softmax rows within Config.LogitsBudget; with more,
// Backward recomputes their logits, one more output projection.
func (t *Stepper) TargetsPerPass() int { return t.model.TargetsWithin(t.cfg.LogitsBudget) }

// Forward runs a micro-batch under the adapter and returns its pass, whose
// Logprobs are the targets' log-probabilities.
func (t *Stepper) Forward(seqs []model.TrainSequence) (*model.Pass, error) {
	return t.model.TrainForward(seqs, model.TrainOptions{Adapter: t.adapter, DropoutSeed: t.rng.Uint64(), LogitsBudget: t.cfg.LogitsBudget})
}

// Backward adds to the gradients those of a loss whose derivative with
// respect to each of the pass's log-probabilities is dLogprobs (shaped as
// pass.Logprobs; positions without a target are ignored).
func (t *Stepper) Backward(pass *model.Pass, dLogprobs [][]float32) error {
	t.back.dropoutSeed = pass.DropoutSeed()
	return pass.Backward(dLogprobs, t.back)
}

// StepResult is what an optimizer step reports.
type StepResult struct {
	// GradNorm is the global L2 norm of the accumulated gradients before
	// clipping.
	GradNorm float64
	// Step counts the optimizer's steps, from 1.
	Step int
}

// Step clips the accumulated gradients to the configured norm, updates the
// adapter with AdamW at learning rate lr and zeroes the gradients.
func (t *Stepper) Step(lr float64) (StepResult, error) {
	if math.IsNaN(lr) || lr < 0 {
		return StepResult{}, fmt.Errorf("%w: learning rate %g", ErrInvalid, lr)
	}
	params, grads := pairs(t.adapter, t.grads)
	norm := ClipGradNorm(grads, t.cfg.MaxGradNorm)
	t.opt.Step(params, grads, lr)
	t.grads.Zero()
	return StepResult{GradNorm: norm, Step: t.opt.Steps()}, nil
}
