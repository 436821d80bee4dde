package trace

import (
	"encoding/json"
	"strconv"
	"time"
	"unicode/utf8"
)

// ScanBatch decodes the usual upsert_batch body, {"batch": [{"mode":
// "start"|"end", "req": {"start"|"end": {…}}}, …]}, in a single pass over its
// bytes, checking JSON syntax as it goes. The free-form members (inputs,
// attributes, otel_dump, output, summary) are sub-slices of body, not copies:
// body must stay unchanged while the batch is in use.
//
// ok is false for anything it does not handle the way encoding/json does in
// one obvious way: another shape or key spelling, escaped or non-ASCII keys,
// keys differing from a field name only in case, repeated fields, a null
// record, a value of the wrong type, nesting deeper than maxScanDepth, any
// syntax error. The caller then decodes the body the general way, which gives
// the same result or the exact error. When ok is true, every item's Start or
// End equals what json.Unmarshal of its req into CallStartReq or CallEndReq
// gives.
func ScanBatch(body []byte) (batch []BatchItem, ok bool) {
	s := batchScanner{b: body}
	if !s.token(`{`) || !s.token(`"batch"`) || !s.token(`:`) || !s.token(`[`) {
		return nil, false
	}
	batch = []BatchItem{}
	if !s.token(`]`) {
		for {
			item, ok := s.item()
			if !ok {
				return nil, false
			}
			batch = append(batch, item)
			if s.token(`]`) {
				break
			}
			if !s.token(`,`) {
				return nil, false
			}
		}
	}
	if !s.token(`}`) {
		return nil, false
	}
	s.space()
	return batch, s.i == len(s.b)
}

// maxScanDepth bounds the nesting ScanBatch follows inside free-form members;
// deeper bodies take the general path (encoding/json allows 10,000 levels).
const maxScanDepth = 1000

type batchScanner struct {
	b []byte
	i int
}

func (s *batchScanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// token skips white space and then tok, reporting whether tok was there.
func (s *batchScanner) token(tok string) bool {
	s.space()
	if rest := s.b[s.i:]; len(rest) < len(tok) || string(rest[:len(tok)]) != tok {
		return false
	}
	s.i += len(tok)
	return true
}

// item reads {"mode": "start"|"end", "req": {…}}.
func (s *batchScanner) item() (BatchItem, bool) {
	if !s.token(`{`) || !s.token(`"mode"`) || !s.token(`:`) {
		return BatchItem{}, false
	}
	item := BatchItem{}
	switch {
	case s.token(`"start"`):
		item.Mode = ModeStart
	case s.token(`"end"`):
		item.Mode = ModeEnd
	default:
		return item, false
	}
	if !s.token(`,`) || !s.token(`"req"`) || !s.token(`:`) {
		return item, false
	}
	if item.Mode == ModeStart {
		var w startedCallWire
		if !s.object(reqStartFields, func(int) bool { return s.object(startFieldNames, func(f int) bool { return s.startField(&w, f) }) }) {
			return item, false
		}
		call := w.call()
		item.Start = &call
	} else {
		var w endedCallWire
		if !s.object(reqEndFields, func(int) bool { return s.object(endFieldNames, func(f int) bool { return s.endField(&w, f) }) }) {
			return item, false
		}
		call := w.call()
		item.End = &call
	}
	return item, s.token(`}`)
}

// The members ScanBatch decodes, by object; the index is what object passes
// to its value reader.
var (
	reqStartFields  = []string{"start"}
	reqEndFields    = []string{"end"}
	startFieldNames = []string{"project_id", "id", "op_name", "display_name", "trace_id", "parent_id", "thread_id", "turn_id",
		"started_at", "attributes", "inputs", "otel_dump", "pf_user_id", "pf_run_id", "pf_run_step", "wb_user_id", "wb_run_id", "wb_run_step"}
	endFieldNames = []string{"project_id", "id", "ended_at", "summary", "exception", "output", "display_name", "pf_run_step_end", "wb_run_step_end"}
)

func (s *batchScanner) startField(w *startedCallWire, f int) bool {
	switch f {
	case 0:
		return s.str(&w.ProjectID)
	case 1:
		return s.str(&w.ID)
	case 2:
		return s.str(&w.OpName)
	case 3:
		return s.strPtr(&w.DisplayName)
	case 4:
		return s.str(&w.TraceID)
	case 5:
		return s.strPtr(&w.ParentID)
	case 6:
		return s.strPtr(&w.ThreadID)
	case 7:
		return s.strPtr(&w.TurnID)
	case 8:
		return s.time(&w.StartedAt)
	case 9:
		return s.raw(&w.Attributes)
	case 10:
		return s.raw(&w.Inputs)
	case 11:
		return s.raw(&w.OtelDump)
	case 12:
		return s.strPtr(&w.PfUserID)
	case 13:
		return s.strPtr(&w.PfRunID)
	case 14:
		return s.int64Ptr(&w.PfRunStep)
	case 15:
		return s.strPtr(&w.WbUserID)
	case 16:
		return s.strPtr(&w.WbRunID)
	default:
		return s.int64Ptr(&w.WbRunStep)
	}
}

func (s *batchScanner) endField(w *endedCallWire, f int) bool {
	switch f {
	case 0:
		return s.str(&w.ProjectID)
	case 1:
		return s.str(&w.ID)
	case 2:
		return s.time(&w.EndedAt)
	case 3:
		return s.raw(&w.Summary)
	case 4:
		return s.strPtr(&w.Exception)
	case 5:
		return s.raw(&w.Output)
	case 6:
		return s.strPtr(&w.DisplayName)
	case 7:
		return s.int64Ptr(&w.PfRunStepEnd)
	default:
		return s.int64Ptr(&w.WbRunStepEnd)
	}
}

// object reads an object. A key equal to names[f] has its value read by
// value(f); a repeated one declines, as does any other key that encoding/json
// could match to a name (it matches case-insensitively). Other keys are
// skipped, as encoding/json ignores them.
func (s *batchScanner) object(names []string, value func(f int) bool) bool {
	if !s.token(`{`) {
		return false
	}
	if s.token(`}`) {
		return true
	}
	var seen uint64
	for {
		s.space()
		key, ok := s.key()
		if !ok || !s.token(`:`) {
			return false
		}
		s.space()
		f := fieldIndex(names, key)
		switch {
		case f >= 0:
			if seen&(1<<f) != 0 || !value(f) {
				return false
			}
			seen |= 1 << f
		case foldsToName(names, key):
			return false
		default:
			if !s.skipValue(0) {
				return false
			}
		}
		if s.token(`}`) {
			return true
		}
		if !s.token(`,`) {
			return false
		}
	}
}

func fieldIndex(names []string, key []byte) int {
	for f, name := range names {
		if string(key) == name {
			return f
		}
	}
	return -1
}

// foldsToName reports whether key (printable ASCII, see key) equals a name
// ignoring case.
func foldsToName(names []string, key []byte) bool {
	for _, name := range names {
		if len(key) == len(name) && asciiEqualFold(key, name) {
			return true
		}
	}
	return false
}

func asciiEqualFold(key []byte, name string) bool {
	for i, c := range key {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != name[i] {
			return false
		}
	}
	return true
}

// key reads a member name and returns it without its quotes. Names with
// escapes or bytes outside printable ASCII decline: encoding/json unescapes
// them and folds Unicode case when matching fields.
func (s *batchScanner) key() ([]byte, bool) {
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return nil, false
	}
	for j := s.i + 1; j < len(s.b); j++ {
		switch c := s.b[j]; {
		case c == '"':
			key := s.b[s.i+1 : j]
			s.i = j + 1
			return key, true
		case c == '\\' || c < 0x20 || c >= utf8.RuneSelf:
			return nil, false
		}
	}
	return nil, false
}

// str reads a string or null (which leaves dst alone, as encoding/json does).
func (s *batchScanner) str(dst *string) bool {
	if s.token(`null`) {
		return true
	}
	v, ok := s.stringValue()
	*dst = v
	return ok
}

// strPtr reads a string or null (which sets dst to nil).
func (s *batchScanner) strPtr(dst **string) bool {
	if s.token(`null`) {
		*dst = nil
		return true
	}
	v, ok := s.stringValue()
	*dst = &v
	return ok
}

// stringValue reads a string. Strings with escapes or invalid UTF-8, which
// are rare in typed fields, are unquoted by encoding/json itself.
func (s *batchScanner) stringValue() (string, bool) {
	start := s.i
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return "", false
	}
	plain := true
	for j := s.i + 1; j < len(s.b); j++ {
		c := s.b[j]
		if c == '"' {
			s.i = j + 1
			raw := s.b[start+1 : j]
			if plain || utf8.Valid(raw) {
				return string(raw), true
			}
			var v string
			return v, json.Unmarshal(s.b[start:s.i], &v) == nil
		}
		if c == '\\' {
			s.i = start
			if !s.skipString() {
				return "", false
			}
			var v string
			return v, json.Unmarshal(s.b[start:s.i], &v) == nil
		}
		if c < 0x20 {
			return "", false
		}
		if c >= utf8.RuneSelf {
			plain = false
		}
	}
	return "", false
}

// int64Ptr reads an integer or null (which sets dst to nil).
func (s *batchScanner) int64Ptr(dst **int64) bool {
	if s.token(`null`) {
		*dst = nil
		return true
	}
	start := s.i
	if !s.skipNumber() {
		return false
	}
	n, err := strconv.ParseInt(string(s.b[start:s.i]), 10, 64)
	*dst = &n
	return err == nil
}

// time reads a value the way encoding/json does for a time.Time: by handing
// it to UnmarshalJSON (null leaves dst alone; other non-strings fail).
func (s *batchScanner) time(dst *time.Time) bool {
	start := s.i
	if !s.skipValue(0) {
		return false
	}
	return dst.UnmarshalJSON(s.b[start:s.i]) == nil
}

// raw reads any value and keeps its text, a sub-slice of the body whose
// capacity ends with it so that appending to it cannot touch the body.
func (s *batchScanner) raw(dst *json.RawMessage) bool {
	start := s.i
	if !s.skipValue(0) {
		return false
	}
	*dst = s.b[start:s.i:s.i]
	return true
}

// skipValue checks the syntax of the value at s.i and moves past it.
func (s *batchScanner) skipValue(depth int) bool {
	if s.i >= len(s.b) || depth > maxScanDepth {
		return false
	}
	switch s.b[s.i] {
	case '{':
		s.i++
		if s.token(`}`) {
			return true
		}
		for {
			s.space()
			if !s.skipString() || !s.token(`:`) {
				return false
			}
			s.space()
			if !s.skipValue(depth + 1) {
				return false
			}
			if s.token(`}`) {
				return true
			}
			if !s.token(`,`) {
				return false
			}
		}
	case '[':
		s.i++
		if s.token(`]`) {
			return true
		}
		for {
			s.space()
			if !s.skipValue(depth + 1) {
				return false
			}
			if s.token(`]`) {
				return true
			}
			if !s.token(`,`) {
				return false
			}
		}
	case '"':
		return s.skipString()
	case 't':
		return s.token(`true`)
	case 'f':
		return s.token(`false`)
	case 'n':
		return s.token(`null`)
	default:
		return s.skipNumber()
	}
}

// skipString checks the string at s.i and moves past it. Like encoding/json
// it refuses control characters and bad escapes but not invalid UTF-8.
func (s *batchScanner) skipString() bool {
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return false
	}
	for j := s.i + 1; j < len(s.b); j++ {
		switch c := s.b[j]; {
		case c == '"':
			s.i = j + 1
			return true
		case c < 0x20:
			return false
		case c == '\\':
			j++
			if j >= len(s.b) {
				return false
			}
			switch s.b[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if j+4 >= len(s.b) {
					return false
				}
				for _, h := range s.b[j+1 : j+5] {
					if !isHex(h) {
						return false
					}
				}
				j += 4
			default:
				return false
			}
		}
	}
	return false
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// skipNumber checks the JSON number at s.i and moves past it. What follows is
// checked by the caller, which expects a delimiter.
func (s *batchScanner) skipNumber() bool {
	j := s.i
	if j < len(s.b) && s.b[j] == '-' {
		j++
	}
	switch {
	case j < len(s.b) && s.b[j] == '0':
		j++
	case j < len(s.b) && '1' <= s.b[j] && s.b[j] <= '9':
		j = skipDigits(s.b, j)
	default:
		return false
	}
	if j < len(s.b) && s.b[j] == '.' {
		k := skipDigits(s.b, j+1)
		if k == j+1 {
			return false
		}
		j = k
	}
	if j < len(s.b) && (s.b[j] == 'e' || s.b[j] == 'E') {
		j++
		if j < len(s.b) && (s.b[j] == '+' || s.b[j] == '-') {
			j++
		}
		k := skipDigits(s.b, j)
		if k == j {
			return false
		}
		j = k
	}
	s.i = j
	return true
}

func skipDigits(b []byte, j int) int {
	for j < len(b) && '0' <= b[j] && b[j] <= '9' {
		j++
	}
	return j
}
