package safetensors

import "errors"

var (
	// ErrInvalid marks a file or index that is malformed: a header that is
	// not JSON, offsets outside the data, a byte length that does not match
	// the shape. The message names the file and the tensor or field.
	ErrInvalid = errors.New("safetensors: invalid")
	// ErrUnsupported marks a well-formed tensor of a dtype this package does
	// not load (anything but F32, F16 and BF16).
	ErrUnsupported = errors.New("safetensors: unsupported")
	// ErrNotFound marks a tensor name that no file of the checkpoint holds.
	ErrNotFound = errors.New("safetensors: tensor not found")
)
