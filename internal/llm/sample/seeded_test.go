package sample

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/seeded.golden from the current sampler")

// TestSeededTokensAreStable: seeded sequences over a 32,000-token vocabulary
// with every truncation and penalty pick the tokens recorded in
// testdata/seeded.golden, so that a change to how the sampler computes (fast
// paths, partial selection) cannot change what a seed produces.
func TestSeededTokensAreStable(t *testing.T) {
	const vocab, steps = 32000, 24
	r := rand.New(rand.NewPCG(7, 7))
	rows := make([][]float32, 8)
	for i := range rows {
		rows[i] = make([]float32, vocab)
		for j := range rows[i] {
			rows[i][j] = float32(r.NormFloat64() * 3)
		}
		rows[i][r.IntN(vocab)] += 9 // one token standing out, as in a model's rows
	}
	prompt := make([]int, 64)
	for i := range prompt {
		prompt[i] = r.IntN(vocab)
	}
	seed := int64(42)
	with := func(f func(*Params)) Params {
		p := DefaultParams()
		p.Seed, p.NoLogprobs = &seed, true
		f(&p)
		return p
	}
	cases := []struct {
		name string
		p    Params
	}{
		{"greedy", greedy()},
		{"greedy+penalties+bias", with(func(p *Params) {
			p.Temperature, p.RepetitionPenalty, p.FrequencyPenalty = 0, 1.3, 0.4
			p.LogitBias = map[int]float64{17: 12, 99: -100}
		})},
		{"temperature", with(func(p *Params) { p.Temperature = 0.7 })},
		{"top_k", with(func(p *Params) { p.TopK = 40 })},
		{"top_k=1", with(func(p *Params) { p.TopK = 1 })},
		{"top_p", with(func(p *Params) { p.TopP = 0.9 })},
		{"min_p", with(func(p *Params) { p.MinP = 0.02 })},
		{"all", with(func(p *Params) {
			p.Temperature, p.TopK, p.TopP, p.MinP = 1.2, 200, 0.8, 0.001
			p.PresencePenalty, p.RepetitionPenalty = 0.5, 1.1
			p.BadWords = [][]int{{5}, {1, 2}}
			p.MinTokens, p.StopTokenIDs = 4, []int{2}
		})},
		{"allowed", with(func(p *Params) {
			p.AllowedTokenIDs, p.NoLogprobs, p.TopLogprobs = []int{3, 1000, 20000, 31999}, false, 2
		})},
	}
	var got strings.Builder
	for _, c := range cases {
		s := newSampler(t, c.p, vocab)
		var out []int
		for i := range steps {
			ch := next(t, s, rows[i%len(rows)], Tokens{Prompt: prompt, Output: out})
			out = append(out, ch.Token)
		}
		fmt.Fprintf(&got, "%s %v\n", c.name, out)
	}
	const golden = "testdata/seeded.golden"
	if *update {
		if err := os.WriteFile(golden, []byte(got.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got.String() != string(want) {
		t.Fatalf("seeded tokens changed:\ngot:\n%s\nwant:\n%s", got.String(), want)
	}
}

// TestKthLargestEqualsSort: the quickselect finds the value a sort puts at
// len-k, on rows with many ties and on sorted and reversed rows.
func TestKthLargestEqualsSort(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	for trial := range 200 {
		n := 1 + r.IntN(300)
		vals := make([]float32, n)
		for i := range vals {
			vals[i] = float32(r.IntN(1 + trial%20)) // few distinct values: ties
		}
		switch trial % 3 {
		case 1:
			slices.Sort(vals)
		case 2:
			slices.Sort(vals)
			slices.Reverse(vals)
		}
		sorted := slices.Clone(vals)
		slices.Sort(sorted)
		k := 1 + r.IntN(n)
		if got, want := kthLargest(slices.Clone(vals), k), sorted[n-k]; got != want {
			t.Fatalf("trial %d: kthLargest(k=%d of %d) = %v, sort says %v", trial, k, n, got, want)
		}
	}
}
