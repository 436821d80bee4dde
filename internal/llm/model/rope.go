package model

import (
	"math"

	"github.com/weftlabs/weft/internal/llm/tensor"
)

// The inverse frequencies of each rope_scaling scheme, computed step by step
// in float32 as the reference implementation computes them on float32
// tensors (scalars from config.json enter each step rounded to float32), so
// the tables agree with it to the last bit or two.

// defaultInvFreq is 1 / base^(2i/dim) for i < dim/2.
func defaultInvFreq(base float32, dim int) []float32 {
	inv := make([]float32, dim/2)
	for i := range inv {
		exp := float32(2*i) / float32(dim)
		inv[i] = 1 / float32(math.Pow(float64(base), float64(exp)))
	}
	return inv
}

// ropeFrequencies returns the inverse frequencies and the attention scaling
// of cos and sin for the model's scaling scheme, for sequences of up to
// seqLen positions (which only the dynamic scheme looks at).
func (c *Config) ropeFrequencies(seqLen int) (invFreq []float32, attentionScaling float32) {
	if c.RopeFreqFactors != nil {
		inv := defaultInvFreq(float32(c.RopeTheta), c.rotaryDim())
		for i, f := range c.RopeFreqFactors {
			inv[i] /= f
		}
		return inv, 1
	}
	dim := c.rotaryDim()
	base := float32(c.RopeTheta)
	rs := c.RopeScaling
	if rs == nil {
		return defaultInvFreq(base, dim), 1
	}
	switch rs.Type {
	case "linear":
		inv := defaultInvFreq(base, dim)
		for i := range inv {
			inv[i] /= float32(*rs.Factor)
		}
		return inv, 1
	case "dynamic":
		if seqLen > c.MaxPositions {
			factor := float32(*rs.Factor)
			grow := factor*float32(seqLen)/float32(c.MaxPositions) - float32(*rs.Factor-1)
			base *= float32(math.Pow(float64(grow), float64(float32(float64(dim)/float64(dim-2)))))
		}
		return defaultInvFreq(base, dim), 1
	case "llama3":
		return llama3InvFreq(defaultInvFreq(base, dim), rs), 1
	case "yarn":
		return c.yarnInvFreq(base, dim)
	}
	return defaultInvFreq(base, dim), 1
}

func llama3InvFreq(inv []float32, rs *RopeScaling) []float32 {
	factor := float32(*rs.Factor)
	low, high := *rs.LowFreqFactor, *rs.HighFreqFactor
	old := float64(rs.OriginalMaxPositions)
	lowWavelen, highWavelen := float32(old/low), float32(old/high)
	out := make([]float32, len(inv))
	for i, f := range inv {
		wavelen := float32(2*math.Pi) / f
		scaled := f
		if wavelen > lowWavelen {
			scaled = f / factor
		}
		if !(wavelen < highWavelen) && !(wavelen > lowWavelen) {
			smooth := (float32(old)/wavelen - float32(low)) / float32(high-low)
			scaled = (1-smooth)*scaled/factor + smooth*scaled
		}
		out[i] = scaled
	}
	return out
}

func (c *Config) yarnInvFreq(base float32, dim int) ([]float32, float32) {
	rs := c.RopeScaling
	original := c.MaxPositions
	if rs.OriginalMaxPositions > 0 {
		original = rs.OriginalMaxPositions
	}
	var factor float64
	if rs.Factor != nil {
		factor = *rs.Factor
	} else {
		factor = float64(c.MaxPositions) / float64(original)
	}
	mscale := func(scale, m float64) float64 {
		if scale <= 1 {
			return 1
		}
		return 0.1*m*math.Log(scale) + 1
	}
	var attention float64
	switch {
	case rs.AttentionFactor != nil:
		attention = *rs.AttentionFactor
	case rs.Mscale != nil && rs.MscaleAllDim != nil && *rs.Mscale != 0 && *rs.MscaleAllDim != 0:
		attention = mscale(factor, *rs.Mscale) / mscale(factor, *rs.MscaleAllDim)
	default:
		attention = mscale(factor, 1)
	}
	betaFast, betaSlow := 32.0, 1.0
	if rs.BetaFast != nil && *rs.BetaFast != 0 {
		betaFast = *rs.BetaFast
	}
	if rs.BetaSlow != nil && *rs.BetaSlow != 0 {
		betaSlow = *rs.BetaSlow
	}
	correctionDim := func(rotations float64) float64 {
		return float64(dim) * math.Log(float64(original)/(rotations*2*math.Pi)) / (2 * math.Log(float64(base)))
	}
	low, high := correctionDim(betaFast), correctionDim(betaSlow)
	if rs.Truncate == nil || *rs.Truncate {
		low, high = math.Floor(low), math.Ceil(high)
	}
	low, high = max(low, 0), min(high, float64(dim-1))
	if low == high {
		high += 0.001
	}
	inv := make([]float32, dim/2)
	for i := range inv {
		exp := float32(2*i) / float32(dim)
		pos := float32(math.Pow(float64(base), float64(exp)))
		extrapolation := 1 / pos
		interpolation := 1 / (float32(factor) * pos)
		ramp := (float32(i) - float32(low)) / float32(high-low)
		ramp = min(max(ramp, 0), 1)
		extraFactor := 1 - ramp
		inv[i] = interpolation*(1-extraFactor) + extrapolation*extraFactor
	}
	return inv, float32(attention)
}

// ropeTable builds the cos/sin tables of the model's positions.
func (c *Config) ropeTable(positions int) *tensor.RoPE {
	inv, scaling := c.ropeFrequencies(min(positions, c.MaxPositions))
	return tensor.NewRoPE(inv, positions, scaling)
}
