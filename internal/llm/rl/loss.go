package rl

import (
	"fmt"
	"math"
)

// Row is one gradient step's positions: one or more tokenised sequences packed
// together. All slices have one entry per position.
type Row struct {
	// Mask marks the positions that score an assistant token: the only ones
	// trained.
	Mask []bool
	// OldLogprob is the log-probability the sampler (or the pre-update policy,
	// under precalculate_logprobs) gave the token; NaN when unknown, which
	// makes the ratio 1 (the token is taken as sampled by the current policy).
	OldLogprob []float64
	// Advantage and Weight are the token's trajectory advantage and weight
	// (after [Normalize]).
	Advantage []float64
	Weight    []float64
	// Seq numbers the tokenised sequence each position belongs to; the
	// sequence importance ratio averages over the assistant positions of one
	// number.
	Seq []int
}

// Len is the number of positions.
func (r *Row) Len() int { return len(r.Mask) }

// AssistantTokens is the number of trained positions.
func (r *Row) AssistantTokens() int {
	n := 0
	for _, m := range r.Mask {
		if m {
			n++
		}
	}
	return n
}

func (r *Row) check(n int) error {
	for _, l := range []int{len(r.OldLogprob), len(r.Advantage), len(r.Weight), len(r.Seq), n} {
		if l != len(r.Mask) {
			return fmt.Errorf("rl: row slices differ in length (%d positions, %d log-probabilities)", len(r.Mask), n)
		}
	}
	return nil
}

// Result is one row's loss, its gradient and the terms reported per step.
type Result struct {
	// Loss is Σ_t L_t·w_t·m_t / (Σ_t m_t + 1e-6).
	Loss float64
	// Grad is dLoss/dℓ_t for every position (0 outside the mask).
	Grad []float64
	// PolicyLoss is the policy term of Loss (all of it: the reference-model KL
	// term is not used).
	PolicyLoss float64
	// AssistantTokens is Σ_t m_t.
	AssistantTokens int
	// ImportanceRatioMean, Min and Max describe ρ over the assistant positions
	// after capping and masking.
	ImportanceRatioMean, ImportanceRatioMin, ImportanceRatioMax float64
	// MismatchKL is the mean of exp(δ)−δ−1 over the assistant positions: the
	// KL estimate between the sampling and the current policy.
	MismatchKL float64
	// ProbsCorr is the correlation of exp(ℓ°) and exp(ℓ) over the positions
	// with a known old log-probability (NaN when fewer than two).
	ProbsCorr float64
}

// Loss computes the loss of one row given the current policy's
// log-probabilities newLogprob, and its gradient with respect to them.
func (c *Config) Loss(row *Row, newLogprob []float64) (*Result, error) {
	return c.LossPart(row, newLogprob, row.AssistantTokens())
}

// LossPart is [Config.Loss] of some whole sequences of a row that has
// rowTokens assistant positions in all: the row's loss and gradient are the
// sums of those of its parts, so a trainer can run a long row in pieces and
// keep only one piece's activations at a time. Its ProbsCorr is that of the
// part.
func (c *Config) LossPart(row *Row, newLogprob []float64, rowTokens int) (*Result, error) {
	if err := row.check(len(newLogprob)); err != nil {
		return nil, err
	}
	lo, hi := c.Bounds()
	n := row.Len()
	res := &Result{Grad: make([]float64, n), ProbsCorr: ProbsCorr(row.OldLogprob, newLogprob),
		ImportanceRatioMin: math.Inf(1), ImportanceRatioMax: math.Inf(-1)}

	// δ_t = ℓ_t − ℓ°_t; ℓ° is a constant, so dδ_t/dℓ_t = 1 even when ℓ° is
	// unknown and taken as sg(ℓ_t).
	delta := make([]float64, n)
	seqSum := map[int]float64{}
	seqCount := map[int]float64{}
	for t := range n {
		if !row.Mask[t] {
			continue
		}
		res.AssistantTokens++
		if !math.IsNaN(row.OldLogprob[t]) {
			delta[t] = newLogprob[t] - row.OldLogprob[t]
		}
		seqSum[row.Seq[t]] += delta[t]
		seqCount[row.Seq[t]]++
	}
	denom := float64(rowTokens) + 1e-6

	// seqGrad[s] gathers dLoss/d(mean δ of sequence s) ÷ |s|, added to every
	// assistant position of s afterwards.
	seqGrad := map[int]float64{}
	for t := range n {
		if !row.Mask[t] {
			continue
		}
		s := row.Seq[t]
		tokenRatio := math.Exp(delta[t])
		seqRatio := math.Exp(seqSum[s] / seqCount[s])
		// ρ and its partial derivatives: direct (through δ_t) and through the
		// sequence mean (per position of the sequence).
		var rho, dDirect, dSeq float64
		switch c.Level {
		case LevelSequence:
			rho, dSeq = seqRatio, seqRatio/seqCount[s]
		case LevelAverage:
			rho = (tokenRatio + seqRatio) / 2
			dDirect, dSeq = tokenRatio/2, seqRatio/(2*seqCount[s])
		case LevelGeometricAverage:
			rho = math.Sqrt(tokenRatio) * math.Sqrt(seqRatio)
			dDirect, dSeq = rho/2, rho/(2*seqCount[s])
		default:
			rho, dDirect = tokenRatio, tokenRatio
		}
		if c.MaxImportanceWeight != nil && rho > *c.MaxImportanceWeight {
			rho, dDirect, dSeq = *c.MaxImportanceWeight, 0, 0
		}
		if c.MaskProbRatio && !(rho > lo && rho < hi) {
			rho, dDirect, dSeq = 0, 0, 0
		}
		adv := row.Advantage[t] - c.K2Tau*delta[t]
		clipped := min(max(rho, lo), hi)
		scale := row.Weight[t] / denom

		var lossT float64
		if c.PPO {
			// L = −min(ρA, clip(ρ)A). Where ρA ≤ clip(ρ)A the unclipped term
			// is the minimum (or both are equal with ρ inside the region, where
			// both have slope A): dL/dρ = −A. Otherwise the clipped term is
			// flat.
			unclippedTerm, clippedTerm := rho*adv, clipped*adv
			lossT = -min(unclippedTerm, clippedTerm)
			if unclippedTerm <= clippedTerm {
				g := -adv * scale
				res.Grad[t] += g * dDirect
				seqGrad[s] += g * dSeq
			}
		} else {
			// CISPO: L = −clip(sg(ρ))·A·ℓ; the weight is a constant.
			lossT = -clipped * adv * newLogprob[t]
			res.Grad[t] += -clipped * adv * scale
		}
		res.Loss += lossT * scale

		res.ImportanceRatioMean += rho
		res.ImportanceRatioMin = min(res.ImportanceRatioMin, rho)
		res.ImportanceRatioMax = max(res.ImportanceRatioMax, rho)
		res.MismatchKL += math.Exp(delta[t]) - delta[t] - 1
	}
	for t := range n {
		if row.Mask[t] {
			res.Grad[t] += seqGrad[row.Seq[t]]
		}
	}
	res.PolicyLoss = res.Loss
	if res.AssistantTokens > 0 {
		res.ImportanceRatioMean /= float64(res.AssistantTokens)
		res.MismatchKL /= float64(res.AssistantTokens)
	} else {
		res.ImportanceRatioMin, res.ImportanceRatioMax = 0, 0
	}
	return res, nil
}

// Entropy is the policy entropy a step reports, as the reference trainer
// weighs it: Σ_t H_t·w_t·m_t / (rowTokens + 1e-6), with H_t the entropy of
// the policy's next-token distribution at position t (one per position, as
// newLogprob in Loss). Like LossPart, the entropy of a row run in parts is
// the sum of its parts' with the row's rowTokens.
func (r *Row) Entropy(entropy []float64, rowTokens int) (float64, error) {
	if err := r.check(len(entropy)); err != nil {
		return 0, err
	}
	var sum float64
	for t, m := range r.Mask {
		if m {
			sum += entropy[t] * r.Weight[t]
		}
	}
	return sum / (float64(rowTokens) + 1e-6), nil
}

// ProbsCorr is the Pearson correlation of exp(ℓ°) and exp(ℓ) over the
// positions whose old log-probability is known (NaN when fewer than two): how
// well the sampler's probabilities agree with the trainer's.
func ProbsCorr(oldLogprob, newLogprob []float64) float64 {
	var xs, ys []float64
	for t, old := range oldLogprob {
		if !math.IsNaN(old) {
			xs = append(xs, math.Exp(old))
			ys = append(ys, math.Exp(newLogprob[t]))
		}
	}
	if len(xs) < 2 {
		return math.NaN()
	}
	n := float64(len(xs))
	var mx, my float64
	for i := range xs {
		mx += xs[i]
		my += ys[i]
	}
	mx, my = mx/n, my/n
	var sxy, sxx, syy float64
	for i := range xs {
		sxy += (xs[i] - mx) * (ys[i] - my)
		sxx += (xs[i] - mx) * (xs[i] - mx)
		syy += (ys[i] - my) * (ys[i] - my)
	}
	return sxy / math.Sqrt(sxx*syy)
}
