package gguf

import (
	"errors"
	"fmt"
)

var (
	// ErrInvalid marks a file that is malformed: truncated, a count or
	// length beyond the file, a tensor outside the data or overlapping
	// another, a key or tensor name twice. The message names the file and
	// the field or tensor.
	ErrInvalid = errors.New("gguf: invalid")
	// ErrUnsupported marks a well-formed file this package does not read:
	// version 1, a big-endian file, a tensor type it does not know.
	ErrUnsupported = errors.New("gguf: unsupported")
	// ErrNotFound marks a metadata key or tensor the file does not have.
	ErrNotFound = errors.New("gguf: not found")
)

// fieldError wraps kind with the file and field it is about.
func fieldError(kind error, path, field, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s: %s", kind, path, field, fmt.Sprintf(format, args...))
}
