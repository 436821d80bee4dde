package kvcache

import (
	"errors"
	"math"
	"path/filepath"
	"testing"

	"github.com/weftlabs/weft/internal/llm/model"
)

// tinyModels are checkpoints of different architectures from the torch
// reference fixtures.
var tinyModels = []string{"llama3-rope", "qwen3-f16"}

func loadTiny(t *testing.T, name string) *model.Model {
	t.Helper()
	m, err := model.Load(filepath.Join("..", "testdata", "torch", name), model.Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

func newCache(t *testing.T, m *model.Model, blockSize, blocks int) *Cache {
	t.Helper()
	cfg := ForModel(m.Config, 0)
	cfg.BlockSize = blockSize
	cfg.BudgetBytes = int64(blocks) * cfg.blockBytes()
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func tokens(seed, n, vocab int) []int32 {
	out := make([]int32, n)
	x := uint32(seed*2654435761 + 1)
	for i := range out {
		x = x*1664525 + 1013904223
		out[i] = int32(x>>8) % int32(vocab)
	}
	return out
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

func forward(t *testing.T, m *model.Model, cache model.KVCache, seqs ...model.Sequence) [][]float32 {
	t.Helper()
	out, err := m.Forward(&model.Batch{Seqs: seqs}, cache)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// reference returns the logits of every prompt token, then of each decode
// token fed after it, through a fresh cache of cache's block size in which
// the sequence shares nothing. The forward pass sums attention values block
// by block, so its bits depend on the block size and on nothing else about
// the cache.
func reference(t *testing.T, m *model.Model, blockSize int, prompt, decode []int32) [][]float32 {
	return run(t, m, newCache(t, m, blockSize, 64), 1, prompt, 0, decode)
}

// run feeds prompt[start:] to seq from start, then decode one token at a
// time, returning the prompt logits from start and each step's.
func run(t *testing.T, m *model.Model, cache model.KVCache, seq model.SeqID, prompt []int32, start int, decode []int32) [][]float32 {
	t.Helper()
	out := forward(t, m, cache, model.Sequence{ID: seq, Tokens: prompt[start:], Start: start, AllLogits: true})
	logits := [][]float32{out[0]}
	for i, tok := range decode {
		out := forward(t, m, cache, model.Sequence{ID: seq, Tokens: []int32{tok}, Start: len(prompt) + i})
		logits = append(logits, out[0])
	}
	return logits
}

// tail is the prompt logits from position start: what a pass starting
// there computes.
func tail(m *model.Model, logits [][]float32, start int) [][]float32 {
	out := append([][]float32{}, logits...)
	out[0] = out[0][start*m.Config.VocabSize:]
	return out
}

func requireSame(t *testing.T, what string, got, want [][]float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d results, want %d", what, len(got), len(want))
	}
	for i := range got {
		if !sameBits(got[i], want[i]) {
			t.Fatalf("%s: logits %d differ from the reference", what, i)
		}
	}
}

// maxDiff is the largest |Δlogit| between got and want.
func maxDiff(got, want [][]float32) float64 {
	worst := math.Inf(1)
	if len(got) == len(want) {
		worst = 0
		for i := range got {
			for j := range got[i] {
				worst = max(worst, math.Abs(float64(got[i][j]-want[i][j])))
			}
		}
	}
	return worst
}

// TestMatchesContiguous checks the forward pass through the paged cache
// against model.ContiguousCache: the same bits when a block is as long as
// the contiguous capacity (the same summation order), within rounding with
// small blocks, and the same bits batched as alone.
func TestMatchesContiguous(t *testing.T) {
	for _, name := range tinyModels {
		t.Run(name, func(t *testing.T) {
			m := loadTiny(t, name)
			v := m.Config.VocabSize
			a, b := tokens(1, 21, v), tokens(2, 9, v)
			decA, decB := tokens(3, 5, v), tokens(4, 5, v)
			contiguous := func(prompt, decode []int32) [][]float32 {
				return run(t, m, model.NewContiguousCache(m.Config, 64), 1, prompt, 0, decode)
			}
			wantA, wantB := contiguous(a, decA), contiguous(b, decB)
			requireSame(t, "one 64-position block", reference(t, m, 64, a, decA), wantA)
			if d := maxDiff(reference(t, m, 4, a, decA), wantA); d > 1e-4 {
				t.Fatalf("4-position blocks: max |Δlogit| = %g", d)
			}

			for _, bs := range []int{4, 64} {
				cache := newCache(t, m, bs, 64)
				out := forward(t, m, cache,
					model.Sequence{ID: 1, Tokens: a, AllLogits: true},
					model.Sequence{ID: 2, Tokens: b, AllLogits: true})
				gotA, gotB := [][]float32{out[0]}, [][]float32{out[1]}
				for i := range decA {
					out := forward(t, m, cache,
						model.Sequence{ID: 1, Tokens: decA[i : i+1], Start: len(a) + i},
						model.Sequence{ID: 2, Tokens: decB[i : i+1], Start: len(b) + i})
					gotA, gotB = append(gotA, out[0]), append(gotB, out[1])
				}
				requireSame(t, "batched a", gotA, reference(t, m, bs, a, decA))
				requireSame(t, "batched b", gotB, reference(t, m, bs, b, decB))
			}
			requireSame(t, "b in one 64-position block", reference(t, m, 64, b, decB), wantB)
		})
	}
}

func TestPrefixSharing(t *testing.T) {
	m := loadTiny(t, "qwen3-f16")
	v := m.Config.VocabSize
	first := tokens(5, 18, v)
	second := append(append([]int32{}, first[:13]...), tokens(6, 7, v)...)
	dec := tokens(7, 3, v)
	cache := newCache(t, m, 4, 32)

	if n, err := cache.Attach(1, "s", first); err != nil || n != 0 {
		t.Fatalf("Attach on an empty cache = %d, %v", n, err)
	}
	run(t, m, cache, 1, first, 0, nil)
	if err := cache.Commit(1, first); err != nil {
		t.Fatal(err)
	}
	before := cache.Stats().InUse // ⌈18/4⌉ = 5

	n, err := cache.Attach(2, "s", second)
	if err != nil {
		t.Fatal(err)
	}
	if n != 12 { // 13 shared tokens: three full blocks
		t.Fatalf("attached %d positions, want 12", n)
	}
	if got := cache.Stats().InUse; got != before {
		t.Fatalf("attaching took blocks: %d in use, was %d", got, before)
	}
	got := run(t, m, cache, 2, second, n, dec)
	requireSame(t, "attached sequence", got, tail(m, reference(t, m, 4, second, dec), n))
	if got := cache.Stats().InUse; got != before+3 { // 20+3 positions: 6 blocks, 3 shared
		t.Fatalf("%d blocks in use, want %d", got, before+3)
	}

	// The first sequence's blocks are intact: decoding it continues the
	// reference exactly.
	firstDec := tokens(8, 2, v)
	want := reference(t, m, 4, first, firstDec)
	for i, tok := range firstDec {
		out := forward(t, m, cache, model.Sequence{ID: 1, Tokens: []int32{tok}, Start: len(first) + i})
		if !sameBits(out[0], want[i+1]) {
			t.Fatalf("first sequence's decode step %d changed after sharing", i)
		}
	}
}

// TestCopyOnWrite rewrites positions inside a shared block: the writer
// gets a copy and the other sequence keeps its values.
func TestCopyOnWrite(t *testing.T) {
	m := loadTiny(t, "llama3-rope")
	v := m.Config.VocabSize
	prompt := tokens(9, 17, v)
	cache := newCache(t, m, 4, 32)
	cache.Attach(1, "", prompt)
	run(t, m, cache, 1, prompt, 0, nil)
	if err := cache.Commit(1, prompt); err != nil {
		t.Fatal(err)
	}
	if n, _ := cache.Attach(2, "", prompt); n != 16 {
		t.Fatalf("attached %d positions, want 16", n)
	}
	// Sequence 2 goes back to position 6, inside its second (shared) block,
	// with other tokens.
	other := append(append([]int32{}, prompt[:6]...), tokens(10, 5, v)...)
	before := cache.Stats().InUse
	got := run(t, m, cache, 2, other, 6, nil)
	requireSame(t, "rewritten sequence", got, tail(m, reference(t, m, 4, other, nil), 6))
	// Positions 6-10 fall in shared blocks 1 and 2, which are copied; the
	// fourth shared block is dropped from sequence 2 but stays sequence 1's.
	if after := cache.Stats().InUse; after != before+2 {
		t.Fatalf("%d blocks in use after rewriting, want %d (two copies)", after, before+2)
	}
	dec := tokens(11, 2, v)
	want := reference(t, m, 4, prompt, dec)
	got = run(t, m, cache, 1, append(append([]int32{}, prompt...), dec[0]), len(prompt), dec[1:])
	requireSame(t, "shared sequence after the other's rewrite", got, want[1:])
}

func TestSaltsNeverShare(t *testing.T) {
	cache, err := New(Config{Layers: 2, RowLen: 8, BlockSize: 4, BudgetBytes: 16 * 2 * 2 * 4 * 8 * 4})
	if err != nil {
		t.Fatal(err)
	}
	prompt := tokens(12, 13, 50)
	cache.Attach(1, "alice", prompt)
	if err := cache.Prepare(1, 0, len(prompt)); err != nil {
		t.Fatal(err)
	}
	if err := cache.Commit(1, prompt); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		seq  model.SeqID
		salt string
		want int
	}{{2, "bob", 0}, {3, "", 0}, {4, "alice", 12}} {
		if n, _ := cache.Attach(tc.seq, tc.salt, prompt); n != tc.want {
			t.Errorf("salt %q attached %d positions, want %d", tc.salt, n, tc.want)
		}
	}
	// A different first block breaks the chain even when later blocks match.
	changed := append([]int32{prompt[0] + 1}, prompt[1:]...)
	if n, _ := cache.Attach(5, "alice", changed); n != 0 {
		t.Errorf("a different first block attached %d positions", n)
	}
	if err := cache.Commit(99, prompt); !errors.Is(err, ErrNotAttached) {
		t.Errorf("Commit of an unknown sequence: %v", err)
	}
}

func TestBudgetExhaustionTakesNothing(t *testing.T) {
	m := loadTiny(t, "llama3-rope")
	cache := newCache(t, m, 4, 5)
	v := m.Config.VocabSize
	forward(t, m, cache, model.Sequence{ID: 1, Tokens: tokens(13, 10, v)}) // 3 blocks
	before := cache.Stats()
	_, err := m.Forward(&model.Batch{Seqs: []model.Sequence{{ID: 2, Tokens: tokens(14, 9, v)}}}, cache)
	if !errors.Is(err, model.ErrCacheFull) {
		t.Fatalf("Forward past the budget: %v", err)
	}
	if err := cache.Prepare(1, 10, 11); !errors.Is(err, model.ErrCacheFull) { // 21 positions: 3 more blocks, 2 free
		t.Fatalf("Prepare past the budget: %v", err)
	}
	if got := cache.Stats(); got != before || cache.Len(1) != 10 {
		t.Fatalf("a failed Prepare changed the cache: %+v, was %+v; length %d", got, before, cache.Len(1))
	}
	forward(t, m, cache, model.Sequence{ID: 2, Tokens: tokens(14, 8, v)}) // exactly the last 2 blocks
	cache.Release(1)
	cache.Release(2)
	cache.Release(2) // twice is harmless
	if got := cache.Stats(); got.Free != got.Total || got.Total != 5 {
		t.Fatalf("after releasing everything: %+v", got)
	}
}

func TestEvictionReusesIdleBlocks(t *testing.T) {
	cache, err := New(Config{Layers: 1, RowLen: 2, BlockSize: 4, BudgetBytes: 4 * 1 * 2 * 4 * 2 * 4})
	if err != nil {
		t.Fatal(err)
	}
	prompt := tokens(15, 17, 50)
	cache.Attach(1, "", prompt)
	if err := cache.Prepare(1, 0, 16); err != nil {
		t.Fatal(err)
	}
	if err := cache.Commit(1, prompt[:16]); err != nil {
		t.Fatal(err)
	}
	cache.Release(1)
	if s := cache.Stats(); s.Idle != 4 || s.Free != 0 {
		t.Fatalf("after release: %+v, want 4 idle blocks", s)
	}
	// A new sequence needs two blocks: the pool has none free, so the two
	// least recently used idle ones, the end of the prefix, are evicted.
	if err := cache.Prepare(2, 0, 8); err != nil {
		t.Fatalf("Prepare with idle blocks to evict: %v", err)
	}
	if s := cache.Stats(); s.Idle != 2 || s.InUse != 2 {
		t.Fatalf("after eviction: %+v", s)
	}
	if n, _ := cache.Attach(3, "", prompt); n != 8 {
		t.Fatalf("attached %d positions after evicting the prefix's end, want 8", n)
	}
	// Everything is referenced now: no room.
	if err := cache.Prepare(3, 8, 1); !errors.Is(err, model.ErrCacheFull) {
		t.Fatalf("Prepare with every block referenced: %v", err)
	}
	cache.Release(2)
	cache.Release(3)
	if s := cache.Stats(); s.InUse != 0 || s.Free+s.Idle != s.Total {
		t.Fatalf("after releasing everything: %+v", s)
	}
}

// TestPrivateRewriteUnregisters rewrites positions of registered blocks
// only their sequence maps: they are written in place and can no longer be
// found under the content they held.
func TestPrivateRewriteUnregisters(t *testing.T) {
	cache, err := New(Config{Layers: 1, RowLen: 2, BlockSize: 4, BudgetBytes: 8 * 1 * 2 * 4 * 2 * 4})
	if err != nil {
		t.Fatal(err)
	}
	prompt := tokens(16, 17, 50)
	cache.Attach(1, "", prompt)
	if err := cache.Prepare(1, 0, 16); err != nil {
		t.Fatal(err)
	}
	if err := cache.Commit(1, prompt[:16]); err != nil {
		t.Fatal(err)
	}
	if err := cache.Prepare(1, 6, 3); err != nil { // rewrites blocks 1 and 2, drops block 3
		t.Fatal(err)
	}
	if s := cache.Stats(); s.InUse != 3 || s.Idle != 1 {
		t.Fatalf("after the rewrite: %+v, want 3 in use and the dropped block idle", s)
	}
	if n, _ := cache.Attach(2, "", prompt); n != 4 {
		t.Fatalf("attached %d positions, want 4: only the first block still holds the prompt", n)
	}
}
