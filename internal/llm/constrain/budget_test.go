package constrain

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/weftlabs/weft/internal/llm/tokenizer"
)

// tableSizes is how many states and stacks c's automaton holds.
func tableSizes(c *Constraint) (states, stacks int, gen uint64) {
	c.dfa.mu.Lock()
	defer c.dfa.mu.Unlock()
	return len(c.dfa.states), len(c.dfa.nodes), c.dfa.gen
}

// A constraint used for many outputs meets ever new states; under a small
// budget its tables stay within it between calls, and every mask equals
// that of the same constraint compiled without the bound, also across
// rollbacks and for a clone made generations earlier.
func TestLongLivedConstraintStaysWithinItsStateBudget(t *testing.T) {
	const budget = 3000
	schema := `{"type":"object","properties":{"s":{"type":"string","maxLength":60},` +
		`"n":{"type":"integer","minimum":-5000,"maximum":5000},` +
		`"t":{"type":"array","items":{"type":"string","maxLength":20},"maxItems":3}},"required":["s","n","t"]}`
	f := loadFixture(t, "qwen3")
	spec := Spec{Kind: KindJSONSchema, Schema: []byte(schema)}
	bounded, err := NewCompiler(f.vocab, Config{MaxDFAStates: budget}).Compile(spec)
	if err != nil {
		t.Fatal(err)
	}
	reference, err := NewCompiler(f.vocab, Config{}).Compile(spec)
	if err != nil {
		t.Fatal(err)
	}
	sch := validator(t, schema)
	got := make([]uint64, f.vocab.MaskWords())
	want := make([]uint64, f.vocab.MaskWords())
	var allowed []int
	// step compares the two masks and advances both by one allowed token;
	// it reports whether the output ended.
	step := func(seed uint64, m, r *Matcher, rng *rand.Rand) bool {
		m.Mask(got)
		r.Mask(want)
		if !slices.Equal(got, want) {
			t.Fatalf("seed %d after %d tokens: the bounded constraint's mask differs", seed, m.Tokens())
		}
		if states, stacks, _ := tableSizes(bounded); states > budget || stacks > budget {
			t.Fatalf("seed %d: %d states and %d stacks kept, budget %d", seed, states, stacks, budget)
		}
		allowed = allowed[:0]
		for id := range f.vocab.Size() {
			if Allowed(got, id) {
				allowed = append(allowed, id)
			}
		}
		id := allowed[rng.IntN(len(allowed))]
		if err := m.Advance(id); err != nil {
			t.Fatal(err)
		}
		if err := r.Advance(id); err != nil {
			t.Fatal(err)
		}
		if m.Complete() != r.Complete() || m.CanContinue() != r.CanContinue() {
			t.Fatalf("seed %d: completeness differs", seed)
		}
		return m.Ended()
	}
	var early, earlyRef *Matcher
	var earlyGen uint64
	for seed := range uint64(seedsPerCase) {
		rng := rand.New(rand.NewPCG(seed, 0xb0d9e7))
		m, r := bounded.NewMatcher(), reference.NewMatcher()
		for !step(seed, m, r, rng) {
			if m.Tokens() > 4 && rng.IntN(8) == 0 {
				m.Rollback(3)
				r.Rollback(3)
			}
			if seed == 0 && m.Tokens() == 10 && early == nil {
				early, earlyRef = m.Clone(), r.Clone()
				_, _, earlyGen = tableSizes(bounded)
			}
			if m.Tokens() > 3000 {
				t.Fatalf("seed %d: no end after 3000 tokens", seed)
			}
		}
		out := f.tok.Decode(m.tokensWithoutEnd(), tokenizer.DecodeOptions{KeepTokenizationSpaces: true})
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(out))
		if err != nil {
			t.Fatalf("seed %d: %v\n%q", seed, err, out)
		}
		if err := sch.Validate(inst); err != nil {
			t.Fatalf("seed %d: %v\n%q", seed, err, out)
		}
	}
	_, _, gen := tableSizes(bounded)
	if gen < earlyGen+3 {
		t.Fatalf("only %d resets: the budget was not reached often enough to test it", gen-earlyGen)
	}
	rng := rand.New(rand.NewPCG(99, 99))
	for !step(99, early, earlyRef, rng) {
		if early.Tokens() > 3000 {
			t.Fatal("the clone did not end")
		}
	}
	t.Logf("%d resets", gen)
}

// tokensWithoutEnd is the accepted tokens but an end-of-sequence one.
func (m *Matcher) tokensWithoutEnd() []int {
	var ids []int
	for _, id := range m.tokens {
		if !m.c.vocab.isEnd(int(id)) {
			ids = append(ids, int(id))
		}
	}
	return ids
}
