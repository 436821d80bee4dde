package quant

import (
	"errors"
	"fmt"
)

// Type is a tensor's element type, numbered as ggml numbers them (and
// GGUF files store them): a plain number type or a block format of
// quantized weights. The package knows the layout of every type ggml
// defines (Defined), which is enough to size and place any tensor of a
// file; it reads and writes the blocks of some (Known).
type Type uint32

// The tensor types ggml defines.
const (
	F32     Type = 0
	F16     Type = 1
	Q4_0    Type = 2
	Q4_1    Type = 3
	Q5_0    Type = 6
	Q5_1    Type = 7
	Q8_0    Type = 8
	Q8_1    Type = 9
	Q2_K    Type = 10
	Q3_K    Type = 11
	Q4_K    Type = 12
	Q5_K    Type = 13
	Q6_K    Type = 14
	Q8_K    Type = 15
	IQ2_XXS Type = 16
	IQ2_XS  Type = 17
	IQ3_XXS Type = 18
	IQ1_S   Type = 19
	IQ4_NL  Type = 20
	IQ3_S   Type = 21
	IQ2_S   Type = 22
	IQ4_XS  Type = 23
	I8      Type = 24
	I16     Type = 25
	I32     Type = 26
	I64     Type = 27
	F64     Type = 28
	IQ1_M   Type = 29
	BF16    Type = 30
	TQ1_0   Type = 34
	TQ2_0   Type = 35
	MXFP4   Type = 39
)

// layout is a type's name and blocks: blockSize elements stored in
// blockBytes bytes.
type layout struct {
	name                  string
	blockSize, blockBytes int
}

// layouts holds the layout of every type ggml defines (gguf-py's
// GGML_QUANT_SIZES).
var layouts = map[Type]layout{
	F32: {"F32", 1, 4}, F16: {"F16", 1, 2}, BF16: {"BF16", 1, 2}, F64: {"F64", 1, 8},
	I8: {"I8", 1, 1}, I16: {"I16", 1, 2}, I32: {"I32", 1, 4}, I64: {"I64", 1, 8},
	Q4_0: {"Q4_0", 32, 18}, Q4_1: {"Q4_1", 32, 20}, Q5_0: {"Q5_0", 32, 22}, Q5_1: {"Q5_1", 32, 24},
	Q8_0: {"Q8_0", 32, 34}, Q8_1: {"Q8_1", 32, 40},
	Q2_K: {"Q2_K", QK, 84}, Q3_K: {"Q3_K", QK, 110}, Q4_K: {"Q4_K", QK, 144},
	Q5_K: {"Q5_K", QK, 176}, Q6_K: {"Q6_K", QK, 210}, Q8_K: {"Q8_K", QK, 292},
	IQ2_XXS: {"IQ2_XXS", QK, 66}, IQ2_XS: {"IQ2_XS", QK, 74}, IQ3_XXS: {"IQ3_XXS", QK, 98},
	IQ1_S: {"IQ1_S", QK, 50}, IQ4_NL: {"IQ4_NL", 32, 18}, IQ3_S: {"IQ3_S", QK, 110},
	IQ2_S: {"IQ2_S", QK, 82}, IQ4_XS: {"IQ4_XS", QK, 136}, IQ1_M: {"IQ1_M", QK, 56},
	TQ1_0: {"TQ1_0", QK, 54}, TQ2_0: {"TQ2_0", QK, 66}, MXFP4: {"MXFP4", 32, 17},
}

var (
	// ErrType: a type this package does not read (or, for Quantize, write).
	ErrType = errors.New("quant: unsupported tensor type")
	// ErrSize: a length that is not a whole number of blocks, or two
	// lengths that do not match.
	ErrSize = errors.New("quant: size is not a whole number of blocks")
)

// QK is the number of weights in the block of the K-quants.
const QK = 256

// format is the block codecs of a Type the package reads.
type format struct {
	layout
	// dequantize sets dst (blockSize elements) from one block.
	dequantize func(dst []float32, block []byte)
	// quantize writes one block from blockSize elements; nil where the
	// package defines no quantiser.
	quantize func(dst []byte, src []float32)
}

var formats = map[Type]*format{
	F32:  {layout: layouts[F32], dequantize: dequantizeF32, quantize: quantizeF32},
	F16:  {layout: layouts[F16], dequantize: dequantizeF16, quantize: quantizeF16},
	BF16: {layout: layouts[BF16], dequantize: dequantizeBF16, quantize: quantizeBF16},
	Q8_0: {layout: layouts[Q8_0], dequantize: dequantizeQ8_0, quantize: quantizeQ8_0},
	Q4_0: {layout: layouts[Q4_0], dequantize: dequantizeQ4_0, quantize: quantizeQ4_0},
	Q4_1: {layout: layouts[Q4_1], dequantize: dequantizeQ4_1, quantize: quantizeQ4_1},
	Q5_0: {layout: layouts[Q5_0], dequantize: dequantizeQ5_0, quantize: quantizeQ5_0},
	Q5_1: {layout: layouts[Q5_1], dequantize: dequantizeQ5_1, quantize: quantizeQ5_1},
	Q4_K: {layout: layouts[Q4_K], dequantize: dequantizeQ4_K, quantize: quantizeQ4_K},
	Q5_K: {layout: layouts[Q5_K], dequantize: dequantizeQ5_K, quantize: quantizeQ5_K},
	Q6_K: {layout: layouts[Q6_K], dequantize: dequantizeQ6_K, quantize: quantizeQ6_K},
}

func (t Type) format() (*format, error) {
	f, ok := formats[t]
	if !ok {
		return nil, fmt.Errorf("%w: %v", ErrType, t)
	}
	return f, nil
}

// Known reports whether the package reads t: Dequantize and Bytes take it.
func (t Type) Known() bool { return formats[t] != nil }

// Defined reports whether ggml defines t: its layout is known (BlockSize,
// BlockBytes, RowBytes), though the package may not read its blocks.
func (t Type) Defined() bool { _, ok := layouts[t]; return ok }

// String is the type's GGUF name ("Q4_K"), or "type N" for one ggml does
// not define.
func (t Type) String() string {
	if l, ok := layouts[t]; ok {
		return l.name
	}
	return fmt.Sprintf("type %d", uint32(t))
}

// BlockSize is the number of elements one block holds (1 for plain number
// types, 0 for a type ggml does not define).
func (t Type) BlockSize() int { return layouts[t].blockSize }

// BlockBytes is the size of one block in bytes (0 for a type ggml does not
// define).
func (t Type) BlockBytes() int { return layouts[t].blockBytes }

// RowBytes is the number of bytes n consecutive elements of a defined type
// take; n must be a multiple of the block size.
func (t Type) RowBytes(n int) int { return n / t.BlockSize() * t.BlockBytes() }

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
