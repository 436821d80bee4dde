package model

import (
	"math"
	"testing"

	"github.com/weftlabs/weft/internal/llm/quant"
)

// quantGolden is a weight type's golden logits on a tiny model: the
// PyTorch reference over the weights quantised as the type quantises them
// and dequantised (testdata/torch/generate_quant.py), so what is left is
// the quantisation of each layer's input, which the reference does not do.
type quantGolden struct {
	model string
	wt    WeightType
	// want is the type every linear layer must hold.
	want quant.Type
	// tolerance bounds max |Δlogit| as a share of the reference logits'
	// root mean square (25 on llama-k256, whose tied embedding gives
	// logits up to 200; 1 on llama3-rope). What it covers is the
	// activations' int8 rounding, half a step of max|x|/127 per element:
	// measured 1.9–2.1% of the RMS with a scale per 32 elements on
	// llama-k256 and 2.6–3.4% with one per 256 (the K-quants), 4.7–5.6% on
	// llama3-rope, whose rows are one block of 32; F32, F16 and BF16 take
	// float32 activations and agree to float32 rounding (4–5e-6). A wrong
	// scale, level or block is off by a whole share of the logits.
	tolerance float64
}

var quantGoldens = []quantGolden{
	{"llama-k256", F32, quant.F32, 1e-5},
	{"llama-k256", Q8_0, quant.Q8_0, 0.04},
	{"llama-k256", Q4_0, quant.Q4_0, 0.04},
	{"llama-k256", Q4_K, quant.Q4_K, 0.06},
	{"llama-k256", Q5_K, quant.Q5_K, 0.06},
	{"llama-k256", Q6_K, quant.Q6_K, 0.06},
	{"llama-k256", F16, quant.F16, 1e-5},
	{"llama-k256", BF16, quant.BF16, 1e-5},
	// Rows of 32 and 64: the K-quants take llama-quantize's fallbacks.
	{"llama3-rope", Q4_K, quant.Q5_0, 0.08},
	{"llama3-rope", Q5_K, quant.Q5_1, 0.08},
	{"llama3-rope", Q6_K, quant.Q8_0, 0.08},
}

// rms is the root mean square of the golden's prompt logits.
func (g *golden) rms() float64 {
	var s float64
	n := 0
	for _, row := range g.PromptLogits {
		for _, v := range row {
			s += float64(v) * float64(v)
			n++
		}
	}
	return math.Sqrt(s / float64(n))
}

// TestQuantizedLogitsMatchReference loads each tiny model with each weight
// type and compares its logits, prompt and decode steps, with the golden
// ones, and its greedy choices with the reference's.
func TestQuantizedLogitsMatchReference(t *testing.T) {
	for _, q := range quantGoldens {
		t.Run(q.model+"/"+string(q.wt), func(t *testing.T) {
			m := loadGolden(t, q.model, Options{WeightType: q.wt, Threads: 2})
			ly := m.Layers[0]
			for _, l := range []*Linear{ly.Q, ly.K, ly.V, ly.O, ly.Gate, ly.Up, ly.Down, m.LMHead} {
				if q.want == quant.F32 && l.W == nil || q.want != quant.F32 && (l.M == nil || l.M.Type != q.want) {
					t.Fatalf("%s holds %v, want %v", l.Name, l.M, q.want)
				}
			}
			file := "golden-" + string(q.wt) + ".json"
			if q.wt == F32 {
				file = "golden.json"
			}
			g := readGoldenFile(t, q.model, file)
			worst := runGolden(t, m, g) / g.rms()
			t.Logf("max |Δlogit| = %.3g of the logits' RMS (tolerance %g)", worst, q.tolerance)
			if worst > q.tolerance {
				t.Fatalf("max |Δlogit| = %g of the logits' RMS, tolerance %g", worst, q.tolerance)
			}
			checkGreedy(t, m, g)
		})
	}
}

// checkGreedy runs the golden prompt and follows the model's own greedy
// choices, which must be the reference's decode tokens.
func checkGreedy(t *testing.T, m *Model, g *golden) {
	t.Helper()
	cache := NewContiguousCache(m.Config, 64)
	out, err := m.Forward(&Batch{Seqs: []Sequence{{ID: 1, Tokens: g.Prompt}}}, cache)
	if err != nil {
		t.Fatal(err)
	}
	for i, step := range g.Decode {
		if got := argmax(out[0]); got != step.Token {
			t.Fatalf("greedy step %d: token %d, the reference's %d", i, got, step.Token)
		}
		if out, err = m.Forward(&Batch{Seqs: []Sequence{{ID: 1, Tokens: []int32{step.Token}, Start: step.Position}}}, cache); err != nil {
			t.Fatal(err)
		}
	}
}
