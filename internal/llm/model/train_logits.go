package model

import (
	"math"

	"github.com/weftlabs/weft/internal/llm/tensor"
)

// The output projection of a training pass. Every target row pays a
// product with the whole vocabulary forward (its logits) and backward (the
// gradient through them), so the rows' logits are taken in blocks of
// logitsBlock vocabulary entries: a thread computes a block's logits for
// every row and turns them at once, while they are still in its cache,
// into exponentials shifted by the block's own maximum, with their sum.
// The row's softmax is then p = e·exp(max_b − M)/S (M the row's maximum, S
// its sum), a scale per row and block, and nothing sweeps the
// vocabulary-wide rows again: the backward pass multiplies each block of
// exponentials by the block's rows of the projection and adds the result
// at its scale. Both products read the projection's blocks packed once
// for the kernels' tiles (backwardWeights), not copied at every step.

// logitsBlock is the vocabulary entries of one block: a block of 512 rows'
// logits is 512 KiB, in the per-core cache.
const logitsBlock = 256

// logitsBand is the rows of a block's logits computed and turned into
// exponentials together: 24 rows of 256 entries (24 KiB) are two rows of
// the kernels' tiles and stay in the per-core first-level cache.
const logitsBand = 24

// logitsBlocks is the number of blocks of a vocabulary.
func logitsBlocks(vocab int) int { return (vocab + logitsBlock - 1) / logitsBlock }

// targetLogits applies the final norm to the target rows of x, and the
// output projection and softmax to them in chunks of p.chunkRows rows,
// keeping the log-probabilities of the targets and, when all the rows fit
// in one chunk, their exponentials for the backward pass.
func (p *Pass) targetLogits(x []float32) {
	m := p.m
	c := m.Config
	d := c.HiddenSize
	n := len(p.targetRows)
	normed := make([]float32, n*d)
	for i, r := range p.targetRows {
		copy(normed[i*d:(i+1)*d], x[r*d:(r+1)*d])
	}
	tensor.RMSNorm(normed, normed, m.Norm, c.RMSNormEps)
	rec := p.batch.Record
	rec.Hidden, rec.Normed, rec.LogitRows = x, normed, p.targetRows
	p.targetLogprobs = make([]float32, n)
	p.blockScales = make([]float32, n*logitsBlocks(c.VocabSize))
	exps := m.spareExps
	m.spareExps = nil
	for lo := 0; lo < n; lo += p.chunkRows {
		exps = p.expRows(lo, min(lo+p.chunkRows, n), exps)
	}
	if n <= p.chunkRows {
		p.exps = exps
	}
}

// expRows computes the logits of target rows [lo, hi) into buf (grown as
// needed), block by block, and replaces each block by its exponentials
// shifted by its maximum; it records the targets' log-probabilities and
// the rows' block scales, and returns the buffer, [hi−lo × vocabulary].
func (p *Pass) expRows(lo, hi int, buf []float32) []float32 {
	m := p.m
	d, v := m.Config.HiddenSize, m.Config.VocabSize
	n, nb := hi-lo, logitsBlocks(v)
	if cap(buf) < n*v {
		buf = make([]float32, n*v)
	}
	buf = buf[:n*v]
	normed := p.batch.Record.Normed[lo*d : hi*d]
	int8Head := m.LMHead.Q != nil
	if int8Head {
		// Int8 logits as serving computes them, activations quantised.
		m.project(normed, n, []*Linear{m.LMHead}, [][]float32{buf})
	}
	blockMax, blockSum := make([]float32, n*nb), make([]float64, n*nb)
	logit := make([]float32, n)
	lmHeadT := m.backwardWeights().lmHeadTBlocks
	m.pool.Parallel(v, logitsBlock, func(from, to int) {
		for c := from; c < to; c += logitsBlock {
			w, b := min(logitsBlock, to-c), c/logitsBlock
			// A band of rows at a time, turned into exponentials while
			// its logits are still in the first-level cache.
			for r0 := 0; r0 < n; r0 += logitsBand {
				r1 := min(r0+logitsBand, n)
				if !int8Head {
					// Many rows against the block of the vocabulary: outer
					// products with the projection's transpose, equal to
					// serving's logits up to float32 rounding.
					tensor.MatMulPacked(buf[r0*v+c:], v, normed[r0*d:], d, lmHeadT[b], r1-r0)
				}
				for i := r0; i < r1; i++ {
					row := buf[i*v+c : i*v+c+w]
					if t := int(p.targets[lo+i]); t >= c && t < c+w {
						logit[i] = row[t-c]
					}
					blockMax[i*nb+b], blockSum[i*nb+b] = tensor.ExpSum(row, row)
				}
			}
		}
	})
	for i := range n {
		mx := float32(math.Inf(-1))
		for _, bm := range blockMax[i*nb : (i+1)*nb] {
			mx = max(mx, bm)
		}
		var sum float64
		for b, bm := range blockMax[i*nb : (i+1)*nb] {
			sum += blockSum[i*nb+b] * math.Exp(float64(bm-mx))
		}
		// The log-probability from the log-softmax, not the log of the
		// probability, which underflows for unlikely targets.
		p.targetLogprobs[lo+i] = (logit[i] - mx) - float32(math.Log(sum))
		scales := p.blockScales[(lo+i)*nb : (lo+i+1)*nb]
		for b, bm := range blockMax[i*nb : (i+1)*nb] {
			scales[b] = float32(math.Exp(float64(bm-mx)) / sum)
		}
	}
	return buf
}

// logitsBackward adds to dx the gradient through the output projection and
// the final norm. d logit = dlogprob·(onehot(target) − p), so the gradient
// at the projection's input is dlogprob·(W[target] − Σ_b scale_b·e_b·W_b)
// over the vocabulary's blocks b: each block of exponentials times the
// block's rows of W, added at its row's scale.
func (p *Pass) logitsBackward(dLogprobs [][]float32, bw *backwardWeights, dx []float32) {
	m := p.m
	c := m.Config
	d, v := c.HiddenSize, c.VocabSize
	nb := logitsBlocks(v)
	n := len(p.targetRows)
	if n == 0 {
		return
	}
	w := bw.lmHead
	dNormed := make([]float32, n*d)
	lps := make([]float32, n)
	for i, tp := range p.targetPos {
		lps[i] = dLogprobs[tp.seq][tp.pos]
	}
	exps := p.exps
	p.exps = nil
	for lo := 0; lo < n; lo += p.chunkRows {
		hi := min(lo+p.chunkRows, n)
		if p.chunkRows < n {
			exps = p.expRows(lo, hi, exps)
		}
		// Bands of rows in multiples of 12, the height of the kernels' tiles.
		m.pool.Parallel(hi-lo, 12, func(r0, r1 int) {
			part := make([]float32, (r1-r0)*d)
			for b := range nb {
				tensor.MatMulPacked(part, d, exps[r0*v+b*logitsBlock:], v, bw.lmHeadBlocks[b], r1-r0)
				for i := r0; i < r1; i++ {
					coef := -lps[lo+i] * p.blockScales[(lo+i)*nb+b]
					tensor.Axpy(coef, part[(i-r0)*d:(i-r0+1)*d], dNormed[(lo+i)*d:(lo+i+1)*d])
				}
			}
		})
	}
	m.spareExps = exps
	for i := range n {
		t := int(p.targets[i])
		tensor.Axpy(lps[i], w[t*d:(t+1)*d], dNormed[i*d:(i+1)*d])
	}
	rec := p.batch.Record
	for i, r := range p.targetRows {
		tensor.RMSNormBackward(dx[r*d:(r+1)*d], dNormed[i*d:(i+1)*d], rec.Hidden[r*d:(r+1)*d], m.Norm, c.RMSNormEps)
	}
}
