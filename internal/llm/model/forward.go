package model

import (
	"fmt"
	"math"

	"github.com/weftlabs/weft/internal/llm/lora"
	"github.com/weftlabs/weft/internal/llm/tensor"
)

// Sequence is one sequence's share of a batch: new tokens at consecutive
// positions from Start. The KV cache holds the sequence's positions below
// Start from earlier passes (none for a fresh prompt).
type Sequence struct {
	ID     SeqID
	Tokens []int32
	Start  int
	// AllLogits asks for the logits of every token (prompt logprobs,
	// training); otherwise only the last token's are computed.
	AllLogits bool
	// Adapter, when not nil, is applied to the sequence's projections (see
	// package lora); sequences under different adapters, or none, share
	// one pass and the base model's products.
	Adapter *lora.Adapter
}

// Batch is the work of one forward pass: any mix of prompts and decode
// steps of different sequences, each appearing once.
type Batch struct {
	Seqs []Sequence
	// Record, when not nil, receives every layer's activations (see
	// Activations); the pass then allocates them instead of reusing
	// buffers. A recording pass is a training pass: adapters with dropout
	// drop their inputs' elements, with masks drawn from DropoutSeed
	// (lora.DropoutMask), which a trainer varies from pass to pass.
	Record      *Activations
	DropoutSeed uint64
}

// Activations are the intermediate values of a forward pass, row t being
// the batch's t-th token in order of Seqs: what a backward pass multiplies
// gradients by. Attention probabilities are not kept; they are recomputed
// from Q and the cached keys.
type Activations struct {
	Layers []LayerActivations
	// Hidden is the residual stream after the last layer, [tokens × hidden].
	Hidden []float32
	// Normed is the final RMSNorm of the rows whose logits were computed.
	Normed []float32
	// LogitRows are the rows of Hidden that Normed holds, in order.
	LogitRows []int
	// arena holds Hidden and every layer's values: one allocation a pass,
	// handed from a backward-ed training pass to the next (spareRecord).
	arena []float32
	used  int
}

// take returns the next n elements of the arena, not zeroed: every
// recorded value is written before it is read, as the workspace's are.
func (r *Activations) take(n int) []float32 {
	s := r.arena[r.used : r.used+n : r.used+n]
	r.used += n
	return s
}

// LayerActivations are one decoder block's values, each [tokens × width].
type LayerActivations struct {
	Input      []float32 // residual stream entering the block
	AttnNormed []float32 // input_layernorm(Input)
	Q, K, V    []float32 // projections; Q and K after q/k norm and RoPE
	// QProj and KProj are the q and k projections before the q/k norm
	// (Qwen3, when recording; nil otherwise): what the norm's derivative
	// is taken at.
	QProj, KProj []float32
	AttnOut      []float32 // attention output, before o_proj
	Mid          []float32 // residual stream after attention
	MLPNormed    []float32 // the MLP's input norm of Mid
	Gate, Up     []float32 // gate_proj and up_proj outputs, before the gating
	Act          []float32 // SwiGLU or GeGLU of Gate and Up, the input of down_proj
	// AttnProj and MLPProj are the o_proj and down_proj outputs before
	// their norms (Gemma 3's sandwich norms, when recording; nil
	// otherwise).
	AttnProj, MLPProj []float32
}

// workspace holds the buffers of a forward pass that records nothing,
// grown to the largest batch seen and reused.
type workspace struct {
	tokens int
	// lanes are each thread's scratch in a pass split by rows (lane); the
	// first also serves passes split by columns.
	lanes  []laneScratch
	layer  LayerActivations
	proj   []float32 // o_proj and down_proj outputs before the residual sum
	hidden []float32
	// loraAx, loraBT and loraTmp are adapters' scratch: x·Aᵀ, Bᵀ and
	// (x·Aᵀ)·Bᵀ.
	loraAx, loraBT, loraTmp []float32
}

// buffers returns the activations of one layer for rows tokens: the
// workspace's, or, with rec (recording), the next ones of rec's arena.
func (m *Model) buffers(rows int, rec *Activations) *LayerActivations {
	c := m.Config
	d, qd, kvd, f := c.HiddenSize, c.Heads*c.HeadDim, c.KVHeads*c.HeadDim, c.IntermediateSize
	if rec != nil {
		a := &LayerActivations{
			Input: rec.take(rows * d), AttnNormed: rec.take(rows * d), Q: rec.take(rows * qd),
			K: rec.take(rows * kvd), V: rec.take(rows * kvd), AttnOut: rec.take(rows * qd),
			Mid: rec.take(rows * d), MLPNormed: rec.take(rows * d),
			Gate: rec.take(rows * f), Up: rec.take(rows * f), Act: rec.take(rows * f),
		}
		if c.QKNorm {
			a.QProj, a.KProj = rec.take(rows*qd), rec.take(rows*kvd)
		}
		if c.SandwichNorms {
			a.AttnProj, a.MLPProj = rec.take(rows*d), rec.take(rows*d)
		}
		return a
	}
	if m.ws.tokens < rows {
		m.ws = workspace{tokens: rows, proj: make([]float32, rows*d), hidden: make([]float32, rows*d),
			lanes: m.ws.lanes, loraAx: m.ws.loraAx, loraBT: m.ws.loraBT, loraTmp: m.ws.loraTmp}
		m.ws.layer = LayerActivations{
			AttnNormed: make([]float32, rows*d), Q: make([]float32, rows*qd),
			K: make([]float32, rows*kvd), V: make([]float32, rows*kvd),
			AttnOut: make([]float32, rows*qd), MLPNormed: make([]float32, rows*d),
			Gate: make([]float32, rows*f), Up: make([]float32, rows*f),
		}
		m.ws.layer.Act = m.ws.layer.Gate // SwiGLU in place: nothing reads the gate afterwards
	}
	a := &m.ws.layer
	return &LayerActivations{
		AttnNormed: a.AttnNormed[:rows*d], Q: a.Q[:rows*qd], K: a.K[:rows*kvd], V: a.V[:rows*kvd],
		AttnOut: a.AttnOut[:rows*qd], MLPNormed: a.MLPNormed[:rows*d],
		Gate: a.Gate[:rows*f], Up: a.Up[:rows*f], Act: a.Act[:rows*f],
	}
}

// recordSize is the elements a recorded pass of rows tokens keeps: the
// residual stream after the last layer and every layer's values.
func (m *Model) recordSize(rows int) int {
	c := m.Config
	d, qd, kvd, f := c.HiddenSize, c.Heads*c.HeadDim, c.KVHeads*c.HeadDim, c.IntermediateSize
	layer := 4*d + 2*qd + 2*kvd + 3*f
	if c.QKNorm {
		layer += qd + kvd
	}
	if c.SandwichNorms {
		layer += 2 * d
	}
	return rows * (d + len(m.Layers)*layer)
}

// rowInfo places one row of the batch: its sequence and position.
type rowInfo struct {
	seq, pos int
}

// Forward runs the batch through the model, reading and extending cache,
// and returns each sequence's logits: [len(Tokens) × VocabSize] with
// AllLogits, else [VocabSize] for its last token. A sequence's logits are
// the same bits whatever else is in the batch.
func (m *Model) Forward(b *Batch, cache KVCache) ([][]float32, error) {
	if m.LMHead == nil {
		return nil, unsupported("lm_head", "an embedding model has no output projection: use Embeddings")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	x, err := m.decoderLayers(b, cache)
	if err != nil {
		return nil, err
	}
	return m.logits(b, x, b.Record != nil), nil
}

// decoderLayers runs the batch through the embedding and every decoder
// block, reading and extending cache, and returns the residual stream after
// the last block, [tokens × hidden] (the workspace's unless recording).
// m.mu is held.
func (m *Model) decoderLayers(b *Batch, cache KVCache) ([]float32, error) {
	c := m.Config
	rows, err := m.checkBatch(b)
	if err != nil {
		return nil, err
	}
	runs, err := m.adapterRuns(b)
	if err != nil {
		return nil, err
	}
	for _, s := range b.Seqs {
		if err := cache.Prepare(s.ID, s.Start, len(s.Tokens)); err != nil {
			return nil, err
		}
	}
	T, d := len(rows), c.HiddenSize
	record := b.Record != nil
	m.buffers(T, nil) // size the workspace
	x := m.ws.hidden[:T*d]
	var rec *Activations
	if record {
		rec = b.Record
		if need := m.recordSize(T); cap(rec.arena) < need {
			rec.arena = make([]float32, need)
		}
		rec.used = 0
		x = rec.take(T * d)
		rec.Layers = make([]LayerActivations, 0, len(m.Layers))
	}
	ids := make([]int32, 0, T)
	for _, s := range b.Seqs {
		ids = append(ids, s.Tokens...)
	}
	if err := m.Embed.embed(x, ids); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBatch, err)
	}
	if c.EmbedScale != 0 {
		tensor.Scale(c.EmbedScale, x)
	}
	ropes := m.ropeTables(b)
	if lanes := m.lanes(rows, runs, record); lanes != nil {
		m.laneLayers(b, x, rows, ropes, cache, lanes)
		return x, nil
	}
	whole := m.batchLane(T)
	for li, ly := range m.Layers {
		a := m.buffers(T, rec)
		if record {
			copy(a.Input, x)
		}
		kv := cacheBlocks(b, li, cache)
		m.attentionIn(li, ly, a, x, whole, rows, ropes, kv, runs)
		m.attentionOut(li, ly, a, x, whole, rows, kv, runs)
		if record {
			copy(a.Mid, x)
		}
		m.mlpBlock(li, ly, a, x, whole, runs)
		if record {
			b.Record.Layers = append(b.Record.Layers, *a)
		}
	}
	return x, nil
}

// checkBatch validates the batch and places its rows.
func (m *Model) checkBatch(b *Batch) ([]rowInfo, error) {
	var rows []rowInfo
	seen := make(map[SeqID]bool, len(b.Seqs))
	for i, s := range b.Seqs {
		switch {
		case seen[s.ID]:
			return nil, fmt.Errorf("%w: sequence %d appears twice", ErrBatch, s.ID)
		case len(s.Tokens) == 0:
			return nil, fmt.Errorf("%w: sequence %d has no tokens", ErrBatch, s.ID)
		case s.Start < 0 || s.Start+len(s.Tokens) > m.MaxLen:
			return nil, fmt.Errorf("%w: sequence %d reaches position %d, the model's length is %d", ErrBatch, s.ID, s.Start+len(s.Tokens), m.MaxLen)
		}
		seen[s.ID] = true
		for t, id := range s.Tokens {
			if id < 0 || int(id) >= m.Config.VocabSize {
				return nil, fmt.Errorf("%w: sequence %d: token id %d outside the vocabulary of %d", ErrBatch, s.ID, id, m.Config.VocabSize)
			}
			rows = append(rows, rowInfo{seq: i, pos: s.Start + t})
		}
	}
	return rows, nil
}

// ropeTables returns the RoPE table of each sequence: the model's, except
// under dynamic scaling for a sequence past max_position_embeddings, whose
// frequencies depend on the length it reaches in this pass (as in the
// reference implementation, which recomputes them when a call's positions
// grow past it).
func (m *Model) ropeTables(b *Batch) []*tensor.RoPE {
	tables := make([]*tensor.RoPE, len(b.Seqs))
	for i, s := range b.Seqs {
		end := s.Start + len(s.Tokens)
		if end <= m.rope.MaxPositions {
			tables[i] = m.rope
			continue
		}
		inv, scaling := m.Config.ropeFrequencies(end)
		tables[i] = tensor.NewRoPE(inv, end, scaling)
	}
	return tables
}

// mlpBlock adds the lane's rows of the gated MLP (SwiGLU, or Gemma 3's
// GeGLU) of x's MLP norm to x.
func (m *Model) mlpBlock(li int, ly *Layer, a *LayerActivations, x []float32, ln lane, runs []adapterRun) {
	c := m.Config
	d, f := c.HiddenSize, c.IntermediateSize
	tensor.RMSNorm(ln.of(a.MLPNormed, d), ln.of(x, d), ly.MLPNorm, c.RMSNormEps)
	m.projectLane(ln, a.MLPNormed, []*Linear{ly.Gate, ly.Up}, [][]float32{a.Gate, a.Up})
	m.adapt(runs, li, a.MLPNormed, []lora.Target{lora.Gate, lora.Up}, [][]float32{a.Gate, a.Up})
	if c.GELU {
		tensor.GeGLU(ln.of(a.Act, f), ln.of(a.Gate, f), ln.of(a.Up, f))
	} else {
		tensor.SwiGLU(ln.of(a.Act, f), ln.of(a.Gate, f), ln.of(a.Up, f))
	}
	m.projectLane(ln, a.Act, []*Linear{ly.Down}, [][]float32{m.ws.proj})
	m.adapt(runs, li, a.Act, []lora.Target{lora.Down}, [][]float32{m.ws.proj})
	m.addResidual(ln.of(x, d), ln.of(m.ws.proj, d), ly.MLPOutNorm, ln.of(a.MLPProj, d))
}

// addResidual adds a sub-layer's output proj to the residual stream x,
// after normalising it by norm when the layer has one (Gemma 3), keeping
// the output before its norm in record when recording.
func (m *Model) addResidual(x, proj, norm, record []float32) {
	if norm != nil {
		if record != nil {
			copy(record, proj)
		}
		tensor.RMSNorm(proj, proj, norm, m.Config.RMSNormEps)
	}
	tensor.Add(x, x, proj)
}

// layerRopes returns the RoPE tables of layer li for the batch's
// sequences, whose own tables (ropeTables) are ropes: a sliding-window
// layer of a model with a local RoPE base rotates by that.
func (m *Model) layerRopes(li int, ropes []*tensor.RoPE) []*tensor.RoPE {
	if !m.Config.localRope(li) {
		return ropes
	}
	local := make([]*tensor.RoPE, len(ropes))
	for i := range local {
		local[i] = m.localRope
	}
	return local
}

// softcap replaces each x by c·tanh(x/c) (attention's and the logits' tanh
// softcapping), each step rounded to float32 as the reference computes it.
func softcap(x []float32, c float64) {
	cf := float32(c)
	for i, v := range x {
		x[i] = float32(math.Tanh(float64(v/cf))) * cf
	}
}

// logits applies the final norm and the output projection to the rows
// whose logits the batch asks for, and splits them by sequence.
func (m *Model) logits(b *Batch, x []float32, record bool) [][]float32 {
	c := m.Config
	d, v := c.HiddenSize, c.VocabSize
	var picked []int
	row := 0
	for _, s := range b.Seqs {
		n := len(s.Tokens)
		if s.AllLogits {
			for t := range n {
				picked = append(picked, row+t)
			}
		} else {
			picked = append(picked, row+n-1)
		}
		row += n
	}
	normed := make([]float32, len(picked)*d)
	for i, r := range picked {
		copy(normed[i*d:(i+1)*d], x[r*d:(r+1)*d])
	}
	tensor.RMSNorm(normed, normed, m.Norm, c.RMSNormEps)
	out := make([]float32, len(picked)*v)
	m.project(normed, len(picked), []*Linear{m.LMHead}, [][]float32{out})
	if c.FinalSoftcap > 0 {
		softcap(out, c.FinalSoftcap)
	}
	if record {
		b.Record.Hidden, b.Record.Normed, b.Record.LogitRows = x, normed, picked
	}
	logits := make([][]float32, len(b.Seqs))
	at := 0
	for i, s := range b.Seqs {
		n := 1
		if s.AllLogits {
			n = len(s.Tokens)
		}
		logits[i] = out[at*v : (at+n)*v : (at+n)*v]
		at += n
	}
	return logits
}
