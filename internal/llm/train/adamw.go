package train

import "math"

// AdamW is the Adam optimizer with decoupled weight decay, computed as the
// reference implementation's single-tensor AdamW does it: per step t,
//
//	θ ← θ·(1 − lr·λ)
//	m ← β₁·m + (1 − β₁)·g        v ← β₂·v + (1 − β₂)·g²
//	θ ← θ − lr/(1 − β₁ᵗ) · m / (√v / √(1 − β₂ᵗ) + ε)
//
// with the scalars in float64 and the element-wise steps in float32 in that
// order. Its moments are kept per parameter slice, in the order of the
// slices Step is given (the same every call).
type AdamW struct {
	Beta1, Beta2, Eps, WeightDecay float64
	step                           int
	m, v                           [][]float32
}

// NewAdamW returns an optimizer with the hyper-parameters of cfg (defaults
// applied).
func NewAdamW(cfg Config) *AdamW {
	cfg = cfg.WithDefaults()
	return &AdamW{Beta1: cfg.Beta1, Beta2: cfg.Beta2, Eps: cfg.Eps, WeightDecay: cfg.WeightDecay}
}

// Steps is the number of steps taken.
func (o *AdamW) Steps() int { return o.step }

// Step updates params in place from grads (one slice of each per tensor,
// the same lengths every call) at learning rate lr.
func (o *AdamW) Step(params, grads [][]float32, lr float64) {
	if o.m == nil {
		for _, p := range params {
			o.m = append(o.m, make([]float32, len(p)))
			o.v = append(o.v, make([]float32, len(p)))
		}
	}
	o.step++
	t := float64(o.step)
	decay := float32(1 - lr*o.WeightDecay)
	b1, b2 := float32(o.Beta1), float32(o.Beta2)
	stepSize := float32(lr / (1 - math.Pow(o.Beta1, t)))
	bc2Sqrt := float32(math.Sqrt(1 - math.Pow(o.Beta2, t)))
	eps := float32(o.Eps)
	for i, p := range params {
		g, m, v := grads[i], o.m[i], o.v[i]
		for j, gj := range g {
			p[j] *= decay
			m[j] = m[j]*b1 + gj*(1-b1)
			v[j] = v[j]*b2 + (1-b2)*(gj*gj)
			denom := float32(math.Sqrt(float64(v[j])))/bc2Sqrt + eps
			p[j] += -stepSize * (m[j] / denom)
		}
	}
}

// ClipGradNorm scales grads so that their global L2 norm (over every
// element of every slice) is at most maxNorm, as the reference
// clip_grad_norm_ does (by maxNorm/(norm + 1e-6) when that is below 1), and
// returns the norm before clipping. maxNorm <= 0 only measures.
func ClipGradNorm(grads [][]float32, maxNorm float64) float64 {
	var sum float64
	for _, g := range grads {
		for _, v := range g {
			sum += float64(v) * float64(v)
		}
	}
	norm := math.Sqrt(sum)
	if maxNorm <= 0 {
		return norm
	}
	if coef := maxNorm / (norm + 1e-6); coef < 1 {
		c := float32(coef)
		for _, g := range grads {
			for j := range g {
				g[j] *= c
			}
		}
	}
	return norm
}
