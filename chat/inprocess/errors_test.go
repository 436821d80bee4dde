package inprocess

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/llm/constrain"
	"github.com/weftlabs/weft/internal/llm/engine"
)

// The engine's plain sentinels take weft's classes, vLLM's error types and
// body fields at the boundary, keeping the engine's message and error.
func TestEngineErrorsMapToClasses(t *testing.T) {
	tests := []struct {
		name    string
		err     error
		class   error
		errType string
		fields  map[string]any
	}{
		{"request", &engine.RequestError{Param: "top_p", Message: "top_p must be in (0, 1], got 0."}, weft.ErrInvalid, "BadRequestError", map[string]any{"param": "top_p"}},
		{"prompt too long", &engine.PromptTooLongError{PromptTokens: 9, MaxModelLen: 8}, weft.ErrInvalid, "BadRequestError", map[string]any{"param": "input_tokens"}},
		{"adapter", fmt.Errorf("%w: /a: no adapter_config.json", engine.ErrAdapter), weft.ErrInvalid, "BadRequestError", nil},
		{"model directory", fmt.Errorf("%w: config.json: missing", engine.ErrModelDir), weft.ErrInvalid, "BadRequestError", nil},
		{"constraint", fmt.Errorf("%w: %w: $ref", engine.ErrInvalidRequest, constrain.ErrUnsupported), weft.ErrInvalid, "BadRequestError", nil},
		{"overloaded", &engine.OverloadedError{RetryAfter: 1500 * time.Millisecond}, weft.ErrUnavailable, "ServiceUnavailableError", map[string]any{"retry_after": 2}},
		{"closed", engine.ErrClosed, weft.ErrUnavailable, "ServiceUnavailableError", nil},
	}
	for _, tc := range tests {
		got := fromEngine(tc.err)
		if weft.ClassOf(got) != tc.class || weft.ErrorType(got) != tc.errType || got.Error() != tc.err.Error() ||
			!errors.Is(got, tc.err) || fmt.Sprint(weft.ErrorFields(got)) != fmt.Sprint(tc.fields) {
			t.Errorf("%s: got %v (class %v, type %q, fields %v), want class %v, type %q, fields %v",
				tc.name, got, weft.ClassOf(got), weft.ErrorType(got), weft.ErrorFields(got), tc.class, tc.errType, tc.fields)
		}
	}
	if err := fromEngine(errors.New("other")); weft.ClassOf(err) != nil {
		t.Errorf("an error of no engine sentinel got class %v", weft.ClassOf(err))
	}
}
