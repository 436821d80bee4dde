package model

import (
	"github.com/weftlabs/weft/internal/llm/tensor"
)

// causalBlock is the number of rows (queries, or keys) attention's
// backward pass multiplies at a time, each block only against the
// positions it sees (or that see it): half the work of the full square.
const causalBlock = 32

// attentionGradScratch is one thread's buffers for the backward pass of one
// sequence's attention: [n × n] matrices of probabilities and their
// gradients, [headDim × n] transposes.
type attentionGradScratch struct {
	probs, dProbs    []float32
	qT, dOutT        []float32
	dKHeadT, dVHeadT []float32
	slope            []float32 // a row's softcap derivatives
}

func (s *attentionGradScratch) size(n, hd int) {
	if cap(s.probs) < n*n {
		s.probs, s.dProbs = make([]float32, n*n), make([]float32, n*n)
		s.slope = make([]float32, n)
	}
	if cap(s.qT) < n*hd {
		s.qT, s.dOutT = make([]float32, n*hd), make([]float32, n*hd)
		s.dKHeadT, s.dVHeadT = make([]float32, n*hd), make([]float32, n*hd)
	}
	s.probs, s.dProbs = s.probs[:n*n], s.dProbs[:n*n]
	s.qT, s.dOutT = s.qT[:n*hd], s.dOutT[:n*hd]
	s.dKHeadT, s.dVHeadT = s.dKHeadT[:n*hd], s.dVHeadT[:n*hd]
}

// transposeStrided sets dst [cols × rows] to the transpose of the rows×cols
// block of src whose row i starts at src[i*ld].
func transposeStrided(dst, src []float32, ld, rows, cols int) {
	for i := range rows {
		row := src[i*ld : i*ld+cols]
		for j, v := range row {
			dst[j*rows+i] = v
		}
	}
}

// attentionCoreBackward sets s.dQ, s.dK and s.dV (the gradients at the
// queries and keys after RoPE and at the values) from s.dAttnOut, the
// gradient at the attention output. Each sequence of the batch starts at
// position 0, so its keys and values are the recorded rows. The
// probabilities are recomputed as the forward pass computed them: P =
// softmax(Q·Kᵀ·scale) over positions up to each row's. Then, per query head
// h of key-value head g:
//
//	dV_g += Pᵀ·dO_h    dP = dO_h·V_gᵀ    dS = P ∘ (dP − rowsum(dP ∘ P))·scale
//	dQ_h  = dS·K_g     dK_g += dSᵀ·Q_h
//
// The work is split over (sequence, key-value head) pairs, which write
// disjoint parts of the gradients.
func (p *Pass) attentionCoreBackward(li int, a *LayerActivations, s *backwardScratch) {
	c := p.m.Config
	hd := c.HeadDim
	qd, kvd := c.Heads*hd, c.KVHeads*hd
	group := c.Heads / c.KVHeads
	scale := c.attentionScale()
	type unit struct{ first, n, g int }
	var units []unit
	first := 0
	for _, seq := range p.batch.Seqs {
		for g := range c.KVHeads {
			units = append(units, unit{first, len(seq.Tokens), g})
		}
		first += len(seq.Tokens)
	}
	work := func(lo, hi int) {
		var sc attentionGradScratch
		for _, u := range units[lo:hi] {
			n := u.n
			sc.size(n, hd)
			K := a.K[u.first*kvd+u.g*hd:]
			V := a.V[u.first*kvd+u.g*hd:]
			clear(sc.dKHeadT)
			clear(sc.dVHeadT)
			for h := u.g * group; h < (u.g+1)*group; h++ {
				Q := a.Q[u.first*qd+h*hd:]
				dO := s.dAttnOut[u.first*qd+h*hd:]
				P, dP := sc.probs, sc.dProbs
				// Scores and their gradients only where a query sees a
				// key: the rows of a block against the keys up to its
				// last row.
				for r0 := 0; r0 < n; r0 += causalBlock {
					r1 := min(r0+causalBlock, n)
					tensor.MatMulTStrided(P[r0*n:], n, Q[r0*qd:], qd, K, kvd, r1-r0, r1, hd)
					tensor.MatMulTStrided(dP[r0*n:], n, dO[r0*qd:], qd, V, kvd, r1-r0, r1, hd)
				}
				for r := range n {
					// Row r sees positions [lo, r]: a sliding window
					// hides those before lo.
					lo := c.windowStart(li, r)
					row := P[r*n+lo : r*n+r+1]
					tensor.Scale(scale, row)
					if c.AttnSoftcap > 0 {
						// The cap's derivative 1 − (s/c)² at each capped
						// score s, taken before the softmax replaces them.
						softcap(row, c.AttnSoftcap)
						capSlope(sc.slope[:len(row)], row, c.AttnSoftcap)
					}
					tensor.FastSoftmax(row)
					clear(P[r*n : r*n+lo])
					clear(P[r*n+r+1 : (r+1)*n])
					dRow := dP[r*n+lo : r*n+r+1]
					dot := tensor.Dot(row, dRow)
					for j, q := range row {
						dRow[j] = q * (dRow[j] - dot) * scale
					}
					if c.AttnSoftcap > 0 {
						for j := range dRow {
							dRow[j] *= sc.slope[j]
						}
					}
					clear(dP[r*n : r*n+lo])
					clear(dP[r*n+r+1 : (r+1)*n])
				}
				dS := dP
				// dQ_h = dS·K_g, a block of rows against the keys it sees,
				// the keys' rows read where they are.
				for r0 := 0; r0 < n; r0 += causalBlock {
					r1 := min(r0+causalBlock, n)
					tensor.MatMulStrided(s.dQ[(u.first+r0)*qd+h*hd:], qd, dS[r0*n:], n, K, kvd, r1-r0, hd, r1)
				}
				// dK_gᵀ += Q_hᵀ·dS, dV_gᵀ += dO_hᵀ·P: the transposes of
				// the key and value gradients, so that dS and P are read
				// as they are; a block of keys takes the queries that see
				// them (rows from its first).
				transposeStrided(sc.qT, Q, qd, n, hd)
				transposeStrided(sc.dOutT, dO, qd, n, hd)
				for j0 := 0; j0 < n; j0 += causalBlock {
					j1 := min(j0+causalBlock, n)
					tensor.MatMulAddStrided(sc.dKHeadT[j0:], n, sc.qT[j0:], n, dS[j0*n+j0:], n, hd, j1-j0, n-j0)
					tensor.MatMulAddStrided(sc.dVHeadT[j0:], n, sc.dOutT[j0:], n, P[j0*n+j0:], n, hd, j1-j0, n-j0)
				}
			}
			for r := range n {
				dk := s.dK[(u.first+r)*kvd+u.g*hd : (u.first+r)*kvd+(u.g+1)*hd]
				dv := s.dV[(u.first+r)*kvd+u.g*hd : (u.first+r)*kvd+(u.g+1)*hd]
				for c := range hd {
					dk[c], dv[c] = sc.dKHeadT[c*n+r], sc.dVHeadT[c*n+r]
				}
			}
		}
	}
	p.m.pool.Parallel(len(units), 1, work)
}

// capSlope sets slope[j] to the derivative of c·tanh(x/c) at the x whose
// capped value is capped[j]: 1 − (capped/c)².
func capSlope(slope, capped []float32, c float64) {
	cf := float32(c)
	for j, v := range capped {
		t := v / cf
		slope[j] = 1 - t*t
	}
}
