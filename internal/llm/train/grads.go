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
// Each product runs on the model's pool with the long dimension (rows, or
// the layer's width) as its output columns, so all threads share it; the
// rank-r side is the short one. x·Aᵀ is recomputed from the recorded input
// rather than kept from the forward pass.
type loraBackward struct {
	adapter *lora.Adapter
	grads   *Gradients
	pool    *tensor.Pool

	// xT is the transpose of the last input seen: q, k and v (and gate and
	// up) share one.
	xT     []float32
	xOf    *float32
	buffer map[string][]float32
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
	if b.xOf != &x[0] || len(b.xT) != rows*in {
		b.xT = b.scratch("xT", rows*in)
		tensor.Transpose(b.xT, x[:rows*in], rows, in)
		b.xOf = &x[0]
	}
	uT := b.scratch("uT", r*rows)
	b.pool.MatMulT(uT, f.A, x, r, rows, in)
	bT := b.scratch("bT", r*out)
	tensor.Transpose(bT, f.B, out, r)
	duT := b.scratch("duT", r*rows)
	b.pool.MatMulT(duT, bT, dy, r, rows, out)
	scale(duT, s)
	// dB += s·dyᵀ·u, computed as its transpose uᵀ·dy = uT·(dyT)ᵀ.
	dyT := b.scratch("dyT", out*rows)
	tensor.Transpose(dyT, dy[:rows*out], rows, out)
	dBT := b.scratch("dBT", r*out)
	b.pool.MatMulT(dBT, uT, dyT, r, out, rows)
	for o := range out {
		row := g.B[o*r : (o+1)*r]
		for k := range r {
			row[k] += s * dBT[k*out+o]
		}
	}
	// dA += duᵀ·x = duT·(xT)ᵀ.
	dA := b.scratch("dA", r*in)
	b.pool.MatMulT(dA, duT, b.xT, r, in, rows)
	tensor.Add(g.A, g.A, dA)
	// dx += du·A = du·(Aᵀ)ᵀ.
	du := b.scratch("du", rows*r)
	tensor.Transpose(du, duT, r, rows)
	aT := b.scratch("aT", in*r)
	tensor.Transpose(aT, f.A, r, in)
	tmp := b.scratch("dxAdd", rows*in)
	b.pool.MatMulT(tmp, du, aT, rows, in, r)
	tensor.Add(dx[:rows*in], dx[:rows*in], tmp)
}

func scale(x []float32, s float32) {
	for i := range x {
		x[i] *= s
	}
}
