package tokenizer

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"
)

// A decoder turns token strings back into text. Each step of a chain maps
// the list of strings to another; the result is their concatenation.
type decoder interface {
	decodeChain(tokens []string) []string
}

func newDecoder(field string, raw json.RawMessage, alphabet *byteAlphabet) (decoder, error) {
	if isNull(raw) {
		return nil, nil
	}
	typ, err := componentType(field, raw)
	if err != nil {
		return nil, err
	}
	switch typ {
	case "Sequence":
		var c struct {
			Decoders []json.RawMessage `json:"decoders"`
		}
		if err := decodeStrict(field, raw, &c); err != nil {
			return nil, err
		}
		seq, err := parts(field, "decoders", c.Decoders, func(field string, raw json.RawMessage) (decoder, error) {
			return newDecoder(field, raw, alphabet)
		})
		if err != nil {
			return nil, err
		}
		return decoderSequence(seq), nil
	case "ByteLevel":
		return byteLevelDecoder{alphabet}, nil
	case "Replace":
		var c struct {
			Pattern jsonPattern `json:"pattern"`
			Content string      `json:"content"`
		}
		if err := decodeStrict(field, raw, &c); err != nil {
			return nil, err
		}
		p, err := compilePattern(field+".pattern", c.Pattern)
		if err != nil {
			return nil, err
		}
		return replaceDecoder{pattern: p, content: c.Content}, nil
	case "ByteFallback":
		return byteFallbackDecoder{}, nil
	case "Fuse":
		return fuseDecoder{}, nil
	case "Strip":
		var c struct {
			Content string `json:"content"`
			Start   int    `json:"start"`
			Stop    int    `json:"stop"`
		}
		if err := decodeStrict(field, raw, &c); err != nil {
			return nil, err
		}
		r, err := singleRune(field+".content", c.Content)
		if err != nil {
			return nil, err
		}
		return stripDecoder{content: r, start: c.Start, stop: c.Stop}, nil
	case "Metaspace":
		var c jsonMetaspace
		if err := decodeStrict(field, raw, &c); err != nil {
			return nil, err
		}
		r, err := singleRune(field+".replacement", c.Replacement)
		if err != nil {
			return nil, err
		}
		scheme, err := parsePrependScheme(field, c.PrependScheme, c.AddPrefixSpace)
		if err != nil {
			return nil, err
		}
		return metaspaceDecoder{replacement: r, scheme: scheme}, nil
	}
	return nil, unsupported(field+".type", "decoder %q", typ)
}

type decoderSequence []decoder

func (seq decoderSequence) decodeChain(tokens []string) []string {
	for _, d := range seq {
		tokens = d.decodeChain(tokens)
	}
	return tokens
}

// byteLevelDecoder reads every token through the byte-level alphabet (a
// token with a character outside it, like most added tokens, counts as its
// own UTF-8) and decodes the bytes of all of them as one text.
type byteLevelDecoder struct{ alphabet *byteAlphabet }

func (d byteLevelDecoder) decodeChain(tokens []string) []string {
	var buf []byte
	for _, t := range tokens {
		var ok bool
		if buf, ok = d.alphabet.decode(buf, t); !ok {
			buf = append(buf, t...)
		}
	}
	return []string{lossyUTF8(buf)}
}

// lossyUTF8 decodes bytes as UTF-8, writing U+FFFD for each maximal
// subpart of an ill-formed sequence (the Unicode recommendation, which
// Rust's from_utf8_lossy and WHATWG decoders follow): a character cut short
// gives one U+FFFD, not one per byte.
func lossyUTF8(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	var sb strings.Builder
	sb.Grow(len(b) + 8)
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r != utf8.RuneError || size > 1 {
			sb.Write(b[i : i+size])
			i += size
			continue
		}
		sb.WriteRune(utf8.RuneError)
		i += maximalSubpart(b[i:])
	}
	return sb.String()
}

// maximalSubpart is the length of the longest prefix of b that starts a
// well-formed UTF-8 sequence, at least 1; b does not start a complete one.
func maximalSubpart(b []byte) int {
	lead := b[0]
	var need int
	lo, hi := byte(0x80), byte(0xBF) // bounds of the second byte
	switch {
	case lead >= 0xC2 && lead <= 0xDF:
		need = 1
	case lead == 0xE0:
		need, lo = 2, 0xA0
	case lead == 0xED:
		need, hi = 2, 0x9F
	case lead >= 0xE1 && lead <= 0xEF:
		need = 2
	case lead == 0xF0:
		need, lo = 3, 0x90
	case lead == 0xF4:
		need, hi = 3, 0x8F
	case lead >= 0xF1 && lead <= 0xF3:
		need = 3
	default:
		return 1
	}
	n := 1
	for ; n <= need && n < len(b); n++ {
		c := b[n]
		if n == 1 && (c < lo || c > hi) || n > 1 && (c < 0x80 || c > 0xBF) {
			break
		}
	}
	return n
}

type replaceDecoder struct {
	pattern pattern
	content string
}

func (d replaceDecoder) decodeChain(tokens []string) []string {
	out := make([]string, len(tokens))
	for i, t := range tokens {
		out[i] = replaceAll(t, d.pattern, d.content)
	}
	return out
}

// byteFallbackDecoder turns runs of <0xAB> tokens back into the text their
// bytes spell. A run that is not valid UTF-8 becomes one U+FFFD per byte,
// as in the reference implementation.
type byteFallbackDecoder struct{}

func (byteFallbackDecoder) decodeChain(tokens []string) []string {
	out := make([]string, 0, len(tokens))
	var run []byte
	flush := func() {
		if len(run) == 0 {
			return
		}
		if utf8.Valid(run) {
			out = append(out, string(run))
		} else {
			for range run {
				out = append(out, "\uFFFD")
			}
		}
		run = run[:0]
	}
	for _, t := range tokens {
		if b, ok := fallbackByte(t); ok {
			run = append(run, b)
			continue
		}
		flush()
		out = append(out, t)
	}
	flush()
	return out
}

// fallbackByte parses a byte token "<0xAB>".
func fallbackByte(t string) (byte, bool) {
	if len(t) != 6 || !strings.HasPrefix(t, "<0x") || t[5] != '>' {
		return 0, false
	}
	v, err := strconv.ParseUint(t[3:5], 16, 8)
	return byte(v), err == nil
}

type fuseDecoder struct{}

func (fuseDecoder) decodeChain(tokens []string) []string {
	return []string{strings.Join(tokens, "")}
}

// stripDecoder removes up to start leading and stop trailing copies of a
// character from every token (Llama 2's decoder drops the space its
// normalizer put before the text).
type stripDecoder struct {
	content     rune
	start, stop int
}

func (d stripDecoder) decodeChain(tokens []string) []string {
	out := make([]string, len(tokens))
	for i, t := range tokens {
		for n := 0; n < d.start; n++ {
			r, size := utf8.DecodeRuneInString(t)
			if size == 0 || r != d.content {
				break
			}
			t = t[size:]
		}
		for n := 0; n < d.stop; n++ {
			r, size := utf8.DecodeLastRuneInString(t)
			if size == 0 || r != d.content {
				break
			}
			t = t[:len(t)-size]
		}
		out[i] = t
	}
	return out
}

// metaspaceDecoder writes the replacement character back as spaces; in the
// first token it drops them instead (they were prepended), unless nothing
// was prepended.
type metaspaceDecoder struct {
	replacement rune
	scheme      prependScheme
}

func (d metaspaceDecoder) decodeChain(tokens []string) []string {
	out := make([]string, len(tokens))
	for i, t := range tokens {
		out[i] = strings.Map(func(r rune) rune {
			switch {
			case r != d.replacement:
				return r
			case i == 0 && d.scheme != prependNever:
				return -1
			}
			return ' '
		}, t)
	}
	return out
}

// cleanUpTokenizationSpaces undoes the spaces a word-level tokenizer of old
// put before punctuation and English contractions (tokenizer_config.json's
// clean_up_tokenization_spaces). The replacements run one after the other,
// each over the whole text, as in the reference implementation.
func cleanUpTokenizationSpaces(s string) string {
	for _, r := range [...][2]string{
		{" .", "."}, {" ?", "?"}, {" !", "!"}, {" ,", ","}, {" ' ", "'"},
		{" n't", "n't"}, {" 'm", "'m"}, {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"},
	} {
		s = strings.ReplaceAll(s, r[0], r[1])
	}
	return s
}
