package tokenizer

import (
	"strings"
	"testing"
)

// benchTexts are two texts of about 64 KiB made of the golden corpus:
// "text" joins its entries shorter than 200 bytes (prose in several
// scripts, code, numbers, emoji, white space runs); "corpus" joins all of
// them, with the 3,000-character words and 600-character CJK runs whose
// merging cost grows faster than their length.
func benchTexts(b *testing.B) map[string]string {
	seeds := fuzzSeeds(b)
	join := func(keep func(string) bool) string {
		var sb strings.Builder
		for sb.Len() < 64<<10 {
			for _, s := range seeds {
				if keep(s) {
					sb.WriteString(s)
					sb.WriteString("\n")
				}
			}
		}
		return sb.String()
	}
	return map[string]string{
		"text":   join(func(s string) bool { return len(s) < 200 }),
		"corpus": join(func(string) bool { return true }),
	}
}

// Run with: go test -run XXX -bench . ./internal/llm/tokenizer
// Throughput is in bytes of text per second, for encoding and decoding.
func BenchmarkEncode(b *testing.B) {
	forEachBench(b, func(b *testing.B, tok *Tokenizer, text string) {
		tok.Encode(text, false) // warm the word cache, as a server would be
		b.SetBytes(int64(len(text)))
		b.ResetTimer()
		for b.Loop() {
			tok.Encode(text, false)
		}
	})
}

// forEachBench runs a benchmark per tokenizer and text.
func forEachBench(b *testing.B, run func(b *testing.B, tok *Tokenizer, text string)) {
	texts := benchTexts(b)
	for _, name := range fixtureNames {
		for _, kind := range []string{"text", "corpus"} {
			b.Run(name+"/"+kind, func(b *testing.B) {
				run(b, loadFixture(b, name), texts[kind])
			})
		}
	}
}

func BenchmarkDecode(b *testing.B) {
	forEachBench(b, func(b *testing.B, tok *Tokenizer, text string) {
		ids := tok.Encode(text, false)
		b.SetBytes(int64(len(text)))
		b.ResetTimer()
		for b.Loop() {
			tok.Decode(ids, DecodeOptions{})
		}
	})
}

// BenchmarkStreamDecode is incremental decoding, one id at a time.
func BenchmarkStreamDecode(b *testing.B) {
	forEachBench(b, func(b *testing.B, tok *Tokenizer, text string) {
		ids := tok.Encode(text, false)
		b.SetBytes(int64(len(text)))
		b.ResetTimer()
		for b.Loop() {
			d := tok.NewStreamDecoder(false)
			for _, id := range ids {
				d.Step(id)
			}
			d.Flush()
		}
	})
}
