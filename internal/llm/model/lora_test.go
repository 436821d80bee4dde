package model

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/weftlabs/weft/internal/llm/llmtest"
	"github.com/weftlabs/weft/internal/llm/lora"
)

// loraFixtures pairs each architecture's golden model with the adapters of
// testdata/torch/lora: <model>-ref written by generate_lora.py in the
// standard layout, <model>-weft written by this package's writer (see
// weftAdapter); both with golden logits from the PyTorch reference.
var loraFixtures = []struct {
	model string
	cfg   lora.Config
	seed  uint64
}{
	{"llama3-rope", lora.Config{}, 21},
	{"qwen2-bf16", lora.Config{Rank: 3, Alpha: 5, RSLoRA: true, Targets: []lora.Target{lora.K, lora.O, lora.Up}}, 22},
	{"qwen3-f16", lora.Config{Rank: 5, Alpha: 7, Targets: []lora.Target{lora.Q, lora.V, lora.Gate, lora.Down}}, 23},
}

func loraDir(name string) string { return filepath.Join("..", "testdata", "torch", "lora", name) }

// weftAdapter is the adapter the -weft fixture holds.
func weftAdapter(m *Model, cfg lora.Config, seed uint64) *lora.Adapter {
	return llmtest.RandomAdapter(m.LoRAShape(), cfg, seed, 0.2)
}

// runGoldenAdapter is runGolden with every sequence under adapter a.
func runGoldenAdapter(t *testing.T, m *Model, g *golden, a *lora.Adapter) float64 {
	t.Helper()
	cache := NewContiguousCache(m.Config, 64)
	out, err := m.Forward(&Batch{Seqs: []Sequence{{ID: 1, Tokens: g.Prompt, AllLogits: true, Adapter: a}}}, cache)
	if err != nil {
		t.Fatal(err)
	}
	v := m.Config.VocabSize
	worst := 0.0
	for i, want := range g.PromptLogits {
		worst = max(worst, maxDiff(t, out[0][i*v:(i+1)*v], want))
	}
	for _, step := range g.Decode {
		out, err := m.Forward(&Batch{Seqs: []Sequence{{ID: 1, Tokens: []int32{step.Token}, Start: step.Position, Adapter: a}}}, cache)
		if err != nil {
			t.Fatal(err)
		}
		worst = max(worst, maxDiff(t, out[0], step.Logits))
	}
	return worst
}

// TestAdapterLogitsMatchReference applies adapters written by the reference
// layout's writer and by ours, and compares the logits with PyTorch's for
// the same adapter; the -weft files must be what Save writes today.
func TestAdapterLogitsMatchReference(t *testing.T) {
	for _, fx := range loraFixtures {
		t.Run(fx.model, func(t *testing.T) {
			m := loadGolden(t, fx.model, Options{})
			ours := weftAdapter(m, fx.cfg, fx.seed)
			weftDir := loraDir(fx.model + "-weft")
			if os.Getenv("WEFT_WRITE_LORA_FIXTURES") == "1" {
				if err := lora.Save(weftDir, ours); err != nil {
					t.Fatal(err)
				}
			}
			fresh := t.TempDir()
			if err := lora.Save(fresh, ours); err != nil {
				t.Fatal(err)
			}
			for _, file := range []string{lora.ConfigFile, lora.WeightsFile} {
				want, err := os.ReadFile(filepath.Join(weftDir, file))
				if err != nil {
					t.Fatal(err)
				}
				got, _ := os.ReadFile(filepath.Join(fresh, file))
				if !bytes.Equal(got, want) {
					t.Fatalf("Save writes a different %s than the fixture the reference read", file)
				}
			}
			for _, name := range []string{fx.model + "-ref", fx.model + "-weft"} {
				a, err := lora.Load(loraDir(name))
				if err != nil {
					t.Fatal(err)
				}
				g := readGolden(t, filepath.Join("lora", name))
				worst := runGoldenAdapter(t, m, g, a)
				base := runGoldenAdapter(t, m, g, nil)
				t.Logf("%s: max |Δlogit| = %.3g (the base model's is %.3g)", name, worst, base)
				if worst > goldenTolerance {
					t.Fatalf("%s: max |Δlogit| = %g, tolerance %g", name, worst, goldenTolerance)
				}
				if base < 100*goldenTolerance {
					t.Fatalf("%s: the adapter hardly changes the logits (%g)", name, base)
				}
			}
		})
	}
}

// TestAdaptersBatchTogether runs sequences under two adapters and none in
// one pass: each sequence's logits are the bits of running it alone.
func TestAdaptersBatchTogether(t *testing.T) {
	m := loadGolden(t, "llama3-rope", Options{})
	first, err := lora.Load(loraDir("llama3-rope-ref"))
	if err != nil {
		t.Fatal(err)
	}
	second := weftAdapter(m, loraFixtures[0].cfg, 99)
	adapters := []*lora.Adapter{first, nil, second, second, first}
	var seqs []Sequence
	for i, a := range adapters {
		tokens := []int32{int32(3 + i), 7, int32(11 * i % 96), 5}[:2+i%3]
		seqs = append(seqs, Sequence{ID: SeqID(i + 1), Tokens: tokens, AllLogits: true, Adapter: a})
	}
	together, err := m.Forward(&Batch{Seqs: seqs}, NewContiguousCache(m.Config, 64))
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range seqs {
		alone, err := m.Forward(&Batch{Seqs: []Sequence{s}}, NewContiguousCache(m.Config, 64))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(together[i], alone[0]) {
			t.Fatalf("sequence %d (adapter %d): batched logits differ from alone by %g", i, i, maxDiff(t, together[i], alone[0]))
		}
	}
	if slices.Equal(together[0], together[1][:len(together[0])]) {
		t.Fatal("the adapter changed nothing")
	}
}

func TestForwardRejectsAnAdapterOfAnotherShape(t *testing.T) {
	m := loadGolden(t, "llama3-rope", Options{})
	other := loadGolden(t, "qwen3-f16", Options{})
	a := weftAdapter(other, lora.Config{}, 1)
	_, err := m.Forward(&Batch{Seqs: []Sequence{{ID: 1, Tokens: []int32{1}, Adapter: a}}}, NewContiguousCache(m.Config, 8))
	if err == nil {
		t.Fatal("an adapter of another model's shape was applied")
	}
}

// TestAdapterOverThreadsIsTheSerialResult runs a prompt long enough that
// the adapter's products are split over threads: the logits are the bits
// of the one-thread pass (whose arithmetic the reference goldens check).
func TestAdapterOverThreadsIsTheSerialResult(t *testing.T) {
	serial := loadGolden(t, "llama3-rope", Options{Threads: 1})
	parallel := loadGolden(t, "llama3-rope", Options{Threads: 2})
	a := weftAdapter(serial, lora.Config{}, 5)
	tokens := make([]int32, 60)
	for i := range tokens {
		tokens[i] = int32(i * 7 % serial.Config.VocabSize)
	}
	run := func(m *Model) []float32 {
		out, err := m.Forward(&Batch{Seqs: []Sequence{{ID: 1, Tokens: tokens, AllLogits: true, Adapter: a}}}, NewContiguousCache(m.Config, 64))
		if err != nil {
			t.Fatal(err)
		}
		return out[0]
	}
	if one, two := run(serial), run(parallel); !slices.Equal(one, two) {
		t.Fatalf("two threads differ from one by %g", maxDiff(t, one, two))
	}
}
