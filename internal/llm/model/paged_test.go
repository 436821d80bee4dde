package model

import (
	"fmt"
	"testing"
)

// pagedCache is a KVCache of small blocks from a shared pool, allocated as
// sequences grow: the shape of a paged cache, to check that the forward
// pass reads and writes blocks at the right places.
type pagedCache struct {
	blockSize, layers, rowLen int
	seqs                      map[SeqID][][2][][]float32 // [layer] → keys, values blocks
}

func newPagedCache(c *Config, blockSize int) *pagedCache {
	return &pagedCache{blockSize: blockSize, layers: c.Layers, rowLen: c.KVHeads * c.HeadDim, seqs: map[SeqID][][2][][]float32{}}
}

func (p *pagedCache) BlockSize() int { return p.blockSize }

func (p *pagedCache) Prepare(seq SeqID, start, n int) error {
	s, ok := p.seqs[seq]
	if !ok {
		s = make([][2][][]float32, p.layers)
		p.seqs[seq] = s
	}
	if start > len(s[0][0])*p.blockSize {
		return fmt.Errorf("%w: gap", ErrBatch)
	}
	for l := range s {
		for len(s[l][0])*p.blockSize < start+n {
			s[l][0] = append(s[l][0], make([]float32, p.blockSize*p.rowLen))
			s[l][1] = append(s[l][1], make([]float32, p.blockSize*p.rowLen))
		}
	}
	return nil
}

func (p *pagedCache) Blocks(seq SeqID, layer, end int) (keys, values [][]float32) {
	s := p.seqs[seq][layer]
	return s[0], s[1]
}

// TestPagedCacheMatchesReference runs the golden prompts and decode steps
// through a cache of 3-position blocks.
func TestPagedCacheMatchesReference(t *testing.T) {
	for _, name := range goldenModels {
		m := loadGolden(t, name, Options{})
		g := readGolden(t, name)
		cache := newPagedCache(m.Config, 3)
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
		if worst > goldenTolerance {
			t.Fatalf("%s with 3-position blocks: max |Δlogit| = %g", name, worst)
		}
	}
}

// TestPagedBatchedEqualsAlone checks bit-identity under batching with a
// paged cache too: two sequences decoded together and apart.
func TestPagedBatchedEqualsAlone(t *testing.T) {
	cfg := mediumConfig(Qwen2)
	m := randomModel(t, cfg, Options{Threads: 2})
	a, b := randomTokens(11, 30, cfg.VocabSize), randomTokens(12, 9, cfg.VocabSize)
	alone := func(prompt []int32) []float32 {
		out, err := m.Forward(&Batch{Seqs: []Sequence{{ID: 1, Tokens: prompt, AllLogits: true}}}, newPagedCache(cfg, 8))
		if err != nil {
			t.Fatal(err)
		}
		return out[0]
	}
	wantA, wantB := alone(a), alone(b)
	out, err := m.Forward(&Batch{Seqs: []Sequence{{ID: 1, Tokens: a, AllLogits: true}, {ID: 2, Tokens: b, AllLogits: true}}}, newPagedCache(cfg, 8))
	if err != nil {
		t.Fatal(err)
	}
	if !sameBits(out[0], wantA) || !sameBits(out[1], wantB) {
		t.Fatal("batched logits differ from alone with a paged cache")
	}
}
