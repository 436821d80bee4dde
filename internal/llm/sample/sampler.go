package sample

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/weftlabs/weft/internal/llm/tensor"
)

// ErrVocabSize is returned by Next when the logits row is not as long as the
// vocabulary the Sampler was made for.
var ErrVocabSize = errors.New("sample: logits row length differs from the vocabulary size")

// Tokens is a sequence's history: the prompt ids and the ids generated so far.
type Tokens struct {
	Prompt []int
	Output []int
}

// TokenLogprob is one token with its log-probability.
type TokenLogprob struct {
	Token   int
	Logprob float32
}

// Choice is the token Next picked with its log-probability, its 1-based rank
// (how many tokens have a log-probability at least as high) and the
// Params.TopLogprobs most likely tokens, most likely first, ties by lower id.
// Log-probabilities are the log_softmax of the raw logits, before any
// masking, penalty, bias or temperature.
type Choice struct {
	Token   int
	Logprob float32
	Rank    int
	Top     []TokenLogprob
}

// Sampler picks one sequence's tokens. It holds that sequence's random
// generator and scratch space, so it is not safe for concurrent use and is
// never shared between sequences: its choices depend only on its Params,
// seed and the rows it is given.
type Sampler struct {
	p           Params
	vocab       int
	greedy      bool
	temperature float32
	allowed     []bool // nil when every token is allowed
	rng         *rand.Rand

	work     []float32 // the logits being processed
	logprobs []float32 // log_softmax of the raw logits
	counts   []int32   // occurrences in the output, per token; zeroed after use
	seen     []bool    // token in prompt or output; cleared after use
	touched  []int
	probs    []float32 // softmax of work, then truncated by top_p
	order    []int32
	keep     []float32
}

// New validates p for a vocabulary of vocabSize tokens and returns a Sampler
// for one sequence. Errors wrap ErrInvalidParams and name the field.
func New(p Params, vocabSize int) (*Sampler, error) {
	if err := p.validate(vocabSize); err != nil {
		return nil, err
	}
	s := &Sampler{p: p, vocab: vocabSize}
	if p.Temperature > 0 && p.Temperature < minTemperature {
		s.p.Temperature = minTemperature
	}
	s.greedy = s.p.Temperature < greedyEpsilon
	s.temperature = float32(s.p.Temperature)
	if p.AllowedTokenIDs != nil {
		s.allowed = make([]bool, vocabSize)
		for _, id := range p.AllowedTokenIDs {
			s.allowed[id] = true
		}
	}
	seed := rand.Uint64()
	if p.Seed != nil && *p.Seed != -1 {
		seed = uint64(*p.Seed)
	}
	var key [32]byte
	for i := range 8 {
		key[i] = byte(seed >> (8 * i))
	}
	s.rng = rand.New(rand.NewChaCha8(key))
	s.work = make([]float32, vocabSize)
	s.logprobs = make([]float32, vocabSize)
	s.probs = make([]float32, vocabSize)
	if s.penalised() {
		s.counts = make([]int32, vocabSize)
		s.seen = make([]bool, vocabSize)
	}
	return s, nil
}

func (s *Sampler) penalised() bool {
	return s.p.RepetitionPenalty != 1 || s.p.PresencePenalty != 0 || s.p.FrequencyPenalty != 0
}

// Next picks the next token from one row of logits given the sequence's
// history, in the reference server's order (see the package documentation).
// logits is not modified.
func (s *Sampler) Next(logits []float32, history Tokens) (Choice, error) {
	return s.NextMasked(logits, history, nil)
}

// NextMasked is Next for a step whose tokens a constraint narrows: allowed
// is a bitset over the vocabulary (bit id%64 of word id/64 set: the token
// may be picked), nil for no constraint. As in the reference server, the
// mask applies to the logits before anything else, so reported
// log-probabilities are those of the masked row (a masked token's is −Inf).
func (s *Sampler) NextMasked(logits []float32, history Tokens, allowed []uint64) (Choice, error) {
	if len(logits) != s.vocab {
		return Choice{}, fmt.Errorf("%w: got %d, want %d", ErrVocabSize, len(logits), s.vocab)
	}
	if allowed != nil && len(allowed)*64 < s.vocab {
		return Choice{}, fmt.Errorf("%w: mask of %d words for %d tokens", ErrVocabSize, len(allowed), s.vocab)
	}
	if !s.p.NoLogprobs {
		copy(s.logprobs, logits)
		if allowed != nil {
			applyMask(s.logprobs, allowed)
		}
		s.maskPadding(s.logprobs)
		tensor.LogSoftmax(s.logprobs)
	}

	if s.greedy && s.untouched(allowed, len(history.Output)) {
		// Nothing changes the row, so its argmax is the pick: no copy.
		return s.choose(argmax(logits))
	}
	w := s.work
	copy(w, logits)
	if allowed != nil {
		applyMask(w, allowed)
	}
	s.maskPadding(w)
	s.maskAllowed(w)
	s.banBadWords(w, history.Output)
	s.maskStopsBeforeMinTokens(w, len(history.Output))
	s.addBias(w)
	if err := s.applyPenalties(w, history); err != nil {
		return Choice{}, err
	}

	var token int
	if s.greedy {
		token = argmax(w)
	} else {
		for i := range w {
			w[i] /= s.temperature
		}
		s.applyMinP(w)
		s.applyTopK(w)
		token = -1
		if maxOf(w) != negInf { // softmax of an all −Inf row is NaN
			probs := s.probs
			copy(probs, w)
			tensor.Softmax(probs)
			s.applyTopP(w, probs)
			token = s.draw(probs)
		}
	}
	return s.choose(token)
}

// untouched reports whether no mask, bias, ban or penalty applies at this
// step, so that the row picked from is the model's as given.
func (s *Sampler) untouched(allowed []uint64, generated int) bool {
	return allowed == nil && s.allowed == nil && !s.padded() && len(s.p.BadWords) == 0 && len(s.p.LogitBias) == 0 &&
		!s.penalised() && (generated >= s.p.MinTokens || len(s.p.StopTokenIDs) == 0)
}

// choose reports the picked token with its logprobs.
func (s *Sampler) choose(token int) (Choice, error) {
	if token < 0 {
		// Every token was masked: the reference server's softmax is NaN
		// there and its argmax picks token 0; fail loudly instead.
		return Choice{}, fmt.Errorf("%w: every token is masked", ErrInvalidParams)
	}
	if s.p.NoLogprobs {
		return Choice{Token: token}, nil
	}
	return Choice{
		Token:   token,
		Logprob: s.logprobs[token],
		Rank:    rank(s.logprobs, s.logprobs[token]),
		Top:     topLogprobs(s.logprobs[:s.tokens()], s.p.TopLogprobs),
	}, nil
}

// tokens is how many of the row's ids are tokens.
func (s *Sampler) tokens() int {
	if s.padded() {
		return s.p.Tokens
	}
	return s.vocab
}

// Score reports a given token of one row of logits as Next reports the
// token it picks: its log_softmax, its rank and the top most likely tokens
// (0 none, -1 the whole vocabulary), with ids at or past tokens masked as
// Params.Tokens masks them (tokens 0: none). It serves the logprobs of
// prompt tokens, which are scored rather than sampled.
func Score(logits []float32, token, top, tokens int) Choice {
	logprobs := slices.Clone(logits)
	if tokens <= 0 || tokens > len(logprobs) {
		tokens = len(logprobs)
	}
	fill(logprobs[tokens:], negInf)
	tensor.LogSoftmax(logprobs)
	return Choice{
		Token:   token,
		Logprob: logprobs[token],
		Rank:    rank(logprobs, logprobs[token]),
		Top:     topLogprobs(logprobs[:tokens], top),
	}
}

var negInf = float32(math.Inf(-1))

// applyMask sets every token whose bit is clear to −Inf, a word at a time.
func applyMask(w []float32, allowed []uint64) {
	for i := 0; i < len(w); i += 64 {
		word := allowed[i/64]
		end := min(i+64, len(w))
		switch word {
		case ^uint64(0):
			continue
		case 0: // most words of a narrow mask
			fill(w[i:end], negInf)
			continue
		}
		for j := i; j < end; j++ {
			if word&(1<<uint(j-i)) == 0 {
				w[j] = negInf
			}
		}
	}
}

// padded reports whether the row has ids past its tokens (Params.Tokens).
func (s *Sampler) padded() bool { return s.p.Tokens > 0 && s.p.Tokens < s.vocab }

// maskPadding sets the ids past the row's tokens to −Inf.
func (s *Sampler) maskPadding(w []float32) {
	if s.padded() {
		fill(w[s.p.Tokens:], negInf)
	}
}

func fill(w []float32, v float32) {
	for i := range w {
		w[i] = v
	}
}

func (s *Sampler) maskAllowed(w []float32) {
	if s.allowed == nil {
		return
	}
	for i, ok := range s.allowed {
		if !ok {
			w[i] = negInf
		}
	}
}

// banBadWords bans a bad word's last id when the output ends with the ids
// before it; a one-id word is always banned.
func (s *Sampler) banBadWords(w []float32, output []int) {
	for _, word := range s.p.BadWords {
		prefix := word[:len(word)-1]
		if len(prefix) > len(output) {
			continue
		}
		if slices.Equal(output[len(output)-len(prefix):], prefix) {
			w[word[len(word)-1]] = negInf
		}
	}
}

func (s *Sampler) maskStopsBeforeMinTokens(w []float32, generated int) {
	if generated >= s.p.MinTokens {
		return
	}
	for _, id := range s.p.StopTokenIDs {
		w[id] = negInf
	}
}

func (s *Sampler) addBias(w []float32) {
	for id, b := range s.p.LogitBias {
		w[id] += float32(min(max(b, -100), 100))
	}
}

// applyPenalties applies the repetition penalty to tokens of the prompt and
// the output, then the frequency and presence penalties to tokens of the
// output only.
func (s *Sampler) applyPenalties(w []float32, h Tokens) error {
	if !s.penalised() {
		return nil
	}
	s.touched = s.touched[:0]
	mark := func(id int) error {
		if id < 0 || id >= s.vocab {
			return fmt.Errorf("%w: history token %d outside the vocabulary of %d", ErrInvalidParams, id, s.vocab)
		}
		if !s.seen[id] {
			s.seen[id] = true
			s.touched = append(s.touched, id)
		}
		return nil
	}
	defer func() {
		for _, id := range s.touched {
			s.seen[id] = false
			s.counts[id] = 0
		}
	}()
	for _, id := range h.Prompt {
		if err := mark(id); err != nil {
			return err
		}
	}
	for _, id := range h.Output {
		if err := mark(id); err != nil {
			return err
		}
		s.counts[id]++
	}
	rp := float32(s.p.RepetitionPenalty)
	fp := float32(s.p.FrequencyPenalty)
	pp := float32(s.p.PresencePenalty)
	for _, id := range s.touched {
		if w[id] > 0 {
			w[id] /= rp
		} else {
			w[id] *= rp
		}
		if c := s.counts[id]; c > 0 {
			w[id] -= fp * float32(c)
			w[id] -= pp
		}
	}
	return nil
}

// applyMinP drops tokens whose probability is below MinP times the most
// likely token's: p_i < MinP·p_max, i.e. e^(l_i − l_max) < MinP.
func (s *Sampler) applyMinP(w []float32) {
	if s.p.MinP == 0 {
		return
	}
	m := float64(maxOf(w))
	// Only logits near the cut need the exponential: well below
	// log(MinP) a token is dropped, well above it kept, as exp would say.
	cut := math.Log(s.p.MinP)
	for i, v := range w {
		d := float64(v) - m
		switch {
		case d < cut-minPMargin:
			w[i] = negInf
		case d > cut+minPMargin:
		case math.Exp(d) < s.p.MinP:
			w[i] = negInf
		}
	}
}

// minPMargin is far wider than the rounding of math.Exp and math.Log, so
// outside it comparing d with log(MinP) decides as comparing exp(d) with
// MinP does.
const minPMargin = 1e-6

// applyTopK drops tokens whose logit is below the k-th largest; tokens tied
// with the k-th are kept.
func (s *Sampler) applyTopK(w []float32) {
	k := s.p.TopK
	if k <= 0 || k >= s.vocab {
		return
	}
	vals := s.keep[:0]
	for _, v := range w {
		if v != negInf {
			vals = append(vals, v)
		}
	}
	s.keep = vals
	if k >= len(vals) {
		return
	}
	threshold := kthLargest(vals, k)
	for i, v := range w {
		if v < threshold {
			w[i] = negInf
		}
	}
}

// applyTopP keeps, in order of decreasing logit (ties by lower id), each
// token whose more likely tokens hold less than TopP of the mass; the most
// likely token is always kept. It zeroes the probabilities probs (softmax of
// w) of the others. Only the tokens that can be kept are sorted: those above
// a probability floor that shrinks until they hold TopP.
func (s *Sampler) applyTopP(w, probs []float32) {
	p := s.p.TopP
	if p >= 1 {
		return
	}
	order := s.order[:0]
	for floor := float32(1e-3); ; floor *= 1e-3 {
		if floor < 1e-30 {
			floor = 0
		}
		order = order[:0]
		var mass float64
		for i, q := range probs {
			if q >= floor && w[i] != negInf {
				order = append(order, int32(i))
				mass += float64(q)
			}
		}
		if mass >= p || floor == 0 {
			break
		}
	}
	s.order = order
	slices.SortFunc(order, func(a, b int32) int {
		if c := cmp.Compare(w[b], w[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	var above float64
	kept := len(order)
	for i, id := range order {
		if above >= p {
			kept = i
			break
		}
		above += float64(probs[id])
	}
	keep := s.keep[:0]
	for _, id := range order[:kept] {
		keep = append(keep, probs[id])
	}
	s.keep = keep
	clear(probs)
	for i, id := range order[:kept] {
		probs[id] = keep[i]
	}
}

// draw samples a token from probs (which need not sum to 1) with one
// uniform number from the sequence's generator, walking the cumulative mass
// in id order. It returns -1 when no token has any mass.
func (s *Sampler) draw(probs []float32) int {
	var z float64
	for _, q := range probs {
		z += float64(q)
	}
	if !(z > 0) {
		return -1
	}
	u := s.rng.Float64() * z
	last := -1
	var cum float64
	for i, q := range probs {
		if q == 0 {
			continue
		}
		cum += float64(q)
		last = i
		if u < cum {
			return i
		}
	}
	return last // u within rounding of z
}

// topLogprobs lists the n most likely tokens of a row of log-probabilities
// (0 none, -1 all), most likely first, ties by lower id.
func topLogprobs(logprobs []float32, n int) []TokenLogprob {
	if n == 0 {
		return nil
	}
	if n < 0 || n > len(logprobs) {
		n = len(logprobs)
	}
	better := func(a, b TokenLogprob) bool {
		return a.Logprob > b.Logprob || (a.Logprob == b.Logprob && a.Token < b.Token)
	}
	if n > 64 { // insertion into a short list stops paying off
		all := make([]TokenLogprob, len(logprobs))
		for id, lp := range logprobs {
			all[id] = TokenLogprob{id, lp}
		}
		slices.SortFunc(all, func(a, b TokenLogprob) int {
			if c := cmp.Compare(b.Logprob, a.Logprob); c != 0 {
				return c
			}
			return cmp.Compare(a.Token, b.Token)
		})
		return all[:n]
	}
	out := make([]TokenLogprob, 0, n)
	for id, lp := range logprobs {
		t := TokenLogprob{id, lp}
		if len(out) == n && !better(t, out[n-1]) {
			continue
		}
		if len(out) < n {
			out = append(out, t)
		}
		i := len(out) - 1
		for i > 0 && better(t, out[i-1]) {
			out[i] = out[i-1]
			i--
		}
		out[i] = t
	}
	return out
}

func rank(logprobs []float32, lp float32) int {
	n := 0
	for _, v := range logprobs {
		if v >= lp {
			n++
		}
	}
	return n
}

// argmax returns the index of the largest value, the lowest on ties, or -1
// when every value is −Inf.
func argmax(w []float32) int {
	best, bi := negInf, -1
	for i, v := range w {
		if v > best {
			best, bi = v, i
		}
	}
	return bi
}

func maxOf(w []float32) float32 {
	m := negInf
	for _, v := range w {
		if v > m {
			m = v
		}
	}
	return m
}

// kthLargest returns the k-th largest of vals (1 ≤ k ≤ len(vals)), which it
// reorders: a quickselect, linear on average where a sort of the vocabulary
// is not. The value is the one a sort would put at len(vals)-k.
func kthLargest(vals []float32, k int) float32 {
	lo, hi, target := 0, len(vals)-1, len(vals)-k
	for lo < hi {
		// Median of three as pivot, then a three-way partition (ties are
		// common among logits): [lo,lt) < p, [lt,gt] == p, (gt,hi] > p.
		mid := lo + (hi-lo)/2
		a, b, c := vals[lo], vals[mid], vals[hi]
		p := max(min(a, b), min(max(a, b), c))
		lt, i, gt := lo, lo, hi
		for i <= gt {
			switch v := vals[i]; {
			case v < p:
				vals[lt], vals[i] = v, vals[lt]
				lt++
				i++
			case v > p:
				vals[gt], vals[i] = v, vals[gt]
				gt--
			default:
				i++
			}
		}
		switch {
		case target < lt:
			hi = lt - 1
		case target > gt:
			lo = gt + 1
		default:
			return p
		}
	}
	return vals[target]
}
