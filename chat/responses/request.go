package responses

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"

	"github.com/google/uuid"
)

// Limits of one request, each a Config field of the server (with the
// Default… constants its flags use).
const (
	// DefaultMaxInputItems bounds the items of a request's input plus the
	// history its previous_response_id chain brings.
	DefaultMaxInputItems = 4096
	// DefaultMaxChainDepth bounds how many previous responses a chain
	// reaches back through.
	DefaultMaxChainDepth = 256
)

// ParseRequest decodes a raw Responses request and checks it (Validate).
// A body that is not a JSON object, or a field of the wrong JSON type, is
// ErrInvalid naming the field.
func ParseRequest(raw []byte) (*Request, error) {
	var r Request
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&r); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) && typeErr.Field != "" {
			return nil, invalid(typeErr.Field, "Invalid type for '%s': expected %s.", typeErr.Field, jsonKind(typeErr.Type.Kind()))
		}
		return nil, invalid("body", "The body is not a valid JSON object.")
	}
	if dec.More() {
		return nil, invalid("body", "The body is not a valid JSON object.")
	}
	return &r, r.Validate()
}

// Validate checks what the Responses API requires and refuses what weft
// does not serve: a missing model or input, tools other than functions,
// background runs, conversations, stored prompts, truncation "auto", an
// unknown text.format.
func (r *Request) Validate() error {
	switch {
	case r.Model == "":
		return invalid("model", "Missing required parameter: 'model'.")
	case isNull(r.Input):
		return invalid("input", "Missing required parameter: 'input'.")
	case r.Input[0] != '"' && r.Input[0] != '[':
		return invalid("input", "Invalid type for 'input': expected a string or an array of input items.")
	case r.Background != nil && *r.Background:
		return invalid("background", "Background responses are not supported.")
	case !isNull(r.Conversation):
		return invalid("conversation", "Conversations are not supported: use previous_response_id.")
	case !isNull(r.Prompt):
		return invalid("prompt", "Stored prompts are not supported.")
	case r.Truncation != nil && *r.Truncation != "disabled":
		return invalid("truncation", "Only truncation 'disabled' is supported.")
	case r.MaxOutputTokens != nil && *r.MaxOutputTokens < 1:
		return invalid("max_output_tokens", "Invalid 'max_output_tokens': integer below minimum value 1.")
	case r.TopLogprobs != nil && (*r.TopLogprobs < 0 || *r.TopLogprobs > 20):
		return invalid("top_logprobs", "Invalid 'top_logprobs': must be between 0 and 20.")
	}
	for i, t := range r.Tools {
		if t.Type != "function" {
			return invalid("tools", "Tool type '%s' of tools[%d] is not supported: only function tools are.", t.Type, i)
		}
		if t.Name == "" {
			return invalid("tools", "Missing required parameter: 'tools[%d].name'.", i)
		}
	}
	if _, err := r.chatToolChoice(); err != nil {
		return err
	}
	if r.Text != nil && r.Text.Format != nil {
		f := r.Text.Format
		switch f.Type {
		case "text", "json_object":
		case "json_schema":
			if f.Name == "" {
				return invalid("text.format.name", "Missing required parameter: 'text.format.name'.")
			}
			if isNull(f.Schema) || f.Schema[0] != '{' {
				return invalid("text.format.schema", "Missing required parameter: 'text.format.schema'.")
			}
		default:
			return invalid("text.format.type", "Invalid value: '%s'. Supported values are: 'text', 'json_object' and 'json_schema'.", f.Type)
		}
	}
	return nil
}

// jsonKind names the JSON type a Go kind decodes from.
func jsonKind(k reflect.Kind) string {
	switch k {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Float32, reflect.Float64:
		return "a number"
	}
	return "an integer"
}

func isNull(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || bytes.Equal(raw, []byte("null"))
}

// InputItems decodes the request's input: a string is one user message.
// Items without an id get one (msg_…, fc_…, rs_…), so that stored items can
// be listed and named. More than maxItems items, an item of a type weft
// does not serve, or a malformed item is ErrInvalid.
func (r *Request) InputItems(maxItems int) ([]InputItem, error) {
	if r.Input[0] == '"' {
		return []InputItem{{Type: "message", ID: newID("msg"), Role: "user", Content: r.Input}}, nil
	}
	var items []InputItem
	if err := json.Unmarshal(r.Input, &items); err != nil {
		return nil, invalid("input", "Invalid input items: %v.", err)
	}
	if len(items) > maxItems {
		return nil, invalid("input", "The input has %d items, at most %d are allowed.", len(items), maxItems)
	}
	for i := range items {
		it := &items[i]
		if it.Type == "" && it.Role != "" {
			it.Type = "message"
		}
		if err := checkItem(it, i); err != nil {
			return nil, err
		}
		if it.ID == "" {
			it.ID = newID(itemPrefix[it.Type])
		}
	}
	return items, nil
}

// itemPrefix is the id prefix of each item type, as OpenAI's.
var itemPrefix = map[string]string{
	"message": "msg", "function_call": "fc", "function_call_output": "fco", "reasoning": "rs",
}

func checkItem(it *InputItem, i int) error {
	switch it.Type {
	case "message":
		switch it.Role {
		case "user", "system", "developer", "assistant":
		default:
			return invalid("input", "Invalid value for 'input[%d].role': '%s'. Supported values are: 'user', 'assistant', 'system' and 'developer'.", i, it.Role)
		}
		if isNull(it.Content) {
			return invalid("input", "Missing required parameter: 'input[%d].content'.", i)
		}
	case "function_call":
		if it.CallID == "" || it.Name == "" {
			return invalid("input", "Missing required parameter: 'input[%d].call_id' and 'name' of a function_call.", i)
		}
	case "function_call_output":
		if it.CallID == "" || isNull(it.Output) {
			return invalid("input", "Missing required parameter: 'input[%d].call_id' and 'output' of a function_call_output.", i)
		}
	case "reasoning":
	case "":
		return invalid("input", "Missing required parameter: 'input[%d].type'.", i)
	default:
		return invalid("input", "Input item type '%s' of input[%d] is not supported.", it.Type, i)
	}
	return nil
}

// newID is an id of the given prefix, ordered by creation time.
func newID(prefix string) string {
	return prefix + "_" + strings.ReplaceAll(uuid.Must(uuid.NewV7()).String(), "-", "")
}
