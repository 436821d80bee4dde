package model

import (
	"github.com/weftlabs/weft/internal/llm/gguf"
	"github.com/weftlabs/weft/internal/llm/lora"
	"github.com/weftlabs/weft/internal/llm/quant"
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
	m.projectLane(m.batchLane(rows), x, lins, outs)
}

// projectLane computes rows [ln.lo, ln.hi) of outs[i] = x · lins[i]ᵀ
// (+ bias), x and outs holding the whole batch: on the calling thread for a
// lane of its own, else split over the pool by columns. A row's values do
// not depend on the rows computed with it, so either gives the same bits.
func (m *Model) projectLane(ln lane, x []float32, lins []*Linear, outs [][]float32) {
	total := 0
	for _, l := range lins {
		total += l.Out
	}
	rows, in := ln.rows(), lins[0].In
	x = x[ln.lo*in : ln.hi*in]
	// Int8 weights in blocks of the activation block multiply int8
	// activations, and block formats their own: x is quantised once for
	// all the layers and bands.
	xq := ln.s.quantizedActivations(x, rows, lins)
	xacts := ln.s.blockActivations(x, rows, lins)
	band := func(lo, hi int) {
		base := 0
		for i, l := range lins {
			from, to := max(lo, base)-base, min(hi, base+l.Out)-base
			base += l.Out
			if from >= to {
				continue
			}
			k, n, out := l.In, to-from, outs[i][ln.lo*l.Out+from:]
			switch {
			case l.M != nil && tensor.Quantized(l.M.Type):
				tensor.MatMulTQuant(out, l.Out, xacts[i], l.M, from, n)
			case l.M != nil:
				tensor.MatMulTHalf(out, l.Out, x, rows, l.M, from, n)
			case l.Q != nil && l.Q.BlockSize == tensor.ActivationBlock:
				nb := k / l.Q.BlockSize
				tensor.MatMulTQ8Q8Strided(out, l.Out, xq, l.Q.Data[from*k:], l.Q.Scales[from*nb:], n)
			case l.Q != nil:
				nb := k / l.Q.BlockSize
				tensor.MatMulTQ8Strided(out, l.Out, x, l.Q.Data[from*k:], l.Q.Scales[from*nb:], rows, n, k, l.Q.BlockSize)
			default:
				tensor.MatMulTStrided(out, l.Out, x, k, l.W[from*k:], k, rows, n, k)
			}
		}
	}
	if ln.own || rows*total*in < 1<<15 {
		band(0, total) // a lane's own, or too small to be worth waking threads
	} else {
		m.pool.Parallel(total, columnGrain, band)
	}
	for i, l := range lins {
		out := outs[i][ln.lo*l.Out : ln.hi*l.Out]
		if l.RoPEInterleaved > 0 {
			halveRoPE(out, rows, l.Out, l.RoPEInterleaved)
		}
		if l.Bias != nil {
			for r := range rows {
				row := out[r*l.Out : (r+1)*l.Out]
				tensor.Add(row, row, l.Bias)
			}
		}
	}
}

// halveRoPE puts rows outputs of a projection whose weight rows are
// interleaved (Linear.RoPEInterleaved, heads of hd) back in RoPE's order,
// one head at a time through a buffer on the stack.
func halveRoPE(out []float32, rows, width, hd int) {
	var stack [256]float32
	buf := stack[:]
	if hd > len(stack) {
		buf = make([]float32, hd)
	}
	buf = buf[:hd]
	for h := 0; h < rows*width; h += hd {
		head := out[h : h+hd]
		copy(buf, head)
		gguf.HalveRoPERowsTo(head, buf, 1, hd)
	}
}

// quantizedActivations quantises x (rows × the layers' input size) into the
// scratch when one of lins takes int8 activations, else returns nil.
func (s *laneScratch) quantizedActivations(x []float32, rows int, lins []*Linear) *tensor.Q8 {
	for _, l := range lins {
		if l.Q != nil && l.Q.BlockSize == tensor.ActivationBlock {
			tensor.QuantizeRows(&s.act, x, rows, l.In)
			return &s.act
		}
	}
	return nil
}

// actsOf is one quantisation of a projection's input, for the weights of
// type typ and those that take the same activations.
type actsOf struct {
	typ  quant.Type
	acts tensor.QActs
}

// blockActivations quantises x (rows × the layers' input size) for each
// of lins in a block format, once per kind of activation they take, into
// the scratch, and returns each layer's (nil for the others).
func (s *laneScratch) blockActivations(x []float32, rows int, lins []*Linear) []*tensor.QActs {
	var out []*tensor.QActs
	used := 0
	for i, l := range lins {
		if l.M == nil || !tensor.Quantized(l.M.Type) {
			continue
		}
		if out == nil {
			out = make([]*tensor.QActs, len(lins))
		}
		for j := range used {
			if tensor.SameActs(s.acts[j].typ, l.M.Type) {
				out[i] = &s.acts[j].acts
			}
		}
		if out[i] != nil {
			continue
		}
		a := &s.acts[used]
		used++
		a.typ = l.M.Type
		tensor.QuantizeActs(&a.acts, l.M.Type, x, rows, l.In)
		out[i] = &a.acts
	}
	return out
}

// layerKV is one layer's cache blocks for each sequence of a batch, as
// KVCache.Blocks returns them (taken on the calling goroutine before the
// threads write and read them).
type layerKV struct {
	keys, values [][][]float32
	bs           int
}

// cacheBlocks returns layer li's blocks of the batch's sequences.
func cacheBlocks(b *Batch, li int, cache KVCache) layerKV {
	kv := layerKV{keys: make([][][]float32, len(b.Seqs)), values: make([][][]float32, len(b.Seqs)), bs: cache.BlockSize()}
	for i, s := range b.Seqs {
		kv.keys[i], kv.values[i] = cache.Blocks(s.ID, li, s.Start+len(s.Tokens))
	}
	return kv
}

// attentionIn computes the lane's rows of the queries, keys and values of
// x's input norm, rotated, and writes the keys and values into the cache:
// the part of self-attention that needs no other row.
func (m *Model) attentionIn(li int, ly *Layer, a *LayerActivations, x []float32, ln lane, rows []rowInfo, ropes []*tensor.RoPE, kv layerKV, runs []adapterRun) {
	c := m.Config
	d, hd := c.HiddenSize, c.HeadDim
	qd, kvd := c.Heads*hd, c.KVHeads*hd
	tensor.RMSNorm(ln.of(a.AttnNormed, d), ln.of(x, d), ly.InputNorm, c.RMSNormEps)
	m.projectLane(ln, a.AttnNormed, []*Linear{ly.Q, ly.K, ly.V}, [][]float32{a.Q, a.K, a.V})
	m.adapt(runs, li, a.AttnNormed, []lora.Target{lora.Q, lora.K, lora.V}, [][]float32{a.Q, a.K, a.V})
	if c.QKNorm {
		if a.QProj != nil {
			copy(ln.of(a.QProj, qd), ln.of(a.Q, qd))
			copy(ln.of(a.KProj, kvd), ln.of(a.K, kvd))
		}
		tensor.RMSNorm(ln.of(a.Q, qd), ln.of(a.Q, qd), ly.QNorm, c.RMSNormEps)
		tensor.RMSNorm(ln.of(a.K, kvd), ln.of(a.K, kvd), ly.KNorm, c.RMSNormEps)
	}
	ropes = m.layerRopes(li, ropes)
	bs := kv.bs
	for t := ln.lo; t < ln.hi; t++ {
		r := rows[t]
		q, k := a.Q[t*qd:(t+1)*qd], a.K[t*kvd:(t+1)*kvd]
		ropes[r.seq].Apply(q, hd, r.pos)
		ropes[r.seq].Apply(k, hd, r.pos)
		blk, off := r.pos/bs, r.pos%bs
		copy(kv.keys[r.seq][blk][off*kvd:(off+1)*kvd], k)
		vblk := kv.values[r.seq][blk]
		for d, v := range a.V[t*kvd : (t+1)*kvd] {
			vblk[d*bs+off] = v
		}
	}
}

// attentionOut adds the lane's rows of self-attention's output to x: each
// row's attention over the cache (which holds the keys and values of every
// row of the batch by now), o_proj and the residual sum.
func (m *Model) attentionOut(li int, ly *Layer, a *LayerActivations, x []float32, ln lane, rows []rowInfo, kv layerKV, runs []adapterRun) {
	c := m.Config
	hd, qd, d := c.HeadDim, c.Heads*c.HeadDim, c.HiddenSize
	units := attentionUnits(rows[:ln.hi], ln.lo, c.KVHeads)
	attend := func(lo, hi int, s *attentionScratch) {
		for _, u := range units[lo:hi] {
			seq := rows[u.row].seq
			m.attendUnit(li, u, a, rows, kv.keys[seq], kv.values[seq], kv.bs, s)
		}
	}
	work := 0
	for _, r := range rows[ln.lo:ln.hi] {
		work += (r.pos + 1) * qd
	}
	if ln.own || work < 1<<15 {
		attend(0, len(units), &ln.s.attn)
	} else {
		parts := balancedParts(units, rows, hd, m.pool.Threads())
		m.pool.Parallel(len(parts)-1, 1, func(lo, hi int) {
			var scratch attentionScratch
			for p := lo; p < hi; p++ {
				attend(parts[p], parts[p+1], &scratch)
			}
		})
	}
	m.projectLane(ln, a.AttnOut, []*Linear{ly.O}, [][]float32{m.ws.proj})
	m.adapt(runs, li, a.AttnOut, []lora.Target{lora.O}, [][]float32{m.ws.proj})
	m.addResidual(ln.of(x, d), ln.of(m.ws.proj, d), ly.AttnOutNorm, ln.of(a.AttnProj, d))
}

// attentionRowBlock is the most rows of one sequence whose scores against
// the keys are computed in one product: the keys are read once for all.
const attentionRowBlock = 16

// attentionUnit is one piece of attention work: rows [row, row+rows) of one
// sequence (consecutive positions) for the query heads of key-value head g.
type attentionUnit struct {
	row, rows, g int
}

// attentionUnits splits rows [from, len(rows)) of the batch into units of
// consecutive rows of one sequence, times the key-value heads.
func attentionUnits(rows []rowInfo, from, kvHeads int) []attentionUnit {
	var units []attentionUnit
	for t := from; t < len(rows); {
		n := 1
		for n < attentionRowBlock && t+n < len(rows) && rows[t+n].seq == rows[t].seq {
			n++
		}
		for g := range kvHeads {
			units = append(units, attentionUnit{row: t, rows: n, g: g})
		}
		t += n
	}
	return units
}

// balancedParts splits units into n runs of about equal work, returned as
// their n+1 bounds. A unit's work grows with its rows' positions, so equal
// counts of a prompt's units would leave the thread with its first rows
// idle while the one with its last rows works on (about three times as
// long, for two threads): a row weighs the positions it sees, plus hd for
// what it costs whatever its position (a softmax, hd sums reduced; as
// measured on the 15M shape). Each unit is computed whole by one thread,
// so the split changes no value.
func balancedParts(units []attentionUnit, rows []rowInfo, hd, n int) []int {
	weight := func(u attentionUnit) int { return u.rows * (rows[u.row].pos + u.rows + hd) }
	total := 0
	for _, u := range units {
		total += weight(u)
	}
	bounds := make([]int, 1, n+1)
	done := 0
	for i, u := range units {
		done += weight(u)
		if len(bounds) < n && done*n >= total*len(bounds) {
			bounds = append(bounds, i+1)
		}
	}
	for len(bounds) <= n {
		bounds = append(bounds, len(units))
	}
	return bounds
}

// attentionScratch is one thread's buffers for attendUnit.
type attentionScratch struct {
	scores, partial []float32
}

// attendUnit computes the attention output of a unit's rows and heads:
// scores = q·kᵀ·scale over the positions up to each row's own, softmax, and
// the probabilities times the values, into a.AttnOut.
//
// Every number a row gets depends only on that row and the cache, never on
// the other rows of its unit: each score is one dot product of head_dim
// elements, and the weighted sum of values is a sum over the cache's
// blocks in order of each block's product (a product whose length is the
// number of the block's positions the row sees). So a token's output is
// the same bits in a prompt, in a chunk of one, or as a decode step. The
// values of a block are one product for all the rows that reach into it
// (attendValues: the kernels' bits do not depend on the rows), but under a
// sliding window one per row.
func (m *Model) attendUnit(li int, u attentionUnit, a *LayerActivations, rows []rowInfo, keys, values [][]float32, bs int, s *attentionScratch) {
	c := m.Config
	hd, kvd, qd := c.HeadDim, c.KVHeads*c.HeadDim, c.Heads*c.HeadDim
	group := c.Heads / c.KVHeads
	scale := c.attentionScale()
	first := rows[u.row].pos
	n := first + u.rows // positions the last row sees
	if cap(s.scores) < u.rows*n {
		s.scores = make([]float32, u.rows*n)
	}
	if cap(s.partial) < u.rows*hd {
		s.partial = make([]float32, u.rows*hd)
	}
	scores := s.scores[:u.rows*n]
	// Without a window hiding positions (none starts after position 0 for
	// the last row), a block's values are one product for all the rows
	// that reach into it.
	windowless := c.windowStart(li, n-1) == 0
	for h := u.g * group; h < (u.g+1)*group; h++ {
		q := a.Q[u.row*qd+h*hd:]
		for blk := 0; blk*bs < n; blk++ {
			cnt := min(bs, n-blk*bs)
			tensor.MatMulTStrided(scores[blk*bs:], n, q, qd, keys[blk][u.g*hd:], kvd, u.rows, cnt, hd)
		}
		for r := range u.rows {
			p := scores[r*n : r*n+first+r+1]
			// A sliding window hides the positions before lo: they weigh
			// nothing, and the blocks wholly before it are not read.
			lo := c.windowStart(li, first+r)
			tensor.Scale(scale, p)
			if c.AttnSoftcap > 0 {
				softcap(p[lo:], c.AttnSoftcap)
			}
			tensor.FastSoftmax(p[lo:])
			clear(p[:lo])
		}
		// values blocks are [kvd × bs]: row d of head g holds dimension d
		// of the block's positions.
		out := a.AttnOut[u.row*qd+h*hd:]
		if windowless {
			m.attendValues(u, out, scores, values, first, bs, s)
			continue
		}
		for r := range u.rows {
			p := scores[r*n : r*n+first+r+1]
			lo := c.windowStart(li, first+r)
			o := out[r*qd : r*qd+hd]
			for blk := lo / bs; blk*bs < len(p); blk++ {
				cnt := min(bs, len(p)-blk*bs)
				dst := o
				if blk > lo/bs {
					dst = s.partial[:hd]
				}
				tensor.MatMulTStrided(dst, hd, p[blk*bs:], cnt, values[blk][u.g*hd*bs:], bs, 1, hd, cnt)
				if blk > lo/bs {
					tensor.Add(o, o, dst)
				}
			}
		}
	}
}

// attendValues adds to out (a unit's rows of one head, rows qd apart) the
// probabilities times the values, when no row's window hides a position.
// Each block is one product for the rows that reach into it, where a row at
// a time read the block's values once a row: the rows that see part of it
// sum one more position each than the row before (MatMulTGrowing), those
// that see it whole all bs (MatMulTStrided). Either gives each row the bits
// of its own product over the positions of the block it sees, and each row
// adds its blocks' products in block order, the first into out itself.
func (m *Model) attendValues(u attentionUnit, out, scores []float32, values [][]float32, first, bs int, s *attentionScratch) {
	c := m.Config
	hd, qd := c.HeadDim, c.Heads*c.HeadDim
	n := first + u.rows
	for blk := 0; blk*bs < n; blk++ {
		// Rows [from, u.rows) reach into the block; from whole on they see
		// all of it.
		from := max(0, blk*bs-first)
		whole := min(u.rows, max(from, blk*bs+bs-first-1))
		dst, ldd := out[from*qd:], qd
		if blk > 0 {
			dst, ldd = s.partial[from*hd:], hd
		}
		vals := values[blk][u.g*hd*bs:]
		if whole > from {
			tensor.MatMulTGrowing(dst, ldd, scores[from*n+blk*bs:], n, vals, bs, whole-from, hd, first+from+1-blk*bs)
		}
		if whole < u.rows {
			tensor.MatMulTStrided(dst[(whole-from)*ldd:], ldd, scores[whole*n+blk*bs:], n, vals, bs, u.rows-whole, hd, bs)
		}
		if blk > 0 {
			for r := from; r < u.rows; r++ {
				o := out[r*qd : r*qd+hd]
				tensor.Add(o, o, s.partial[r*hd:(r+1)*hd])
			}
		}
	}
}
