package train

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/weftlabs/weft/internal/llm/llmtest"
	"github.com/weftlabs/weft/internal/llm/lora"
	"github.com/weftlabs/weft/internal/llm/model"
)

// The goldens of testdata/torch/generate_train.py: PyTorch autograd's
// gradients of LoRA factors on the tiny models of generate.py, and two
// steps of its AdamW after clip_grad_norm_.
var trainGoldens = []string{"llama3-rope", "llama-linear-tied", "qwen2-bf16", "qwen3-f16", "mistral-swa", "gemma3-bf16", "gemma3-softcap"}

// gradTolerance bounds the largest difference of a gradient tensor from
// the reference's, relative to the reference's largest magnitude.
const gradTolerance = 1e-4

type goldenFactors map[string]struct{ A, B []float32 }

type trainGolden struct {
	Rank      int
	Alpha     float64
	Sequences []struct {
		Tokens       []int32
		Targets      []int32
		Coefficients []float32
	}
	Adapter  goldenFactors
	Logprobs [][]float32
	// Entropies are those of the next-token distributions at the targets.
	Entropies [][]float32
	SFTLoss   float64 `json:"sft_loss"`
	SFT       goldenFactors
	Weighted  goldenFactors
	AdamW     struct {
		LR, Beta1, Beta2, Eps float64
		WeightDecay           float64 `json:"weight_decay"`
	}
	Steps []struct {
		MaxNorm  float64 `json:"max_norm"`
		GradNorm float64 `json:"grad_norm"`
		Factors  goldenFactors
	}
}

func torchDir(name string) string { return filepath.Join("..", "testdata", "torch", name) }

func readTrainGolden(t *testing.T, name string) *trainGolden {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(torchDir("train"), name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var g trainGolden
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	return &g
}

func loadTiny(t testing.TB, name string) *model.Model { return loadTinyOn(t, name, 2) }

// loadTinyOn loads golden name's model to run on threads threads.
func loadTinyOn(t testing.TB, name string, threads int) *model.Model {
	t.Helper()
	m, err := model.Load(torchDir(name), model.Options{MaxLen: 64, Threads: threads})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

func factorKey(layer int, target lora.Target) string { return fmt.Sprintf("%d.%s", layer, target) }

// goldenAdapter builds the golden's adapter over every projection of m.
func goldenAdapter(t *testing.T, m *model.Model, g *trainGolden) *lora.Adapter {
	t.Helper()
	shape := m.LoRAShape()
	cfg := lora.Config{Rank: g.Rank, Alpha: g.Alpha}.WithDefaults()
	a := &lora.Adapter{Config: cfg, Scale: cfg.Scale(), Layers: make([][lora.NumTargets]*lora.Factors, shape.Layers)}
	setFactors(t, a, g.Adapter)
	return a
}

// setFactors copies factors by key into a's layers (allocating them).
func setFactors(t *testing.T, a *lora.Adapter, fs goldenFactors) {
	t.Helper()
	for l := range a.Layers {
		for _, tg := range lora.AllTargets() {
			f, ok := fs[factorKey(l, tg)]
			if !ok {
				t.Fatalf("golden has no factors %s", factorKey(l, tg))
			}
			r := a.Config.Rank
			if a.Layers[l][tg] == nil {
				a.Layers[l][tg] = lora.NewFactors(r, len(f.A)/r, len(f.B)/r)
			}
			copy(a.Layers[l][tg].A, f.A)
			copy(a.Layers[l][tg].B, f.B)
		}
	}
}

// relativeError is max|got − want| / max|want|.
func relativeError(got, want []float32) float64 {
	var diff, scale float64
	for i := range want {
		diff = max(diff, math.Abs(float64(got[i])-float64(want[i])))
		scale = max(scale, math.Abs(float64(want[i])))
	}
	return diff / scale
}

// compareFactors checks every factor of got against want and returns the
// worst relative error.
func compareFactors(t *testing.T, what string, got [][lora.NumTargets]*lora.Factors, want goldenFactors, tolerance float64) float64 {
	t.Helper()
	worst := 0.0
	for l, ly := range got {
		for tg, f := range ly {
			w := want[factorKey(l, lora.Target(tg))]
			for _, part := range []struct {
				name      string
				got, want []float32
			}{{"A", f.A, w.A}, {"B", f.B, w.B}} {
				if len(part.got) != len(part.want) {
					t.Fatalf("%s %s.%s: %d values, want %d", what, factorKey(l, lora.Target(tg)), part.name, len(part.got), len(part.want))
				}
				e := relativeError(part.got, part.want)
				worst = max(worst, e)
				if e > tolerance {
					t.Errorf("%s %s.%s: relative error %.3g > %g", what, factorKey(l, lora.Target(tg)), part.name, e, tolerance)
				}
			}
		}
	}
	return worst
}

func (g *trainGolden) batch() []model.TrainSequence {
	seqs := make([]model.TrainSequence, len(g.Sequences))
	for i, s := range g.Sequences {
		seqs[i] = model.TrainSequence{Tokens: s.Tokens, Targets: s.Targets}
	}
	return seqs
}

// TestLoRAGradientsMatchReference: on each architecture, the
// log-probabilities of the targets and the gradients of every A and B —
// for the SFT cross-entropy and for a loss given by arbitrary per-position
// coefficients of the log-probabilities, as the RL loss is — agree with
// PyTorch autograd.
func TestLoRAGradientsMatchReference(t *testing.T) {
	for _, name := range trainGoldens {
		t.Run(name, func(t *testing.T) {
			g := readTrainGolden(t, name)
			m := loadTiny(t, name)
			tr, err := New(m, goldenAdapter(t, m, g), Config{})
			if err != nil {
				t.Fatal(err)
			}
			pass, err := tr.Forward(g.batch())
			if err != nil {
				t.Fatal(err)
			}
			for i, want := range g.Logprobs {
				if e := relativeError(pass.Logprobs[i], want); e > 1e-5 {
					t.Fatalf("sequence %d: log-probabilities off by %.3g relative: %v, want %v", i, e, pass.Logprobs[i], want)
				}
			}
			checkEntropies(t, pass, g)
			batch := g.batch()
			loss, dLogprobs := CrossEntropy(pass, batch, CountTargets(batch))
			if math.Abs(loss-g.SFTLoss) > 1e-5*math.Abs(g.SFTLoss) {
				t.Fatalf("cross-entropy %g, reference %g", loss, g.SFTLoss)
			}
			if err := tr.Backward(pass, dLogprobs); err != nil {
				t.Fatal(err)
			}
			if err := tr.Backward(pass, dLogprobs); !errors.Is(err, model.ErrBatch) {
				t.Fatalf("a second backward pass of one forward pass: %v, want ErrBatch", err)
			}
			// The entropies come with the forward pass: still there.
			checkEntropies(t, pass, g)
			sft := compareFactors(t, "sft gradient", tr.Gradients().Layers, g.SFT, gradTolerance)
			tr.Gradients().Zero()
			coefs := make([][]float32, len(g.Sequences))
			for i, s := range g.Sequences {
				coefs[i] = s.Coefficients
			}
			// A fresh pass: Backward may be called once per pass.
			if pass, err = tr.Forward(g.batch()); err != nil {
				t.Fatal(err)
			}
			if err := tr.Backward(pass, coefs); err != nil {
				t.Fatal(err)
			}
			weighted := compareFactors(t, "weighted gradient", tr.Gradients().Layers, g.Weighted, gradTolerance)
			t.Logf("worst relative error: sft %.2g, weighted %.2g", sft, weighted)
		})
	}
}

// TestAdamWStepsMatchReference: two optimizer steps from the reference's
// own gradients — clipped to half their global norm, then AdamW with weight
// decay and bias correction — give the factors torch.optim.AdamW gives, and
// the pre-clip norm clip_grad_norm_ returns.
func TestAdamWStepsMatchReference(t *testing.T) {
	for _, name := range trainGoldens {
		t.Run(name, func(t *testing.T) {
			g := readTrainGolden(t, name)
			m := loadTiny(t, name)
			cfg := Config{Beta1: g.AdamW.Beta1, Beta2: g.AdamW.Beta2, Eps: g.AdamW.Eps, WeightDecay: g.AdamW.WeightDecay}
			tr, err := New(m, goldenAdapter(t, m, g), cfg)
			if err != nil {
				t.Fatal(err)
			}
			for i, grads := range []goldenFactors{g.SFT, g.Weighted} {
				want := g.Steps[i]
				tr.cfg.MaxGradNorm = want.MaxNorm
				acc := &lora.Adapter{Config: tr.adapter.Config, Layers: tr.Gradients().Layers}
				setFactors(t, acc, grads)
				res, err := tr.Step(g.AdamW.LR)
				if err != nil {
					t.Fatal(err)
				}
				if e := math.Abs(res.GradNorm-want.GradNorm) / want.GradNorm; e > 1e-6 || res.Step != i+1 {
					t.Fatalf("step %d: grad norm %g, want %g (step %d)", i+1, res.GradNorm, want.GradNorm, res.Step)
				}
				// Within float32 rounding of the steps; a missing bias
				// correction, weight decay or a wrong β₂ moves the factors
				// by 1e-3 of their size or more.
				compareFactors(t, fmt.Sprintf("factors after step %d", i+1), tr.Adapter().Layers, want.Factors, 1e-5)
			}
			for _, ly := range tr.Gradients().Layers {
				for _, f := range ly {
					for _, v := range append(f.A, f.B...) {
						if v != 0 {
							t.Fatal("Step left gradients behind")
						}
					}
				}
			}
		})
	}
}

// TestAccumulatedMicroBatchesMatchReference: the batch split into one
// micro-batch per sequence, the cross-entropy and its gradients accumulated
// over them, gives the reference's loss and gradients of the whole batch.
func TestAccumulatedMicroBatchesMatchReference(t *testing.T) {
	g := readTrainGolden(t, "qwen3-f16")
	m := loadTiny(t, "qwen3-f16")
	tr, err := New(m, goldenAdapter(t, m, g), Config{})
	if err != nil {
		t.Fatal(err)
	}
	batch := g.batch()
	total, loss := CountTargets(batch), 0.0
	for i := range batch {
		micro := batch[i : i+1]
		pass, err := tr.Forward(micro)
		if err != nil {
			t.Fatal(err)
		}
		l, d := CrossEntropy(pass, micro, total)
		loss += l
		if err := tr.Backward(pass, d); err != nil {
			t.Fatal(err)
		}
	}
	if math.Abs(loss-g.SFTLoss) > 1e-5*math.Abs(g.SFTLoss) {
		t.Fatalf("accumulated cross-entropy %g, reference %g", loss, g.SFTLoss)
	}
	compareFactors(t, "accumulated gradient", tr.Gradients().Layers, g.SFT, gradTolerance)
}

// checkEntropies compares a pass's entropies with the reference's.
func checkEntropies(t *testing.T, pass *model.Pass, g *trainGolden) {
	t.Helper()
	got := pass.Entropies()
	for i, want := range g.Entropies {
		if e := relativeError(got[i], want); e > 1e-5 {
			t.Fatalf("sequence %d: entropies off by %.3g relative: %v, want %v", i, e, got[i], want)
		}
	}
}

// TestChunkedLogitsMatchReference: with a logits budget of three rows, the
// forward pass computes the log-probabilities and entropies chunk by chunk
// and the backward pass recomputes each chunk's softmax; all still agree
// with the reference.
func TestChunkedLogitsMatchReference(t *testing.T) {
	for _, name := range trainGoldens {
		t.Run(name, func(t *testing.T) {
			g := readTrainGolden(t, name)
			m := loadTiny(t, name)
			tr, err := New(m, goldenAdapter(t, m, g), Config{LogitsBudget: 3 * 4 * m.Config.VocabSize})
			if err != nil {
				t.Fatal(err)
			}
			pass, err := tr.Forward(g.batch())
			if err != nil {
				t.Fatal(err)
			}
			for i, want := range g.Logprobs {
				if e := relativeError(pass.Logprobs[i], want); e > 1e-5 {
					t.Fatalf("sequence %d: log-probabilities off by %.3g relative", i, e)
				}
			}
			checkEntropies(t, pass, g)
			coefs := make([][]float32, len(g.Sequences))
			for i, s := range g.Sequences {
				coefs[i] = s.Coefficients
			}
			if err := tr.Backward(pass, coefs); err != nil {
				t.Fatal(err)
			}
			compareFactors(t, "weighted gradient", tr.Gradients().Layers, g.Weighted, gradTolerance)
		})
	}
}

// TestRepeatedStepIsBitIdentical: a pass records into the buffers the
// previous backward-ed pass leaves (activations, exponentials), not zeroed.
// A step repeated after a step on other tokens must give the same
// log-probabilities and gradients bit for bit, as on fresh buffers: no
// value is read before the pass writes it.
func TestRepeatedStepIsBitIdentical(t *testing.T) {
	for _, name := range trainGoldens {
		t.Run(name, func(t *testing.T) {
			g := readTrainGolden(t, name)
			m := loadTiny(t, name)
			tr, err := New(m, goldenAdapter(t, m, g), Config{})
			if err != nil {
				t.Fatal(err)
			}
			batch := g.batch()
			other := make([]model.TrainSequence, len(batch))
			for i, s := range batch {
				toks := slices.Clone(s.Tokens)
				slices.Reverse(toks)
				other[i] = model.TrainSequence{Tokens: toks, Targets: s.Targets}
			}
			step := func(seqs []model.TrainSequence) ([][]float32, []float32) {
				tr.Gradients().Zero()
				pass, err := tr.Forward(seqs)
				if err != nil {
					t.Fatal(err)
				}
				_, d := CrossEntropy(pass, seqs, CountTargets(seqs))
				if err := tr.Backward(pass, d); err != nil {
					t.Fatal(err)
				}
				var grads []float32
				for _, ly := range tr.Gradients().Layers {
					for _, f := range ly {
						if f != nil {
							grads = append(append(grads, f.A...), f.B...)
						}
					}
				}
				return pass.Logprobs, grads
			}
			lp1, g1 := step(batch)
			step(other)
			lp2, g2 := step(batch)
			for i := range lp1 {
				for j := range lp1[i] {
					if math.Float32bits(lp1[i][j]) != math.Float32bits(lp2[i][j]) {
						t.Fatalf("sequence %d position %d: log-probability %v, repeated %v", i, j, lp1[i][j], lp2[i][j])
					}
				}
			}
			for i := range g1 {
				if math.Float32bits(g1[i]) != math.Float32bits(g2[i]) {
					t.Fatalf("gradient element %d: %v, repeated %v", i, g1[i], g2[i])
				}
			}
		})
	}
}

// TestStepDoesNotDependOnThreads: every product of a step splits its work
// so that each value is summed in one order whatever the thread count —
// the adapters' sums over rows in fixed chunks added in order — so a
// batch of several chunks of rows, with adapter dropout, gives the same
// log-probabilities and gradients, bit for bit, on 1, 2 or 3 threads.
func TestStepDoesNotDependOnThreads(t *testing.T) {
	for _, name := range trainGoldens {
		t.Run(name, func(t *testing.T) {
			g := readTrainGolden(t, name)
			var want []float32
			for threads := 1; threads <= 3; threads++ {
				m := loadTinyOn(t, name, threads)
				a := goldenAdapter(t, m, g)
				a.Config.Dropout = 0.1
				tr, err := New(m, a, Config{})
				if err != nil {
					t.Fatal(err)
				}
				var batch []model.TrainSequence
				for i := range 3 {
					toks := llmtest.RandomTokens(uint64(i+7), 61, m.Config.VocabSize)
					batch = append(batch, model.TrainSequence{Tokens: toks[:60], Targets: toks[1:]})
				}
				pass, err := tr.Forward(batch)
				if err != nil {
					t.Fatal(err)
				}
				_, d := CrossEntropy(pass, batch, CountTargets(batch))
				if err := tr.Backward(pass, d); err != nil {
					t.Fatal(err)
				}
				var got []float32
				for _, lp := range pass.Logprobs {
					got = append(got, lp...)
				}
				for _, ly := range tr.Gradients().Layers {
					for _, f := range ly {
						if f != nil {
							got = append(append(got, f.A...), f.B...)
						}
					}
				}
				if threads == 1 {
					want = got
					continue
				}
				for i := range want {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("%d threads: value %d is %v, on one thread %v", threads, i, got[i], want[i])
					}
				}
			}
		})
	}
}
