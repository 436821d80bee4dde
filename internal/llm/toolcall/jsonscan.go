package toolcall

import "encoding/json"

// member is one top-level member of a JSON object being written: where its
// value's text is and whether that value is complete.
type member struct {
	key        string
	valueStart int
	valueEnd   int // end so far when incomplete
	complete   bool
}

// scanObject reads the top-level members of the JSON object text starts
// with (after white space), as far as text goes. end is the index just
// past the closing brace, or -1 while the object is still open; ok is
// false when the text is not the start of a JSON object.
func scanObject(text string) (members []member, end int, ok bool) {
	i := skipSpace(text, 0)
	if i >= len(text) {
		return nil, -1, true
	}
	if text[i] != '{' {
		return nil, -1, false
	}
	i++
	for {
		i = skipSpace(text, i)
		if i >= len(text) {
			return members, -1, true
		}
		switch text[i] {
		case '}':
			return members, i + 1, true
		case ',':
			i++
			continue
		case '"':
		default:
			return members, -1, false
		}
		keyEnd, closed := stringEnd(text, i)
		if !closed {
			return members, -1, true
		}
		var key string
		if json.Unmarshal([]byte(text[i:keyEnd]), &key) != nil {
			return members, -1, false
		}
		i = skipSpace(text, keyEnd)
		if i >= len(text) {
			return members, -1, true
		}
		if text[i] != ':' {
			return members, -1, false
		}
		i = skipSpace(text, i+1)
		if i >= len(text) {
			return members, -1, true
		}
		valueEnd, complete := valueEnd(text, i)
		members = append(members, member{key: key, valueStart: i, valueEnd: valueEnd, complete: complete})
		if !complete {
			return members, -1, true
		}
		i = valueEnd
	}
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// stringEnd is the index past the closing quote of the string at s[i].
func stringEnd(s string, i int) (int, bool) {
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '"':
			return j + 1, true
		}
	}
	return len(s), false
}

// valueEnd is where the JSON value starting at s[i] ends: strings and
// containers by their closing character, scalars by the first character
// that cannot continue them (a scalar at the very end of s is not known
// to be complete).
func valueEnd(s string, i int) (int, bool) {
	switch s[i] {
	case '"':
		return stringEnd(s, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(s); j++ {
			switch s[j] {
			case '"':
				e, closed := stringEnd(s, j)
				if !closed {
					return len(s), false
				}
				j = e - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, true
				}
			}
		}
		return len(s), false
	}
	for j := i; j < len(s); j++ {
		switch s[j] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return j, true
		}
	}
	return len(s), false
}

// partialSuffix is the length of the longest suffix of s that is a proper
// prefix of tag: text that might still become the tag.
func partialSuffix(s, tag string) int {
	for n := min(len(tag)-1, len(s)); n > 0; n-- {
		if s[len(s)-n:] == tag[:n] {
			return n
		}
	}
	return 0
}
