package chat

import (
	"bytes"
	"encoding/json"
	"slices"
)

// member is one top-level member of a JSON object as it appears in the raw
// text: its key, its value's bytes and the span of the whole `"key": value`.
type member struct {
	key        string
	value      []byte
	start, end int
}

// memberValue is the value of the last member named key (the one JSON
// decoders read when a key repeats).
func memberValue(members []member, key string) (json.RawMessage, bool) {
	for i := len(members) - 1; i >= 0; i-- {
		if members[i].key == key {
			return members[i].value, true
		}
	}
	return nil, false
}

// topLevelMembers splits a valid JSON object into its members without
// decoding the values. It reports false when raw is not an object.
func topLevelMembers(raw []byte) ([]member, bool) {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return nil, false
	}
	var members []member
	i = skipSpace(raw, i+1)
	for i < len(raw) && raw[i] != '}' {
		start := i
		keyEnd := skipString(raw, i)
		keyRaw := raw[i:keyEnd]
		var key string
		if bytes.IndexByte(keyRaw, '\\') >= 0 {
			if json.Unmarshal(keyRaw, &key) != nil {
				return nil, false
			}
		} else {
			key = string(keyRaw[1 : len(keyRaw)-1])
		}
		i = skipSpace(raw, keyEnd)
		if i >= len(raw) || raw[i] != ':' {
			return nil, false
		}
		valueStart := skipSpace(raw, i+1)
		valueEnd := skipValue(raw, valueStart)
		members = append(members, member{key: key, value: raw[valueStart:valueEnd], start: start, end: valueEnd})
		i = skipSpace(raw, valueEnd)
		if i < len(raw) && raw[i] == ',' {
			i = skipSpace(raw, i+1)
		}
	}
	return members, i < len(raw)
}

func skipSpace(raw []byte, i int) int {
	for i < len(raw) && (raw[i] == ' ' || raw[i] == '\t' || raw[i] == '\n' || raw[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at raw[i] ('"').
func skipString(raw []byte, i int) int {
	for i++; i < len(raw); i++ {
		switch raw[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(raw)
}

// skipValue returns the index after the value starting at raw[i].
func skipValue(raw []byte, i int) int {
	if i >= len(raw) {
		return i
	}
	switch raw[i] {
	case '"':
		return skipString(raw, i)
	case '{', '[':
		depth := 0
		for i < len(raw) {
			switch raw[i] {
			case '"':
				i = skipString(raw, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	default: // number, true, false, null
		for i < len(raw) && raw[i] != ',' && raw[i] != '}' && raw[i] != ']' && raw[i] != ' ' && raw[i] != '\n' && raw[i] != '\r' && raw[i] != '\t' {
			i++
		}
		return i
	}
}

// patchObject rewrites a JSON object: members named in edits get the edited
// value (a nil value removes them), keys of edits the object lacks are
// appended in key order, and every other member is copied byte for byte.
func patchObject(raw []byte, members []member, edits map[string]json.RawMessage) []byte {
	out := make([]byte, 0, len(raw)+64)
	out = append(out, '{')
	written := make(map[string]bool, len(edits))
	add := func(key string, value []byte) {
		if len(out) > 1 {
			out = append(out, ',')
		}
		quoted, _ := json.Marshal(key)
		out = append(append(append(out, quoted...), ':'), value...)
	}
	for _, m := range members {
		value, edited := edits[m.key]
		switch {
		case !edited:
			if len(out) > 1 {
				out = append(out, ',')
			}
			out = append(out, raw[m.start:m.end]...)
		case value != nil && !written[m.key]:
			add(m.key, value)
			written[m.key] = true
		}
	}
	keys := make([]string, 0, len(edits))
	for key, value := range edits {
		if value != nil && !written[key] {
			keys = append(keys, key)
		}
	}
	slices.Sort(keys)
	for _, key := range keys {
		add(key, edits[key])
	}
	return append(out, '}')
}
