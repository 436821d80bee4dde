package rl

import (
	"errors"
	"fmt"
)

// Level is how importance ratios are taken (experimental_config
// importance_sampling_level).
type Level string

// Importance sampling levels.
const (
	// LevelToken: ρ_t = exp(δ_t), one ratio per token (the default).
	LevelToken Level = "token"
	// LevelSequence: ρ_t = exp(mean δ over the assistant tokens of t's
	// sequence), the geometric-mean ratio of the whole sequence.
	LevelSequence Level = "sequence"
	// LevelAverage: the arithmetic mean of the token and sequence ratios.
	LevelAverage Level = "average"
	// LevelGeometricAverage: the geometric mean of the token and sequence ratios.
	LevelGeometricAverage Level = "geometric_average"
)

// Defaults of [Config].
const (
	// DefaultLearningRate is the learning rate when a job names none (ART's).
	DefaultLearningRate = 5e-6
	// DefaultPPOEpsilon is ε under PPO clipping; ε_high defaults to ε.
	DefaultPPOEpsilon = 0.2
	// DefaultCISPOEpsilon and DefaultCISPOEpsilonHigh bound the importance
	// weight under CISPO to [1-ε, 1+ε_high] = [0, 5].
	DefaultCISPOEpsilon     = 1.0
	DefaultCISPOEpsilonHigh = 4.0
)

// Config is one job's loss settings. The zero value is not the default; start
// from [DefaultConfig]: scale_rewards is on by default.
type Config struct {
	// PPO selects PPO's clipped surrogate; false is CISPO (clipped
	// importance-weight REINFORCE), the default.
	PPO bool
	// Epsilon and EpsilonHigh bound the trust region [1-ε, 1+ε_high]. nil
	// means the default of the chosen loss (see the Default constants; under
	// PPO ε_high defaults to ε, under CISPO to 4 even when ε is set).
	Epsilon, EpsilonHigh *float64
	// Level is the importance sampling level; "" means [LevelToken].
	Level Level
	// MaxImportanceWeight (max_negative_advantage_importance_sampling_weight)
	// caps every ratio: ρ ← min(ρ, M). Despite its wire name it applies to every
	// token, as in the reference trainer. nil: no cap.
	MaxImportanceWeight *float64
	// MaskProbRatio zeroes the ratio of tokens outside the open trust region
	// (1-ε, 1+ε_high).
	MaskProbRatio bool
	// K2Tau (variant_k2_tau, wire name kimi_k2_tau) subtracts τ·sg(δ_t) from
	// each token's advantage. 0: off.
	K2Tau float64
	// AdvantageBalance b ∈ [-1, 1] scales negative advantages by 1-b when
	// b > 0 and positive ones by 1+b when b < 0.
	AdvantageBalance float64
	// ScaleRewards divides each group's centred rewards by their standard
	// deviation (+1e-6). Default true.
	ScaleRewards bool
	// PrecalculateLogprobs makes the trainer recompute the old log-probabilities
	// with the pre-update policy before the first step instead of using the
	// sampler's.
	PrecalculateLogprobs bool
	// LearningRate is the constant learning rate of every step. Default
	// [DefaultLearningRate].
	LearningRate float64
}

// DefaultConfig is the configuration of a job that sets nothing.
func DefaultConfig() Config {
	return Config{Level: LevelToken, ScaleRewards: true, LearningRate: DefaultLearningRate}
}

// Bounds returns the trust region [1-ε, 1+ε_high] after defaults.
func (c *Config) Bounds() (lo, hi float64) {
	eps, epsHigh := DefaultCISPOEpsilon, DefaultCISPOEpsilonHigh
	if c.PPO {
		eps = DefaultPPOEpsilon
	}
	if c.Epsilon != nil {
		eps = *c.Epsilon
	}
	if c.PPO {
		epsHigh = eps
	}
	if c.EpsilonHigh != nil {
		epsHigh = *c.EpsilonHigh
	}
	return 1 - eps, 1 + epsHigh
}

// ErrConfig is wrapped by every error of [Config.Validate].
var ErrConfig = errors.New("rl: invalid config")

// Validate reports a setting outside its domain.
func (c *Config) Validate() error {
	switch c.Level {
	case "", LevelToken, LevelSequence, LevelAverage, LevelGeometricAverage:
	default:
		return fmt.Errorf("%w: importance_sampling_level %q is not one of token, sequence, average, geometric_average", ErrConfig, c.Level)
	}
	if c.AdvantageBalance < -1 || c.AdvantageBalance > 1 {
		return fmt.Errorf("%w: advantage_balance %v is outside [-1, 1]", ErrConfig, c.AdvantageBalance)
	}
	for name, v := range map[string]*float64{"epsilon": c.Epsilon, "epsilon_high": c.EpsilonHigh,
		"max_negative_advantage_importance_sampling_weight": c.MaxImportanceWeight} {
		if v != nil && !(*v > 0) {
			return fmt.Errorf("%w: %s must be positive", ErrConfig, name)
		}
	}
	if !(c.LearningRate > 0) {
		return fmt.Errorf("%w: learning_rate must be positive", ErrConfig)
	}
	return nil
}
