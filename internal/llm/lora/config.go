package lora

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Target is one linear projection of a decoder block that an adapter may
// adapt. Its String is the module name the standard layout uses.
type Target int

// The projections of a Llama-family decoder block, in the order the block
// applies them.
const (
	Q Target = iota
	K
	V
	O
	Gate
	Up
	Down
	// NumTargets is the number of targets; arrays indexed by Target have
	// this length.
	NumTargets
)

// targetModules are the module paths of the targets inside a decoder
// layer, as checkpoints name them.
var targetModules = [NumTargets]string{
	"self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj",
	"mlp.gate_proj", "mlp.up_proj", "mlp.down_proj",
}

// String is the target's module name: q_proj, k_proj, ..., down_proj.
func (t Target) String() string {
	if t < 0 || t >= NumTargets {
		return fmt.Sprintf("Target(%d)", int(t))
	}
	m := targetModules[t]
	return m[strings.IndexByte(m, '.')+1:]
}

// Module is the target's path inside a decoder layer, e.g. self_attn.q_proj.
func (t Target) Module() string { return targetModules[t] }

// ParseTarget reads a module name (q_proj, ..., down_proj).
func ParseTarget(name string) (Target, error) {
	for t := range NumTargets {
		if t.String() == name {
			return t, nil
		}
	}
	return 0, fmt.Errorf("%w: target module %q (q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj or down_proj)", ErrInvalid, name)
}

// AllTargets lists every target in block order.
func AllTargets() []Target {
	out := make([]Target, NumTargets)
	for t := range NumTargets {
		out[t] = t
	}
	return out
}

// The defaults of Config: rank 8, alpha 16 on every projection of the
// attention and the MLP, the usual choice for reinforcement fine-tuning of
// small models.
const (
	DefaultRank  = 8
	DefaultAlpha = 16
)

// Config is the shape and scaling of an adapter.
type Config struct {
	// Rank is r, the inner dimension of the factors. 0 means DefaultRank.
	Rank int
	// Alpha scales the delta by Alpha/Rank (Alpha/√Rank with RSLoRA).
	// 0 means DefaultAlpha.
	Alpha float64
	// Dropout is the probability with which training zeroes an element of
	// the adapter's input (and scales the rest by 1/(1-Dropout)). Serving
	// never drops. Default 0.
	Dropout float64
	// Targets are the adapted projections. Empty means all seven.
	Targets []Target
	// RSLoRA scales by Alpha/√Rank (rank-stabilised LoRA) instead of
	// Alpha/Rank. Default false.
	RSLoRA bool
}

// WithDefaults returns c with its zero fields set to the defaults and its
// targets sorted in block order without repeats.
func (c Config) WithDefaults() Config {
	if c.Rank == 0 {
		c.Rank = DefaultRank
	}
	if c.Alpha == 0 {
		c.Alpha = DefaultAlpha
	}
	if len(c.Targets) == 0 {
		c.Targets = AllTargets()
	} else {
		c.Targets = slices.Compact(slices.Sorted(slices.Values(c.Targets)))
	}
	return c
}

// Validate reports a configuration that cannot make an adapter.
func (c Config) Validate() error {
	switch {
	case c.Rank < 1:
		return fmt.Errorf("%w: rank %d (at least 1)", ErrInvalid, c.Rank)
	case math.IsNaN(c.Alpha) || math.IsInf(c.Alpha, 0) || c.Alpha <= 0:
		return fmt.Errorf("%w: alpha %g (a positive number)", ErrInvalid, c.Alpha)
	case math.IsNaN(c.Dropout) || c.Dropout < 0 || c.Dropout >= 1:
		return fmt.Errorf("%w: dropout %g (in [0, 1))", ErrInvalid, c.Dropout)
	case len(c.Targets) == 0:
		return fmt.Errorf("%w: no target modules", ErrInvalid)
	}
	for _, t := range c.Targets {
		if t < 0 || t >= NumTargets {
			return fmt.Errorf("%w: target %d", ErrInvalid, int(t))
		}
	}
	return nil
}

// Scale is the factor of the delta: Alpha/Rank, or Alpha/√Rank with RSLoRA.
func (c Config) Scale() float32 {
	if c.RSLoRA {
		return float32(c.Alpha / math.Sqrt(float64(c.Rank)))
	}
	return float32(c.Alpha / float64(c.Rank))
}

// Targeted reports whether t is one of c's targets.
func (c Config) Targeted(t Target) bool { return slices.Contains(c.Targets, t) }
