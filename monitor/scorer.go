package monitor

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/objects/ref"
	"github.com/weftlabs/weft/trace"
)

// Scorer classes a monitor runs. The deterministic ones need no model; the
// judge asks a model served by the chat gateway.
const (
	// ClassValidJSON is Weave's ValidJSONScorer: {"json_valid": bool},
	// whether the text is JSON (a value that is not a string is JSON
	// already).
	ClassValidJSON = "ValidJSONScorer"
	// ClassRegex: {"match": bool}, whether pattern (RE2 syntax) matches
	// somewhere in the text.
	ClassRegex = "RegexScorer"
	// ClassContains: {"contains": bool}, whether the text holds substring
	// (case_sensitive, default true).
	ClassContains = "ContainsScorer"
	// ClassLength: {"length": n, "within_bounds": bool}, the text's length
	// in characters and whether it lies within min_length and max_length
	// (each optional).
	ClassLength = "LengthScorer"
	// ClassJudge is Weave's LLMAsAJudgeScorer (see [Judge]).
	ClassJudge = "LLMAsAJudgeScorer"
)

// Scorer is a scorer object a monitor runs, read from its published value.
// The deterministic classes score from a field of the call: field is a path
// rooted at output (the default), inputs, attributes or summary, whose
// members are separated by dots ("output.choices.0.message.content"; a
// segment of digits indexes a list). A string is scored as its text; any
// other value as its JSON text; a missing one as "".
type Scorer struct {
	// Ref is the scorer's object ref, as the monitor names it.
	Ref string
	// Name is its object id: feedback has type wandb.runnable.<Name>.
	Name   string
	Digest string
	Class  string

	field   []string
	pattern *regexp.Regexp
	substr  string
	fold    bool
	minLen  *int
	maxLen  *int
	// Judge is set for ClassJudge.
	Judge *Judge
}

// maxPatternLength bounds a regex scorer's pattern, in bytes.
const maxPatternLength = 4096

// ParseScorer reads a scorer object version's value; r is its ref.
// Errors are ErrInvalidScorer.
func ParseScorer(r ref.Ref, val json.RawMessage) (*Scorer, error) {
	var head struct {
		ClassName string  `json:"_class_name"`
		Type      string  `json:"_type"`
		Field     *string `json:"field"`
		Pattern   *string `json:"pattern"`
		Substring *string `json:"substring"`
		CaseSens  *bool   `json:"case_sensitive"`
		MinLength *int    `json:"min_length"`
		MaxLength *int    `json:"max_length"`
	}
	if err := json.Unmarshal(val, &head); err != nil {
		return nil, weft.Errorf(ErrInvalidScorer, "scorer %s is not an object", r.Name)
	}
	s := &Scorer{Ref: r.String(), Name: r.Name, Digest: r.Version, Class: head.ClassName}
	if s.Class == "" {
		s.Class = head.Type
	}
	field := "output"
	if head.Field != nil {
		field = *head.Field
	}
	path, err := parseField(field)
	if err != nil {
		return nil, weft.Errorf(ErrInvalidScorer, "scorer %s: %v", r.Name, err)
	}
	s.field = path
	switch s.Class {
	case ClassValidJSON:
	case ClassRegex:
		if head.Pattern == nil || *head.Pattern == "" {
			return nil, weft.Errorf(ErrInvalidScorer, "scorer %s: a RegexScorer needs a pattern", r.Name)
		}
		if len(*head.Pattern) > maxPatternLength {
			return nil, weft.Errorf(ErrInvalidScorer, "scorer %s: the pattern is longer than %d bytes", r.Name, maxPatternLength)
		}
		if s.pattern, err = regexp.Compile(*head.Pattern); err != nil {
			return nil, weft.Errorf(ErrInvalidScorer, "scorer %s: pattern: %v", r.Name, err)
		}
	case ClassContains:
		if head.Substring == nil || *head.Substring == "" {
			return nil, weft.Errorf(ErrInvalidScorer, "scorer %s: a ContainsScorer needs a substring", r.Name)
		}
		s.substr, s.fold = *head.Substring, head.CaseSens != nil && !*head.CaseSens
		if s.fold {
			s.substr = strings.ToLower(s.substr)
		}
	case ClassLength:
		if head.MinLength != nil && *head.MinLength < 0 || head.MaxLength != nil && *head.MaxLength < 0 {
			return nil, weft.Errorf(ErrInvalidScorer, "scorer %s: min_length and max_length must not be negative", r.Name)
		}
		s.minLen, s.maxLen = head.MinLength, head.MaxLength
	case ClassJudge:
		if s.Judge, err = parseJudge(r, val); err != nil {
			return nil, err
		}
	default:
		return nil, weft.Errorf(ErrInvalidScorer, "scorer %s has class %q; a monitor runs %s, %s, %s, %s and %s", r.Name, s.Class,
			ClassValidJSON, ClassRegex, ClassContains, ClassLength, ClassJudge)
	}
	return s, nil
}

// parseField reads a field path: a root (output, inputs, attributes,
// summary) and member names or list indexes after dots.
func parseField(field string) ([]string, error) {
	path := strings.Split(field, ".")
	switch path[0] {
	case "output", "inputs", "attributes", "summary":
	default:
		return nil, weft.Errorf(ErrInvalidScorer, "field %q must start with output, inputs, attributes or summary", field)
	}
	for _, seg := range path[1:] {
		if seg == "" {
			return nil, weft.Errorf(ErrInvalidScorer, "field %q has an empty member name", field)
		}
	}
	return path, nil
}

// Deterministic reports whether the scorer needs no model.
func (s *Scorer) Deterministic() bool { return s.Judge == nil }

// Score scores call with a deterministic scorer; the result is the
// verdict, payload.output of its feedback.
func (s *Scorer) Score(call *trace.Call) json.RawMessage {
	raw := fieldOf(call, s.field)
	var text string
	if len(raw) > 0 && raw[0] == '"' {
		if json.Unmarshal(raw, &text) != nil {
			text = string(raw)
		}
	} else {
		text = string(raw)
	}
	switch s.Class {
	case ClassValidJSON:
		valid := len(raw) > 0 && (raw[0] != '"' || json.Valid([]byte(text)))
		return object("json_valid", valid)
	case ClassRegex:
		return object("match", s.pattern.MatchString(text))
	case ClassContains:
		if s.fold {
			text = strings.ToLower(text)
		}
		return object("contains", strings.Contains(text, s.substr))
	case ClassLength:
		n := utf8.RuneCountInString(text)
		within := (s.minLen == nil || n >= *s.minLen) && (s.maxLen == nil || n <= *s.maxLen)
		return json.RawMessage(`{"length":` + strconv.Itoa(n) + `,"within_bounds":` + strconv.FormatBool(within) + `}`)
	}
	return json.RawMessage("null")
}

func object(key string, v bool) json.RawMessage {
	return json.RawMessage(`{"` + key + `":` + strconv.FormatBool(v) + `}`)
}

// fieldOf returns the JSON value at path in call, nil when there is none.
func fieldOf(call *trace.Call, path []string) json.RawMessage {
	var raw json.RawMessage
	switch path[0] {
	case "output":
		raw = call.Output
	case "inputs":
		raw = call.Inputs
	case "attributes":
		raw = call.Attributes
	case "summary":
		raw = call.Summary
	}
	for _, seg := range path[1:] {
		raw = member(raw, seg)
		if raw == nil {
			return nil
		}
	}
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) && len(path) > 1 {
		return nil
	}
	return raw
}

// member returns a member of an object, or an element of a list by index.
func member(raw json.RawMessage, seg string) json.RawMessage {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil
	}
	switch raw[0] {
	case '{':
		var obj map[string]json.RawMessage
		if json.Unmarshal(raw, &obj) != nil {
			return nil
		}
		return obj[seg]
	case '[':
		i, err := strconv.Atoi(seg)
		if err != nil || i < 0 {
			return nil
		}
		var list []json.RawMessage
		if json.Unmarshal(raw, &list) != nil || i >= len(list) {
			return nil
		}
		return list[i]
	}
	return nil
}
