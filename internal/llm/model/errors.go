package model

import (
	"errors"
	"fmt"
)

var (
	// ErrUnsupported marks a model directory that asks for an architecture,
	// a config.json field value or a weight this package does not implement.
	// The message names the field.
	ErrUnsupported = errors.New("model: unsupported")
	// ErrInvalid marks a config.json or checkpoint that is malformed or
	// inconsistent (a missing size, a weight of the wrong shape). The
	// message names the field or tensor.
	ErrInvalid = errors.New("model: invalid")
	// ErrBatch marks a Forward call that cannot run: a token outside the
	// vocabulary, a position past the model's length, a sequence twice in
	// one batch.
	ErrBatch = errors.New("model: invalid batch")
	// ErrCacheFull is returned by a KVCache that has no room for the
	// positions a batch asks for.
	ErrCacheFull = errors.New("model: KV cache full")
	// ErrDimensions marks an Embeddings call asking for a vector size the
	// model does not define.
	ErrDimensions = errors.New("model: unsupported dimensions")
)

func unsupported(field, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrUnsupported, field, fmt.Sprintf(format, args...))
}

func invalid(field, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrInvalid, field, fmt.Sprintf(format, args...))
}
