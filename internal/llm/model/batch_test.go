package model

import (
	"math"
	"path/filepath"
	"slices"
	"testing"
)

// mediumConfig is big enough that batched projections and attention run on
// several threads while a single decode step runs on one.
func mediumConfig(arch Architecture) *Config {
	return &Config{
		Architecture: arch, VocabSize: 300, HiddenSize: 64, IntermediateSize: 160,
		Layers: 2, Heads: 8, KVHeads: 2, HeadDim: 16, MaxPositions: 128,
		RMSNormEps: 1e-6, RopeTheta: 10000, PartialRotary: 1, QKNorm: arch == Qwen3,
	}
}

// aloneLogits runs each prompt alone, then its decode tokens one step at
// a time, and returns every step's logits.
func aloneLogits(t *testing.T, m *Model, prompt, decode []int32) [][]float32 {
	cache := NewContiguousCache(m.Config, 128)
	out, err := m.Forward(&Batch{Seqs: []Sequence{{ID: 7, Tokens: prompt, AllLogits: true}}}, cache)
	if err != nil {
		t.Fatal(err)
	}
	steps := [][]float32{slices.Clone(out[0])}
	for i, tok := range decode {
		out, err := m.Forward(&Batch{Seqs: []Sequence{{ID: 7, Tokens: []int32{tok}, Start: len(prompt) + i}}}, cache)
		if err != nil {
			t.Fatal(err)
		}
		steps = append(steps, slices.Clone(out[0]))
	}
	return steps
}

func sameBits(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}

// TestBatchedEqualsAlone runs three sequences whose prompts and decode steps
// overlap in shared forward passes (a prompt joining while others decode, a
// sequence leaving) and checks every logit against the same sequence run
// alone, bit for bit.
func TestBatchedEqualsAlone(t *testing.T) {
	for _, arch := range []Architecture{Llama, Qwen2, Qwen3} {
		for _, wt := range []WeightType{F32, Int8} {
			t.Run(string(arch)+"/"+string(wt), func(t *testing.T) {
				checkBatchedEqualsAlone(t, randomModel(t, mediumConfig(arch), Options{WeightType: wt, Threads: 2}))
			})
		}
	}
}

// kConfig is mediumConfig with rows of 256, so that the K-quants apply to
// every layer, and one layer.
func kConfig(arch Architecture) *Config {
	c := mediumConfig(arch)
	c.HiddenSize, c.IntermediateSize, c.Heads, c.KVHeads, c.HeadDim = 256, 256, 4, 2, 64
	c.Layers, c.VocabSize = 1, 100
	return c
}

// TestQuantizedBatchedEqualsAlone extends the determinism contract to the
// block formats and half precision: batched, a sequence's logits are the
// same bits as alone.
func TestQuantizedBatchedEqualsAlone(t *testing.T) {
	for _, wt := range []WeightType{Int8, Q8_0, Q4_0, Q4_K, Q5_K, Q6_K, F16, BF16} {
		t.Run(string(wt), func(t *testing.T) {
			checkBatchedEqualsAlone(t, randomModel(t, kConfig(Qwen2), Options{WeightType: wt, Threads: 2}))
		})
	}
}

// checkBatchedEqualsAlone runs three sequences whose prompts and decode
// steps overlap in shared forward passes (a prompt joining while others
// decode, a sequence leaving) and checks every logit against the same
// sequence run alone, bit for bit.
func checkBatchedEqualsAlone(t *testing.T, m *Model) {
	cfg := m.Config
	type seq struct {
		prompt, decode []int32
		joins          int // the step at which its prompt enters
	}
	seqs := []seq{
		{randomTokens(1, 21, cfg.VocabSize), randomTokens(2, 6, cfg.VocabSize), 0},
		{randomTokens(3, 5, cfg.VocabSize), randomTokens(4, 3, cfg.VocabSize), 0},
		{randomTokens(5, 40, cfg.VocabSize), randomTokens(6, 4, cfg.VocabSize), 2},
	}
	want := make([][][]float32, len(seqs))
	for i, s := range seqs {
		want[i] = aloneLogits(t, m, s.prompt, s.decode)
	}
	cache := NewContiguousCache(cfg, 128)
	got := make([][][]float32, len(seqs))
	for step := 0; step < 8; step++ {
		var b Batch
		var who []int
		for i, s := range seqs {
			k := step - s.joins // 0: prompt, 1..: decode steps
			if k < 0 || k > len(s.decode) {
				continue
			}
			if k == 0 {
				b.Seqs = append(b.Seqs, Sequence{ID: SeqID(i), Tokens: s.prompt, AllLogits: true})
			} else {
				b.Seqs = append(b.Seqs, Sequence{ID: SeqID(i), Tokens: s.decode[k-1 : k], Start: len(s.prompt) + k - 1})
			}
			who = append(who, i)
		}
		out, err := m.Forward(&b, cache)
		if err != nil {
			t.Fatal(err)
		}
		for j, i := range who {
			got[i] = append(got[i], slices.Clone(out[j]))
		}
	}
	for i := range seqs {
		if len(got[i]) != len(want[i]) {
			t.Fatalf("sequence %d: %d steps, want %d", i, len(got[i]), len(want[i]))
		}
		for k := range want[i] {
			if !sameBits(got[i][k], want[i][k]) {
				t.Fatalf("sequence %d step %d: batched logits differ from alone (max |Δ| %g)", i, k, maxDiff(t, got[i][k], want[i][k]))
			}
		}
	}
}

// TestChunkedPrefillEqualsWhole feeds a prompt in pieces through the cache
// and checks the logits against one pass over the whole prompt, with f32
// weights and with a K-quant.
func TestChunkedPrefillEqualsWhole(t *testing.T) {
	for _, wt := range []WeightType{F32, Q4_K} {
		t.Run(string(wt), func(t *testing.T) {
			checkChunkedPrefill(t, randomModel(t, kConfig(Qwen3), Options{WeightType: wt, Threads: 2}))
		})
	}
}

// checkChunkedPrefill prefills a prompt whole and in chunks (one of them a
// single token), in one cache and in 3-position blocks, where the blocks
// all of a chunk's rows see whole are one product for the rows.
func checkChunkedPrefill(t *testing.T, m *Model) {
	cfg := m.Config
	prompt := randomTokens(9, 50, cfg.VocabSize)
	caches := map[string]func() KVCache{
		"contiguous": func() KVCache { return NewContiguousCache(cfg, 64) },
		"paged":      func() KVCache { return newPagedCache(cfg, 3) },
	}
	for name, newCache := range caches {
		whole, err := m.Forward(&Batch{Seqs: []Sequence{{ID: 1, Tokens: prompt, AllLogits: true}}}, newCache())
		if err != nil {
			t.Fatal(err)
		}
		cache := newCache()
		v := cfg.VocabSize
		for _, cut := range [][2]int{{0, 17}, {17, 18}, {18, 50}} {
			out, err := m.Forward(&Batch{Seqs: []Sequence{{ID: 1, Tokens: prompt[cut[0]:cut[1]], Start: cut[0], AllLogits: true}}}, cache)
			if err != nil {
				t.Fatal(err)
			}
			if !sameBits(out[0], whole[0][cut[0]*v:cut[1]*v]) {
				t.Fatalf("%s cache, chunk %v: logits differ from the whole prompt's", name, cut)
			}
		}
	}
}

// TestInt8CloseToF32 compares the int8 weight type with the PyTorch
// reference of every golden model.
func TestInt8CloseToF32(t *testing.T) {
	worst := 0.0
	for _, name := range goldenModels {
		m := loadGolden(t, name, Options{WeightType: Int8})
		if m.Layers[0].Q.Q == nil || m.LMHead.Q == nil {
			t.Fatalf("%s: weights not quantised", name)
		}
		d := runGolden(t, m, readGolden(t, name))
		t.Logf("%s int8: max |Δlogit| = %.3g", name, d)
		worst = max(worst, d)
	}
	// Logits here span about ±30; int8 weights and activations in blocks of
	// 32 keep them within a few tenths (weights alone: about 0.2, with the
	// activations' rounding: about 0.4), and a wrong scale or block would be
	// off by whole units.
	if worst > 0.5 || worst < goldenTolerance {
		t.Fatalf("int8 max |Δlogit| = %g: not the error of 8-bit weights", worst)
	}
}

// TestShardedEqualsSingle checks that the sharded copy of a checkpoint
// gives the very same logits.
func TestShardedEqualsSingle(t *testing.T) {
	g := readGolden(t, "llama3-rope")
	var outs [][]float32
	for _, name := range []string{"llama3-rope", "llama3-rope-sharded"} {
		m := loadGolden(t, name, Options{})
		out, err := m.Forward(&Batch{Seqs: []Sequence{{ID: 1, Tokens: g.Prompt, AllLogits: true}}}, NewContiguousCache(m.Config, 64))
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, out[0])
	}
	if !sameBits(outs[0], outs[1]) {
		t.Fatal("sharded checkpoint gives other logits")
	}
}

// TestRecordKeepsActivations checks that recording changes no logit and
// that the recorded values are the pass's: the residual stream entering
// layer 1 is the one leaving layer 0, and the final norm is of Hidden.
func TestRecordKeepsActivations(t *testing.T) {
	cfg := mediumConfig(Llama)
	m := randomModel(t, cfg, Options{Threads: 2})
	prompt := randomTokens(3, 12, cfg.VocabSize)
	plain, err := m.Forward(&Batch{Seqs: []Sequence{{ID: 1, Tokens: prompt, AllLogits: true}}}, NewContiguousCache(cfg, 64))
	if err != nil {
		t.Fatal(err)
	}
	plainLogits := slices.Clone(plain[0])
	var rec Activations
	out, err := m.Forward(&Batch{Seqs: []Sequence{{ID: 1, Tokens: prompt, AllLogits: true}}, Record: &rec}, NewContiguousCache(cfg, 64))
	if err != nil {
		t.Fatal(err)
	}
	if !sameBits(out[0], plainLogits) {
		t.Fatal("recording changed the logits")
	}
	if len(rec.Layers) != cfg.Layers || len(rec.LogitRows) != len(prompt) {
		t.Fatalf("%d layers, %d logit rows recorded", len(rec.Layers), len(rec.LogitRows))
	}
	l0, l1 := rec.Layers[0], rec.Layers[1]
	// Input of layer 1 = Mid of layer 0 + down_proj(Act of layer 0).
	d := cfg.HiddenSize
	down := make([]float32, len(prompt)*d)
	m.project(l0.Act, len(prompt), []*Linear{m.Layers[0].Down}, [][]float32{down})
	for i := range down {
		if l1.Input[i] != l0.Mid[i]+down[i] {
			t.Fatalf("layer 1 input %d: %g, want %g", i, l1.Input[i], l0.Mid[i]+down[i])
		}
	}
	if sameBits(l0.Input, l1.Input) || sameBits(l0.Gate, l0.Act) {
		t.Fatal("recorded buffers are shared")
	}
}

// TestBalancedParts: the runs of attention units the threads take cover
// the units in order, and their work (the positions their rows see, and
// 48 for each row) differs
// by at most twice the heaviest unit's (each bound overshoots its share
// by less than one unit), for a prompt whose later units weigh
// the most, a batch of decode steps, and more threads than units.
func TestBalancedParts(t *testing.T) {
	prompt := make([]rowInfo, 200)
	for i := range prompt {
		prompt[i] = rowInfo{seq: 0, pos: i}
	}
	steps := []rowInfo{{0, 900}, {1, 3}, {2, 40}, {3, 500}}
	for _, c := range []struct {
		rows           []rowInfo
		kvHeads, parts int
	}{{prompt, 6, 2}, {prompt, 2, 3}, {steps, 1, 2}, {steps[:1], 1, 4}} {
		units := attentionUnits(c.rows, 0, c.kvHeads)
		bounds := balancedParts(units, c.rows, 48, c.parts)
		if len(bounds) != c.parts+1 || bounds[0] != 0 || bounds[c.parts] != len(units) {
			t.Fatalf("%d rows, %d parts: bounds %v of %d units", len(c.rows), c.parts, bounds, len(units))
		}
		weight := func(u attentionUnit) int { return u.rows * (c.rows[u.row].pos + u.rows + 48) }
		heaviest, lightest, most := 0, math.MaxInt, 0
		for p := range c.parts {
			if bounds[p] > bounds[p+1] {
				t.Fatalf("bounds %v out of order", bounds)
			}
			w := 0
			for _, u := range units[bounds[p]:bounds[p+1]] {
				w += weight(u)
				most = max(most, weight(u))
			}
			heaviest, lightest = max(heaviest, w), min(lightest, w)
		}
		if heaviest-lightest > 2*most {
			t.Fatalf("%d rows, %d parts: parts' work from %d to %d, twice a unit's at most %d", len(c.rows), c.parts, lightest, heaviest, 2*most)
		}
	}
}

// TestPromptDoesNotDependOnThreads runs prompts long enough that each
// thread takes rows of its own (lanes) through every golden GGUF model —
// interleaved RoPE rows, biases, q/k norms, sliding windows, Gemma 3's
// sandwich norms and block formats — on 1, 2 and 3 threads, and checks
// that every logit and the cache's next step are the same bits as on one
// thread, where the products split columns instead.
func TestPromptDoesNotDependOnThreads(t *testing.T) {
	for _, c := range ggufGoldens {
		t.Run(c.name, func(t *testing.T) {
			var want [][]float32
			for threads := 1; threads <= 3; threads++ {
				m, err := Load(filepath.Join(ggufDir(), c.name+".gguf"), Options{Threads: threads})
				if err != nil {
					t.Fatal(err)
				}
				defer m.Close()
				got := promptAndStep(t, m)
				if threads == 1 {
					want = got
					continue
				}
				for i := range want {
					if !sameBits(got[i], want[i]) {
						t.Fatalf("%d threads: logits %d differ from one thread's (max |Δ| %g)", threads, i, maxDiff(t, got[i], want[i]))
					}
				}
			}
		})
	}
}

// promptAndStep runs prompts of up to 67 tokens (as many as the model's
// positions allow), at least 100 in all, in one pass with every logit,
// then a decode step of each, and returns the logits.
func promptAndStep(t *testing.T, m *Model) [][]float32 {
	n := min(67, m.MaxLen-1)
	cache := NewContiguousCache(m.Config, n+1)
	var seqs, step []Sequence
	for rows := 0; rows < 100; {
		id := SeqID(len(seqs) + 1)
		k := n - len(seqs)%3*n/4
		seqs = append(seqs, Sequence{ID: id, Tokens: randomTokens(uint64(id), k, m.Config.VocabSize), AllLogits: true})
		step = append(step, Sequence{ID: id, Tokens: []int32{int32(id)}, Start: k})
		rows += k
	}
	var logits [][]float32
	for _, b := range []*Batch{{Seqs: seqs}, {Seqs: step}} {
		out, err := m.Forward(b, cache)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range out {
			logits = append(logits, slices.Clone(o))
		}
	}
	return logits
}
