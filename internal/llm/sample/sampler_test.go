package sample

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func newSampler(t *testing.T, p Params, vocab int) *Sampler {
	t.Helper()
	s, err := New(p, vocab)
	if err != nil {
		t.Fatalf("New(%+v): %v", p, err)
	}
	return s
}

func greedy() Params { p := DefaultParams(); p.Temperature = 0; return p }

func seeded(seed int64) Params { p := DefaultParams(); p.Seed = &seed; return p }

func next(t *testing.T, s *Sampler, logits []float32, h Tokens) Choice {
	t.Helper()
	c, err := s.Next(logits, h)
	if err != nil {
		t.Fatalf("Next: %v", err)
	}
	return c
}

// logs returns the natural logarithms of probs: logits whose softmax is probs.
func logs(probs ...float64) []float32 {
	out := make([]float32, len(probs))
	for i, p := range probs {
		out[i] = float32(math.Log(p))
	}
	return out
}

func TestGreedyPicksLowestIDOnTies(t *testing.T) {
	s := newSampler(t, greedy(), 5)
	if got := next(t, s, []float32{1, 3, 2, 3, -1}, Tokens{}).Token; got != 1 {
		t.Fatalf("greedy token = %d, want 1 (lowest id of the tied maximum)", got)
	}
}

func TestTinyTemperatureIsRaisedNotGreedy(t *testing.T) {
	p := seeded(7)
	p.Temperature = 1e-6 // raised to 0.01: logits/0.01 = [0, 0.1], both likely
	s := newSampler(t, p, 2)
	seen := map[int]bool{}
	for range 200 {
		seen[next(t, s, []float32{0, 0.001}, Tokens{}).Token] = true
	}
	if !seen[0] || !seen[1] {
		t.Fatalf("temperature 1e-6 sampled %v, want both tokens (raised to 0.01, not greedy)", seen)
	}
}

func TestLogprobsAreRawLogSoftmax(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	logits := make([]float32, 1000)
	for i := range logits {
		logits[i] = float32(r.NormFloat64() * 4)
	}
	logits[17], logits[400] = 30, 30 // a tie at the top
	var m float64 = 30
	var z float64
	for _, v := range logits {
		z += math.Exp(float64(v) - m)
	}
	want := func(id int) float64 { return float64(logits[id]) - m - math.Log(z) }
	// Within 1e-6 plus one float32 ulp of the value: below −8 a float32
	// cannot hold 1e-6.
	near := func(got float32, want float64) bool {
		return math.Abs(float64(got)-want) <= 1e-6+math.Abs(want)*0x1p-23
	}

	p := seeded(3)
	p.Temperature = 0.7
	p.RepetitionPenalty = 1.3
	p.PresencePenalty = 1
	p.LogitBias = map[int]float64{5: 40} // token 5 is chosen, but reported raw
	p.TopLogprobs = 5
	s := newSampler(t, p, len(logits))
	orig := slices.Clone(logits)
	c := next(t, s, logits, Tokens{Prompt: []int{17}, Output: []int{400}})
	if !slices.Equal(orig, logits) {
		t.Fatal("Next modified the logits row")
	}
	if c.Token != 5 {
		t.Fatalf("token = %d, want 5 (bias 40)", c.Token)
	}
	if !near(c.Logprob, want(5)) {
		t.Fatalf("chosen logprob %v, want %v (raw log_softmax)", c.Logprob, want(5))
	}
	ranked := make([]int, len(logits))
	for i := range ranked {
		ranked[i] = i
	}
	slices.SortStableFunc(ranked, func(a, b int) int {
		switch {
		case want(a) > want(b):
			return -1
		case want(a) < want(b):
			return 1
		}
		return 0
	})
	if len(c.Top) != 5 {
		t.Fatalf("len(Top) = %d, want 5", len(c.Top))
	}
	for i, tl := range c.Top {
		if tl.Token != ranked[i] {
			t.Fatalf("Top[%d].Token = %d, want %d (descending, ties by lower id)", i, tl.Token, ranked[i])
		}
		if !near(tl.Logprob, want(tl.Token)) {
			t.Fatalf("Top[%d].Logprob = %v, want %v", i, tl.Logprob, want(tl.Token))
		}
	}
	if c.Top[0].Token != 17 || c.Top[1].Token != 400 {
		t.Fatalf("tied top tokens ordered %d, %d; want 17, 400", c.Top[0].Token, c.Top[1].Token)
	}
	wantRank := slices.Index(ranked, 5) + 1
	if c.Rank != wantRank {
		t.Fatalf("rank = %d, want %d", c.Rank, wantRank)
	}

	p.TopLogprobs = -1
	all := next(t, newSampler(t, p, len(logits)), logits, Tokens{})
	if len(all.Top) != len(logits) || all.Top[0].Token != 17 || all.Top[len(logits)-1].Token != ranked[len(logits)-1] {
		t.Fatalf("top_logprobs -1 gave %d entries, first %d, last %d", len(all.Top), all.Top[0].Token, all.Top[len(all.Top)-1].Token)
	}
	for i, tl := range all.Top {
		if tl.Token != ranked[i] || !near(tl.Logprob, want(tl.Token)) {
			t.Fatalf("whole-vocabulary Top[%d] = %+v, want token %d logprob %v", i, tl, ranked[i], want(ranked[i]))
		}
	}
}

func TestAllowedTokenIDs(t *testing.T) {
	p := greedy()
	p.AllowedTokenIDs = []int{0, 2}
	s := newSampler(t, p, 4)
	if got := next(t, s, []float32{1, 9, 2, 8}, Tokens{}).Token; got != 2 {
		t.Fatalf("token = %d, want 2 (best allowed)", got)
	}
	p = seeded(1)
	p.AllowedTokenIDs = []int{1, 3}
	s = newSampler(t, p, 4)
	for range 300 {
		if got := next(t, s, []float32{5, 0, 5, 0}, Tokens{}).Token; got != 1 && got != 3 {
			t.Fatalf("sampled disallowed token %d", got)
		}
	}
}

// Ids past Params.Tokens (a vocabulary padded past its tokenizer) are
// never picked, greedy or sampled, and neither listed nor counted in the
// logprobs: those of the tokens are their log_softmax among themselves.
func TestPaddingIsNeverPicked(t *testing.T) {
	logits := []float32{float32(math.Log(0.25)), float32(math.Log(0.75)), 30, 40}
	p := greedy()
	p.Tokens, p.TopLogprobs = 2, -1
	c := next(t, newSampler(t, p, 4), logits, Tokens{})
	if c.Token != 1 || math.Abs(float64(c.Logprob)-math.Log(0.75)) > 1e-6 || c.Rank != 1 || len(c.Top) != 2 ||
		c.Top[1].Token != 0 || math.Abs(float64(c.Top[1].Logprob)-math.Log(0.25)) > 1e-6 {
		t.Fatalf("greedy: %+v", c)
	}
	p = seeded(3)
	p.Tokens, p.TopLogprobs = 2, 3
	s := newSampler(t, p, 4)
	for range 300 {
		if c := next(t, s, logits, Tokens{}); c.Token > 1 || len(c.Top) != 2 {
			t.Fatalf("sampled: %+v", c)
		}
	}
	if c := Score(logits, 0, 5, 2); len(c.Top) != 2 || math.Abs(float64(c.Logprob)-math.Log(0.25)) > 1e-6 || c.Rank != 2 {
		t.Fatalf("scored: %+v", c)
	}
	if _, err := New(Params{Temperature: 1, TopP: 1, RepetitionPenalty: 1, Tokens: 5}, 4); !errors.Is(err, ErrInvalidParams) {
		t.Fatalf("tokens past the row: %v", err)
	}
}

func TestBadWords(t *testing.T) {
	p := greedy()
	p.BadWords = [][]int{{3}, {1, 2}, {4, 1, 0}}
	s := newSampler(t, p, 5)
	logits := []float32{5, 1, 6, 9, 1}
	cases := []struct {
		output []int
		want   int
	}{
		{nil, 2},         // 3 always banned; 2 allowed (output does not end with 1)
		{[]int{1}, 0},    // output ends with 1: 2 banned, 0 (logit 5) wins
		{[]int{1, 4}, 2}, // no longer ends with 1
		{[]int{2, 1}, 0}, // 3 and 2 banned; {4,1,0} needs 4,1 at the end
		{[]int{4, 1}, 1}, // 3, 2 and 0 banned: 1 and 4 tie at 1, lower id wins
	}
	// The prompt ends with 4, 1 too, but bad words look at the output only.
	for _, c := range cases {
		if got := next(t, s, logits, Tokens{Prompt: []int{4, 1}, Output: c.output}).Token; got != c.want {
			t.Errorf("output %v: token %d, want %d", c.output, got, c.want)
		}
	}
}

func TestLogitBiasIsClamped(t *testing.T) {
	p := greedy()
	p.LogitBias = map[int]float64{0: 1000}
	s := newSampler(t, p, 2)
	// Clamped to +100, token 0 reaches 100 < 150; unclamped it would win.
	if got := next(t, s, []float32{0, 150}, Tokens{}).Token; got != 1 {
		t.Fatalf("token = %d, want 1 (bias clamped to 100)", got)
	}
	p.LogitBias = map[int]float64{0: 3, 1: -3}
	if got := next(t, newSampler(t, p, 2), []float32{0, 5}, Tokens{}).Token; got != 0 {
		t.Fatalf("token = %d, want 0 (3 > 5−3)", got)
	}
}

func TestMinTokensMasksStopTokens(t *testing.T) {
	p := greedy()
	p.MinTokens = 2
	p.StopTokenIDs = []int{2, 3}
	s := newSampler(t, p, 4)
	logits := []float32{0, 1, 9, 8}
	for n, want := range []int{1, 1, 2, 2} {
		out := make([]int, n)
		if got := next(t, s, logits, Tokens{Output: out}).Token; got != want {
			t.Errorf("after %d tokens: token %d, want %d", n, got, want)
		}
	}
}

func TestPenaltiesTouchTheRightTokens(t *testing.T) {
	p := DefaultParams()
	p.RepetitionPenalty = 2
	p.FrequencyPenalty = 0.5
	p.PresencePenalty = 0.25
	s := newSampler(t, p, 6)
	w := []float32{4, -4, 4, -4, 4, 4}
	// Prompt tokens 0 and 1 (twice): repetition only. Output 2, 3, 2: repetition,
	// frequency and presence. Token 4 in neither; 5 neither.
	h := Tokens{Prompt: []int{0, 1, 1}, Output: []int{2, 3, 2}}
	if err := s.applyPenalties(w, h); err != nil {
		t.Fatal(err)
	}
	want := []float32{
		4 / 2.0,
		-4 * 2.0,
		4/2.0 - 0.5*2 - 0.25,
		-4*2.0 - 0.5*1 - 0.25,
		4,
		4,
	}
	if !slices.Equal(w, want) {
		t.Fatalf("penalised logits %v, want %v", w, want)
	}
	// The scratch state is cleared: a second call with no history changes nothing.
	w2 := []float32{1, 1, 1, 1, 1, 1}
	if err := s.applyPenalties(w2, Tokens{}); err != nil || !slices.Equal(w2, []float32{1, 1, 1, 1, 1, 1}) {
		t.Fatalf("second call: %v, %v", w2, err)
	}
	if err := s.applyPenalties(w2, Tokens{Output: []int{6}}); !errors.Is(err, ErrInvalidParams) {
		t.Fatalf("out-of-vocabulary history: err %v, want ErrInvalidParams", err)
	}

	// Through Next: the prompt's token escapes presence/frequency penalties.
	p = greedy()
	p.PresencePenalty = 2
	s = newSampler(t, p, 3)
	if got := next(t, s, []float32{3, 2, 0}, Tokens{Prompt: []int{0}}).Token; got != 0 {
		t.Fatalf("presence penalty hit a prompt token: got %d", got)
	}
	if got := next(t, s, []float32{3, 2, 0}, Tokens{Output: []int{0}}).Token; got != 1 {
		t.Fatalf("presence penalty missed an output token: got %d", got)
	}
}

// support samples n times and returns the sorted set of tokens seen.
func support(t *testing.T, p Params, logits []float32, n int) []int {
	t.Helper()
	s := newSampler(t, p, len(logits))
	seen := map[int]bool{}
	for range n {
		seen[next(t, s, logits, Tokens{}).Token] = true
	}
	var out []int
	for id := range seen {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

func TestTruncationKeepsTheDocumentedSets(t *testing.T) {
	// Probabilities by id: 0.1, 0.4, 0.2, 0.3.
	logits := logs(0.1, 0.4, 0.2, 0.3)
	cases := []struct {
		name string
		set  func(*Params)
		want []int
	}{
		{"none", func(*Params) {}, []int{0, 1, 2, 3}},
		{"top_p 0.6", func(p *Params) { p.TopP = 0.6 }, []int{1, 3}},      // 0.4 (above 0), 0.3 (above 0.4)
		{"top_p 0.75", func(p *Params) { p.TopP = 0.75 }, []int{1, 2, 3}}, // 0.2 has 0.7 above
		{"top_p 0.3", func(p *Params) { p.TopP = 0.3 }, []int{1}},         // the first is always kept
		{"top_k 2", func(p *Params) { p.TopK = 2 }, []int{1, 3}},
		{"top_k -1", func(p *Params) { p.TopK = -1 }, []int{0, 1, 2, 3}},
		{"min_p 0.3", func(p *Params) { p.MinP = 0.3 }, []int{1, 2, 3}}, // 0.1 < 0.12
		// After temperature 0.5 the probabilities go as p²: 0.2/0.4 → 0.25 < 0.3.
		{"min_p 0.3 after temperature 0.5", func(p *Params) { p.MinP = 0.3; p.Temperature = 0.5 }, []int{1, 3}},
		{"top_k 3 then top_p 0.5", func(p *Params) { p.TopK = 3; p.TopP = 0.5 }, []int{1, 3}},
	}
	for _, c := range cases {
		p := seeded(11)
		c.set(&p)
		if got := support(t, p, logits, 3000); !slices.Equal(got, c.want) {
			t.Errorf("%s: support %v, want %v", c.name, got, c.want)
		}
	}
	// top_k keeps every token tied with the k-th largest logit.
	p := seeded(5)
	p.TopK = 1
	if got := support(t, p, []float32{1, 2, 0, 2}, 500); !slices.Equal(got, []int{1, 3}) {
		t.Errorf("top_k 1 with a tie: support %v, want [1 3]", got)
	}
	// top_p renormalises over what top_k left: of 0.4/0.3 (after top_k 2) the
	// first holds 4/7 ≥ 0.5, so only it remains.
	p = seeded(5)
	p.TopK, p.TopP = 2, 0.5
	if got := support(t, p, logits, 500); !slices.Equal(got, []int{1}) {
		t.Errorf("top_k 2 then top_p 0.5: support %v, want [1]", got)
	}
}

func TestTopPOverALargeVocabulary(t *testing.T) {
	// 1000 equally likely tokens leave no candidate above the first floors,
	// so the floor widens to all of them; ties keep the lowest ids, and the
	// 901st (id 900) still has only 0.900 < 0.9005 of the mass above it.
	logits := make([]float32, 1000)
	p := seeded(9)
	p.TopP = 0.9005
	s := newSampler(t, p, len(logits))
	probs := make([]float32, len(logits))
	for i := range probs {
		probs[i] = 1.0 / 1000
	}
	s.applyTopP(logits, probs)
	kept := 0
	for i, v := range probs {
		if v != 0 {
			kept++
			if i > 900 {
				t.Fatalf("kept id %d, want ids 0..900 (ties by lower id)", i)
			}
		}
	}
	if kept != 901 {
		t.Fatalf("kept %d tokens, want 901 (mass above the 901st is 0.900 < 0.9005)", kept)
	}
}

func TestSamplingFrequenciesMatchTheDistribution(t *testing.T) {
	probs := []float64{0.1, 0.5, 0.25, 0.15}
	logits := logs(probs...)
	s := newSampler(t, seeded(42), len(logits))
	const n = 20000
	counts := make([]int, len(probs))
	for range n {
		counts[next(t, s, logits, Tokens{}).Token]++
	}
	var chi2 float64
	for i, p := range probs {
		e := p * n
		chi2 += (float64(counts[i]) - e) * (float64(counts[i]) - e) / e
	}
	// 3 degrees of freedom: 16.27 is the 0.999 quantile.
	if chi2 > 16.27 {
		t.Fatalf("chi-square %.2f over counts %v for %v", chi2, counts, probs)
	}
}

func TestSeedsReproduceAndSamplersAreIndependent(t *testing.T) {
	logits := logs(0.2, 0.2, 0.2, 0.2, 0.2)
	run := func(seed int64, interleave *Sampler) []int {
		s := newSampler(t, seeded(seed), len(logits))
		out := make([]int, 64)
		for i := range out {
			if interleave != nil {
				next(t, interleave, logits, Tokens{})
			}
			out[i] = next(t, s, logits, Tokens{Output: out[:i]}).Token
		}
		return out
	}
	a := run(1234, nil)
	if b := run(1234, nil); !slices.Equal(a, b) {
		t.Fatalf("same seed, different tokens:\n%v\n%v", a, b)
	}
	if c := run(1235, nil); slices.Equal(a, c) {
		t.Fatalf("different seeds gave the same 64 tokens %v", a)
	}
	if e, f := run(-1, nil), run(-1, nil); slices.Equal(e, f) {
		t.Fatalf("seed -1 means no seed, yet two runs gave the same 64 tokens %v", e)
	}
	other := newSampler(t, seeded(1234), len(logits))
	if d := run(1234, other); !slices.Equal(a, d) {
		t.Fatalf("another sampler's use changed this one's tokens:\n%v\n%v", a, d)
	}
}

func TestParamsValidation(t *testing.T) {
	cases := []struct {
		set  func(*Params)
		want string
	}{
		{func(p *Params) { p.Temperature = -0.1 }, "temperature"},
		{func(p *Params) { p.Temperature = 2.5 }, "temperature"},
		{func(p *Params) { p.Temperature = math.NaN() }, "temperature"},
		{func(p *Params) { p.TopP = 0 }, "top_p"},
		{func(p *Params) { p.TopP = 1.1 }, "top_p"},
		{func(p *Params) { p.TopK = -2 }, "top_k"},
		{func(p *Params) { p.MinP = 1.5 }, "min_p"},
		{func(p *Params) { p.RepetitionPenalty = 0 }, "repetition_penalty"},
		{func(p *Params) { p.PresencePenalty = 2.1 }, "presence_penalty"},
		{func(p *Params) { p.FrequencyPenalty = -3 }, "frequency_penalty"},
		{func(p *Params) { p.MinTokens = -1 }, "min_tokens"},
		{func(p *Params) { p.TopLogprobs = -2 }, "top_logprobs"},
		{func(p *Params) { p.LogitBias = map[int]float64{10: 1} }, "logit_bias"},
		{func(p *Params) { p.AllowedTokenIDs = []int{} }, "allowed_token_ids"},
		{func(p *Params) { p.AllowedTokenIDs = []int{10} }, "allowed_token_ids"},
		{func(p *Params) { p.BadWords = [][]int{{}} }, "bad_words"},
		{func(p *Params) { p.BadWords = [][]int{{1, 99}} }, "bad_words"},
		{func(p *Params) { p.StopTokenIDs = []int{-1} }, "stop_token_ids"},
	}
	for _, c := range cases {
		p := DefaultParams()
		c.set(&p)
		_, err := New(p, 10)
		if !errors.Is(err, ErrInvalidParams) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: err %v, want ErrInvalidParams naming %s", p, err, c.want)
		}
	}
	if _, err := New(DefaultParams(), 10); err != nil {
		t.Fatalf("defaults rejected: %v", err)
	}
	s := newSampler(t, DefaultParams(), 10)
	if _, err := s.Next(make([]float32, 9), Tokens{}); !errors.Is(err, ErrVocabSize) {
		t.Fatalf("short row: err %v, want ErrVocabSize", err)
	}
	p := greedy()
	p.AllowedTokenIDs = []int{0}
	p.BadWords = [][]int{{0}}
	if _, err := newSampler(t, p, 2).Next([]float32{1, 2}, Tokens{}); err == nil {
		t.Fatal("every token masked: want an error, got a token")
	}
}

func TestNoLogprobsPicksTheSameTokens(t *testing.T) {
	logits := logs(0.05, 0.3, 0.1, 0.25, 0.2, 0.1)
	for _, base := range []Params{greedy(), seeded(99)} {
		with, without := base, base
		with.TopLogprobs = 2
		without.NoLogprobs = true
		a, b := newSampler(t, with, len(logits)), newSampler(t, without, len(logits))
		var outA, outB []int
		for range 32 {
			ca := next(t, a, logits, Tokens{Output: outA})
			cb := next(t, b, logits, Tokens{Output: outB})
			if ca.Token != cb.Token {
				t.Fatalf("tokens differ: %d with logprobs, %d without", ca.Token, cb.Token)
			}
			if cb.Logprob != 0 || cb.Rank != 0 || cb.Top != nil {
				t.Fatalf("logprobs reported without being asked: %+v", cb)
			}
			outA, outB = append(outA, ca.Token), append(outB, cb.Token)
		}
	}
	if _, err := New(Params{Temperature: 1, TopP: 1, RepetitionPenalty: 1, NoLogprobs: true, TopLogprobs: 1}, 4); !errors.Is(err, ErrInvalidParams) {
		t.Fatalf("top_logprobs with NoLogprobs: %v", err)
	}
}
