package constrain

import (
	"testing"
)

// advanceText feeds text's tokens and reports whether every one was allowed.
func advanceText(t *testing.T, f *fixture, m *Matcher, text string) bool {
	t.Helper()
	mask := make([]uint64, f.vocab.MaskWords())
	for _, id := range f.tok.Encode(text, false) {
		m.Mask(mask)
		if !Allowed(mask, id) {
			if m.Advance(id) == nil {
				t.Fatalf("Advance took token %d the mask refused", id)
			}
			return false
		}
		if err := m.Advance(id); err != nil {
			t.Fatalf("Advance refused token %d the mask allowed: %v", id, err)
		}
	}
	return true
}

func TestEndOfSequenceOnlyWhenComplete(t *testing.T) {
	f := loadFixture(t, "qwen3")
	c, err := NewCompiler(f.vocab, Config{}).Compile(Spec{Kind: KindJSONSchema,
		Schema: []byte(`{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]}`)})
	if err != nil {
		t.Fatal(err)
	}
	eos := f.end[0]
	mask := make([]uint64, f.vocab.MaskWords())
	m := c.NewMatcher()
	if !advanceText(t, f, m, `{"a": 12`) {
		t.Fatal("valid prefix refused")
	}
	m.Mask(mask)
	if Allowed(mask, eos) || m.Complete() {
		t.Fatal("end of sequence allowed inside the object")
	}
	if !advanceText(t, f, m, `}`) {
		t.Fatal("closing brace refused")
	}
	m.Mask(mask)
	if !Allowed(mask, eos) || !m.Complete() || m.CanContinue() {
		t.Fatalf("after the object: eos allowed %v, complete %v, can continue %v", Allowed(mask, eos), m.Complete(), m.CanContinue())
	}
	if CountAllowed(mask) != 1 {
		t.Fatalf("%d tokens allowed after a complete object, want only the end", CountAllowed(mask))
	}
	// Special tokens other than the end are never allowed.
	imStart, _ := f.tok.TokenToID("<|im_start|>")
	if Allowed(mask, imStart) {
		t.Fatal("a special token is allowed")
	}
	if err := m.Advance(eos); err != nil || !m.Ended() {
		t.Fatal("end of sequence refused when complete")
	}
	m.Mask(mask)
	if CountAllowed(mask) != 0 {
		t.Fatal("tokens allowed after the end")
	}
}

func TestRollbackAndClone(t *testing.T) {
	f := loadFixture(t, "llama3")
	c, err := NewCompiler(f.vocab, Config{}).Compile(Spec{Kind: KindChoice, Choice: []string{"alpha beta", "alpha gamma"}})
	if err != nil {
		t.Fatal(err)
	}
	m := c.NewMatcher()
	if !advanceText(t, f, m, "alpha") {
		t.Fatal("prefix refused")
	}
	fork := m.Clone()
	if !advanceText(t, f, m, " beta") || !m.Complete() {
		t.Fatal("first choice refused")
	}
	if !advanceText(t, f, fork, " gamma") || !fork.Complete() {
		t.Fatal("the clone is not independent")
	}
	n := len(f.tok.Encode(" beta", false))
	m.Rollback(n)
	if m.Complete() || !advanceText(t, f, m, " gamma") || !m.Complete() {
		t.Fatal("rollback did not return to the fork point")
	}
	m.Rollback(100)
	if m.Tokens() != 0 || advanceText(t, f, m, " delta") {
		t.Fatal("rollback past the start is not the start")
	}
}

func TestPatternIsASearch(t *testing.T) {
	f := loadFixture(t, "qwen3")
	compiler := NewCompiler(f.vocab, Config{})
	c, err := compiler.Compile(Spec{Kind: KindJSONSchema, Schema: []byte(`{"type":"string","pattern":"ab+c"}`)})
	if err != nil {
		t.Fatal(err)
	}
	for text, want := range map[string]bool{`"xxabbbcyy"`: true, `"abc"`: true, `"ac"`: false, `"a\"bc"`: false} {
		m := c.NewMatcher()
		if got := advanceText(t, f, m, text) && m.Complete(); got != want {
			t.Errorf("%s: accepted %v, want %v", text, got, want)
		}
	}
}

func TestCompiledConstraintsAreCached(t *testing.T) {
	f := loadFixture(t, "qwen3")
	compiler := NewCompiler(f.vocab, Config{CacheSize: 2})
	spec := func(s string) Spec { return Spec{Kind: KindJSONSchema, Schema: []byte(s)} }
	a, err := compiler.Compile(spec(`{"type": "integer"}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := compiler.Compile(spec(`{"type":"integer"}`)) // same schema, other spacing
	if a != b {
		t.Fatal("the same schema was compiled twice")
	}
	compiler.Compile(spec(`{"type":"string"}`))
	compiler.Compile(spec(`{"type":"boolean"}`))
	if compiler.Cached() != 2 {
		t.Fatalf("cache holds %d, bound is 2", compiler.Cached())
	}
	if c, _ := compiler.Compile(spec(`{"type":"integer"}`)); c == a {
		t.Fatal("the least recently used entry was not evicted")
	}
}
