package model

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
)

// embedGolden is a golden.json of generate_embed.py: token sequences and
// their pooled vectors by Matryoshka size ("0" the full size).
type embedGolden struct {
	Inputs  [][]int32              `json:"inputs"`
	Vectors map[string][][]float32 `json:"vectors"`
}

func readEmbedGolden(t *testing.T, name string) *embedGolden {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(goldenDir(name), "golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	var g embedGolden
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	return &g
}

func cosine(a, b []float32) float64 {
	var ab, aa, bb float64
	for i := range a {
		ab += float64(a[i]) * float64(b[i])
		aa += float64(a[i]) * float64(a[i])
		bb += float64(b[i]) * float64(b[i])
	}
	return ab / math.Sqrt(aa*bb)
}

// TestEmbeddingsMatchReference compares the pooled vectors of the tiny
// embedding models (Qwen3-Embedding's last-token pooling and normalisation
// from a bare checkpoint; a Llama with mean pooling, not normalised) with
// PyTorch's, at the full size and truncated to Matryoshka sizes, every
// sequence of a golden in one batch.
func TestEmbeddingsMatchReference(t *testing.T) {
	for _, tc := range []struct {
		name      string
		mode      PoolingMode
		normalize bool
	}{{"qwen3-embed", LastToken, true}, {"llama-mean-embed", MeanTokens, false}} {
		t.Run(tc.name, func(t *testing.T) {
			m := loadGolden(t, tc.name, Options{})
			if m.Pooling == nil || m.Pooling.Mode != tc.mode || m.Pooling.Normalize != tc.normalize {
				t.Fatalf("pooling %+v, want mode %s normalize %v", m.Pooling, tc.mode, tc.normalize)
			}
			g := readEmbedGolden(t, tc.name)
			for size, want := range g.Vectors {
				dims, _ := strconv.Atoi(size)
				got, err := m.Embeddings(g.Inputs, dims)
				if err != nil {
					t.Fatal(err)
				}
				for i := range want {
					if len(got[i]) != len(want[i]) {
						t.Fatalf("dims %d: %d elements, want %d", dims, len(got[i]), len(want[i]))
					}
					c := cosine(got[i], want[i])
					if c < 0.9999 {
						t.Errorf("dims %d, input %d: cosine %.6f with the reference", dims, i, c)
					}
					if d := maxDiff(t, got[i], want[i]); d > goldenTolerance {
						t.Errorf("dims %d, input %d: max |Δ| = %g", dims, i, d)
					}
				}
			}
		})
	}
}

// TestEmbeddingsBatchInvariant: a sequence's vector is the same bits alone
// and in a batch.
func TestEmbeddingsBatchInvariant(t *testing.T) {
	m := loadGolden(t, "qwen3-embed", Options{})
	g := readEmbedGolden(t, "qwen3-embed")
	all, err := m.Embeddings(g.Inputs, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i, in := range g.Inputs {
		one, err := m.Embeddings([][]int32{in}, 0)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(one[0], all[i]) {
			t.Errorf("input %d differs alone and batched", i)
		}
	}
}

func TestEmbeddingsRefusals(t *testing.T) {
	m := loadGolden(t, "qwen3-embed", Options{})
	for _, dims := range []int{-1, 12, 33} {
		if _, err := m.Embeddings([][]int32{{1, 2}}, dims); !errors.Is(err, ErrDimensions) {
			t.Errorf("dims %d: %v, want ErrDimensions", dims, err)
		}
	}
	if _, err := m.Embeddings([][]int32{{1}, {}}, 0); !errors.Is(err, ErrBatch) {
		t.Errorf("empty sequence: %v, want ErrBatch", err)
	}
	untied := loadGolden(t, "llama-mean-embed", Options{})
	if untied.LMHead != nil {
		t.Fatal("an untied embedding model has an output projection")
	}
	if _, err := untied.Forward(&Batch{Seqs: []Sequence{{ID: 1, Tokens: []int32{1}}}}, NewContiguousCache(untied.Config, 4)); !errors.Is(err, ErrUnsupported) {
		t.Errorf("Forward on an embedding model without lm_head: %v, want ErrUnsupported", err)
	}
	plain := loadGolden(t, "llama3-rope", Options{})
	if _, err := plain.Embeddings([][]int32{{1}}, 0); !errors.Is(err, ErrUnsupported) {
		t.Errorf("Embeddings on a generative model: %v, want ErrUnsupported", err)
	}
}
