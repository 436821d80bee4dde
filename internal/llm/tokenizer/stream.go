package tokenizer

import (
	"strings"
	"unicode/utf8"
)

// StreamDecoder turns generated ids into text one id at a time, never
// emitting part of a character: while the text decoded so far ends in
// U+FFFD (a character whose bytes have not all arrived), it holds the text
// back. It keeps a short window of recent ids and decodes it whole each
// step, so decoders that look at neighbouring tokens (Llama 2's leading
// space) read the same as in a full decode. This is the algorithm of the
// reference implementation's DecodeStream, which serving stacks use.
//
// A StreamDecoder is not safe for concurrent use.
type StreamDecoder struct {
	tok         *Tokenizer
	skipSpecial bool
	ids         []int
	prefix      string
	prefixIndex int
}

// NewStreamDecoder starts an incremental decode. skipSpecialTokens drops
// special added tokens from the text, as in [DecodeOptions].
func (t *Tokenizer) NewStreamDecoder(skipSpecialTokens bool) *StreamDecoder {
	return &StreamDecoder{tok: t, skipSpecial: skipSpecialTokens}
}

// promptContextMin and promptContextMax bound the prompt tail Prime feeds.
const (
	promptContextMin = 4
	promptContextMax = 23
)

// Prime feeds the end of the prompt without emitting it, so that the first
// generated token decodes as it would inside the text (a word-initial
// space is kept, not stripped as at the start of a text). Like serving
// stacks, it takes the shortest tail of at least four ids (and at most 23)
// that decodes without U+FFFD, or the whole prompt if it is short.
func (d *StreamDecoder) Prime(prompt []int) {
	suffix := prompt
	if len(prompt) > promptContextMin {
		for n := promptContextMin; n <= min(len(prompt), promptContextMax); n++ {
			tail := prompt[len(prompt)-n:]
			if !strings.ContainsRune(d.tok.decode(tail, true), utf8.RuneError) {
				suffix = tail
				break
			}
		}
	}
	for _, id := range suffix {
		d.Step(id)
	}
}

// Step adds one id and returns the text it completes, which may be empty.
func (d *StreamDecoder) Step(id int) string {
	if d.prefix == "" && len(d.ids) > 0 {
		if p := d.tok.decode(d.ids, d.skipSpecial); !strings.HasSuffix(p, "\uFFFD") {
			d.prefix, d.prefixIndex = p, len(d.ids)
		}
	}
	d.ids = append(d.ids, id)
	text := d.tok.decode(d.ids, d.skipSpecial)
	if len(text) <= len(d.prefix) || strings.HasSuffix(text, "\uFFFD") {
		return ""
	}
	if !strings.HasPrefix(text, d.prefix) {
		// The window decodes differently from what was emitted (possible
		// around invalid UTF-8): start afresh from this id, as serving
		// stacks recover.
		d.ids, d.prefix, d.prefixIndex = d.ids[:0], "", 0
		return d.Step(id)
	}
	out := text[len(d.prefix):]
	// Keep the ids from the start of the last emitted text onwards.
	keep := len(d.ids) - d.prefixIndex
	d.ids = append(d.ids[:0], d.ids[d.prefixIndex:]...)
	d.prefix = d.tok.decode(d.ids, d.skipSpecial)
	d.prefixIndex = keep
	return out
}

// Flush returns the text still held back at the end of a stream, with
// U+FFFD for characters that never completed.
func (d *StreamDecoder) Flush() string {
	text := d.tok.decode(d.ids, d.skipSpecial)
	if len(text) <= len(d.prefix) || !strings.HasPrefix(text, d.prefix) {
		return ""
	}
	out := text[len(d.prefix):]
	d.prefix, d.prefixIndex = text, len(d.ids)
	return out
}
