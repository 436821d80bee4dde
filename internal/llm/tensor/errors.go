package tensor

import "errors"

var (
	// ErrShape: a slice's length does not match the shape given with it.
	ErrShape = errors.New("tensor: shape mismatch")
	// ErrBlockSize: a quantisation block size is not a positive multiple of
	// 8 dividing the row length.
	ErrBlockSize = errors.New("tensor: invalid quantisation block size")
	// ErrNonFinite: a value to quantise is NaN or infinite.
	ErrNonFinite = errors.New("tensor: non-finite value")
	// ErrTokenRange: a token id is outside the embedding table.
	ErrTokenRange = errors.New("tensor: token id out of range")
)
