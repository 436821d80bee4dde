package lora

import "errors"

var (
	// ErrInvalid marks a configuration or adapter directory that is
	// malformed or does not fit the model: a rank below one, an unknown
	// target, a tensor of the wrong shape, a layer the model lacks.
	ErrInvalid = errors.New("lora: invalid adapter")
	// ErrUnsupported marks a well-formed adapter using a feature this
	// package does not apply (per-module rank or alpha patterns, DoRA,
	// trained biases, targets other than the decoder projections).
	ErrUnsupported = errors.New("lora: unsupported adapter")
)
