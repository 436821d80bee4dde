package train

import (
	"github.com/weftlabs/weft/internal/llm/lora"
	"github.com/weftlabs/weft/internal/llm/model"
	"github.com/weftlabs/weft/internal/llm/tensor"
)

// Gradients are the accumulated gradients of a loss with respect to an
// adapter's factors, shaped as the adapter: Layers[l][t] holds the
// gradients of A and B of layer l's target t (nil where the adapter has no
// factors). Backward passes add to them until Zero.
type Gradients struct {
	Layers [][lora.NumTargets]*lora.Factors
}

// NewGradients returns zero gradients for the factors of a.
func NewGradients(a *lora.Adapter) *Gradients {
	g := &Gradients{Layers: make([][lora.NumTargets]*lora.Factors, len(a.Layers))}
	for l, ly := range a.Layers {
		for t, f := range ly {
			if f != nil {
				g.Layers[l][t] = lora.NewFactors(f.Rank, f.In, f.Out)
			}
		}
	}
	return g
}

// Zero sets every gradient to 0.
func (g *Gradients) Zero() {
	for _, ly := range g.Layers {
		for _, f := range ly {
			if f != nil {
				clear(f.A)
				clear(f.B)
			}
		}
	}
}

// pairs lists the adapter's factors with their gradients, in layer and
// target order, A before B: what the optimizer updates.
func pairs(a *lora.Adapter, g *Gradients) (params, grads [][]float32) {
	for l, ly := range a.Layers {
		for t, f := range ly {
			if f == nil {
				continue
			}
			gf := g.Layers[l][t]
			params = append(params, f.A, f.B)
			grads = append(grads, gf.A, gf.B)
		}
	}
	return params, grads
}

// loraBackward is the model.LinearGradients of an adapter: for a projection
// y = x·Wᵀ + s·(x·Aᵀ)·Bᵀ, with u = x·Aᵀ [rows × r] and du = s·dy·B,
//
//	dB += s·dyᵀ·u    dA += duᵀ·x    dx += du·A
//
// x·Aᵀ is recomputed from the recorded input rather than kept from the
// forward pass. Every product has the rank r as one dimension, so each
// reads its long operand (x or dy) for a few multiply-adds per value: the
// work is done a chunk of loraChunk rows at a time, every product of the
// chunk while its rows of x and dy are in the per-core cache, chunks
// shared over the model's pool. The sums over rows are kept per chunk and
// added in chunk order, so the gradients do not depend on the thread
// count.
type loraBackward struct {
	adapter *lora.Adapter
	grads   *Gradients
	pool    *tensor.Pool
	buffer  map[string][]float32
	// dropoutSeed is the seed of the pass being backward-ed.
	dropoutSeed uint64
}

// loraChunk is the rows of one chunk of an adapter's backward pass: 64
// rows of a 768-wide dy and a 288-wide x are 270 KiB.
const loraChunk = 64

// scratch returns a buffer of n values named name, reused across calls.
func (b *loraBackward) scratch(name string, n int) []float32 {
	buf := b.buffer[name]
	if cap(buf) < n {
		buf = make([]float32, n)
		b.buffer[name] = buf
	}
	return buf[:n]
}

func (b *loraBackward) Linear(layer int, t lora.Target, lin *model.Linear, x, dy, dx []float32, rows int) {
	f := b.adapter.Factors(layer, t)
	if f == nil {
		return
	}
	g := b.grads.Layers[layer][t]
	r, in, out := f.Rank, f.In, f.Out
	s := b.adapter.Scale
	x, dy, dx = x[:rows*in], dy[:rows*out], dx[:rows*in]
	var mask []float32
	if p := b.adapter.Config.Dropout; p > 0 {
		// The forward pass's mask, regenerated: the adapter saw x·mask.
		mask = b.scratch("mask", rows*in)
		lora.DropoutMask(mask, p, b.dropoutSeed, layer, t)
		dropped := b.scratch("dropped", rows*in)
		for i, v := range x {
			dropped[i] = v * mask[i]
		}
		x = dropped
	}
	bT := b.scratch("bT", r*out)
	tensor.Transpose(bT, f.B, out, r)
	chunks := (rows + loraChunk - 1) / loraChunk
	// Per chunk: uᵀ and duᵀ [r × chunk rows], du [chunk rows × r], and the
	// chunk's sums dBᵀ [r × out] and dA [r × in].
	uTs, duTs, dus := b.scratch("uT", chunks*r*loraChunk), b.scratch("duT", chunks*r*loraChunk), b.scratch("du", chunks*loraChunk*r)
	dBTs, dAs := b.scratch("dBT", chunks*r*out), b.scratch("dA", chunks*r*in)
	var dxAdapter []float32
	if mask != nil {
		dxAdapter = b.scratch("dxAdapter", rows*in)
	}
	b.pool.Parallel(chunks, 1, func(c0, c1 int) {
		for c := c0; c < c1; c++ {
			lo, hi := c*loraChunk, min(rows, (c+1)*loraChunk)
			n := hi - lo
			xc, dyc := x[lo*in:hi*in], dy[lo*out:hi*out]
			uT, duT, du := uTs[c*r*loraChunk:(c+1)*r*loraChunk], duTs[c*r*loraChunk:(c+1)*r*loraChunk], dus[c*loraChunk*r:(c+1)*loraChunk*r]
			// uᵀ = A·xᵀ and duᵀ = s·Bᵀ·dyᵀ.
			tensor.MatMulTStrided(uT, n, f.A, in, xc, in, r, n, in)
			tensor.MatMulTStrided(duT, n, bT, out, dyc, out, r, n, out)
			tensor.Scale(s, duT[:r*n])
			// dBᵀ = uᵀ·dy and dA = duᵀ·x over the chunk's rows, with the
			// row-major operands as they are (MatMul's b is k×n).
			tensor.MatMulStrided(dBTs[c*r*out:], out, uT, n, dyc, out, r, out, n)
			tensor.MatMulStrided(dAs[c*r*in:], in, duT, n, xc, in, r, in, n)
			// The adapter's path back to its input, du·A.
			tensor.Transpose(du[:n*r], duT[:r*n], r, n)
			if mask == nil {
				tensor.MatMulAddStrided(dx[lo*in:], in, du, r, f.A, in, n, in, r)
				continue
			}
			tensor.MatMulStrided(dxAdapter[lo*in:], in, du, r, f.A, in, n, in, r)
			for i := lo * in; i < hi*in; i++ {
				dx[i] += dxAdapter[i] * mask[i]
			}
		}
	})
	// The chunks' sums in chunk order; B's gradient scaled by s.
	for c := range chunks {
		dBT := dBTs[c*r*out : (c+1)*r*out]
		for o := range out {
			row := g.B[o*r : (o+1)*r]
			for k := range r {
				row[k] += s * dBT[k*out+o]
			}
		}
		tensor.Add(g.A, g.A, dAs[c*r*in:(c+1)*r*in])
	}
}
