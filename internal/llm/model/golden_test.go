package model

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// The tiny models and golden logits of testdata/torch, written by its
// generate.py from a reference forward pass in PyTorch.
var goldenModels = []string{"llama3-rope", "llama3-rope-sharded", "llama-linear-tied", "qwen2-bf16", "qwen3-f16", "mistral-swa", "gemma3-bf16", "gemma3-softcap"}

const goldenTolerance = 1e-4

type golden struct {
	Prompt       []int32     `json:"prompt"`
	PromptLogits [][]float32 `json:"prompt_logits"`
	Decode       []struct {
		Token    int32     `json:"token"`
		Position int       `json:"position"`
		Logits   []float32 `json:"logits"`
	} `json:"decode"`
}

func goldenDir(name string) string { return filepath.Join("..", "testdata", "torch", name) }

func readGolden(t testing.TB, name string) *golden { return readGoldenFile(t, name, "golden.json") }

// readGoldenFile reads one of the golden files of model name.
func readGoldenFile(t testing.TB, name, file string) *golden {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(goldenDir(name), file))
	if err != nil {
		t.Fatal(err)
	}
	var g golden
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	return &g
}

// loadGolden loads a golden model with room for its decode steps (the
// dynamic-scaling model decodes past max_position_embeddings).
func loadGolden(t testing.TB, name string, opts Options) *Model {
	t.Helper()
	opts.MaxLen = 64
	m, err := Load(goldenDir(name), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// maxDiff is the largest absolute difference of two equally long rows.
func maxDiff(t testing.TB, got, want []float32) float64 {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d logits, want %d", len(got), len(want))
	}
	worst := 0.0
	for i := range got {
		worst = max(worst, math.Abs(float64(got[i])-float64(want[i])))
	}
	return worst
}

// runGolden feeds the golden prompt (all logits) and decode steps through m
// and returns the largest difference from the reference.
func runGolden(t *testing.T, m *Model, g *golden) float64 {
	cache := NewContiguousCache(m.Config, 64)
	out, err := m.Forward(&Batch{Seqs: []Sequence{{ID: 1, Tokens: g.Prompt, AllLogits: true}}}, cache)
	if err != nil {
		t.Fatal(err)
	}
	v := m.Config.VocabSize
	worst := 0.0
	for i, want := range g.PromptLogits {
		worst = max(worst, maxDiff(t, out[0][i*v:(i+1)*v], want))
	}
	for _, step := range g.Decode {
		out, err := m.Forward(&Batch{Seqs: []Sequence{{ID: 1, Tokens: []int32{step.Token}, Start: step.Position}}}, cache)
		if err != nil {
			t.Fatal(err)
		}
		worst = max(worst, maxDiff(t, out[0], step.Logits))
	}
	return worst
}

func TestLogitsMatchReference(t *testing.T) {
	for _, name := range goldenModels {
		t.Run(name, func(t *testing.T) {
			m := loadGolden(t, name, Options{})
			worst := runGolden(t, m, readGolden(t, name))
			t.Logf("%s: max |Δlogit| = %.3g over prompt and %d decode steps", name, worst, len(readGolden(t, name).Decode))
			if worst > goldenTolerance {
				t.Fatalf("max |Δlogit| = %g, tolerance %g", worst, goldenTolerance)
			}
		})
	}
}
