package tensor

import (
	"fmt"
	"math"

	"github.com/weftlabs/weft/internal/llm/tensor/internal/asm"
)

// RMSNorm normalises each row of x (rows of len(weight) elements) by its
// root mean square and scales it by weight, as Llama's RMSNorm does in
// float32: dst = weight · (x · 1/sqrt(mean(x²) + eps)), each product rounded
// in that order. dst may be x. It panics if the lengths do not fit.
func RMSNorm(dst, x, weight []float32, eps float32) {
	dim := len(weight)
	if dim == 0 || len(x)%dim != 0 || len(dst) < len(x) {
		panic(fmt.Sprintf("tensor.RMSNorm: x has %d elements, dst %d, weight %d", len(x), len(dst), dim))
	}
	for lo := 0; lo < len(x); lo += dim {
		row, out := x[lo:lo+dim], dst[lo:lo+dim]
		r := rmsScale(row, eps)
		for i, v := range row {
			out[i] = weight[i] * (v * r)
		}
	}
}

// RMSNormBackward adds to dx the gradient of a loss with respect to the
// input x of RMSNorm(x, weight, eps), given dy, its gradient with respect to
// the output (rows of len(weight) elements). With r = 1/sqrt(mean(x²)+eps),
// n = x·r and g = dy·weight, a row's gradient is r·(g − n·mean(g·n)) =
// r·g − r³·mean(g·x)·x: r is RMSNorm's own (the same float32 sum of
// squares), and the rest two vectorised sums and two scaled additions a
// row. It panics if the lengths do not fit.
func RMSNormBackward(dx, dy, x, weight []float32, eps float32) {
	dim := len(weight)
	if dim == 0 || len(x)%dim != 0 || len(dy) != len(x) || len(dx) != len(x) {
		panic(fmt.Sprintf("tensor.RMSNormBackward: x %d, dy %d, dx %d elements, weight %d", len(x), len(dy), len(dx), dim))
	}
	// g = dy·weight a row at a time, on the stack for the usual widths: a
	// backward pass calls this once per row of the final norm.
	var buf [1024]float32
	var g []float32
	if dim <= len(buf) {
		g = buf[:dim]
	} else {
		g = make([]float32, dim)
	}
	for lo := 0; lo < len(x); lo += dim {
		row, grad, out := x[lo:lo+dim], dy[lo:lo+dim], dx[lo:lo+dim]
		r := rmsScale(row, eps)
		for i, v := range grad {
			g[i] = v * weight[i]
		}
		gx := asm.Dot(g, row) / float32(dim)
		asm.Axpy(r, g, out)
		asm.Axpy(-r*r*r*gx, row, out)
	}
}

// rmsScale is 1/sqrt(mean(row²)+eps), the scale RMSNorm multiplies row by;
// its backward pass takes the same one.
func rmsScale(row []float32, eps float32) float32 {
	mean := asm.Dot(row, row) / float32(len(row))
	return float32(1 / math.Sqrt(float64(mean+eps)))
}
