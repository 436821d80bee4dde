package tokenizer

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// streamAll decodes ids one at a time and returns the chunks.
func streamAll(d *StreamDecoder, ids []int) []string {
	var chunks []string
	for _, id := range ids {
		chunks = append(chunks, d.Step(id))
	}
	return append(chunks, d.Flush())
}

// TestStreamDecoderMatchesDecode: the streamed chunks add up to the full
// decode, and no chunk carries a replacement character the full text does
// not have (no character is ever emitted in parts).
func TestStreamDecoderMatchesDecode(t *testing.T) {
	for _, name := range fixtureNames {
		t.Run(name, func(t *testing.T) {
			tok := loadFixture(t, name)
			g := readGolden(t, name)
			for _, skip := range []bool{false, true} {
				for i, c := range g.Cases {
					want := tok.Decode(c.IDsWithSpecial, DecodeOptions{SkipSpecialTokens: skip, KeepTokenizationSpaces: true})
					chunks := streamAll(tok.NewStreamDecoder(skip), c.IDsWithSpecial)
					if got := strings.Join(chunks, ""); got != want {
						t.Errorf("case %d skip=%v: streamed %q, decoded %q", i, skip, got, want)
					}
					if strings.ContainsRune(want, utf8.RuneError) {
						continue
					}
					for _, chunk := range chunks {
						if strings.ContainsRune(chunk, utf8.RuneError) {
							t.Errorf("case %d skip=%v: chunk %q holds part of a character (chunks %q)", i, skip, chunk, chunks)
						}
					}
				}
			}
		})
	}
}

// TestStreamDecoderHoldsPartialCharacters: an emoji split over byte tokens
// comes out whole, in the step that completes it.
func TestStreamDecoderHoldsPartialCharacters(t *testing.T) {
	tok := loadFixture(t, "llama2")
	var ids []int
	for _, b := range []byte("😀") {
		id, ok := tok.TokenToID(fmt.Sprintf("<0x%02X>", b))
		if !ok {
			t.Fatalf("no byte token for %#x", b)
		}
		ids = append(ids, id)
	}
	d := tok.NewStreamDecoder(false)
	d.Prime(tok.Encode("Say", true))
	chunks := streamAll(d, ids)
	want := []string{"", "", "", "😀", ""}
	if strings.Join(chunks, "|") != strings.Join(want, "|") {
		t.Fatalf("chunks %q, want %q", chunks, want)
	}
}

// TestStreamDecoderPrime: after the prompt, Llama 2's first generated word
// keeps its leading space, which a decode starting at that token strips.
func TestStreamDecoderPrime(t *testing.T) {
	tok := loadFixture(t, "llama2")
	prompt := tok.Encode("[INST] Say hello [/INST]", true)
	answer := tok.Encode("Hello world", false) // "▁Hello", "▁world"

	primed := tok.NewStreamDecoder(true)
	primed.Prime(prompt)
	if got := strings.Join(streamAll(primed, answer), ""); got != " Hello world" {
		t.Errorf("primed stream = %q, want %q", got, " Hello world")
	}
	bare := tok.NewStreamDecoder(true)
	if got := strings.Join(streamAll(bare, answer), ""); got != "Hello world" {
		t.Errorf("unprimed stream = %q, want %q", got, "Hello world")
	}
}
