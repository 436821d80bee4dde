package inprocess

import (
	"errors"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/llm/engine"
)

// The errors of models served in-process: the engine's plain sentinels
// with the weft class and vLLM error type each answers with.
var (
	errEngineInvalid    = weft.DefineError(weft.ErrInvalid, "BadRequestError", "invalid request")
	errEngineOverloaded = weft.DefineError(weft.ErrUnavailable, "ServiceUnavailableError", engine.ErrOverloaded.Error())
	errEngineClosed     = weft.DefineError(weft.ErrUnavailable, "ServiceUnavailableError", engine.ErrClosed.Error())
)

// engineClasses maps each engine sentinel to its weft error, in the order
// they are tried.
var engineClasses = []struct {
	sentinel error
	class    *weft.Error
}{
	{engine.ErrInvalidRequest, errEngineInvalid},
	{engine.ErrPromptTooLong, errEngineInvalid},
	{engine.ErrAdapter, errEngineInvalid},
	{engine.ErrModelDir, errEngineInvalid},
	{engine.ErrOverloaded, errEngineOverloaded},
	{engine.ErrClosed, errEngineClosed},
}

// engineError is an engine error as weft reports it: the engine's message,
// the class and error type of its sentinel, and the body fields vLLM adds
// (the "param" at fault, the "retry_after" of an overload). errors.Is and
// errors.As still see the engine's error beneath.
type engineError struct {
	err    error
	class  *weft.Error
	fields map[string]any
}

func (e *engineError) Error() string               { return e.err.Error() }
func (e *engineError) Unwrap() []error             { return []error{e.class, e.err} }
func (e *engineError) ErrorType() string           { return e.class.ErrorType() }
func (e *engineError) ErrorFields() map[string]any { return e.fields }

// fromEngine maps an error of package engine to weft's classes at the
// boundary; other errors (a context's end) are returned as they are.
func fromEngine(err error) error {
	for _, c := range engineClasses {
		if !errors.Is(err, c.sentinel) {
			continue
		}
		e := &engineError{err: err, class: c.class}
		if param := engine.Param(err); param != "" {
			e.fields = map[string]any{"param": param}
		}
		var over *engine.OverloadedError
		if errors.As(err, &over) {
			e.fields = map[string]any{"retry_after": over.RetryAfterSeconds()}
		}
		return e
	}
	return err
}
