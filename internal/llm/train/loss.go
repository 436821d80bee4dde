package train

import "github.com/weftlabs/weft/internal/llm/model"

// CountTargets is the number of positions of seqs with a target: the
// denominator of a mean over a batch split into micro-batches.
func CountTargets(seqs []model.TrainSequence) int {
	n := 0
	for _, s := range seqs {
		for _, t := range s.Targets {
			if t != model.NoTarget {
				n++
			}
		}
	}
	return n
}

// CrossEntropy is the supervised loss of one micro-batch as its share of a
// batch of total targets — Σ −logprob / total over the pass's targets — and
// its derivative with respect to each log-probability (−1/total at every
// target), the dLogprobs of Stepper.Backward. Summed over the micro-batches
// of a batch, the losses and the accumulated gradients are those of the
// mean cross-entropy of the whole batch.
func CrossEntropy(pass *model.Pass, seqs []model.TrainSequence, total int) (loss float64, dLogprobs [][]float32) {
	dLogprobs = make([][]float32, len(seqs))
	for i, s := range seqs {
		dLogprobs[i] = make([]float32, len(s.Targets))
		for j, t := range s.Targets {
			if t == model.NoTarget {
				continue
			}
			loss -= float64(pass.Logprobs[i][j])
			dLogprobs[i][j] = -1 / float32(total)
		}
	}
	return loss / float64(total), dLogprobs
}
