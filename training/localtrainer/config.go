package localtrainer

import (
	"errors"
	"log/slog"

	"github.com/weftlabs/weft/internal/llm/lora"
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
)

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
	// LoRA shapes new adapters (rank, alpha, dropout, targets); see
	// lora.Config for its defaults (rank 8, alpha 16, all seven projections).
	// A job that continues a checkpoint keeps that checkpoint's shape.
	LoRA lora.Config
	// Optimizer is AdamW's configuration; see train.Config for its defaults
	// (the reference trainer's: β (0.9, 0.99), weight decay 0.1, gradients
	// clipped to norm 0.1).
	Optimizer train.Config
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
	// reproducible; each job mixes its id in.
	Seed uint64
	// Logger defaults to slog.Default().
	Logger *slog.Logger
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
	c.LoRA = c.LoRA.WithDefaults()
	if err := c.LoRA.Validate(); err != nil {
		return err
	}
	if err := c.Optimizer.Validate(); err != nil {
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
