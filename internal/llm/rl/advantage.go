package rl

import "math"

// GroupAdvantages returns the advantage of each trajectory of a group from its
// reward: r_i − mean(r), divided by (population std + 1e-6) when scale is set.
// A trajectory whose advantage is exactly 0 trains nothing (see [Trainable]):
// a group of equal rewards, or of one trajectory, contributes nothing.
func GroupAdvantages(rewards []float64, scale bool) []float64 {
	n := float64(len(rewards))
	if n == 0 {
		return nil
	}
	adv := make([]float64, len(rewards))
	if equal(rewards) {
		// Exactly zero, which summing in floating point need not give.
		return adv
	}
	var mean float64
	for _, r := range rewards {
		mean += r
	}
	mean /= n
	var variance float64
	for _, r := range rewards {
		variance += (r - mean) * (r - mean)
	}
	std := math.Sqrt(variance / n)
	for i, r := range rewards {
		adv[i] = r - mean
		if scale {
			adv[i] /= std + 1e-6
		}
	}
	return adv
}

func equal(rewards []float64) bool {
	for _, r := range rewards {
		if r != rewards[0] {
			return false
		}
	}
	return true
}

// Trainable reports whether a trajectory with this advantage is trained: only
// an advantage of exactly zero is dropped.
func Trainable(advantage float64) bool { return advantage != 0 }

// TrajectoryWeight is the weight of every assistant token of a trajectory with
// this many assistant tokens (across all its sequences), so that every
// trajectory counts the same whatever its length.
func TrajectoryWeight(assistantTokens int) float64 {
	return 1 / (float64(assistantTokens) + 1e-6)
}

// Normalize rescales, over the assistant positions of all the rows of a job,
// first the weights to mean 1, then applies the advantage balance, then divides
// the advantages by mean(|A|·w). Positions outside the mask are left alone
// (they carry no loss). Rows are changed in place.
func Normalize(rows []*Row, balance float64) {
	var n, sumW float64
	each := func(f func(r *Row, t int)) {
		for _, r := range rows {
			for t, m := range r.Mask {
				if m {
					f(r, t)
				}
			}
		}
	}
	each(func(r *Row, t int) { n++; sumW += r.Weight[t] })
	if n == 0 || sumW == 0 {
		return
	}
	meanW := sumW / n
	var sumAbsAW float64
	each(func(r *Row, t int) {
		r.Weight[t] /= meanW
		switch a := r.Advantage[t]; {
		case balance > 0 && a < 0:
			r.Advantage[t] = a * (1 - balance)
		case balance < 0 && a > 0:
			r.Advantage[t] = a * (1 + balance)
		}
		sumAbsAW += math.Abs(r.Advantage[t]) * r.Weight[t]
	})
	if sumAbsAW == 0 {
		return
	}
	meanAbsAW := sumAbsAW / n
	each(func(r *Row, t int) { r.Advantage[t] /= meanAbsAW })
}
