package tensor

import (
	"fmt"
	"math"
)

// Softmax replaces x by its softmax, stably: exp(x − max) / Σ exp(x − max),
// the exponentials rounded to float32 and summed in float64 in index order.
// Elements of −Inf (masked) become 0; if every element is −Inf the result is
// NaN, as in the reference implementation.
func Softmax(x []float32) {
	if len(x) == 0 {
		return
	}
	m := maxOf(x)
	var sum float64
	for i, v := range x {
		e := float32(math.Exp(float64(v - m)))
		x[i] = e
		sum += float64(e)
	}
	for i, e := range x {
		x[i] = float32(float64(e) / sum)
	}
}

// LogSoftmax replaces x by log(softmax(x)) = x − max − log Σ exp(x − max),
// with the sum in float64; −Inf elements stay −Inf.
func LogSoftmax(x []float32) {
	if len(x) == 0 {
		return
	}
	m := maxOf(x)
	var sum float64
	for _, v := range x {
		sum += math.Exp(float64(v - m))
	}
	lse := float32(math.Log(sum))
	for i, v := range x {
		x[i] = (v - m) - lse
	}
}

func maxOf(x []float32) float32 {
	m := x[0]
	for _, v := range x[1:] {
		if v > m {
			m = v
		}
	}
	return m
}

// SiLU returns x·sigmoid(x) = x / (1 + e^−x), computed in float64 and rounded
// once.
func SiLU(x float32) float32 {
	v := float64(x)
	return float32(v / (1 + math.Exp(-v)))
}

// SwiGLU sets dst[i] = SiLU(gate[i]) · up[i] (the Llama MLP's gating; the
// activation rounded to float32 before the product). dst may be gate or up.
// It panics if the lengths differ.
func SwiGLU(dst, gate, up []float32) {
	if len(gate) != len(up) || len(dst) < len(gate) {
		panic(fmt.Sprintf("tensor.SwiGLU: gate %d, up %d, dst %d elements", len(gate), len(up), len(dst)))
	}
	for i, g := range gate {
		dst[i] = SiLU(g) * up[i]
	}
}

// Add sets dst[i] = a[i] + b[i]; dst may be a or b. It panics if the lengths
// differ.
func Add(dst, a, b []float32) {
	if len(a) != len(b) || len(dst) < len(a) {
		panic(fmt.Sprintf("tensor.Add: a %d, b %d, dst %d elements", len(a), len(b), len(dst)))
	}
	b = b[:len(a)]
	dst = dst[:len(a)]
	for i, v := range a {
		dst[i] = v + b[i]
	}
}
