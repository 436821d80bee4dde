package tokenizer

import (
	"bytes"
	"testing"
)

// Every token's bytes, concatenated, spell the text it was encoded from,
// characters cut between byte-level tokens included.
func TestTokenBytesSpellTheText(t *testing.T) {
	texts := []string{
		"Hello, world! {\"a\": [1, 2.5e-3, null]}",
		"日本語のテキスト and emoji 🙂👍🏽 mixed",
		"  leading spaces\n\ttabs\r\nand CRLF",
		"Ünïcödé — “quotes” ‹›",
	}
	for _, name := range []string{"qwen3", "llama3", "llama2"} {
		tok := loadFixture(t, name)
		for _, text := range texts {
			var got []byte
			for _, id := range tok.Encode(text, false) {
				b, ok := tok.TokenBytes(id)
				if !ok {
					t.Fatalf("%s: no bytes for id %d", name, id)
				}
				got = append(got, b...)
			}
			want := []byte(text)
			if name == "llama2" {
				want = append([]byte(" "), want...) // the prepended metaspace
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s: %q spells %q", name, text, got)
			}
		}
	}
	if _, ok := loadFixture(t, "qwen3").TokenBytes(-1); ok {
		t.Error("an unknown id has bytes")
	}
}
