package tokenizer

import (
	"unicode"
	"unicode/utf8"
)

// isWhiteSpace is the Unicode White_Space property, which is what \s means
// in the regular expressions of tokenizer files as the reference
// implementation runs them (Oniguruma and Rust's regex crate): U+0085 is
// a space, U+FEFF and U+200B are not. Go's regexp \s is ASCII only.
func isWhiteSpace(r rune) bool {
	switch {
	case r >= '\t' && r <= '\r', r == ' ', r == 0x85, r == 0xA0, r == 0x1680:
		return true
	case r < 0x2000:
		return false
	case r <= 0x200A, r == 0x2028, r == 0x2029, r == 0x202F, r == 0x205F, r == 0x3000:
		return true
	}
	return false
}

// isLetter is \p{L}.
func isLetter(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z'
	}
	return unicode.IsLetter(r)
}

// isNumber is \p{N} (Nd, Nl and No).
func isNumber(r rune) bool {
	if r < utf8.RuneSelf {
		return '0' <= r && r <= '9'
	}
	return unicode.IsNumber(r)
}

// isWordChar is \w as Rust's regex crate defines it (Alphabetic, marks,
// decimal digits, connector punctuation, joiners); it decides whether an
// added token with single_word set stands alone.
func isWordChar(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '_'
	}
	return unicode.IsLetter(r) || unicode.IsMark(r) || unicode.Is(unicode.Nd, r) ||
		unicode.Is(unicode.Nl, r) || unicode.Is(unicode.Pc, r) ||
		unicode.Is(unicode.Other_Alphabetic, r) || r == 0x200C || r == 0x200D
}

// runeAt decodes the rune at byte offset i of s.
func runeAt(s string, i int) (rune, int) {
	if c := s[i]; c < utf8.RuneSelf {
		return rune(c), 1
	}
	return utf8.DecodeRuneInString(s[i:])
}

// lastRuneStart is the byte offset of the last rune of s[:end].
func lastRuneStart(s string, end int) int {
	_, size := utf8.DecodeLastRuneInString(s[:end])
	return end - size
}
