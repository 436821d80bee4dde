package tokenizer

import (
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// FuzzRoundTrip: byte-level tokenizers lose nothing, so decoding the
// encoding of any valid UTF-8 text gives the text back (after Qwen3's NFC
// normalizer; Llama 3 normalizes nothing). Decoding keeps the tokenization
// spaces, which clean-up would otherwise take out. The stream decoder must
// give the same text.
func FuzzRoundTrip(f *testing.F) {
	qwen := loadFixture(f, "qwen3")
	llama3 := loadFixture(f, "llama3")
	for _, seed := range fuzzSeeds(f) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			t.Skip("only valid UTF-8 has a round trip")
		}
		for _, c := range []struct {
			name string
			tok  *Tokenizer
			want string
		}{
			{"qwen3", qwen, norm.NFC.String(s)},
			{"llama3", llama3, s},
		} {
			ids := c.tok.Encode(s, true)
			if got := c.tok.Decode(ids, DecodeOptions{KeepTokenizationSpaces: true}); got != c.want {
				t.Fatalf("%s: decode(encode(%q)) = %q", c.name, s, got)
			}
			d := c.tok.NewStreamDecoder(false)
			var b strings.Builder
			for _, id := range ids {
				b.WriteString(d.Step(id))
			}
			b.WriteString(d.Flush())
			if b.String() != c.want {
				t.Fatalf("%s: streamed %q, want %q", c.name, b.String(), c.want)
			}
		}
	})
}

// fuzzSeeds are the golden corpus texts.
func fuzzSeeds(tb testing.TB) []string {
	// The corpus is the same in every golden file.
	data, err := os.ReadFile("testdata/qwen3.golden.json")
	if err != nil {
		tb.Fatal(err)
	}
	g, err := parseGolden(data)
	if err != nil {
		tb.Fatal(err)
	}
	var seeds []string
	for _, c := range g.Cases {
		seeds = append(seeds, c.Text)
	}
	return seeds
}
