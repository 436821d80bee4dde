package responses

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// Most chunks of a chat stream are one choice's text delta. The stream's
// cost over chat's is reading each chunk and writing its event, so such a
// chunk is read by scanning its bytes, not by decoding it through
// reflection, and its event is written by appending; any other chunk
// (reasoning, tool calls, refusals, logprobs, usage, errors, several
// choices, anything unexpected) goes the general way.

// textChunk reads a chunk that is one choice whose delta holds content (a
// role besides, or nothing) and maybe a finish reason, and nothing the
// general reading would act on. ok is false for any other chunk, and for
// any JSON it is not sure of.
func textChunk(data []byte) (content string, finish *string, ok bool) {
	s := scan{b: data}
	choices := 0
	ok = s.object(func(key []byte) bool {
		switch string(key) {
		case "choices":
			choices++
			return choices == 1 && s.oneChoice(&content, &finish)
		case "usage", "error":
			return s.null()
		}
		return s.skip()
	})
	return content, finish, ok && s.end()
}

// oneChoice reads an array of exactly one choice: its delta's content and
// its finish reason.
func (s *scan) oneChoice(content *string, finish **string) bool {
	if !s.byte('[') {
		return false
	}
	// A key that repeats goes the general way, whose decoder keeps the
	// last value of each.
	const (
		seenDelta = 1 << iota
		seenRole
		seenContent
		seenFinish
	)
	var seen int
	once := func(key int) bool {
		if seen&key != 0 {
			return false
		}
		seen |= key
		return true
	}
	ok := s.object(func(key []byte) bool {
		switch string(key) {
		case "delta":
			return once(seenDelta) && s.object(func(key []byte) bool {
				switch string(key) {
				case "role":
					return once(seenRole) && s.skip()
				case "content":
					if !once(seenContent) {
						return false
					}
					if s.null() {
						return true
					}
					text, ok := s.str()
					*content = text
					return ok
				}
				return false // reasoning, tool calls, a refusal: the general way
			})
		case "finish_reason":
			if !once(seenFinish) {
				return false
			}
			if s.null() {
				return true
			}
			text, ok := s.str()
			*finish = &text
			return ok
		case "message":
			return s.null()
		}
		return s.skip()
	})
	return ok && seen&seenDelta != 0 && s.byte(']')
}

// scan reads JSON bytes just enough for textChunk.
type scan struct {
	b []byte
	i int
}

func (s *scan) space() {
	for s.i < len(s.b) && (s.b[s.i] == ' ' || s.b[s.i] == '\t' || s.b[s.i] == '\n' || s.b[s.i] == '\r') {
		s.i++
	}
}

// byte consumes c after white space.
func (s *scan) byte(c byte) bool {
	s.space()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

func (s *scan) end() bool {
	s.space()
	return s.i == len(s.b)
}

// null consumes a null.
func (s *scan) null() bool {
	s.space()
	return s.literal("null")
}

// literal consumes word.
func (s *scan) literal(word string) bool {
	if len(s.b)-s.i >= len(word) && string(s.b[s.i:s.i+len(word)]) == word {
		s.i += len(word)
		return true
	}
	return false
}

// object reads an object, calling member with each key (escape-free)
// positioned at its value, which member must consume.
func (s *scan) object(member func(key []byte) bool) bool {
	if !s.byte('{') {
		return false
	}
	if s.byte('}') {
		return true
	}
	for {
		key, ok := s.rawString()
		if !ok || bytes.IndexByte(key, '\\') >= 0 || !s.byte(':') || !member(key) {
			return false
		}
		if s.byte('}') {
			return true
		}
		if !s.byte(',') {
			return false
		}
	}
}

// rawString consumes a string and returns its bytes between the quotes,
// escapes undecoded.
func (s *scan) rawString() ([]byte, bool) {
	if !s.byte('"') {
		return nil, false
	}
	start := s.i
	for s.i < len(s.b) {
		switch c := s.b[s.i]; {
		case c == '"':
			s.i++
			return s.b[start : s.i-1], true
		case c == '\\':
			s.i += 2
		case c < 0x20:
			return nil, false
		default:
			s.i++
		}
	}
	return nil, false
}

// str consumes a string and decodes it as encoding/json does.
func (s *scan) str() (string, bool) {
	start := s.i
	raw, ok := s.rawString()
	if !ok {
		return "", false
	}
	if bytes.IndexByte(raw, '\\') < 0 && utf8.Valid(raw) {
		return string(raw), true
	}
	var text string
	err := json.Unmarshal(s.b[start:s.i], &text)
	return text, err == nil
}

// skip consumes any value.
func (s *scan) skip() bool {
	s.space()
	if s.i >= len(s.b) {
		return false
	}
	switch c := s.b[s.i]; {
	case c == '"':
		_, ok := s.rawString()
		return ok
	case c == '{':
		return s.object(func([]byte) bool { return s.skip() })
	case c == '[':
		s.i++
		if s.byte(']') {
			return true
		}
		for {
			if !s.skip() {
				return false
			}
			if s.byte(']') {
				return true
			}
			if !s.byte(',') {
				return false
			}
		}
	}
	return s.literal("true") || s.literal("false") || s.literal("null") || s.number()
}

// number consumes a JSON number.
func (s *scan) number() bool {
	digits := func() bool {
		start := s.i
		for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
			s.i++
		}
		return s.i > start
	}
	if s.i < len(s.b) && s.b[s.i] == '-' {
		s.i++
	}
	if !digits() {
		return false
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if !digits() {
			return false
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		return digits()
	}
	return true
}

// appendTextDelta appends the output_text.delta event as Stream.write
// writes an event, the same bytes json.Marshal makes of it.
func appendTextDelta(msg []byte, e *textDeltaEvent) []byte {
	msg = append(msg, `event: response.output_text.delta`+"\n"+`data: {"type":"response.output_text.delta","sequence_number":`...)
	msg = strconv.AppendInt(msg, int64(e.SequenceNumber), 10)
	msg = append(msg, `,"item_id":`...)
	msg = appendJSONString(msg, e.ItemID)
	msg = append(msg, `,"output_index":`...)
	msg = strconv.AppendInt(msg, int64(e.OutputIndex), 10)
	msg = append(msg, `,"content_index":`...)
	msg = strconv.AppendInt(msg, int64(e.ContentIndex), 10)
	msg = append(msg, `,"delta":`...)
	msg = appendJSONString(msg, e.Delta)
	return append(msg, `,"logprobs":[]}`+"\n\n"...)
}

// appendJSONString appends text as encoding/json writes a string: plain
// printable ASCII as it is, anything else through json.Marshal.
func appendJSONString(msg []byte, text string) []byte {
	for i := 0; i < len(text); i++ {
		if c := text[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			quoted, _ := json.Marshal(text)
			return append(msg, quoted...)
		}
	}
	msg = append(msg, '"')
	msg = append(msg, text...)
	return append(msg, '"')
}
