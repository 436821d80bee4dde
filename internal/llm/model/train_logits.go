package model

import (
	"math"

	"github.com/weftlabs/weft/internal/llm/tensor"
)

// The output projection of a training pass. Every target row pays a
// product with the whole vocabulary forward (its logits) and backward (the
// gradient through them), so the rows' logits are taken in blocks of
// logitsBlock vocabulary entries. Each thread takes a range of rows and
// the blocks in turn; a band of its rows' logits against a block is
// computed into a buffer in the first-level cache and turned at once into
// exponentials shifted by the block's own maximum, with their sum and
// Σ e·(logit − max) (the entropy's term). The row's softmax is then
// p = e·exp(max_b − M)/S (M the row's maximum, S its sum), a scale per
// row and block, and nothing sweeps the vocabulary-wide rows again: the
// backward pass scales each block of exponentials in place and multiplies
// it by the block's rows of the projection onto the rows' gradient. Rows
// are split whole and each sums its blocks in order, so nothing depends on
// the thread count.
//
// Both products read the projection's blocks packed once for the kernels'
// tiles (backwardWeights), not copied at every step, and each fetches the
// next block into the per-core cache while it multiplies this one
// (tensor.Ahead): the projection is far larger than the cache, so every
// block comes fresh from memory, and waiting for it line by line held the
// product about a quarter below its rate on a block already in cache;
// fetching ahead wins back about half of that.

// logitsBlock is the vocabulary entries of one block: its packed rows of
// the projection (288 KiB for a hidden size of 288) stay in the per-core
// cache while every band of a thread's rows is multiplied by them.
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
	p.entropies = make([]float32, n)
	p.blockScales = make([]float32, n*logitsBlocks(c.VocabSize))
	if c.FinalSoftcap > 0 {
		p.capped = &cappedLogits{blockMax: make([]float32, n*logitsBlocks(c.VocabSize)), target: make([]float32, n)}
	}
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
	int8Head := m.LMHead.Q != nil || m.LMHead.M != nil
	if int8Head {
		// Quantised logits as serving computes them, activations quantised.
		m.project(normed, n, []*Linear{m.LMHead}, [][]float32{buf})
	}
	blockMax, blockSum, blockEL := make([]float32, n*nb), make([]float64, n*nb), make([]float64, n*nb)
	logit := make([]float32, n)
	lmHeadT := m.backwardWeights().lmHeadTBlocks
	m.pool.Parallel(n, 12, func(r0, r1 int) {
		bands := (r1 - r0 + logitsBand - 1) / logitsBand
		// A band's logits, turned into exponentials while in the
		// first-level cache (the int8 head's are copied in from buf).
		band := make([]float32, logitsBand*logitsBlock)
		for c := 0; c < v; c += logitsBlock {
			w, b := min(logitsBlock, v-c), c/logitsBlock
			for s0 := r0; s0 < r1; s0 += logitsBand {
				s1 := min(s0+logitsBand, r1)
				if int8Head {
					for i := s0; i < s1; i++ {
						copy(band[(i-s0)*logitsBlock:], buf[i*v+c:i*v+c+w])
					}
				} else {
					// Many rows against the block of the vocabulary: outer
					// products with the projection's transpose, equal to
					// serving's logits up to float32 rounding; a share of
					// the next block is fetched meanwhile.
					ahead := nextBlock(lmHeadT, b, (s0-r0)/logitsBand, bands)
					tensor.MatMulPackedAhead(false, band, logitsBlock, normed[s0*d:], d, lmHeadT[b], s1-s0, ahead)
				}
				for i := s0; i < s1; i++ {
					row := band[(i-s0)*logitsBlock : (i-s0)*logitsBlock+w]
					if p.capped != nil {
						softcap(row, m.Config.FinalSoftcap)
					}
					if t := int(p.targets[lo+i]); t >= c && t < c+w {
						logit[i] = row[t-c]
					}
					e := buf[i*v+c : i*v+c+w]
					bm, sum := tensor.ExpSum(e, row)
					if p.capped != nil {
						p.capped.blockMax[(lo+i)*nb+b] = bm
					}
					// Σ e·(logit − max) = Σ e·logit − max·Σ e, for the
					// entropy.
					blockMax[i*nb+b], blockSum[i*nb+b] = bm, sum
					blockEL[i*nb+b] = float64(tensor.Dot(e, row)) - float64(bm)*sum
				}
			}
		}
	})
	m.byRows(n, func(rlo, rhi int) {
		for i := rlo; i < rhi; i++ {
			p.softmaxScales(lo+i, logit[i], blockMax[i*nb:(i+1)*nb], blockSum[i*nb:(i+1)*nb], blockEL[i*nb:(i+1)*nb])
			if p.capped != nil {
				p.capped.target[lo+i] = logit[i]
			}
		}
	})
	return buf
}

// cappedLogits is what the backward pass through tanh softcapped logits
// (Config.FinalSoftcap) needs beyond the exponentials: each target row's
// block maxima, which with a block's exponential e give its capped logit
// max + ln e, and the capped logit of its target.
type cappedLogits struct {
	blockMax []float32 // [targets × blocks]
	target   []float32 // [targets]
}

// capSlopes multiplies each of a block's exponentials e (before they are
// scaled into gradients) by the derivative of the cap at its logit,
// 1 − (l/c)² with l = max + ln e; an exponential that underflowed to 0 has
// no gradient to scale.
func capSlopes(e []float32, max float32, c float64) {
	cf := float32(c)
	for j, v := range e {
		if v == 0 {
			continue
		}
		t := (max + float32(math.Log(float64(v)))) / cf
		e[j] = v * (1 - t*t)
	}
}

// nextBlock is the share part of parts of the block after b to fetch while
// block b is multiplied; none after the last.
func nextBlock(blocks []*tensor.PackedB, b, part, parts int) tensor.Ahead {
	if b+1 >= len(blocks) {
		return tensor.Ahead{}
	}
	return tensor.Ahead{Next: blocks[b+1], Part: part, Parts: parts}
}

// prefetchBand asks for the exponentials of rows [lo, hi) in block
// columns [c, c+w) ahead of their product.
func (p *Pass) prefetchBand(exps []float32, lo, hi, c, w int) {
	v := p.m.Config.VocabSize
	for i := lo; i < hi; i++ {
		tensor.Prefetch(exps[i*v+c : i*v+c+w])
	}
}

// softmaxScales records target row i's log-probability, from its target's
// logit, its blocks' scales and its entropy, from each block's maximum m_b,
// sum S_b of exponentials e = exp(logit − m_b) and Σ e·(logit − m_b).
func (p *Pass) softmaxScales(i int, logit float32, blockMax []float32, blockSum, blockEL []float64) {
	mx := float32(math.Inf(-1))
	for _, bm := range blockMax {
		mx = max(mx, bm)
	}
	var sum, el float64
	for b, bm := range blockMax {
		scale := math.Exp(float64(bm - mx))
		sum += blockSum[b] * scale
		// Σ exp(logit − M)·(logit − M) over the block, from its sums at
		// its own maximum.
		el += scale * (blockEL[b] + float64(bm-mx)*blockSum[b])
	}
	// The log-probability from the log-softmax, not the log of the
	// probability, which underflows for unlikely targets.
	p.targetLogprobs[i] = (logit - mx) - float32(math.Log(sum))
	// −Σ p·ln p, with ln p = (logit − M) − ln S.
	p.entropies[i] = float32(math.Log(sum) - el/sum)
	scales := p.blockScales[i*len(blockMax) : (i+1)*len(blockMax)]
	for b, bm := range blockMax {
		scales[b] = float32(math.Exp(float64(bm-mx)) / sum)
	}
}

// logitsBackward adds to dx the gradient through the output projection and
// the final norm. d logit = dlogprob·(onehot(target) − p), so the gradient
// at the projection's input is dlogprob·(W[target] − Σ_b scale_b·e_b·W_b)
// over the vocabulary's blocks b: each block of exponentials, scaled by
// −dlogprob·scale_b, times the block's rows of W. The exponentials are
// spent.
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
		// Each thread takes a range of rows in multiples of 12, the
		// height of the kernels' tiles, and the blocks in order: a band's
		// exponentials are scaled in place by their row's coefficient, then
		// multiplied onto the rows' gradient, so every row sums its blocks
		// in the same order on any number of threads.
		m.pool.Parallel(hi-lo, 12, func(r0, r1 int) {
			bands := (r1 - r0 + logitsBand - 1) / logitsBand
			for b := range nb {
				c := b * logitsBlock
				w := min(logitsBlock, v-c)
				for s0 := r0; s0 < r1; s0 += logitsBand {
					s1 := min(s0+logitsBand, r1)
					p.prefetchBand(exps, s1, min(s1+logitsBand, r1), c, w)
					for i := s0; i < s1; i++ {
						if p.capped != nil {
							capSlopes(exps[i*v+c:i*v+c+w], p.capped.blockMax[(lo+i)*nb+b], m.Config.FinalSoftcap)
						}
						tensor.Scale(-lps[lo+i]*p.blockScales[(lo+i)*nb+b], exps[i*v+c:i*v+c+w])
					}
					ahead := nextBlock(bw.lmHeadBlocks, b, (s0-r0)/logitsBand, bands)
					tensor.MatMulPackedAhead(true, dNormed[(lo+s0)*d:], d, exps[s0*v+c:], v, bw.lmHeadBlocks[b], s1-s0, ahead)
				}
			}
		})
	}
	m.spareExps = exps
	rec := p.batch.Record
	m.byRows(n, func(lo, hi int) {
		var row []float32 // a target's row of a head in a block format
		if w == nil {
			row = make([]float32, d)
		}
		for i := lo; i < hi; i++ {
			t, r := int(p.targets[i]), p.targetRows[i]
			dTarget := lps[i]
			if p.capped != nil {
				// The target's own term, through the cap at its logit.
				tc := p.capped.target[i] / float32(c.FinalSoftcap)
				dTarget *= 1 - tc*tc
			}
			if w != nil {
				row = w[t*d : (t+1)*d]
			} else {
				m.LMHead.M.DequantizeRow(row, t)
			}
			tensor.Axpy(dTarget, row, dNormed[i*d:(i+1)*d])
			tensor.RMSNormBackward(dx[r*d:(r+1)*d], dNormed[i*d:(i+1)*d], rec.Hidden[r*d:(r+1)*d], m.Norm, c.RMSNormEps)
		}
	})
}
