package engine

import (
	"bytes"
	"unicode/utf8"

	"github.com/weftlabs/weft/internal/llm/tokenizer"
)

// detokenizer turns one choice's tokens into text the way vLLM's incremental
// detokenizer does: the tokenizer's stream decoder (primed with the end of
// the prompt, never splitting a character), stop strings searched only in
// the text new tokens added (and the stop string's length before it), the
// text cut at a match, and while running the last (longest stop string − 1)
// characters held back, since they could be the start of a stop string
// that the next token completes.
type detokenizer struct {
	stream    *tokenizer.StreamDecoder
	stops     []string
	include   bool // include_stop_str_in_output
	minTokens int
	hold      int // characters held back while running

	// text is the output so far (cut at a stop string), appended to in
	// place so that a long answer costs linear time.
	text   []byte
	sent   int // bytes of text already returned by delta
	tokens int // tokens seen
}

func newDetokenizer(tok *tokenizer.Tokenizer, prompt []int, skipSpecial bool, stops []string, include bool, minTokens int) *detokenizer {
	d := &detokenizer{stream: tok.NewStreamDecoder(skipSpecial), stops: stops, include: include, minTokens: minTokens}
	d.stream.Prime(prompt)
	if !include {
		for _, s := range stops {
			d.hold = max(d.hold, utf8.RuneCountInString(s)-1)
		}
	}
	return d
}

// update adds one generated token. stopToken says it ended the choice as an
// end-of-sequence or stop token: its text is then left out unless the
// request includes stop strings in the output. It returns the stop string
// the text now contains, if any, having cut the text at it.
func (d *detokenizer) update(id int, stopToken bool) (string, bool) {
	d.tokens++
	checkFrom := len(d.text)
	if !stopToken || d.include {
		d.text = append(d.text, d.stream.Step(id)...)
	}
	if d.minTokens > 0 && d.tokens <= d.minTokens {
		checkFrom = len(d.text) // no stop string inside the first min_tokens tokens
	}
	if len(d.stops) == 0 || d.tokens <= d.minTokens || checkFrom == len(d.text) {
		return "", false
	}
	for _, stop := range d.stops {
		// Search the new text and the stop string's length minus one
		// character before it: older text was searched before.
		from := backRunes(d.text, checkFrom, utf8.RuneCountInString(stop)-1)
		i := bytes.Index(d.text[from:], []byte(stop))
		if i < 0 {
			continue
		}
		cut := from + i
		if d.include {
			cut += len(stop)
		}
		d.text = d.text[:cut]
		return stop, true
	}
	return "", false
}

// delta returns the text not yet returned, holding back the characters
// that could begin a stop string unless the choice has finished.
func (d *detokenizer) delta(finished bool) string {
	end := len(d.text)
	if !finished {
		end = backRunes(d.text, end, d.hold)
	}
	if end <= d.sent {
		return ""
	}
	out := string(d.text[d.sent:end])
	d.sent = end
	return out
}

// backRunes returns the byte offset n characters before offset in s (0 at
// the most).
func backRunes(s []byte, offset, n int) int {
	for ; n > 0 && offset > 0; n-- {
		_, size := utf8.DecodeLastRune(s[:offset])
		offset -= size
	}
	return offset
}
