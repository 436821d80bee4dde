package tensor

import (
	"fmt"
	"slices"
)

// Tensor is a dense row-major float32 array with a shape. Views (Slice,
// Reshape, Row) share Data with the tensor they come from.
type Tensor struct {
	Data  []float32
	shape []int
}

// New returns a zeroed tensor of the given shape.
func New(shape ...int) Tensor {
	n := numel(shape)
	return Tensor{Data: make([]float32, n), shape: slices.Clone(shape)}
}

// FromData wraps data in a tensor of the given shape; its length must be the
// shape's element count (ErrShape).
func FromData(data []float32, shape ...int) (Tensor, error) {
	if n := numel(shape); n != len(data) {
		return Tensor{}, fmt.Errorf("%w: %d elements for shape %v", ErrShape, len(data), shape)
	}
	return Tensor{Data: data, shape: slices.Clone(shape)}, nil
}

func numel(shape []int) int {
	n := 1
	for _, d := range shape {
		if d < 0 {
			panic(fmt.Sprintf("tensor: negative dimension in %v", shape))
		}
		n *= d
	}
	return n
}

// Shape returns a copy of the shape.
func (t Tensor) Shape() []int { return slices.Clone(t.shape) }

// Dim returns the size of dimension i.
func (t Tensor) Dim(i int) int { return t.shape[i] }

// Len is the number of elements.
func (t Tensor) Len() int { return len(t.Data) }

// Cols is the size of the last dimension (1 for a scalar).
func (t Tensor) Cols() int {
	if len(t.shape) == 0 {
		return 1
	}
	return t.shape[len(t.shape)-1]
}

// Rows is the number of rows of the last dimension: the product of the other
// dimensions.
func (t Tensor) Rows() int {
	if c := t.Cols(); c != 0 {
		return len(t.Data) / c
	}
	return numel(t.shape[:len(t.shape)-1])
}

// Row returns row i of the last dimension (the tensor seen as Rows×Cols).
func (t Tensor) Row(i int) []float32 {
	c := t.Cols()
	return t.Data[i*c : (i+1)*c : (i+1)*c]
}

// Slice returns the view of indices [lo, hi) of the first dimension.
func (t Tensor) Slice(lo, hi int) Tensor {
	if len(t.shape) == 0 || lo < 0 || hi < lo || hi > t.shape[0] {
		panic(fmt.Sprintf("tensor: slice [%d:%d] of shape %v", lo, hi, t.shape))
	}
	stride := numel(t.shape[1:])
	shape := slices.Clone(t.shape)
	shape[0] = hi - lo
	return Tensor{Data: t.Data[lo*stride : hi*stride : hi*stride], shape: shape}
}

// Reshape returns a view with another shape of the same element count
// (ErrShape otherwise).
func (t Tensor) Reshape(shape ...int) (Tensor, error) {
	return FromData(t.Data, shape...)
}
