package jinja

import (
	"errors"
	"fmt"
)

// ErrLimit is wrapped by every error that stops a render because it went past
// one of the configured Limits (output size, steps, nesting, collection size).
var ErrLimit = errors.New("jinja: limit exceeded")

// Pos is a place in a template's source: 1-based line and column (in runes).
type Pos struct {
	Line, Col int
}

func (p Pos) String() string { return fmt.Sprintf("line %d, column %d", p.Line, p.Col) }

// SyntaxError is a template that cannot be parsed.
type SyntaxError struct {
	Pos Pos
	Msg string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("jinja: syntax error at %s: %s", e.Pos, e.Msg)
}

// RenderError is a failure while rendering: a type error, an undefined value
// used where a value is required, a limit reached. Pos is the expression or
// statement that failed.
type RenderError struct {
	Pos Pos
	Msg string
	Err error // wrapped cause, e.g. ErrLimit; may be nil
}

func (e *RenderError) Error() string { return fmt.Sprintf("jinja: %s (at %s)", e.Msg, e.Pos) }

func (e *RenderError) Unwrap() error { return e.Err }

// RaiseError is an error raised by the template itself through the
// raise_exception(message) global, as chat templates do to reject
// conversations they cannot express.
type RaiseError struct {
	Message string
}

func (e *RaiseError) Error() string { return "jinja: template raised: " + e.Message }

// failure carries an error through the evaluator's panics up to Execute.
type failure struct{ err error }
