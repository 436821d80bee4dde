package quant

import (
	"errors"
	"fmt"
)

// Type is a tensor type, numbered as GGUF files number them.
type Type uint32

// The types this package reads. Their numbers are the GGUF ones.
const (
	F32  Type = 0
	F16  Type = 1
	Q4_0 Type = 2
	Q4_1 Type = 3
	Q5_0 Type = 6
	Q5_1 Type = 7
	Q8_0 Type = 8
	Q4_K Type = 12
	Q5_K Type = 13
	Q6_K Type = 14
	BF16 Type = 30
)

var (
	// ErrType: a type this package does not read (or, for Quantize, write).
	ErrType = errors.New("quant: unsupported tensor type")
	// ErrSize: a length that is not a whole number of blocks, or two
	// lengths that do not match.
	ErrSize = errors.New("quant: size is not a whole number of blocks")
)

// QK is the number of weights in the block of the K-quants.
const QK = 256

// format is one Type's layout and block codecs.
type format struct {
	name       string
	blockSize  int // elements per block
	blockBytes int
	// dequantize sets dst (blockSize elements) from one block.
	dequantize func(dst []float32, block []byte)
	// quantize writes one block from blockSize elements; nil where the
	// package defines no quantiser.
	quantize func(dst []byte, src []float32)
}

var formats = map[Type]*format{
	F32:  {"F32", 1, 4, dequantizeF32, quantizeF32},
	F16:  {"F16", 1, 2, dequantizeF16, quantizeF16},
	BF16: {"BF16", 1, 2, dequantizeBF16, quantizeBF16},
	Q8_0: {"Q8_0", 32, 34, dequantizeQ8_0, quantizeQ8_0},
	Q4_0: {"Q4_0", 32, 18, dequantizeQ4_0, quantizeQ4_0},
	Q4_1: {"Q4_1", 32, 20, dequantizeQ4_1, quantizeQ4_1},
	Q5_0: {"Q5_0", 32, 22, dequantizeQ5_0, quantizeQ5_0},
	Q5_1: {"Q5_1", 32, 24, dequantizeQ5_1, quantizeQ5_1},
	Q4_K: {"Q4_K", QK, 144, dequantizeQ4_K, quantizeQ4_K},
	Q5_K: {"Q5_K", QK, 176, dequantizeQ5_K, quantizeQ5_K},
	Q6_K: {"Q6_K", QK, 210, dequantizeQ6_K, quantizeQ6_K},
}

func (t Type) format() (*format, error) {
	f, ok := formats[t]
	if !ok {
		return nil, fmt.Errorf("%w: %v", ErrType, t)
	}
	return f, nil
}

// Known reports whether the package reads t.
func (t Type) Known() bool { return formats[t] != nil }

// String is the type's GGUF name ("Q4_K"), or "type N" for one the package
// does not know.
func (t Type) String() string {
	if f, ok := formats[t]; ok {
		return f.name
	}
	return fmt.Sprintf("type %d", uint32(t))
}

// BlockSize is the number of elements one block holds (0 for an unknown
// type).
func (t Type) BlockSize() int {
	if f, ok := formats[t]; ok {
		return f.blockSize
	}
	return 0
}

// BlockBytes is the size of one block in bytes (0 for an unknown type).
func (t Type) BlockBytes() int {
	if f, ok := formats[t]; ok {
		return f.blockBytes
	}
	return 0
}

// Bytes is the size of n elements of type t: ErrType for an unknown type,
// ErrSize when n is not a whole number of blocks.
func (t Type) Bytes(n int) (int, error) {
	f, err := t.format()
	if err != nil {
		return 0, err
	}
	if n < 0 || n%f.blockSize != 0 {
		return 0, fmt.Errorf("%w: %d elements of %v (blocks of %d)", ErrSize, n, t, f.blockSize)
	}
	return n / f.blockSize * f.blockBytes, nil
}

// Dequantize sets dst to the values of src, len(dst) elements of type t
// stored as GGUF stores them (len(src) must be exactly their size).
func Dequantize(t Type, dst []float32, src []byte) error {
	f, err := t.format()
	if err != nil {
		return err
	}
	if want, err := t.Bytes(len(dst)); err != nil {
		return err
	} else if len(src) != want {
		return fmt.Errorf("%w: %d bytes for %d elements of %v, want %d", ErrSize, len(src), len(dst), t, want)
	}
	for b := range len(dst) / f.blockSize {
		f.dequantize(dst[b*f.blockSize:(b+1)*f.blockSize], src[b*f.blockBytes:(b+1)*f.blockBytes])
	}
	return nil
}

// Quantize writes src as type t into dst, which must be exactly the size of
// len(src) elements. The values should be finite: a NaN or infinite element
// gives bytes of no defined meaning (the reference implementations differ).
func Quantize(t Type, dst []byte, src []float32) error {
	f, err := t.format()
	if err != nil {
		return err
	}
	if f.quantize == nil {
		return fmt.Errorf("%w: no quantiser for %v", ErrType, t)
	}
	if want, err := t.Bytes(len(src)); err != nil {
		return err
	} else if len(dst) != want {
		return fmt.Errorf("%w: %d bytes for %d elements of %v, want %d", ErrSize, len(dst), len(src), t, want)
	}
	for b := range len(src) / f.blockSize {
		f.quantize(dst[b*f.blockBytes:(b+1)*f.blockBytes], src[b*f.blockSize:(b+1)*f.blockSize])
	}
	return nil
}
