package tokenizer

import (
	"strings"
	"testing"
)

// benchText is the golden corpus joined into one text of about 64 KiB:
// prose in several scripts, code, numbers, emoji and white space runs.
func benchText(b *testing.B) string {
	seeds := fuzzSeeds(b)
	var sb strings.Builder
	for sb.Len() < 64<<10 {
		for _, s := range seeds {
			sb.WriteString(s)
			sb.WriteString("\n")
		}
	}
	return sb.String()
}

// Run with: go test -run XXX -bench . ./internal/llm/tokenizer
// Throughput is in bytes of text per second, for encoding and decoding.
func BenchmarkEncode(b *testing.B) {
	text := benchText(b)
	for _, name := range fixtureNames {
		b.Run(name, func(b *testing.B) {
			tok := loadFixture(b, name)
			tok.Encode(text, false) // warm the word cache, as a server would be
			b.SetBytes(int64(len(text)))
			b.ResetTimer()
			for b.Loop() {
				tok.Encode(text, false)
			}
		})
	}
}

func BenchmarkDecode(b *testing.B) {
	text := benchText(b)
	for _, name := range fixtureNames {
		b.Run(name, func(b *testing.B) {
			tok := loadFixture(b, name)
			ids := tok.Encode(text, false)
			b.SetBytes(int64(len(text)))
			b.ResetTimer()
			for b.Loop() {
				tok.Decode(ids, DecodeOptions{})
			}
		})
	}
}

// BenchmarkStreamDecode is the per-token cost of incremental decoding.
func BenchmarkStreamDecode(b *testing.B) {
	text := benchText(b)
	for _, name := range fixtureNames {
		b.Run(name, func(b *testing.B) {
			tok := loadFixture(b, name)
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
}
