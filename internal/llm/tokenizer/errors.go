package tokenizer

import (
	"errors"
	"fmt"
)

var (
	// ErrUnsupported marks a tokenizer file that asks for a component or an
	// option this package does not implement. The message names the field.
	ErrUnsupported = errors.New("tokenizer: unsupported")
	// ErrInvalid marks a tokenizer file that is malformed or inconsistent
	// (bad JSON, a merge whose parts are not in the vocabulary, ...).
	ErrInvalid = errors.New("tokenizer: invalid file")
)

// unsupported reports an unimplemented setting at a JSON path of the file.
func unsupported(field string, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrUnsupported, field, fmt.Sprintf(format, args...))
}

// invalid reports a malformed value at a JSON path of the file.
func invalid(field string, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrInvalid, field, fmt.Sprintf(format, args...))
}
