package model

import "github.com/weftlabs/weft/internal/llm/tensor"

// lane is the rows [lo, hi) of a batch that one part of a forward pass
// computes. A pass whose products split their output columns over the
// pool has one lane, the whole batch; a prompt's pass gives each thread a
// lane of its own (own), whose products, norms, rotations and gatings it
// computes alone, so that the threads meet once a layer (laneLayers)
// instead of at each product. Every value of a row is computed from that
// row (and the cache) in the same order either way: the split changes no
// bits.
type lane struct {
	lo, hi int
	own    bool
	s      *laneScratch
}

// laneScratch is a lane's buffers: the quantised activations of the
// projection being computed and attention's scratch.
type laneScratch struct {
	act tensor.Q8 // int8 activations (Int8 weights)
	// acts are the activations in a block format, one per kind of
	// activation (tensor.SameActs): there are two.
	acts [2]actsOf
	attn attentionScratch
}

func (ln lane) rows() int { return ln.hi - ln.lo }

// of returns the lane's rows of s, a matrix of rows of width elements
// (nil for nil: a value not recorded).
func (ln lane) of(s []float32, width int) []float32 {
	if s == nil {
		return nil
	}
	return s[ln.lo*width : ln.hi*width]
}

// batchLane is the whole batch of rows rows as one lane, its products
// split over the pool.
func (m *Model) batchLane(rows int) lane {
	return lane{lo: 0, hi: rows, s: &m.laneScratches(1)[0]}
}

// laneScratches returns the workspace's scratch of n lanes.
func (m *Model) laneScratches(n int) []laneScratch {
	if len(m.ws.lanes) < n {
		m.ws.lanes = append(m.ws.lanes, make([]laneScratch, n-len(m.ws.lanes))...)
	}
	return m.ws.lanes[:n]
}

// minLaneRows is the fewest rows a thread's lane holds. Apart, each
// thread reads all of a layer's weights where the split by columns reads
// each once: worth it for a prompt's rows, which reuse every weight many
// times, not for a batch of decode steps, which the weights' reading
// bounds.
const minLaneRows = 16

// laneRowGrain aligns the lanes' bounds to the rows of the products'
// tiles.
const laneRowGrain = 4

// lanes splits the batch's rows into one lane per thread of about equal
// work, or returns nil when the pass is to split its products by columns:
// too few rows, one thread, or a pass with adapters (whose products split
// rows over the pool themselves) or recording.
func (m *Model) lanes(rows []rowInfo, runs []adapterRun, record bool) []lane {
	n := m.pool.Threads()
	if n < 2 || len(rows) < n*minLaneRows || len(runs) > 0 || record {
		return nil
	}
	// A row's work in a layer: every projection's multiply-adds, and its
	// attention's, which grow with its position (a multiply-add of
	// attention costs about one of the products: on the 15M shape's
	// 200-token prompt the lanes so split take the same time within 5%).
	c := m.Config
	d, qd, kvd, f := c.HiddenSize, c.Heads*c.HeadDim, c.KVHeads*c.HeadDim, c.IntermediateSize
	perRow := d*(qd+2*kvd) + qd*d + 3*d*f
	weight := func(r rowInfo) int { return perRow + 2*qd*(r.pos+1) }
	total := 0
	for _, r := range rows {
		total += weight(r)
	}
	scratch := m.laneScratches(n)
	lanes := make([]lane, 0, n)
	lo, done := 0, 0
	for t, r := range rows {
		done += weight(r)
		if len(lanes) < n-1 && (t+1)%laneRowGrain == 0 && done*n >= total*(len(lanes)+1) {
			lanes = append(lanes, lane{lo: lo, hi: t + 1, own: true, s: &scratch[len(lanes)]})
			lo = t + 1
		}
	}
	return append(lanes, lane{lo: lo, hi: len(rows), own: true, s: &scratch[len(lanes)]})
}

// laneLayers runs the batch's rows x through every decoder block, each
// thread its lane: a layer's queries, keys and values of a lane's rows
// need only those rows, and so do its attention output, o_proj and MLP
// once every row's keys and values are in the cache. So one dispatch over
// the pool a layer computes the previous layer's attention output and MLP
// and this layer's attention inputs, lane by lane, and the threads wait
// for each other only where attention needs the other lanes' keys and
// values.
func (m *Model) laneLayers(b *Batch, x []float32, rows []rowInfo, ropes []*tensor.RoPE, cache KVCache, lanes []lane) {
	a := m.buffers(len(rows), nil)
	var prev, next layerKV
	for li := 0; li <= len(m.Layers); li++ {
		if li < len(m.Layers) {
			next = cacheBlocks(b, li, cache)
		}
		m.pool.Parallel(len(lanes), 1, func(lo, hi int) {
			for _, ln := range lanes[lo:hi] {
				if li > 0 {
					ly := m.Layers[li-1]
					m.attentionOut(li-1, ly, a, x, ln, rows, prev, nil)
					m.mlpBlock(li-1, ly, a, x, ln, nil)
				}
				if li < len(m.Layers) {
					m.attentionIn(li, m.Layers[li], a, x, ln, rows, ropes, next, nil)
				}
			}
		})
		prev = next
	}
}
