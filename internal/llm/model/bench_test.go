package model

import (
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/weftlabs/weft/internal/llm/llmtest"
	"github.com/weftlabs/weft/internal/llm/lora"
	"github.com/weftlabs/weft/internal/llm/tensor"
)

// Benchmarks of whole forward passes (go test -run XXX -bench . ./internal/llm/model):
//
//   - the 15M Llama of llama2.c (dim 288, 6 layers, 6 heads, hidden 768,
//     vocab 32000, seq_len 256, classifier tied to the embedding), random
//     weights, greedy: one stream's decode against the bandwidth bound, 8
//     concurrent streams batched, a 512-token prefill against peak FLOPs;
//   - a Qwen3-0.6B-shaped model with random weights generated here (not
//     stored), decode in f32 and int8, and the two alternating step by step
//     (x_f32: int8's rate over f32's).
//
// Rates are those of the median step (tok/s) and of the best (best_tok/s).
// Shares of a bound (of_bw_bound, of_peak) pair each step with a probe of
// the machine taken just before it (see pairedSteps); x_single pairs each
// 8-stream step with a single-stream step.

const decodeContext = 256 // the 15M model's seq_len

func argmax(x []float32) int32 {
	best := 0
	for i, v := range x {
		if v > x[best] {
			best = i
		}
	}
	return int32(best)
}

// greedy runs decode steps of the sequences in one batch each, greedily,
// restarting a sequence from a one-token prompt when it reaches context.
type greedy struct {
	m       *Model
	cache   *ContiguousCache
	context int
	next    []int32
	pos     []int
	// adapters, when not nil, gives each stream's LoRA adapter (nil for
	// the base model).
	adapters []*lora.Adapter
}

func newGreedy(m *Model, streams, context int) *greedy {
	g := &greedy{m: m, cache: NewContiguousCache(m.Config, context), context: context,
		next: make([]int32, streams), pos: make([]int, streams)}
	for i := range g.next {
		g.next[i] = int32(1 + i)
	}
	return g
}

func (g *greedy) step(tb testing.TB) {
	b := Batch{Seqs: make([]Sequence, len(g.next))}
	for i := range g.next {
		if g.pos[i] == g.context {
			g.cache.Free(SeqID(i))
			g.pos[i] = 0
		}
		b.Seqs[i] = Sequence{ID: SeqID(i), Tokens: []int32{g.next[i]}, Start: g.pos[i]}
		if g.adapters != nil {
			b.Seqs[i].Adapter = g.adapters[i]
		}
	}
	out, err := g.m.Forward(&b, g.cache)
	if err != nil {
		tb.Fatal(err)
	}
	for i := range g.next {
		g.next[i] = argmax(out[i])
		g.pos[i]++
	}
}

// probeBuffer is a buffer of the given size for the streaming-read probe,
// written once so that its pages exist.
func probeBuffer(bytes int) []float32 {
	buf := make([]float32, bytes/4)
	for i := range buf {
		buf[i] = 1
	}
	return buf
}

// peakProbe returns a probe of the pool's peak FLOP rate that runs for
// about d: a probe as long as the step it is paired with is set aside by the
// machine's other work about as much as the step is.
func peakProbe(p *tensor.Pool, d time.Duration) func() float64 {
	const calibration = 1 << 14
	start := time.Now()
	p.PeakFLOPs(calibration)
	rounds := max(calibration, int(float64(calibration)*d.Seconds()/time.Since(start).Seconds()))
	return func() float64 { return p.PeakFLOPs(rounds) }
}

// stepTimes records the duration of each of a benchmark's steps.
type stepTimes []time.Duration

func (s *stepTimes) time(step func()) time.Duration {
	start := time.Now()
	step()
	d := time.Since(start)
	*s = append(*s, d)
	return d
}

func (s stepTimes) best() time.Duration { return slices.Min(s) }

// median is the middle step: on a shared machine it moves less with other
// work than the mean does.
func (s stepTimes) median() time.Duration {
	sorted := slices.Clone(s)
	slices.Sort(sorted)
	return sorted[len(sorted)/2]
}

// pairedSteps alternates a probe of the machine (its streaming-read rate, its
// peak FLOP rate) with each step, so that both see the machine in the same
// state. A step's share of the bound is its work ÷ its time ÷ the rate of the
// probe just before it, and the figure quoted is the median share: it holds
// while other work on a shared machine makes its speed drift, where a probe
// taken once does not.
type pairedSteps struct {
	steps  stepTimes
	probes []float64
	shares []float64
}

// run probes (outside the benchmark's timer), then times step, whose work
// is in the probe's unit per second (bytes, floating-point operations).
func (p *pairedSteps) run(b *testing.B, probe func() float64, work float64, step func()) {
	b.StopTimer()
	rate := probe()
	b.StartTimer()
	d := p.steps.time(step)
	p.probes = append(p.probes, rate)
	p.shares = append(p.shares, work/d.Seconds()/rate)
}

func median(xs []float64) float64 {
	sorted := slices.Clone(xs)
	slices.Sort(sorted)
	return sorted[len(sorted)/2]
}

// report adds the median probe (scaled by unit) and the median and best
// shares of the bound to the benchmark's metrics.
func (p *pairedSteps) report(b *testing.B, probeUnit string, scale float64, share string) {
	b.ReportMetric(median(p.probes)/scale, probeUnit)
	b.ReportMetric(median(p.shares), share)
	b.ReportMetric(slices.Max(p.shares), "best_"+share)
}

func BenchmarkLlama15M(b *testing.B) {
	cfg := configOf(b, llmtest.Llama15M)
	m := randomModel(b, cfg, Options{})
	probeBuf := probeBuffer(m.WeightBytes())

	b.Run("decode", func(b *testing.B) {
		g := newGreedy(m, 1, decodeContext)
		var p pairedSteps
		for b.Loop() {
			p.run(b, func() float64 { return m.Pool().ReadBandwidth(probeBuf, 1) }, float64(m.WeightBytes()), func() { g.step(b) })
		}
		b.ReportMetric(1/p.steps.median().Seconds(), "tok/s")
		b.ReportMetric(1/p.steps.best().Seconds(), "best_tok/s")
		b.ReportMetric(float64(m.WeightBytes())/1e6, "MB/tok")
		p.report(b, "probe_GB/s", 1e9, "of_bw_bound")
	})

	b.Run("decode8", func(b *testing.B) {
		// A single stream's step alternates with the 8 streams' step, so
		// that the machine's other work weighs on both alike; the ratio is
		// that of the median steps.
		single, eight := newGreedy(m, 1, decodeContext), newGreedy(m, 8, decodeContext)
		var singleSteps, eightSteps stepTimes
		for b.Loop() {
			singleSteps.time(func() { single.step(b) })
			eightSteps.time(func() { eight.step(b) })
		}
		singleTPS, eightTPS := 1/singleSteps.median().Seconds(), 8/eightSteps.median().Seconds()
		b.ReportMetric(eightTPS, "median_tok/s")
		b.ReportMetric(8/eightSteps.best().Seconds(), "best_tok/s")
		b.ReportMetric(singleTPS, "single_median_tok/s")
		b.ReportMetric(eightTPS/singleTPS, "x_single")
	})

	b.Run("prefill512", func(b *testing.B) {
		const n = 512
		prompt := randomTokens(1, n, cfg.VocabSize)
		cache := NewContiguousCache(cfg, n)
		flops := prefillFLOPs(cfg, n)
		prefill := func() {
			cache.Free(1)
			if _, err := m.Forward(&Batch{Seqs: []Sequence{{ID: 1, Tokens: prompt}}}, cache); err != nil {
				b.Fatal(err)
			}
		}
		start := time.Now()
		prefill()
		probe := peakProbe(m.Pool(), time.Since(start))
		var p pairedSteps
		for b.Loop() {
			p.run(b, probe, flops, prefill)
		}
		b.ReportMetric(n/p.steps.median().Seconds(), "tok/s")
		b.ReportMetric(n/p.steps.best().Seconds(), "best_tok/s")
		b.ReportMetric(flops/p.steps.median().Seconds()/1e9, "GFLOP/s")
		p.report(b, "peak_GFLOP/s", 1e9, "of_peak")
	})
}

// prefillFLOPs counts the multiply-adds (×2) of an n-token prompt: every
// linear layer for every token, causal attention (scores and the weighted
// sum of values), and the output projection of the last token.
func prefillFLOPs(c *Config, n int) float64 {
	d, hd := c.HiddenSize, c.HeadDim
	perToken := d*c.Heads*hd + 2*d*c.KVHeads*hd + c.Heads*hd*d + 3*d*c.IntermediateSize
	attended := n * (n + 1) / 2 // key positions summed over queries
	attention := 2 * c.Heads * hd * attended
	return 2 * (float64(c.Layers)*(float64(n*perToken)+float64(attention)) + float64(d*c.VocabSize))
}

func BenchmarkQwen3Small(b *testing.B) {
	cfg := configOf(b, llmtest.Qwen3Small)
	weights := llmtest.FastRandomWeights(llmtest.Qwen3Small)
	models := map[WeightType]*Model{}
	for _, wt := range []WeightType{F32, Int8} {
		m, err := FromWeights(cfg, weights, Options{WeightType: wt, MaxLen: 1024})
		if err != nil {
			b.Fatal(err)
		}
		defer m.Close()
		models[wt] = m
	}
	runtime.GC()
	for _, wt := range []WeightType{F32, Int8} {
		b.Run(string(wt)+"/decode", func(b *testing.B) {
			m := models[wt]
			// The probe reads a buffer as large as the weights (at most 1 GiB):
			// DRAM's rate, which swings most with the machine's other work.
			probeBuf := probeBuffer(min(m.WeightBytes(), 1<<30))
			g := newGreedy(m, 1, 1024)
			for range 2 {
				g.step(b) // touch every weight once
			}
			var p pairedSteps
			for b.Loop() {
				p.run(b, func() float64 { return m.Pool().ReadBandwidth(probeBuf, 1) }, float64(m.WeightBytes()), func() { g.step(b) })
			}
			b.ReportMetric(1/p.steps.median().Seconds(), "tok/s")
			b.ReportMetric(1/p.steps.best().Seconds(), "best_tok/s")
			b.ReportMetric(float64(m.WeightBytes())/1e6, "MB/tok")
			p.report(b, "probe_GB/s", 1e9, "of_bw_bound")
		})
	}
	b.Run("int8_vs_f32", func(b *testing.B) {
		// An f32 step alternates with an int8 step, so that the machine's
		// other work weighs on both alike; the ratio is that of the median
		// steps.
		f32, int8 := newGreedy(models[F32], 1, 1024), newGreedy(models[Int8], 1, 1024)
		var f32Steps, int8Steps stepTimes
		for b.Loop() {
			f32Steps.time(func() { f32.step(b) })
			int8Steps.time(func() { int8.step(b) })
		}
		b.ReportMetric(1/f32Steps.median().Seconds(), "f32_tok/s")
		b.ReportMetric(1/int8Steps.median().Seconds(), "int8_tok/s")
		b.ReportMetric(f32Steps.median().Seconds()/int8Steps.median().Seconds(), "x_f32")
	})
}
