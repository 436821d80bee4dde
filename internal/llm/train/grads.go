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
// forward pass. The products run on the model's pool with the long
// dimension (the rows, or the layer's width) split over threads; the sums
// over rows are tensor.Pool.MatMulAdd products of uᵀ or duᵀ [r × rows] and
// the row-major x or dy, which need no transposed copy of either.
type loraBackward struct {
	adapter *lora.Adapter
	grads   *Gradients
	pool    *tensor.Pool
	buffer  map[string][]float32
	// dropoutSeed is the seed of the pass being backward-ed.
	dropoutSeed uint64
}

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
	// uᵀ = A·xᵀ and duᵀ = s·Bᵀ·dyᵀ, [r × rows].
	uT := b.scratch("uT", r*rows)
	b.pool.MatMulT(uT, f.A, x, r, rows, in)
	bT := b.scratch("bT", r*out)
	tensor.Transpose(bT, f.B, out, r)
	duT := b.scratch("duT", r*rows)
	b.pool.MatMulT(duT, bT, dy, r, rows, out)
	for i := range duT {
		duT[i] *= s
	}
	// dBᵀ = uᵀ·dy, added to B's gradient scaled by s; dA = duᵀ·x; the
	// adapter's path back to its input, du·A: products over the rows with
	// the row-major operands as they are (MatMulAdd's b is k×n).
	dBT := b.scratch("dBT", r*out)
	b.pool.MatMul(dBT, uT, dy, r, out, rows)
	for o := range out {
		row := g.B[o*r : (o+1)*r]
		for k := range r {
			row[k] += s * dBT[k*out+o]
		}
	}
	b.pool.MatMulAdd(g.A, duT, x, r, in, rows)
	du := b.scratch("du", rows*r)
	tensor.Transpose(du, duT, r, rows)
	if mask == nil {
		b.pool.MatMulAdd(dx, du, f.A, rows, in, r)
		return
	}
	dxAdapter := b.scratch("dxAdapter", rows*in)
	b.pool.MatMul(dxAdapter, du, f.A, rows, in, r)
	for i, v := range dxAdapter {
		dx[i] += v * mask[i]
	}
}
