package constrain

import (
	"strings"
	"testing"
)

// White space is bounded per gap between two JSON tokens: Config's bound,
// lowered by a Spec's own, and an empty object or array has one gap, not
// the two that meet around its missing members.
func TestWhitespaceIsBoundedPerGap(t *testing.T) {
	f := loadFixture(t, "qwen3")
	compiler := NewCompiler(f.vocab, Config{MaxWhitespace: 3})
	// gaps writes text with n spaces at every "_".
	gaps := func(text string, n int) string { return strings.ReplaceAll(text, "_", strings.Repeat(" ", n)) }
	cases := []struct {
		spec  Spec
		texts []string // each a whole output once its gaps are filled
		bound int
	}{
		{Spec{Kind: KindJSONSchema, Schema: []byte(`{"type":"object","properties":{}}`)}, []string{"{_}"}, 3},
		{Spec{Kind: KindJSONSchema, Schema: []byte(`{"type":"object","properties":{"a":{"type":"integer"}}}`)}, []string{"{_}", `{_"a"_:_1_}`}, 3},
		{Spec{Kind: KindJSONSchema, Schema: []byte(`{"type":"array","items":{"type":"integer"}}`)}, []string{"[_]", "[_1_,_2_]"}, 3},
		{Spec{Kind: KindJSONSchema, Schema: []byte(`{"type":"array","prefixItems":[{"const":1}]}`)}, []string{"[_]", "[_1_]"}, 3},
		{Spec{Kind: KindJSONSchema, Schema: []byte(`{"type":"array","maxItems":0}`)}, []string{"[_]"}, 3},
		{Spec{Kind: KindJSONObject}, []string{"{_}", `{_"a"_:_[_]_,_"b"_:_{_}_}`}, 3},
		{Spec{Kind: KindJSONSchema, Schema: []byte(`{"type":"array","items":{"type":"object","properties":{"x":{"type":"array"}}}}`), MaxWhitespace: 1},
			[]string{"[_]", `[_{_}_,_{_"x"_:_[_]_}_]`}, 1},
		{Spec{Kind: KindJSONObject, MaxWhitespace: 5}, []string{"{_}", `{_"a"_:_1_}`}, 3}, // lowers, never raises
		{Spec{Kind: KindJSONObject, MaxWhitespace: -1}, []string{"{_}", `{_"a"_:_1_}`}, 0},
	}
	for _, tc := range cases {
		c, err := compiler.Compile(tc.spec)
		if err != nil {
			t.Fatal(err)
		}
		for _, text := range tc.texts {
			for n := 0; n <= 2*tc.bound+2; n++ {
				if got := accepts(c, gaps(text, n)); got != (n <= tc.bound) {
					t.Errorf("%s (white space %d): %q accepted %v", tc.spec.Schema, tc.spec.MaxWhitespace, gaps(text, n), got)
				}
			}
		}
	}
	// A Spec's own bound is part of its cache key.
	spec := Spec{Kind: KindJSONSchema, Schema: []byte(`{"type":"object"}`)}
	a, _ := compiler.Compile(spec)
	spec.MaxWhitespace = 1
	if b, _ := compiler.Compile(spec); a == b {
		t.Fatal("a schema with its own white-space bound was served another bound's constraint")
	}
}
