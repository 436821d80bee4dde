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
		mean := asm.Dot(row, row) / float32(dim)
		r := float32(1 / math.Sqrt(float64(mean+eps)))
		for i, v := range row {
			out[i] = weight[i] * (v * r)
		}
	}
}
