package model

import (
	"math"
	"testing"

	"github.com/weftlabs/weft/internal/llm/llmtest"
	"github.com/weftlabs/weft/internal/llm/lora"
	"github.com/weftlabs/weft/internal/llm/tensor"
)

// TestBlockedLogitsMatchFloat64Reference: over a vocabulary of several
// blocks of logitsBlock entries (the last one partial), a training pass's
// log-probabilities, entropies and gradient at the final norm's input
// agree with float64 computed from serving's logits of every position,
// whether the pass keeps its exponentials or recomputes them in chunks.
func TestBlockedLogitsMatchFloat64Reference(t *testing.T) {
	cfg := configOf(t, llmtest.Dims{
		Architecture: llmtest.Llama, VocabSize: 2*logitsBlock + 77, HiddenSize: 32, IntermediateSize: 64,
		Layers: 1, Heads: 2, KVHeads: 2, HeadDim: 16, MaxPositions: 64, RMSNormEps: 1e-5, RopeTheta: 10000,
	})
	m := randomModel(t, cfg, Options{Threads: 2})
	v, d := cfg.VocabSize, cfg.HiddenSize
	const n = 12
	toks := randomTokens(3, n+1, v)
	seqs := []TrainSequence{{Tokens: toks[:n], Targets: toks[1:]}}
	out, err := m.Forward(&Batch{Seqs: []Sequence{{ID: 0, Tokens: toks[:n], AllLogits: true}}}, NewContiguousCache(cfg, n))
	if err != nil {
		t.Fatal(err)
	}
	logits := out[0]
	w := m.LMHead.W
	for _, budget := range []int{0, 5 * 4 * v} { // kept; recomputed 5 rows at a time
		pass, err := m.TrainForward(seqs, TrainOptions{LogitsBudget: budget})
		if err != nil {
			t.Fatal(err)
		}
		ent := pass.Entropies()
		dLogprobs := [][]float32{make([]float32, n)}
		dNormedRef := make([][]float64, n)
		for i := range n {
			row := logits[i*v : (i+1)*v]
			mx := math.Inf(-1)
			for _, x := range row {
				mx = math.Max(mx, float64(x))
			}
			var sum float64
			for _, x := range row {
				sum += math.Exp(float64(x) - mx)
			}
			target := int(toks[i+1])
			wantLP := float64(row[target]) - mx - math.Log(sum)
			if got := float64(pass.Logprobs[0][i]); math.Abs(got-wantLP) > 1e-4 {
				t.Fatalf("budget %d position %d: log-probability %v, want %v", budget, i, got, wantLP)
			}
			lp := -1 / float64(n) * float64(1+i%3)
			dLogprobs[0][i] = float32(lp)
			var h float64
			dNormedRef[i] = make([]float64, d)
			for j, x := range row {
				p := math.Exp(float64(x)-mx) / sum
				if p > 0 {
					h -= p * math.Log(p)
				}
				dlogit := -lp * p
				if j == target {
					dlogit += lp
				}
				for k := range d {
					dNormedRef[i][k] += dlogit * float64(w[j*d+k])
				}
			}
			if got := float64(ent[0][i]); math.Abs(got-h) > 1e-4*math.Max(1, h) {
				t.Fatalf("budget %d position %d: entropy %v, want %v", budget, i, got, h)
			}
		}
		dx := make([]float32, n*d)
		pass.logitsBackward(dLogprobs, m.backwardWeights(), dx)
		rec := pass.batch.Record
		worst, scale := 0.0, 0.0
		for i := range n {
			dn := make([]float32, d)
			for k := range d {
				dn[k] = float32(dNormedRef[i][k])
			}
			want := make([]float32, d)
			tensor.RMSNormBackward(want, dn, rec.Hidden[i*d:(i+1)*d], m.Norm, cfg.RMSNormEps)
			for k := range d {
				worst = math.Max(worst, math.Abs(float64(dx[i*d+k]-want[k])))
				scale = math.Max(scale, math.Abs(float64(want[k])))
			}
		}
		if worst > 1e-4*scale {
			t.Fatalf("budget %d: gradient at the final norm's input off by %g (largest %g)", budget, worst, scale)
		}
	}
}

// TestTrainingPassDoesNotDependOnThreads: every step of a training pass
// splits its work so that each value is summed in one order on any
// number of threads (rows split whole, blocks of the vocabulary in turn),
// so the log-probabilities, entropies and every gradient the backward
// pass hands the trainer are the same bits on 1, 2 or 3 threads.
func TestTrainingPassDoesNotDependOnThreads(t *testing.T) {
	cfg := configOf(t, llmtest.Dims{
		Architecture: llmtest.Llama, VocabSize: 5*logitsBlock + 77, HiddenSize: 32, IntermediateSize: 64,
		Layers: 2, Heads: 2, KVHeads: 2, HeadDim: 16, MaxPositions: 64, RMSNormEps: 1e-5, RopeTheta: 10000,
	})
	const n = 61 // several bands of rows on every thread count
	toks := randomTokens(5, n+1, cfg.VocabSize)
	seqs := []TrainSequence{{Tokens: toks[:n], Targets: toks[1:]}}
	var want []float32
	for threads := 1; threads <= 3; threads++ {
		m := randomModel(t, cfg, Options{Threads: threads})
		pass, err := m.TrainForward(seqs, TrainOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ent := pass.Entropies()
		dLogprobs := [][]float32{make([]float32, n)}
		for i := range n {
			dLogprobs[0][i] = -1 / float32(n) * float32(1+i%3)
		}
		rec := &gradientRecorder{}
		if err := pass.Backward(dLogprobs, rec); err != nil {
			t.Fatal(err)
		}
		got := append(append(append([]float32(nil), pass.Logprobs[0]...), ent[0]...), rec.values...)
		if threads == 1 {
			want = got
			continue
		}
		if len(got) != len(want) {
			t.Fatalf("%d threads: %d values, on one thread %d", threads, len(got), len(want))
		}
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%d threads: value %d is %v, on one thread %v", threads, i, got[i], want[i])
			}
		}
	}
}

// gradientRecorder keeps every input and output gradient a backward pass
// hands it, in order.
type gradientRecorder struct{ values []float32 }

func (r *gradientRecorder) Linear(_ int, _ lora.Target, _ *Linear, x, dy, dx []float32, _ int) {
	r.values = append(append(append(r.values, x...), dy...), dx...)
}
