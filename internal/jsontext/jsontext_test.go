package jsontext

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		in     string
		offset int // -1: accepted
	}{
		{`{"a":"plain"}`, -1},
		{`{"a":"ünïcödé 🧪"}`, -1},
		{`{"a":"\u00e9\ud83e\uddea"}`, -1},     // a pair is one character
		{`{"a":"\uD83E\uDDEA"}`, -1},           // upper-case hex
		{`{"a":"\u0000 stays an escape"}`, -1}, // NUL is text JSON can carry
		{`{"a":"\\ud800"}`, -1},                // an escaped backslash, then plain text
		{`{"a":"\\\\ud800"}`, -1},
		{`{"a":"\ud800"}`, 6},
		{`{"a":"\udc00"}`, 6},
		{`{"a":"\\\ud800"}`, 8}, // a backslash escape, then a real escape
		{`{"a":"\ud800\\udc00"}`, 6},
		{`{"a":"\ud800\u0041"}`, 6},
		{`{"a":"\ud800x"}`, 6},
		{`{"a":"\ud83e\uddea\udc00"}`, 18},
		{`{"a":"\ud800\ud800\udc00"}`, 6},
		{"{\"a\":\"\xff\xfe\"}", 6},
		{"{\"a\":\"ok\",\"\xc3\":1}", 11},
		{"{\"a\":\"\xed\xa0\x80\"}", 6}, // a surrogate written as UTF-8 bytes is not UTF-8
		{`{"a":"\u12"}`, -1},            // bad syntax is the decoder's to report
	} {
		err := Check([]byte(tc.in))
		var e *Error
		switch {
		case tc.offset < 0 && err != nil:
			t.Errorf("Check(%q) = %v, want nil", tc.in, err)
		case tc.offset >= 0 && !errors.As(err, &e):
			t.Errorf("Check(%q) = %v, want an error at %d", tc.in, err, tc.offset)
		case tc.offset >= 0 && e.Offset != tc.offset:
			t.Errorf("Check(%q) offset %d, want %d (%v)", tc.in, e.Offset, tc.offset, err)
		}
	}
}

// FuzzCheck holds Check to what encoding/json does with valid JSON: it
// refuses exactly the documents whose strings json.Unmarshal would change
// into U+FFFD, which is how encoding/json decodes both invalid UTF-8 and lone
// surrogate escapes.
func FuzzCheck(f *testing.F) {
	for _, seed := range []string{
		`{"a":"\ud800"}`, `["\\ud800"]`, `"\ud83e\uddea"`, "\"\xff\"", `{"\udc00":1}`,
		`"\ufffd"`, "\"\uFFFD\"", `"\\\ud800\udc00"`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !json.Valid(b) {
			_ = Check(b) // must not panic
			return
		}
		replaced := decodedReplacements(t, b) > replacementsIn(b)
		if err := Check(b); (err != nil) != replaced {
			t.Fatalf("Check(%q) = %v, but decoding replaced characters: %v", b, err, replaced)
		}
	})
}

// decodedReplacements counts U+FFFD in every string and key encoding/json
// decodes from b (tokens, so that a repeated key hides nothing).
func decodedReplacements(t *testing.T, b []byte) int {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber() // numbers are text here: one too large for float64 is still valid JSON
	n := 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return n
		}
		if err != nil {
			t.Fatal(err)
		}
		if s, ok := tok.(string); ok {
			n += strings.Count(s, "\uFFFD")
		}
	}
}

// replacementsIn counts the U+FFFD a valid JSON text spells itself, as the
// character or as a \ufffd escape.
func replacementsIn(b []byte) int {
	n := 0
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		switch {
		case r == '\uFFFD' && size == 3:
			n++
		case b[i] == '\\' && i+1 < len(b):
			if b[i+1] == 'u' && i+5 < len(b) && strings.EqualFold(string(b[i+2:i+6]), "fffd") {
				n++
			}
			size = 2 // an escape's second character is never a backslash that starts one
		}
		i += size
	}
	return n
}
