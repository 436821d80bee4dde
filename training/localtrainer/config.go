package localtrainer

import (
	"errors"
	"log/slog"

	"github.com/weftlabs/weft/internal/llm/lora"
	"github.com/weftlabs/weft/internal/llm/model"
	"github.com/weftlabs/weft/internal/llm/train"
)

// Defaults of [Config].
const (
	// DefaultMicroBatchTokens bounds the tokens of one forward and backward
	// pass: a gradient step over more runs in pieces (gradient accumulation),
	// so memory follows this, not the step's size.
	DefaultMicroBatchTokens = 4096
	// DefaultPackLength is the unit of packed-row lengths: a row holds up to
	// ⌈longest sequence / DefaultPackLength⌉·DefaultPackLength tokens (capped
	// by the model's length), as the reference trainer packs.
	DefaultPackLength = 2048
	// DefaultSFTLearningRate and DefaultSFTBatchSize apply when an SFT job's
	// config names none (or "auto").
	DefaultSFTLearningRate = 5e-5
	DefaultSFTBatchSize    = 2
	// DefaultMaxSFTTokens bounds the tokens an SFT job trains: 4,194,304,
	// 32 MiB of token ids and targets held while the job runs.
	DefaultMaxSFTTokens = 1 << 22

	// DefaultLoRARank and DefaultLoRAAlpha shape new adapters: rank 8,
	// alpha 16, on every projection of the attention and the MLP.
	DefaultLoRARank  = lora.DefaultRank
	DefaultLoRAAlpha = lora.DefaultAlpha

	// The optimizer's defaults are the reference RL trainer's: AdamW with
	// β = (0.9, 0.99), ε = 1e-8, weight decay 0.1 (decoupled), gradients
	// clipped to a global L2 norm of 0.1.
	DefaultBeta1       = train.DefaultBeta1
	DefaultBeta2       = train.DefaultBeta2
	DefaultEps         = train.DefaultEps
	DefaultWeightDecay = train.DefaultWeightDecay
	DefaultMaxGradNorm = train.DefaultMaxGradNorm
	// DefaultLogitsBudget bounds the bytes of a pass's softmax rows: 256
	// MiB.
	DefaultLogitsBudget = model.DefaultLogitsBudget
)

// LoRA shapes the adapters the trainer makes. Zero fields take the
// defaults.
type LoRA struct {
	// Rank is r, the inner dimension of the factors; 0 means
	// [DefaultLoRARank].
	Rank int
	// Alpha scales the delta by Alpha/Rank (Alpha/√Rank with RSLoRA); 0
	// means [DefaultLoRAAlpha].
	Alpha float64
	// Dropout is the probability with which training zeroes an element of
	// the adapter's input. Default 0.
	Dropout float64
	// Targets are the adapted projections by module name: q_proj, k_proj,
	// v_proj, o_proj, gate_proj, up_proj, down_proj. Empty means all seven.
	Targets []string
	// RSLoRA scales by Alpha/√Rank (rank-stabilised LoRA) instead of
	// Alpha/Rank.
	RSLoRA bool
}

// config is l as the adapter's own configuration, defaults filled in.
func (l LoRA) config() (lora.Config, error) {
	c := lora.Config{Rank: l.Rank, Alpha: l.Alpha, Dropout: l.Dropout, RSLoRA: l.RSLoRA}
	for _, name := range l.Targets {
		t, err := lora.ParseTarget(name)
		if err != nil {
			return lora.Config{}, err
		}
		c.Targets = append(c.Targets, t)
	}
	c = c.WithDefaults()
	return c, c.Validate()
}

// Optimizer is AdamW's configuration. Zero fields take the defaults; a
// negative WeightDecay or MaxGradNorm means none (no decay, no clipping).
type Optimizer struct {
	// Beta1, Beta2 and Eps default to [DefaultBeta1], [DefaultBeta2] and
	// [DefaultEps].
	Beta1, Beta2, Eps float64
	// WeightDecay defaults to [DefaultWeightDecay].
	WeightDecay float64
	// MaxGradNorm clips the gradients' global L2 norm; defaults to
	// [DefaultMaxGradNorm].
	MaxGradNorm float64
	// Seed seeds the adapter's dropout masks (LoRA.Dropout), a new mask
	// every forward pass.
	Seed uint64
	// LogitsBudget bounds the bytes of a pass's softmax rows; 0 means
	// [DefaultLogitsBudget].
	LogitsBudget int
}

// config is o as the optimizer's own configuration.
func (o Optimizer) config() (train.Config, error) {
	c := train.Config{Beta1: o.Beta1, Beta2: o.Beta2, Eps: o.Eps, WeightDecay: o.WeightDecay,
		MaxGradNorm: o.MaxGradNorm, Seed: o.Seed, LogitsBudget: o.LogitsBudget}
	return c, c.Validate()
}

// BaseModel is a base model the trainer trains adapters of.
type BaseModel struct {
	// Dir is the model directory (config.json and safetensors weights). The
	// trainer loads its own copy of the weights on first use and keeps it.
	Dir string
	// Template renders conversations as the engine serving the model does.
	Template *Template
	// MaxLen bounds a training sequence (longer ones are truncated); 0 means
	// the model's own length.
	MaxLen int
}

// Config configures [New].
type Config struct {
	// Models are the base models this trainer runs, by the name jobs give as
	// base_model (the served model's name). Required.
	Models map[string]BaseModel
	// LoRA shapes new adapters (rank, alpha, dropout, targets; by default
	// rank 8, alpha 16, all seven projections). A job that continues a
	// checkpoint keeps that checkpoint's shape.
	LoRA LoRA
	// Optimizer is AdamW's configuration (by default the reference
	// trainer's: β (0.9, 0.99), weight decay 0.1, gradients clipped to norm
	// 0.1).
	Optimizer Optimizer
	// MicroBatchTokens defaults to [DefaultMicroBatchTokens]. A micro-batch
	// is also kept to the trained positions whose softmax fits in
	// Optimizer.LogitsBudget (2,048 for a 32,000-token vocabulary at the
	// default budget), where a pass would otherwise compute its logits
	// twice.
	MicroBatchTokens int
	// MaxSFTTokens bounds the tokens of an SFT job's data (after
	// truncation to the model's length): the job's plan holds them all, so
	// data over it fails the job (training_failed) as soon as planning
	// passes it. Defaults to [DefaultMaxSFTTokens].
	MaxSFTTokens int
	// Threads is the size of each model's thread pool; 0 means GOMAXPROCS.
	Threads int
	// Seed makes adapters' initial values and the order of rows
	// reproducible; each job mixes in its project, model and step, so a
	// run repeated on the same data gives the same checkpoints.
	Seed uint64
	// Logger defaults to slog.Default().
	Logger *slog.Logger

	lora      lora.Config  // LoRA, read
	optimizer train.Config // Optimizer, read
}

func (c *Config) setDefaults() error {
	if len(c.Models) == 0 {
		return errors.New("localtrainer: Config.Models is empty")
	}
	for name, m := range c.Models {
		if m.Dir == "" || m.Template == nil {
			return errors.New("localtrainer: model " + name + " needs Dir and Template")
		}
	}
	var err error
	if c.lora, err = c.LoRA.config(); err != nil {
		return err
	}
	if c.optimizer, err = c.Optimizer.config(); err != nil {
		return err
	}
	if c.MicroBatchTokens == 0 {
		c.MicroBatchTokens = DefaultMicroBatchTokens
	}
	if c.MicroBatchTokens < 1 {
		return errors.New("localtrainer: MicroBatchTokens must be positive")
	}
	if c.MaxSFTTokens == 0 {
		c.MaxSFTTokens = DefaultMaxSFTTokens
	}
	if c.MaxSFTTokens < 1 {
		return errors.New("localtrainer: MaxSFTTokens must be positive")
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return nil
}
