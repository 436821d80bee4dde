package tokenizer

// TokenBytes is the text one token adds to an output when it follows other
// tokens, as raw bytes: a byte-level token gives its bytes (possibly part of
// a character), a byte-fallback token "<0xAB>" its one byte, a metaspace
// "▁" a space, an added token its content. Constrained decoding reads the
// vocabulary through it. Leading-space stripping that decoders apply to the
// first token of a text only is not applied. It reports false for ids the
// tokenizer does not know.
func (t *Tokenizer) TokenBytes(id int) ([]byte, bool) {
	if _, ok := t.addedByID[id]; ok {
		return []byte(t.addedText[id]), true
	}
	if id < 0 || id >= len(t.model.tokens) || t.model.tokens[id] == "" {
		return nil, false
	}
	tok := t.model.tokens[id]
	if t.decoder == nil {
		return []byte(tok), true
	}
	return tokenBytes(t.decoder, tok), true
}

// tokenBytes runs the steps of a decoder chain that act on one token in the
// middle of a text, keeping bytes that are not valid UTF-8 as they are.
func tokenBytes(d decoder, tok string) []byte {
	var raw []byte // set once a step has produced raw bytes
	var walk func(d decoder)
	walk = func(d decoder) {
		if raw != nil {
			return
		}
		switch d := d.(type) {
		case decoderSequence:
			for _, step := range d {
				walk(step)
			}
		case byteLevelDecoder:
			if b, ok := d.alphabet.decode(nil, tok); ok {
				raw = b
			}
		case byteFallbackDecoder:
			if b, ok := fallbackByte(tok); ok {
				raw = []byte{b}
			}
		case replaceDecoder:
			tok = replaceAll(tok, d.pattern, d.content)
		case metaspaceDecoder:
			out := []rune(tok)
			for i, r := range out {
				if r == d.replacement {
					out[i] = ' '
				}
			}
			tok = string(out)
		}
		// Fuse joins tokens and Strip trims the text's first token only:
		// neither changes a token in the middle of a text.
	}
	walk(d)
	if raw != nil {
		return raw
	}
	return []byte(tok)
}
