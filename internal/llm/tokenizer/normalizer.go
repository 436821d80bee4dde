package tokenizer

import (
	"encoding/json"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// A normalizer rewrites the text of a segment (the input between added
// tokens) before it is pre-tokenized.
type normalizer interface {
	normalize(s string) string
}

func newNormalizer(field string, raw json.RawMessage) (normalizer, error) {
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
			Normalizers []json.RawMessage `json:"normalizers"`
		}
		if err := decodeStrict(field, raw, &c); err != nil {
			return nil, err
		}
		seq, err := parts(field, "normalizers", c.Normalizers, newNormalizer)
		if err != nil {
			return nil, err
		}
		return normalizerSequence(seq), nil
	case "Prepend":
		var c struct {
			Prepend string `json:"prepend"`
		}
		if err := decodeStrict(field, raw, &c); err != nil {
			return nil, err
		}
		return prependNormalizer(c.Prepend), nil
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
		return replaceNormalizer{pattern: p, content: c.Content}, nil
	case "NFC":
		return unicodeNormalizer{norm.NFC}, nil
	case "NFD":
		return unicodeNormalizer{norm.NFD}, nil
	case "NFKC":
		return unicodeNormalizer{norm.NFKC}, nil
	case "NFKD":
		return unicodeNormalizer{norm.NFKD}, nil
	case "Lowercase":
		return lowercaseNormalizer{}, nil
	case "Strip":
		var c struct {
			Left  bool `json:"strip_left"`
			Right bool `json:"strip_right"`
		}
		if err := decodeStrict(field, raw, &c); err != nil {
			return nil, err
		}
		return stripNormalizer{left: c.Left, right: c.Right}, nil
	case "StripAccents":
		return stripAccentsNormalizer{}, nil
	}
	return nil, unsupported(field+".type", "normalizer %q", typ)
}

type normalizerSequence []normalizer

func (seq normalizerSequence) normalize(s string) string {
	for _, n := range seq {
		s = n.normalize(s)
	}
	return s
}

// prependNormalizer puts a prefix before non-empty text (SentencePiece's
// "▁" that makes the first word look like every other).
type prependNormalizer string

func (p prependNormalizer) normalize(s string) string {
	if s == "" {
		return s
	}
	return string(p) + s
}

type replaceNormalizer struct {
	pattern pattern
	content string
}

func (r replaceNormalizer) normalize(s string) string {
	return replaceAll(s, r.pattern, r.content)
}

// replaceAll replaces every match of p in s.
func replaceAll(s string, p pattern, content string) string {
	start, end, ok := p.next(s, 0)
	if !ok {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	prev := 0
	for ok {
		b.WriteString(s[prev:start])
		b.WriteString(content)
		prev = end
		start, end, ok = p.next(s, end)
	}
	b.WriteString(s[prev:])
	return b.String()
}

type unicodeNormalizer struct{ form norm.Form }

func (u unicodeNormalizer) normalize(s string) string {
	// ASCII is in every normal form; most text is mostly ASCII.
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return u.form.String(s)
		}
	}
	return s
}

// lowercaseNormalizer lowercases each character on its own with Unicode's
// full mappings, as the reference implementation does: 'İ' becomes "i̇"
// (Go's mapping gives 'i'), and 'Σ' is always 'σ' (no word-final 'ς').
type lowercaseNormalizer struct{}

func (lowercaseNormalizer) normalize(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if r == 'İ' {
			b.WriteString("i\u0307")
			continue
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

type stripNormalizer struct{ left, right bool }

func (n stripNormalizer) normalize(s string) string {
	if n.left {
		s = strings.TrimLeftFunc(s, isWhiteSpace)
	}
	if n.right {
		s = strings.TrimRightFunc(s, isWhiteSpace)
	}
	return s
}

// stripAccentsNormalizer drops combining marks (usually after NFD).
type stripAccentsNormalizer struct{}

func (stripAccentsNormalizer) normalize(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsMark(r) {
			return -1
		}
		return r
	}, s)
}
