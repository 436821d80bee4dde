package model

import (
	"fmt"
	"math"
)

// Entropies returns the entropy of the model's next-token distribution,
// −Σ_v p_v·ln p_v in nats, at every position of the pass with a target,
// shaped as Logprobs (0 elsewhere): how sure the policy being trained is
// where the loss looks. Call it before Backward, which consumes the softmax
// rows; when the pass kept none (a batch past its LogitsBudget) the rows
// are recomputed chunk by chunk, one more output projection.
func (p *Pass) Entropies() ([][]float32, error) {
	m := p.m
	m.mu.Lock()
	defer m.mu.Unlock()
	if p.done {
		return nil, fmt.Errorf("%w: the pass was backward-ed already", ErrBatch)
	}
	v := m.Config.VocabSize
	n := len(p.targetRows)
	flat := make([]float32, n)
	probs := p.probs
	for lo := 0; lo < n; lo += p.chunkRows {
		hi := min(lo+p.chunkRows, n)
		if p.probs == nil {
			probs = p.softmaxRows(lo, hi, probs)
		}
		rows := probs[:(hi-lo)*v]
		if p.probs != nil {
			rows = probs[lo*v : hi*v]
		}
		m.pool.Parallel(hi-lo, 1, func(a, b int) {
			for i := a; i < b; i++ {
				var h float64
				for _, q := range rows[i*v : (i+1)*v] {
					if q > 0 { // 0·ln 0 = 0
						h -= float64(q) * math.Log(float64(q))
					}
				}
				flat[lo+i] = float32(h)
			}
		})
	}
	out := make([][]float32, len(p.Logprobs))
	for i := range out {
		out[i] = make([]float32, len(p.Logprobs[i]))
	}
	for i, tp := range p.targetPos {
		out[tp.seq][tp.pos] = flat[i]
	}
	return out, nil
}
