package tokenizer

import (
	"sort"
	"strings"
	"unicode/utf8"
)

// AddedToken is a token of tokenizer.json's added_tokens: matched in the raw
// input before anything else runs, and never split by the model.
type AddedToken struct {
	ID      int
	Content string
	// Special tokens (BOS, EOS, chat markers) are the ones decoding can skip.
	Special bool
	// SingleWord: match only where no word character touches the token.
	SingleWord bool
	// LStrip and RStrip: the token takes the white space on its left or
	// right with it.
	LStrip, RStrip bool
	// Normalized: the token is matched in the normalized text rather than
	// in the raw input.
	Normalized bool
}

// addedMatcher finds added tokens in text: at the leftmost position where
// any matches, the longest one (Aho-Corasick's leftmost-longest).
type addedMatcher struct {
	entries []addedEntry // sorted by text
	// first marks the bytes an added token can start with, to skip the rest
	// of the text quickly.
	first [256]bool
}

// addedEntry is the text an added token is matched as: its content, or for
// a normalized token, its content after the normalizer.
type addedEntry struct {
	text  string
	token *AddedToken
}

// newAddedMatcher returns nil when there is nothing to match.
func newAddedMatcher(entries []addedEntry) *addedMatcher {
	m := &addedMatcher{}
	for _, e := range entries {
		if e.text != "" {
			m.entries = append(m.entries, e)
			m.first[e.text[0]] = true
		}
	}
	if len(m.entries) == 0 {
		return nil
	}
	sort.Slice(m.entries, func(i, j int) bool { return m.entries[i].text < m.entries[j].text })
	return m
}

// longestAt is the longest entry s[i:] starts with.
func (m *addedMatcher) longestAt(s string, i int) (addedEntry, bool) {
	rest := s[i:]
	// Candidates share a first byte; the sorted order keeps them together.
	k := sort.Search(len(m.entries), func(k int) bool { return m.entries[k].text >= rest[:1] })
	var best addedEntry
	found := false
	for ; k < len(m.entries) && m.entries[k].text[0] == rest[0]; k++ {
		e := m.entries[k]
		if strings.HasPrefix(rest, e.text) && len(e.text) > len(best.text) {
			best, found = e, true
		}
	}
	return best, found
}

// segment is a part of the input: an added token, or text between them.
type segment struct {
	text    string
	token   *AddedToken // nil for text
	atStart bool        // begins at offset 0 of the input
}

// split cuts s at the added tokens it finds, with the reference
// implementation's handling of single_word, lstrip and rstrip, appending
// the segments to out. atStart says whether s begins the input.
func (m *addedMatcher) split(s string, atStart bool, out []segment) []segment {
	if m == nil || s == "" {
		return append(out, segment{text: s, atStart: atStart})
	}
	startOffset := 0
	for i := 0; i < len(s); {
		if !m.first[s[i]] {
			i++
			continue
		}
		e, ok := m.longestAt(s, i)
		if !ok {
			i++
			continue
		}
		start, stop := i, i+len(e.text)
		// The search goes on after a match whether or not it is kept.
		i = stop
		if e.token.SingleWord {
			before, _ := utf8.DecodeLastRuneInString(s[:start])
			after, _ := utf8.DecodeRuneInString(s[stop:])
			if start > 0 && isWordChar(before) || stop < len(s) && isWordChar(after) {
				continue
			}
		}
		if e.token.LStrip {
			start = max(len(strings.TrimRightFunc(s[:start], isWhiteSpace)), startOffset)
		}
		if e.token.RStrip {
			stop = len(s) - len(strings.TrimLeftFunc(s[stop:], isWhiteSpace))
			i = stop
		}
		if startOffset < start {
			out = append(out, segment{text: s[startOffset:start], atStart: atStart && startOffset == 0})
		}
		out = append(out, segment{text: s[start:stop], token: e.token, atStart: atStart && start == 0})
		startOffset = stop
	}
	if startOffset < len(s) {
		out = append(out, segment{text: s[startOffset:], atStart: atStart && startOffset == 0})
	}
	return out
}
