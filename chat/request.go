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

// Has reports whether the request carries key with a non-null value.
func (r *CompletionRequest) Has(key string) bool {
	v, ok := r.Field(key)
	return ok && !bytes.Equal(v, []byte("null"))
}

// Field returns the raw value of a top-level member as the client sent it
// (the last one when the key repeats, as JSON decoders read it): for a
// member CompletionRequest does not name, or one whose absence, null and
// value differ.
func (r *CompletionRequest) Field(key string) (json.RawMessage, bool) {
	return memberValue(r.members, key)
}

// Decode decodes the whole request into v, a backend's own view of it,
// reporting a field of the wrong JSON type as [ParseRequest] does.
func (r *CompletionRequest) Decode(v any) error { return DecodeBody(r.raw, v) }

// Tenant is the entity whose project the call is traced into: a backend
// that shares one model among tenants keeps their caches and turns apart
// by it.
func (r *CompletionRequest) Tenant() string { return r.tenant }

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
		return nil, Malformed("body", "json_invalid", "JSON decode error")
	}
	members, ok := topLevelMembers(raw)
	if !ok {
		return nil, Malformed("body", "dict_type", "Input should be a valid dictionary")
	}
	req.members = members
	if len(req.Messages) == 0 || bytes.Equal(req.Messages, []byte("null")) {
		return nil, Malformed("messages", "missing", "Field required")
	}
	if req.Messages[0] != '[' {
		return nil, Malformed("messages", "list_type", "Input should be a valid list")
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
		return Invalid(field, "`%s` must be an integer.", field)
	case "seed", "priority":
		if digits, ok := strings.CutPrefix(e.Value, "number "); ok && !strings.ContainsAny(digits, ".eE") {
			return Malformed(field, "less_than_equal", "Input should be between -9223372036854775808 and 9223372036854775807")
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
		return Malformed("body", "dict_type", "Input should be a valid dictionary")
	}
	return Malformed(e.Field, "type_error", "Input should be "+kind)
}

// DecodeBody decodes a JSON object body into v, reporting a wrong shape
// as vLLM's handler does (ErrMalformed naming the field).
func DecodeBody(raw []byte, v any) error {
	if err := json.Unmarshal(raw, v); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			return typeError(typeErr)
		}
		return Malformed("body", "json_invalid", "JSON decode error")
	}
	if _, ok := topLevelMembers(raw); !ok {
		return Malformed("body", "dict_type", "Input should be a valid dictionary")
	}
	return nil
}

// Malformed is ErrMalformed rendered as a pydantic error the way vLLM's
// handler formats it: errType and msg are pydantic's, field the member at
// fault ("body" for the body as a whole).
func Malformed(field, errType, msg string) error {
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
