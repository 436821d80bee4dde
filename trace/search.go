package trace

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/database"
)

// MaxSearchTextBytes bounds the searchable text kept per call side (inputs,
// output): words past it are not found by CallsFilter.Search. The bound keeps
// the text index small next to calls whose inputs carry whole documents.
const MaxSearchTextBytes = 32 << 10

// searchColumns are the derived search text columns: written, never read
// back into a call.
var searchColumns = []string{"inputs_text", "output_text"}

// MaxSearchLength bounds a search term, in bytes.
const MaxSearchLength = 256

// searchText is the text CallsFilter.Search looks in for one JSON document:
// its string values, decoded (so "\u4f60" is found as "你"), and its numbers,
// one per line, in document order. Member names are left out: they are the
// shape of the data, not what people look for. Strings that are data URLs
// (inline images) are skipped. NUL, which no stored text may hold, becomes a
// space. The result is cut at MaxSearchTextBytes on a character boundary.
func searchText(doc []byte) string {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var b strings.Builder
	// inObject[i] tells whether nesting level i is an object, whose string
	// tokens alternate between member names and values.
	var inObject []bool
	var nameNext []bool
	add := func(s string) bool {
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(s)
		return b.Len() < MaxSearchTextBytes
	}
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		isName := false
		if n := len(inObject); n > 0 && inObject[n-1] {
			if _, isDelim := tok.(json.Delim); !isDelim || (tok != json.Delim('}')) {
				isName = nameNext[n-1]
				nameNext[n-1] = !nameNext[n-1]
			}
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{', '[':
				inObject = append(inObject, v == '{')
				nameNext = append(nameNext, true)
			default:
				inObject, nameNext = inObject[:len(inObject)-1], nameNext[:len(nameNext)-1]
			}
		case string:
			if isName || v == "" || strings.HasPrefix(v, "data:") {
				continue
			}
			if !add(spellSymbols(strings.ReplaceAll(v, "\x00", " "))) {
				return clipUTF8(b.String(), MaxSearchTextBytes)
			}
		case json.Number:
			if !add(v.String()) {
				return clipUTF8(b.String(), MaxSearchTextBytes)
			}
		}
	}
	return b.String()
}

// clipUTF8 cuts s to at most n bytes without splitting a character.
func clipUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// searchCondition is the condition of CallsFilter.Search: the term appears,
// case-insensitively, in the searchable text of the call's inputs or output.
// The term is only ever a bound value.
func (s *Store) searchCondition(term string) (database.Expr, error) {
	if len(term) > MaxSearchLength {
		return database.Expr{}, weft.WithFields(ErrInvalidQuery, map[string]any{"param": "filter"},
			"search: at most %d bytes", MaxSearchLength)
	}
	if !utf8.ValidString(term) {
		return database.Expr{}, weft.WithFields(ErrInvalidQuery, map[string]any{"param": "filter"}, "search: not valid UTF-8")
	}
	if strings.ContainsRune(term, 0) { // no stored text holds NUL
		return database.Expr{SQL: "1 = 0"}, nil
	}
	return s.dialect.TextSearch("calls", "c", searchColumns, spellSymbols(term)), nil
}

// spellSymbols writes every character outside ASCII that is neither a letter
// nor a digit (emoji, symbols, marks, punctuation of other scripts) as
// "zz<hex code point>zz". A trigram index keeps only runs of letters and
// digits, so a term of emoji alone would have no trigram to look up and would
// read the whole index; spelled out, it is found like a word. The stored text
// and the term are spelled alike, so a substring of one is still a substring
// of the other; only text that itself holds such a spelling could match by
// accident.
func spellSymbols(s string) string {
	i := strings.IndexFunc(s, isSymbol)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.WriteString(s[:i])
	for _, r := range s[i:] {
		if isSymbol(r) {
			fmt.Fprintf(&b, "zz%xzz", r)
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func isSymbol(r rune) bool {
	return r > unicode.MaxASCII && !unicode.IsLetter(r) && !unicode.IsDigit(r)
}
