package tokenizer

// byteAlphabet is the byte-level BPE alphabet (GPT-2's bytes_to_unicode):
// every byte value is written as one printable character, so that a byte
// string becomes a text without spaces or control characters. Printable
// Latin-1 bytes stand for themselves; the 68 others are U+0100 onwards in
// byte order (the space 0x20 is 'Ġ', the newline 0x0A is 'Ċ').
type byteAlphabet struct {
	toRune [256]rune
	// toByte maps a rune of the alphabet (all below U+0144) back to its byte;
	// -1 for runes outside it.
	toByte [0x144]int16
}

func newByteAlphabet() *byteAlphabet {
	a := &byteAlphabet{}
	for i := range a.toByte {
		a.toByte[i] = -1
	}
	next := rune(256)
	for b := 0; b < 256; b++ {
		printable := b >= '!' && b <= '~' || b >= 0xA1 && b <= 0xAC || b >= 0xAE && b <= 0xFF
		r := rune(b)
		if !printable {
			r = next
			next++
		}
		a.toRune[b] = r
		a.toByte[r] = int16(b)
	}
	return a
}

// encode writes the alphabet form of raw bytes.
func (a *byteAlphabet) encode(raw string) string {
	out := make([]rune, len(raw))
	for i := 0; i < len(raw); i++ {
		out[i] = a.toRune[raw[i]]
	}
	return string(out)
}

// decode turns an alphabet string back into bytes, appending to dst. It
// reports false (and appends nothing) when s holds a rune outside the
// alphabet, which the byte-level decoder then copies as UTF-8.
func (a *byteAlphabet) decode(dst []byte, s string) ([]byte, bool) {
	n := len(dst)
	for _, r := range s {
		if r >= rune(len(a.toByte)) || a.toByte[r] < 0 {
			return dst[:n], false
		}
		dst = append(dst, byte(a.toByte[r]))
	}
	return dst, true
}
