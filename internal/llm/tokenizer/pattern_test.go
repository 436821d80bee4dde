package tokenizer

import (
	"slices"
	"testing"
)

// pieces splits s with p the way the Split pre-tokenizer (Isolated) does.
func pieces(p pattern, s string) []string {
	var out []string
	for _, pc := range splitPiece(piece{text: s}, p, false, splitIsolated, nil) {
		out = append(out, pc.text)
	}
	return out
}

// TestScannersFollowReferenceEngine pins the split regexes where Go's
// regexp, JavaScript and the reference engine (Oniguruma) could differ.
// The golden corpus covers ordinary text; these cases are the Unicode
// details the reference engine decides and the JavaScript oracle does not
// share.
func TestScannersFollowReferenceEngine(t *testing.T) {
	qwen := cl100kScanner{maxDigits: 1}
	llama3 := cl100kScanner{maxDigits: 3}
	cases := []struct {
		name string
		p    pattern
		in   string
		want []string
	}{
		{"last space of a run leads the word", llama3, "a   b", []string{"a", "  ", " b"}},
		{"run at the end stays whole", llama3, "a   ", []string{"a", "   "}},
		{"line breaks end a white-space piece", llama3, "a \n\n  b", []string{"a", " \n\n", " ", " b"}},
		{"digits in threes", llama3, "1234567", []string{"123", "456", "7"}},
		{"digits one by one", qwen, "2024", []string{"2", "0", "2", "4"}},
		{"contractions ignore ASCII case", llama3, "I'M", []string{"I", "'M"}},
		{"long s folds to s", llama3, "it'ſ", []string{"it", "'ſ"}},
		{"a non-contraction apostrophe leads the word", llama3, "'tis 'x", []string{"'t", "is", " '", "x"}},
		// U+0085 is White_Space for the reference engine (not for JavaScript).
		{"next line is white space", llama3, "a\u0085\u0085b", []string{"a", "\u0085", "\u0085b"}},
		// U+FEFF is not White_Space (JavaScript's \s has it).
		{"byte order mark is not white space", llama3, "a \ufeff", []string{"a", " \ufeff"}},
		{"no-break and ideographic spaces", llama3, "a\u00a0\u00a0b\u3000c", []string{"a", "\u00a0", "\u00a0b", "\u3000c"}},
		{"punctuation keeps its line break", llama3, "x.\n\ny", []string{"x", ".\n\n", "y"}},
		{"a tab leads a word", qwen, "\tfoo", []string{"\tfoo"}},
		{"marks are not letters", qwen, "नमस्ते", []string{"नमस", "्त", "े"}},
		{"gpt2 space leads letters, digits, symbols", gpt2Scanner{}, "a 12 !! b", []string{"a", " 12", " !!", " b"}},
		{"gpt2 contractions are case-sensitive", gpt2Scanner{}, "I'M i'm", []string{"I", "'", "M", " i", "'m"}},
		{"gpt2 white space", gpt2Scanner{}, "a  \n b ", []string{"a", "  \n", " b", " "}},
	}
	for _, c := range cases {
		if got := pieces(c.p, c.in); !slices.Equal(got, c.want) {
			t.Errorf("%s: %q → %q, want %q", c.name, c.in, got, c.want)
		}
	}
}

// TestSplitBehaviors follows NormalizedString::split for each behavior.
func TestSplitBehaviors(t *testing.T) {
	dash := literalPattern("-")
	cases := []struct {
		behavior splitBehavior
		invert   bool
		want     []string
	}{
		{splitRemoved, false, []string{"a", "b", "c"}},
		{splitIsolated, false, []string{"a", "-", "b", "-", "-", "c", "-"}},
		{splitMergedWithPrevious, false, []string{"a-", "b-", "-", "c-"}},
		{splitMergedWithNext, false, []string{"a", "-b", "-", "-c", "-"}},
		{splitContiguous, false, []string{"a", "-", "b", "--", "c", "-"}},
		{splitRemoved, true, []string{"-", "-", "-", "-"}},
	}
	for _, c := range cases {
		var got []string
		for _, p := range splitPiece(piece{text: "a-b--c-"}, dash, c.invert, c.behavior, nil) {
			got = append(got, p.text)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("behavior %d invert=%v: %q, want %q", c.behavior, c.invert, got, c.want)
		}
	}
}

func TestLossyUTF8MaximalSubparts(t *testing.T) {
	cases := []struct {
		in   []byte
		want string
	}{
		{[]byte("ok"), "ok"},
		{[]byte{0xE4, 0xBD}, "\uFFFD"},                               // cut 3-byte character
		{[]byte{0xF0, 0x9F, 0x98}, "\uFFFD"},                         // cut 4-byte character
		{[]byte{0xF0, 0x9F, 0x98, 'a'}, "\uFFFDa"},                   // cut, then ASCII
		{[]byte{0x80, 0x80}, "\uFFFD\uFFFD"},                         // lone continuation bytes
		{[]byte{0xE0, 0x80, 0x80}, "\uFFFD\uFFFD\uFFFD"},             // overlong: E0 needs A0..BF
		{[]byte{0xED, 0xA0, 0x80}, "\uFFFD\uFFFD\uFFFD"},             // surrogate
		{[]byte{0xF4, 0x90, 0x80, 0x80}, "\uFFFD\uFFFD\uFFFD\uFFFD"}, // above U+10FFFF
		{[]byte{0xC3, 'x', 0xC3, 0xA9}, "\uFFFDxé"},
	}
	for _, c := range cases {
		if got := lossyUTF8(c.in); got != c.want {
			t.Errorf("lossyUTF8(% x) = %q, want %q", c.in, got, c.want)
		}
	}
}
