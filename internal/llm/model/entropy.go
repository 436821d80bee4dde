package model

import (
	"fmt"
	"math"
)

// Entropies returns the entropy of the model's next-token distribution,
// −Σ_v p_v·ln p_v in nats, at every position of the pass with a target,
// shaped as Logprobs (0 elsewhere): how sure the policy being trained is
// where the loss looks. Call it before Backward, which consumes the rows of
// exponentials; when the pass kept none (a batch past its LogitsBudget)
// the rows are recomputed chunk by chunk, one more output projection.
func (p *Pass) Entropies() ([][]float32, error) {
	m := p.m
	m.mu.Lock()
	defer m.mu.Unlock()
	if p.done {
		return nil, fmt.Errorf("%w: the pass was backward-ed already", ErrBatch)
	}
	v := m.Config.VocabSize
	nb := logitsBlocks(v)
	n := len(p.targetRows)
	flat := make([]float32, n)
	exps := p.exps
	for lo := 0; lo < n; lo += p.chunkRows {
		hi := min(lo+p.chunkRows, n)
		rows := exps
		if p.exps == nil {
			exps = p.expRows(lo, hi, exps)
			rows = exps
		} else {
			rows = exps[lo*v : hi*v]
		}
		m.pool.Parallel(hi-lo, 1, func(a, b int) {
			for i := a; i < b; i++ {
				// p = e·scale over each block (train_logits.go).
				var h float64
				for blk, scale := range p.blockScales[(lo+i)*nb : (lo+i+1)*nb] {
					c0 := blk * logitsBlock
					for _, e := range rows[i*v+c0 : i*v+min(c0+logitsBlock, v)] {
						if q := float64(e) * float64(scale); q > 0 { // 0·ln 0 = 0
							h -= q * math.Log(q)
						}
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
