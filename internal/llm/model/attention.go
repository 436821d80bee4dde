package model

import (
	"math"

	"github.com/weftlabs/weft/internal/llm/tensor"
)

// columnGrain aligns the column bands of fused projections to the widths
// of the kernels' tiles.
const columnGrain = 24

// project computes outs[i] = x · lins[i]ᵀ (+ bias) for rows rows of x, in
// one dispatch over the pool: the output columns of all the layers are
// split into bands, one per thread. Each element is computed in full by one
// thread in the kernels' fixed order, so the results do not depend on how
// the columns are split or on how many rows there are.
func (m *Model) project(x []float32, rows int, lins []*Linear, outs [][]float32) {
	total := 0
	for _, l := range lins {
		total += l.Out
	}
	band := func(lo, hi int) {
		base := 0
		for i, l := range lins {
			from, to := max(lo, base)-base, min(hi, base+l.Out)-base
			base += l.Out
			if from >= to {
				continue
			}
			k, n := l.In, to-from
			if l.Q != nil {
				nb := k / l.Q.BlockSize
				tensor.MatMulTQ8Strided(outs[i][from:], l.Out, x, l.Q.Data[from*k:], l.Q.Scales[from*nb:], rows, n, k, l.Q.BlockSize)
			} else {
				tensor.MatMulTStrided(outs[i][from:], l.Out, x, k, l.W[from*k:], k, rows, n, k)
			}
		}
	}
	if rows*total*lins[0].In < 1<<15 {
		band(0, total) // too small to be worth waking threads
	} else {
		m.pool.Parallel(total, columnGrain, band)
	}
	for i, l := range lins {
		if l.Bias != nil {
			for r := range rows {
				row := outs[i][r*l.Out : (r+1)*l.Out]
				tensor.Add(row, row, l.Bias)
			}
		}
	}
}

// attentionBlock adds self-attention of x's input norm to x, writing the
// batch's keys and values into the cache.
func (m *Model) attentionBlock(li int, ly *Layer, a *LayerActivations, x []float32, b *Batch, rows []rowInfo, ropes []*tensor.RoPE, cache KVCache) {
	c := m.Config
	T, hd := len(rows), c.HeadDim
	qd, kvd := c.Heads*hd, c.KVHeads*hd
	tensor.RMSNorm(a.AttnNormed, x, ly.InputNorm, c.RMSNormEps)
	m.project(a.AttnNormed, T, []*Linear{ly.Q, ly.K, ly.V}, [][]float32{a.Q, a.K, a.V})
	if c.QKNorm {
		tensor.RMSNorm(a.Q, a.Q, ly.QNorm, c.RMSNormEps)
		tensor.RMSNorm(a.K, a.K, ly.KNorm, c.RMSNormEps)
	}
	keys := make([][][]float32, len(b.Seqs))
	values := make([][][]float32, len(b.Seqs))
	for i, s := range b.Seqs {
		keys[i], values[i] = cache.Blocks(s.ID, li, s.Start+len(s.Tokens))
	}
	bs := cache.BlockSize()
	for t, r := range rows {
		q, k := a.Q[t*qd:(t+1)*qd], a.K[t*kvd:(t+1)*kvd]
		ropes[r.seq].Apply(q, hd, r.pos)
		ropes[r.seq].Apply(k, hd, r.pos)
		blk, off := r.pos/bs, (r.pos%bs)*kvd
		copy(keys[r.seq][blk][off:off+kvd], k)
		copy(values[r.seq][blk][off:off+kvd], a.V[t*kvd:(t+1)*kvd])
	}

	group := c.Heads / c.KVHeads
	scale := float32(1 / math.Sqrt(float64(hd)))
	maxEnd := 0
	for _, r := range rows {
		maxEnd = max(maxEnd, r.pos+1)
	}
	// One unit of work is one row's queries of one key-value head; every
	// unit is computed by one thread in a fixed order.
	units := T * c.KVHeads
	attend := func(lo, hi int) {
		scores := make([]float32, group*maxEnd)
		for u := lo; u < hi; u++ {
			t, g := u/c.KVHeads, u%c.KVHeads
			r := rows[t]
			n := r.pos + 1
			q := a.Q[t*qd+g*group*hd:]
			for blk := 0; blk*bs < n; blk++ {
				cnt := min(bs, n-blk*bs)
				tensor.MatMulTStrided(scores[blk*bs:], n, q, hd, keys[r.seq][blk][g*hd:], kvd, group, cnt, hd)
			}
			for h := range group {
				p := scores[h*n : (h+1)*n]
				for j := range p {
					p[j] *= scale
				}
				tensor.Softmax(p)
				out := a.AttnOut[t*qd+(g*group+h)*hd : t*qd+(g*group+h+1)*hd]
				clear(out)
				for j, w := range p {
					blk, off := j/bs, (j%bs)*kvd+g*hd
					tensor.Axpy(w, values[r.seq][blk][off:off+hd], out)
				}
			}
		}
	}
	if T*maxEnd*qd < 1<<14 {
		attend(0, units)
	} else {
		m.pool.Parallel(units, 1, attend)
	}
	proj := m.ws.proj[:T*c.HiddenSize]
	m.project(a.AttnOut, T, []*Linear{ly.O}, [][]float32{proj})
	tensor.Add(x, x, proj)
}
