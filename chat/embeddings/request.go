package embeddings

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"math"

	"github.com/weftlabs/weft"
)

// Limits of one request, Config fields of a Service with the Default…
// values its flags use.
const (
	// DefaultMaxInputs bounds the inputs of one request (OpenAI's is 2048).
	DefaultMaxInputs = 2048
	// DefaultMaxInputTokens bounds one input's tokens, after
	// truncate_prompt_tokens (and the model's own length).
	DefaultMaxInputTokens = 8192
	// DefaultMaxBatchTokens bounds the tokens one batched pass of the model
	// runs: requests queued together share a pass up to it.
	DefaultMaxBatchTokens = 16384
)

// Errors, with OpenAI's error type; a "param" field names the field at
// fault.
var (
	// ErrInvalid is a request that is not a valid embeddings request: 400.
	ErrInvalid = weft.DefineError(weft.ErrInvalid, "invalid_request_error", "invalid request")
	// ErrModelNotFound is a model no embedding route serves: 404.
	ErrModelNotFound = weft.DefineError(weft.ErrNotFound, "NotFoundError", "model not found")
)

func invalid(param, format string, args ...any) error {
	return weft.WithFields(ErrInvalid, map[string]any{"param": param}, format, args...)
}

// Request is the body of POST /v1/embeddings (OpenAI's, with vLLM's
// truncate_prompt_tokens).
type Request struct {
	Model string `json:"model"`
	// Input is a string, a list of strings, a list of token ids or a list
	// of lists of token ids.
	Input json.RawMessage `json:"input"`
	// EncodingFormat is "float" (the default) or "base64": the vector's
	// float32 values, little-endian, in standard base64.
	EncodingFormat *string `json:"encoding_format"`
	// Dimensions truncates each vector to that many elements (Matryoshka
	// models only) before normalising.
	Dimensions *int `json:"dimensions"`
	// TruncatePromptTokens keeps each input's last n tokens; -1 the model's
	// length.
	TruncatePromptTokens *int    `json:"truncate_prompt_tokens"`
	User                 *string `json:"user"`
}

// Input is one input: its text or its token ids.
type Input struct {
	Text   string
	Tokens []int32
	IsText bool
}

// ParseRequest decodes and checks a raw embeddings request: its inputs
// (at most maxInputs; none empty), the encoding format and the field
// types.
func ParseRequest(raw []byte, maxInputs int) (*Request, []Input, error) {
	var r Request
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, nil, invalid("body", "The body is not a valid embeddings request: %v.", err)
	}
	switch {
	case r.Model == "":
		return nil, nil, invalid("model", "Missing required parameter: 'model'.")
	case r.EncodingFormat != nil && *r.EncodingFormat != "float" && *r.EncodingFormat != "base64":
		return nil, nil, invalid("encoding_format", "Invalid value: '%s'. Supported values are: 'float' and 'base64'.", *r.EncodingFormat)
	case r.Dimensions != nil && *r.Dimensions < 1:
		return nil, nil, invalid("dimensions", "Invalid 'dimensions': integer below minimum value 1.")
	case r.TruncatePromptTokens != nil && *r.TruncatePromptTokens < -1:
		return nil, nil, invalid("truncate_prompt_tokens", "Invalid 'truncate_prompt_tokens': -1 or a positive integer.")
	}
	inputs, err := parseInput(r.Input)
	if err != nil {
		return nil, nil, err
	}
	if len(inputs) > maxInputs {
		return nil, nil, invalid("input", "The input has %d items, at most %d are allowed.", len(inputs), maxInputs)
	}
	return &r, inputs, nil
}

func parseInput(raw json.RawMessage) ([]Input, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, invalid("input", "Missing required parameter: 'input'.")
	}
	var text string
	if json.Unmarshal(raw, &text) == nil {
		if text == "" {
			return nil, invalid("input", "'input' cannot be an empty string.")
		}
		return []Input{{Text: text, IsText: true}}, nil
	}
	var texts []string
	if json.Unmarshal(raw, &texts) == nil && len(texts) > 0 {
		out := make([]Input, len(texts))
		for i, t := range texts {
			if t == "" {
				return nil, invalid("input", "'input[%d]' cannot be an empty string.", i)
			}
			out[i] = Input{Text: t, IsText: true}
		}
		return out, nil
	}
	var ids []int32
	if json.Unmarshal(raw, &ids) == nil && len(ids) > 0 {
		return []Input{{Tokens: ids}}, nil
	}
	var lists [][]int32
	if json.Unmarshal(raw, &lists) == nil && len(lists) > 0 {
		out := make([]Input, len(lists))
		for i, l := range lists {
			if len(l) == 0 {
				return nil, invalid("input", "'input[%d]' cannot be an empty list of tokens.", i)
			}
			out[i] = Input{Tokens: l}
		}
		return out, nil
	}
	return nil, invalid("input", "'input' must be a non-empty string, list of strings, list of token ids or list of lists of token ids.")
}

// Response is the answer of POST /v1/embeddings.
type Response struct {
	Object string      `json:"object"` // "list"
	Data   []Embedding `json:"data"`
	Model  string      `json:"model"`
	Usage  Usage       `json:"usage"`
}

// Embedding is one input's vector: a list of numbers, or a base64 string.
type Embedding struct {
	Object    string `json:"object"` // "embedding"
	Index     int    `json:"index"`
	Embedding any    `json:"embedding"`
}

// Usage counts the inputs' tokens.
type Usage struct {
	PromptTokens int `json:"prompt_tokens"`
	TotalTokens  int `json:"total_tokens"`
}

// NewResponse is the answer for vectors in the request's encoding format.
func NewResponse(r *Request, vectors [][]float32, promptTokens int) *Response {
	res := &Response{Object: "list", Model: r.Model, Usage: Usage{PromptTokens: promptTokens, TotalTokens: promptTokens}}
	b64 := r.EncodingFormat != nil && *r.EncodingFormat == "base64"
	for i, v := range vectors {
		e := Embedding{Object: "embedding", Index: i, Embedding: v}
		if b64 {
			e.Embedding = Base64(v)
		}
		res.Data = append(res.Data, e)
	}
	return res
}

// Base64 is v as OpenAI's base64 encoding format: its float32 values,
// little-endian, in standard base64.
func Base64(v []float32) string {
	buf := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(x))
	}
	return base64.StdEncoding.EncodeToString(buf)
}
