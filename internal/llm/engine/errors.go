package engine

import (
	"errors"
	"fmt"
	"time"
)

// Errors. The engine knows nothing of HTTP: whoever serves it maps these
// sentinels to its own error classes (package chat: 400 for a request or
// model directory at fault, 503 for an engine overloaded or closed). The
// messages of the request errors are vLLM's.
var (
	// ErrInvalidRequest is a request whose parameters break a rule (a
	// sampling option out of range, a token id outside the vocabulary, n > 1
	// with greedy sampling, ...). The message names the parameter.
	ErrInvalidRequest = errors.New("invalid request")
	// ErrPromptTooLong is a prompt that, alone or with max_tokens, does not fit
	// the model's context; errors.As gives the *PromptTooLongError with the
	// numbers.
	ErrPromptTooLong = errors.New("prompt too long")
	// ErrOverloaded is a request the engine could not admit: its queue was
	// full, or the KV cache budget did not free room for it within
	// ModelConfig.MaxQueueWait. errors.As gives the *OverloadedError with the
	// retry-after hint.
	ErrOverloaded = errors.New("The engine is currently overloaded, please try again later")
	// ErrClosed is a request made to, or cut off by, an engine being closed.
	ErrClosed = errors.New("the local engine is closed")
	// ErrModelDir is a model directory that cannot be served: a missing or
	// malformed file, or a field asking for something the engine does not
	// implement. The message names the file and field.
	ErrModelDir = errors.New("model directory cannot be served")
)

// PromptTooLongError carries what vLLM's 400 message states. MaxTokens is 0
// when the prompt alone reaches the context (PromptTokens >= MaxModelLen);
// otherwise the prompt fits but PromptTokens + MaxTokens > MaxModelLen.
type PromptTooLongError struct {
	PromptTokens int
	MaxTokens    int
	MaxModelLen  int
}

// Error is vLLM's message for the case.
func (e *PromptTooLongError) Error() string {
	if e.MaxTokens == 0 {
		return fmt.Sprintf("This model's maximum context length is %d tokens. However, your request has %d input tokens. "+
			"Please reduce the length of the input messages.", e.MaxModelLen, e.PromptTokens)
	}
	return fmt.Sprintf("'max_tokens' or 'max_completion_tokens' is too large: %d. This model's maximum context length is %d "+
		"tokens and your request has %d input tokens (%d > %d - %d).",
		e.MaxTokens, e.MaxModelLen, e.PromptTokens, e.MaxTokens, e.MaxModelLen, e.PromptTokens)
}

// Unwrap makes errors.Is(err, ErrPromptTooLong) hold.
func (e *PromptTooLongError) Unwrap() error { return ErrPromptTooLong }

// Param is the request field vLLM names in the error: input_tokens when the
// prompt alone is too long, max_tokens otherwise.
func (e *PromptTooLongError) Param() string {
	if e.MaxTokens == 0 {
		return "input_tokens"
	}
	return "max_tokens"
}

// RequestError is an ErrInvalidRequest naming the request field at fault,
// the "param" of vLLM's error body.
type RequestError struct {
	Param   string
	Message string
}

func (e *RequestError) Error() string { return e.Message }

// Unwrap makes errors.Is(err, ErrInvalidRequest) hold.
func (e *RequestError) Unwrap() error { return ErrInvalidRequest }

// Param is the request field err names: a *RequestError's Param, a
// *PromptTooLongError's, or "" when err names none.
func Param(err error) string {
	var req *RequestError
	if errors.As(err, &req) {
		return req.Param
	}
	var long *PromptTooLongError
	if errors.As(err, &long) {
		return long.Param()
	}
	return ""
}

// OverloadedError is an ErrOverloaded with the time after which a retry may
// succeed (a Retry-After header, whole seconds rounded up).
type OverloadedError struct {
	RetryAfter time.Duration
	// Reason says which bound was hit, for logs: the queue length or the
	// queueing time.
	Reason string
}

func (e *OverloadedError) Error() string { return ErrOverloaded.Error() }

// Unwrap makes errors.Is(err, ErrOverloaded) hold.
func (e *OverloadedError) Unwrap() error { return ErrOverloaded }

// RetryAfterSeconds is RetryAfter in whole seconds, rounded up, at least 1.
func (e *OverloadedError) RetryAfterSeconds() int {
	s := int((e.RetryAfter + time.Second - 1) / time.Second)
	return max(s, 1)
}

// invalid returns an ErrInvalidRequest naming param.
func invalid(param, format string, args ...any) error {
	return &RequestError{Param: param, Message: fmt.Sprintf(format, args...)}
}
