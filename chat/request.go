package chat

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/weftlabs/weft"
)

// Streaming reports whether the client asked for a stream.
func (r *CompletionRequest) Streaming() bool { return r.Stream != nil && *r.Stream }

// IncludeUsage reports stream_options.include_usage.
func (r *CompletionRequest) IncludeUsage() bool {
	v, _ := r.StreamOptions["include_usage"].(bool)
	return v
}

// has reports whether the raw request carries key with a non-null value.
func (r *CompletionRequest) has(key string) bool {
	v, ok := r.field(key)
	return ok && !bytes.Equal(v, []byte("null"))
}

// field returns the raw value of a top-level member (the last one when the
// key repeats, as JSON decoders read it).
func (r *CompletionRequest) field(key string) ([]byte, bool) {
	for i := len(r.members) - 1; i >= 0; i-- {
		if r.members[i].key == key {
			return r.members[i].value, true
		}
	}
	return nil, false
}

// ParseRequest decodes a raw chat-completion request. A body that is not a
// JSON object, or a known field of the wrong JSON type, is ErrMalformed with
// the field as param; the vLLM rules are checked by [Validate].
func ParseRequest(raw []byte) (*CompletionRequest, error) {
	req := &CompletionRequest{raw: raw}
	if err := json.Unmarshal(raw, req); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			return nil, typeError(typeErr)
		}
		return nil, malformed("body", "json_invalid", "JSON decode error")
	}
	members, ok := topLevelMembers(raw)
	if !ok {
		return nil, malformed("body", "dict_type", "Input should be a valid dictionary")
	}
	req.members = members
	if len(req.Messages) == 0 || bytes.Equal(req.Messages, []byte("null")) {
		return nil, malformed("messages", "missing", "Field required")
	}
	if req.Messages[0] != '[' {
		return nil, malformed("messages", "list_type", "Input should be a valid list")
	}
	return req, nil
}

// typeError reports a field of the wrong JSON type the way vLLM does: its own
// text for the logprob counts, pydantic's otherwise.
func typeError(e *json.UnmarshalTypeError) error {
	field, _, _ := strings.Cut(e.Field, ".")
	if field == "" {
		field = "body"
	}
	switch field {
	case "top_logprobs", "prompt_logprobs":
		return invalid(field, "`%s` must be an integer.", field)
	case "seed", "priority":
		if digits, ok := strings.CutPrefix(e.Value, "number "); ok && !strings.ContainsAny(digits, ".eE") {
			return malformed(field, "less_than_equal", "Input should be between -9223372036854775808 and 9223372036854775807")
		}
	}
	kind := "value"
	switch e.Type.Kind().String() {
	case "int64", "int":
		kind = "a valid integer"
	case "float64":
		kind = "a valid number"
	case "bool":
		kind = "a valid boolean"
	case "string":
		kind = "a valid string"
	case "slice":
		kind = "a valid list"
	case "map", "struct":
		kind = "a valid dictionary"
	}
	if e.Field == "" {
		return malformed("body", "dict_type", "Input should be a valid dictionary")
	}
	return malformed(e.Field, "type_error", "Input should be "+kind)
}

// malformed renders a pydantic-style error the way vLLM's handler formats it.
func malformed(field, errType, msg string) error {
	loc := "'body'"
	if field != "body" {
		loc += ", '" + field + "'"
	}
	text := fmt.Sprintf("1 validation error:\n  {'type': '%s', 'loc': (%s), 'msg': '%s'}", errType, loc, msg)
	if field == "body" {
		return weft.Errorf(ErrMalformed, "%s", text)
	}
	return weft.WithFields(ErrMalformed, map[string]any{"param": field}, "%s", text)
}
