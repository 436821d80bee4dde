package model

import (
	"fmt"

	"github.com/weftlabs/weft/internal/llm/lora"
)

// LoRAShape is the shape of an adapter of this model: its layers and each
// projection's input and output widths.
func (m *Model) LoRAShape() lora.Shape {
	c := m.Config
	d, qd, kvd, f := c.HiddenSize, c.Heads*c.HeadDim, c.KVHeads*c.HeadDim, c.IntermediateSize
	return lora.Shape{
		Layers: c.Layers,
		In:     [lora.NumTargets]int{lora.Q: d, lora.K: d, lora.V: d, lora.O: qd, lora.Gate: d, lora.Up: d, lora.Down: f},
		Out:    [lora.NumTargets]int{lora.Q: qd, lora.K: kvd, lora.V: kvd, lora.O: d, lora.Gate: f, lora.Up: f, lora.Down: d},
	}
}

// adapterRun is a run of consecutive batch rows [lo, hi) under one adapter.
type adapterRun struct {
	adapter *lora.Adapter
	lo, hi  int
	// dropout is the adapter's dropout probability in a training pass
	// (0 when serving), its masks drawn from dropoutSeed.
	dropout     float64
	dropoutSeed uint64
}

// adapterRuns groups the batch's rows by adapter: consecutive sequences
// sharing one form one run, and rows of the base model none, so a batch
// without adapters costs nothing more.
func (m *Model) adapterRuns(b *Batch) ([]adapterRun, error) {
	var runs []adapterRun
	row := 0
	checked := map[*lora.Adapter]bool{}
	for _, s := range b.Seqs {
		lo := row
		row += len(s.Tokens)
		if s.Adapter == nil {
			continue
		}
		if !checked[s.Adapter] {
			if err := s.Adapter.Fits(m.LoRAShape()); err != nil {
				return nil, fmt.Errorf("%w: sequence %d: %v", ErrBatch, s.ID, err)
			}
			checked[s.Adapter] = true
		}
		if n := len(runs); n > 0 && runs[n-1].adapter == s.Adapter && runs[n-1].hi == lo {
			runs[n-1].hi = row
			continue
		}
		run := adapterRun{adapter: s.Adapter, lo: lo, hi: row}
		if b.Record != nil {
			run.dropout, run.dropoutSeed = s.Adapter.Config.Dropout, b.DropoutSeed
		}
		runs = append(runs, run)
	}
	return runs, nil
}

// adapt adds, to each output of layer li's projections targets (computed
// from x, [rows × in]), the deltas of the adapters of runs on their rows.
// This is the one place adapters enter the forward pass; a backward pass
// recomputes x·Aᵀ with lora.Factors.Down from the recorded inputs (the
// attention and MLP norms, AttnOut, Act).
func (m *Model) adapt(runs []adapterRun, li int, x []float32, targets []lora.Target, outs [][]float32) {
	for _, r := range runs {
		n := r.hi - r.lo
		for i, t := range targets {
			f := r.adapter.Factors(li, t)
			if f == nil {
				continue
			}
			ax, bT, tmp := m.loraScratch(n*f.Rank, f.Rank*f.Out, n*f.Out)
			f.TransposeB(bT)
			y, in := outs[i][r.lo*f.Out:r.hi*f.Out], x[r.lo*f.In:r.hi*f.In]
			if r.dropout > 0 {
				// Training drops elements of the adapter's input (and
				// only there): the rows of the run, masked.
				dropped := make([]float32, len(in))
				lora.DropoutMask(dropped, r.dropout, r.dropoutSeed, li, t)
				for j, v := range in {
					dropped[j] *= v
				}
				in = dropped
			}
			band := func(lo, hi int) {
				f.Apply(y[lo*f.Out:hi*f.Out], in[lo*f.In:hi*f.In], hi-lo, r.adapter.Scale, ax[lo*f.Rank:hi*f.Rank], bT, tmp[lo*f.Out:hi*f.Out])
			}
			// Rows are independent: bands of them go to the threads once
			// there is enough work (prompts, training), one row's values
			// not depending on the split.
			if n*f.Rank*(f.In+f.Out) < 1<<15 {
				band(0, n)
			} else {
				m.pool.Parallel(n, 4, band)
			}
		}
	}
}

// loraScratch returns the workspace's adapter buffers, grown to hold at
// least ax, bT and tmp values.
func (m *Model) loraScratch(ax, bT, tmp int) ([]float32, []float32, []float32) {
	grow := func(buf *[]float32, n int) []float32 {
		if len(*buf) < n {
			*buf = make([]float32, n)
		}
		return (*buf)[:n]
	}
	return grow(&m.ws.loraAx, ax), grow(&m.ws.loraBT, bT), grow(&m.ws.loraTmp, tmp)
}
