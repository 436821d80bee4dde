// Package jsontext works on client JSON as the text it was sent as. Check
// tells whether the text holds only what both databases can keep: valid
// UTF-8, and no \u escape naming half of a surrogate pair. ObjectMembers and
// WriteObject take an object apart and put it together member by member,
// keeping every byte of the members they do not change.
//
// encoding/json accepts both and quietly turns them into U+FFFD when it decodes
// a string, but raw JSON members (inputs, outputs, payloads) are stored as
// sent: PostgreSQL refuses invalid UTF-8 in any text, and refuses lone
// surrogate escapes as soon as the text is read as json or jsonb. Refusing them
// on the way in keeps what is stored equal to what was sent.
package jsontext

import (
	"bytes"
	"fmt"
	"unicode/utf8"
)

// Error locates the first text Check refuses.
type Error struct {
	// Offset is the byte offset of the bad sequence in the checked text.
	Offset int
	// What says what is wrong there.
	What string
}

func (e *Error) Error() string { return fmt.Sprintf("%s at byte offset %d", e.What, e.Offset) }

// Check returns an *Error for the first invalid UTF-8 sequence in b, or the
// first \u escape of a lone surrogate (a high one not followed by a low one, or
// a low one not preceded by a high one); nil when there is none. It does not
// check JSON syntax: a backslash counts as an escape wherever it is.
func Check(b []byte) error {
	if !utf8.Valid(b) {
		return &Error{Offset: invalidUTF8At(b), What: "invalid UTF-8"}
	}
	for i := 0; ; {
		hit := bytes.Index(b[i:], []byte(`\u`))
		if hit < 0 {
			return nil
		}
		at := i + hit
		i = at + 2
		if !escapes(b, at) {
			continue
		}
		r, ok := hex4(b[at+2:])
		if !ok {
			continue // a syntax error, left to the JSON decoder
		}
		switch {
		case r >= 0xDC00 && r <= 0xDFFF:
			return &Error{Offset: at, What: "lone low surrogate escape"}
		case r >= 0xD800 && r <= 0xDBFF:
			next := b[at+6:]
			if len(next) < 6 || next[0] != '\\' || next[1] != 'u' {
				return &Error{Offset: at, What: "lone high surrogate escape"}
			}
			if low, ok := hex4(next[2:]); !ok || low < 0xDC00 || low > 0xDFFF {
				return &Error{Offset: at, What: "lone high surrogate escape"}
			}
			i = at + 12 // the pair's low half is used up
		}
	}
}

// escapes reports whether the backslash at b[at] starts an escape: it does
// unless it is itself escaped, that is, preceded by an odd run of backslashes.
func escapes(b []byte, at int) bool {
	run := 0
	for j := at - 1; j >= 0 && b[j] == '\\'; j-- {
		run++
	}
	return run%2 == 0
}

// hex4 decodes the four hex digits at the start of b.
func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

func invalidUTF8At(b []byte) int {
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size <= 1 {
			return i
		}
		i += size
	}
	return len(b)
}
