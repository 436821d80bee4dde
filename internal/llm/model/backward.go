package model

import (
	"fmt"

	"github.com/weftlabs/weft/internal/llm/gguf"
	"github.com/weftlabs/weft/internal/llm/lora"
	"github.com/weftlabs/weft/internal/llm/tensor"
)

// LinearGradients receives what the backward pass knows of each linear
// layer of a decoder block as it walks back through it: the layer's input
// rows and the gradient of the loss with respect to its output rows. A
// trainer accumulates the gradients of its parameters from them — a
// low-rank adapter's A and B, or the base weight — and adds to dx the
// gradient that flows back to the input through anything the forward pass
// added to the layer besides its weight (an adapter's own path); the path
// through the weight itself the pass adds. At the first layer's q, k and
// v, below which nothing reads it, dx holds no meaningful values.
type LinearGradients interface {
	// Linear is called once per linear layer and pass, from the goroutine
	// that called Backward, which holds the model: it may use the model's
	// pool, not call the model. t names the projection of block layer; x is
	// [rows × lin.In], dy [rows × lin.Out] and dx [rows × lin.In].
	Linear(layer int, t lora.Target, lin *Linear, x, dy, dx []float32, rows int)
}

// backwardWeights are the weights the backward pass multiplies gradients
// by, packed once as the products' tiles read them (a layer's weights are
// frozen), so no step copies them again. The gradient through a linear
// layer, dx = dy·W, is a MatMulAdd against the weight as the layer stores
// it ([Out × In], read along its outputs); projections that share an
// input add their products into one dx in turn, which sums in the order
// one stacked product would. Int8 weights are dequantised to be packed.
// The output projection, which every trained token multiplies forward
// and backward, is packed a block of logitsBlock vocabulary entries at a
// time: its transpose's blocks [hidden × block] for the training pass's
// logits (TrainForward), its own [block × hidden] for the gradient
// through them; its float32 rows also serve the targets' term.
type backwardWeights struct {
	layers        map[*Linear]*tensor.PackedB // a decoder layer's projection, [Out × In]
	lmHead        []float32                   // the output projection [vocab × hidden] in float32; nil when held in a block format
	lmHeadTBlocks []*tensor.PackedB           // block b: the transpose's columns [b·logitsBlock, +logitsBlock); nil for a quantised head
	lmHeadBlocks  []*tensor.PackedB           // block b: the weight's rows [b·logitsBlock, +logitsBlock)
}

// backwardWeights returns the backward pass's weights, built on first use.
// m.mu is held.
func (m *Model) backwardWeights() *backwardWeights {
	if m.bw != nil {
		return m.bw
	}
	bw := &backwardWeights{layers: map[*Linear]*tensor.PackedB{}}
	for _, ly := range m.Layers {
		for _, l := range []*Linear{ly.Q, ly.K, ly.V, ly.O, ly.Gate, ly.Up, ly.Down} {
			if l.M == nil {
				bw.layers[l] = tensor.PackB(float32Weight(l), l.In, l.Out, l.In)
			}
		}
	}
	w := float32Weight(m.LMHead)
	d, v := m.LMHead.In, m.LMHead.Out
	quantized := m.LMHead.Q != nil || m.LMHead.M != nil
	if m.LMHead.M == nil {
		bw.lmHead = w // else the targets' rows are widened as needed
	}
	var wT []float32
	if !quantized {
		// A quantised head's logits are computed as serving computes them
		// (expRows), not against the transpose.
		wT = make([]float32, len(w))
		tensor.Transpose(wT, w, v, d)
	}
	for c := 0; c < v; c += logitsBlock {
		wb := min(logitsBlock, v-c)
		if wT != nil {
			bw.lmHeadTBlocks = append(bw.lmHeadTBlocks, tensor.PackB(wT[c:], v, d, wb))
		}
		bw.lmHeadBlocks = append(bw.lmHeadBlocks, tensor.PackB(w[c*d:], d, wb, d))
	}
	m.bw = bw
	return bw
}

// float32Weight is l's weight [Out × In] in float32, its rows in the order
// of its outputs: its own, or its quantised weight dequantised.
func float32Weight(l *Linear) []float32 {
	w := l.W
	switch {
	case l.Q != nil:
		w = l.Q.Dequantize()
	case l.M != nil:
		w = l.M.Dequantize()
	}
	if hd := l.RoPEInterleaved; hd > 0 {
		w = gguf.HalveRoPERows(w, l.Out/hd, hd)
	}
	return w
}

// inputGradient sets dx [rows × In] to Σ dys[i]·W_i over layers lins that
// share an input, dys[i] being [rows × lins[i].Out].
func (m *Model) inputGradient(bw *backwardWeights, dx []float32, rows int, lins []*Linear, dys [][]float32) {
	for i, l := range lins {
		switch packed := bw.layers[l]; {
		case packed == nil:
			m.streamedInputGradient(dx, rows, l, dys[i], i > 0)
		case i == 0:
			m.pool.MatMulPacked(dx, dys[i], packed, rows)
		default:
			m.pool.MatMulAddPacked(dx, dys[i], packed, rows)
		}
	}
}

// streamedRows is how many rows of a weight in a block format the gradient
// through it widens at a time.
const streamedRows = 64

// streamedInputGradient sets dx [rows × l.In] to dy·W, or adds it with
// accumulate, for a weight held in a block format or half precision (l.M),
// widening streamedRows of its rows at a time instead of keeping the whole
// weight in float32: training over a quantised base takes the base's own
// size in memory, not four bytes a weight. The rows are widened in the
// order of l's outputs (a query or key projection's interleaved rows put
// back), and each element of dx is summed over them in that order onto its
// value, as MatMulAdd sums: the bits of the product against the widened
// weight, packed, whatever the thread count.
func (m *Model) streamedInputGradient(dx []float32, rows int, l *Linear, dy []float32, accumulate bool) {
	in, out := l.In, l.Out
	if !accumulate {
		clear(dx[:rows*in])
	}
	n := min(streamedRows, out)
	if len(m.streamed) < n*in+rows*n {
		m.streamed = make([]float32, n*in+rows*n)
	}
	w, a := m.streamed[:n*in], m.streamed[n*in:n*in+rows*n]
	for o := 0; o < out; o += n {
		k := min(n, out-o)
		m.pool.Parallel(k, 1, func(lo, hi int) {
			for j := lo; j < hi; j++ {
				l.M.DequantizeRow(w[j*in:(j+1)*in], storedRow(l, o+j))
			}
		})
		for r := range rows {
			copy(a[r*k:(r+1)*k], dy[r*out+o:r*out+o+k])
		}
		m.pool.MatMulAdd(dx, a[:rows*k], w[:k*in], rows, in, k)
	}
}

// storedRow is the row of l's weight that computes its output o: o itself,
// or, for rows stored interleaved (Linear.RoPEInterleaved), the row
// gguf.InterleaveRoPERows moved it to.
func storedRow(l *Linear, o int) int {
	hd := l.RoPEInterleaved
	if hd == 0 {
		return o
	}
	half := hd / 2
	h, r := o/hd, o%hd
	return h*hd + 2*(r%half) + r/half
}

// Backward propagates dLogprobs — the gradient of a loss with respect to
// each of the pass's target log-probabilities, shaped as Logprobs (entries
// at positions without a target are ignored) — back through the model,
// handing every linear layer's input and output gradient to grads. The
// embeddings are frozen: the gradient stops at the first layer's input
// projections (their input gradient, which only the embeddings would
// need, is never formed). A pass is backward-ed at most once; its
// activations may be dropped afterwards.
func (p *Pass) Backward(dLogprobs [][]float32, grads LinearGradients) error {
	m := p.m
	c := m.Config
	if len(dLogprobs) != len(p.Logprobs) {
		return fmt.Errorf("%w: %d gradient rows for %d sequences", ErrBatch, len(dLogprobs), len(p.Logprobs))
	}
	for i := range dLogprobs {
		if len(dLogprobs[i]) != len(p.Logprobs[i]) {
			return fmt.Errorf("%w: sequence %d: %d gradients for %d positions", ErrBatch, i, len(dLogprobs[i]), len(p.Logprobs[i]))
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if p.done {
		return fmt.Errorf("%w: the pass was backward-ed already", ErrBatch)
	}
	p.done = true
	bw := m.backwardWeights()
	T, d := len(p.rows), c.HiddenSize
	dx := make([]float32, T*d)
	p.logitsBackward(dLogprobs, bw, dx)
	s := newBackwardScratch(c, T)
	for li := len(m.Layers) - 1; li >= 0; li-- {
		m.mlpBackward(li, &p.batch.Record.Layers[li], bw, dx, s, grads)
		p.attentionBackward(li, bw, dx, s, grads)
	}
	// The activations are spent: the next pass records into them.
	m.spareRecord = p.batch.Record.arena
	p.batch.Record = &Activations{}
	return nil
}

// backwardScratch holds the gradient buffers of one layer's backward pass,
// reused from layer to layer.
type backwardScratch struct {
	dAct, dGate, dUp []float32 // [T × f]
	dNormed          []float32 // [T × hidden]
	dAttnOut, dQ     []float32 // [T × q]
	dK, dV           []float32 // [T × kv]
	dQProj, dKProj   []float32 // Qwen3, Gemma 3: before the q/k norm
	dProj            []float32 // Gemma 3: at o_proj's or down_proj's output, before its norm [T × hidden]
}

func newBackwardScratch(c *Config, T int) *backwardScratch {
	d, qd, kvd, f := c.HiddenSize, c.Heads*c.HeadDim, c.KVHeads*c.HeadDim, c.IntermediateSize
	s := &backwardScratch{
		dAct: make([]float32, T*f), dGate: make([]float32, T*f), dUp: make([]float32, T*f),
		dNormed:  make([]float32, T*d),
		dAttnOut: make([]float32, T*qd), dQ: make([]float32, T*qd),
		dK: make([]float32, T*kvd), dV: make([]float32, T*kvd),
	}
	if c.QKNorm {
		s.dQProj, s.dKProj = make([]float32, T*qd), make([]float32, T*kvd)
	}
	if c.SandwichNorms {
		s.dProj = make([]float32, T*d)
	}
	return s
}

// mlpBackward turns dx, the gradient at the output of block li, into the
// gradient at its residual stream after attention (Mid), through the MLP
// and its norm.
func (m *Model) mlpBackward(li int, a *LayerActivations, bw *backwardWeights, dx []float32, s *backwardScratch, grads LinearGradients) {
	c := m.Config
	ly := m.Layers[li]
	d := c.HiddenSize
	T := len(dx) / d
	dy := m.outputNormBackward(dx, a.MLPProj, ly.MLPOutNorm, s)
	m.inputGradient(bw, s.dAct, T, []*Linear{ly.Down}, [][]float32{dy})
	grads.Linear(li, lora.Down, ly.Down, a.Act, dy, s.dAct, T)
	f := c.IntermediateSize
	gated := tensor.SwiGLUBackward
	if c.GELU {
		gated = tensor.GeGLUBackward
	}
	m.byRows(T, func(lo, hi int) {
		gated(s.dGate[lo*f:hi*f], s.dUp[lo*f:hi*f], s.dAct[lo*f:hi*f], a.Gate[lo*f:hi*f], a.Up[lo*f:hi*f])
	})
	m.inputGradient(bw, s.dNormed, T, []*Linear{ly.Gate, ly.Up}, [][]float32{s.dGate, s.dUp})
	grads.Linear(li, lora.Gate, ly.Gate, a.MLPNormed, s.dGate, s.dNormed, T)
	grads.Linear(li, lora.Up, ly.Up, a.MLPNormed, s.dUp, s.dNormed, T)
	m.rmsNormBackward(dx, s.dNormed, a.Mid, ly.MLPNorm)
}

// outputNormBackward is the gradient at a sub-layer's projection output
// given dx, the gradient at the residual sum it is added to: dx itself, or
// through the projection's norm (Gemma 3) into s.dProj, at the recorded
// output before the norm.
func (m *Model) outputNormBackward(dx, proj, norm []float32, s *backwardScratch) []float32 {
	if norm == nil {
		return dx
	}
	clear(s.dProj)
	m.rmsNormBackward(s.dProj, dx, proj, norm)
	return s.dProj
}

// attentionBackward turns dx, the gradient at the residual stream after
// attention of block li, into the gradient at the block's input.
func (p *Pass) attentionBackward(li int, bw *backwardWeights, dx []float32, s *backwardScratch, grads LinearGradients) {
	m := p.m
	c := m.Config
	a := &p.batch.Record.Layers[li]
	ly := m.Layers[li]
	d, hd := c.HiddenSize, c.HeadDim
	qd, kvd := c.Heads*hd, c.KVHeads*hd
	T := len(dx) / d
	dy := m.outputNormBackward(dx, a.AttnProj, ly.AttnOutNorm, s)
	m.inputGradient(bw, s.dAttnOut, T, []*Linear{ly.O}, [][]float32{dy})
	grads.Linear(li, lora.O, ly.O, a.AttnOut, dy, s.dAttnOut, T)
	p.attentionCoreBackward(li, a, s)
	ropes := m.layerRopes(li, p.ropes)
	m.byRows(T, func(lo, hi int) {
		for t, r := range p.rows[lo:hi] {
			t += lo
			ropes[r.seq].ApplyTranspose(s.dQ[t*qd:(t+1)*qd], hd, r.pos)
			ropes[r.seq].ApplyTranspose(s.dK[t*kvd:(t+1)*kvd], hd, r.pos)
		}
	})
	dQ, dK := s.dQ, s.dK
	if c.QKNorm {
		clear(s.dQProj)
		clear(s.dKProj)
		m.rmsNormBackward(s.dQProj, s.dQ, a.QProj, ly.QNorm)
		m.rmsNormBackward(s.dKProj, s.dK, a.KProj, ly.KNorm)
		dQ, dK = s.dQProj, s.dKProj
	}
	if li > 0 {
		m.inputGradient(bw, s.dNormed, T, []*Linear{ly.Q, ly.K, ly.V}, [][]float32{dQ, dK, s.dV})
	}
	// At the first layer dNormed is left over from the layer above: the
	// adapters' paths back to their input add to it, and nothing reads it.
	grads.Linear(li, lora.Q, ly.Q, a.AttnNormed, dQ, s.dNormed, T)
	grads.Linear(li, lora.K, ly.K, a.AttnNormed, dK, s.dNormed, T)
	grads.Linear(li, lora.V, ly.V, a.AttnNormed, s.dV, s.dNormed, T)
	if li > 0 {
		m.rmsNormBackward(dx, s.dNormed, a.Input, ly.InputNorm)
	}
}

// The element-wise steps of the backward pass run on the pool too: on the
// calling thread alone they left the other threads idle for about a tenth
// of a step. Each row is computed as on one thread, so the results do not
// depend on the thread count.

// byRows runs fn over [0, rows) split into ranges of rows on the pool.
func (m *Model) byRows(rows int, fn func(lo, hi int)) {
	m.pool.Parallel(rows, 8, fn)
}

// rmsNormBackward is tensor.RMSNormBackward (adding to dx) over the rows
// of x, each of len(weight) elements, on the pool.
func (m *Model) rmsNormBackward(dx, dy, x, weight []float32) {
	d := len(weight)
	m.byRows(len(x)/d, func(lo, hi int) {
		tensor.RMSNormBackward(dx[lo*d:hi*d], dy[lo*d:hi*d], x[lo*d:hi*d], weight, m.Config.RMSNormEps)
	})
}
