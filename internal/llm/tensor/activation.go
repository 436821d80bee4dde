package tensor

import (
	"fmt"
	"math"

	"github.com/weftlabs/weft/internal/llm/tensor/internal/asm"
)

// expChunk is how many exponentials the activations compute at a time in a
// buffer on the stack.
const expChunk = 256

// Softmax replaces x by its softmax, stably: e^(x−max) / Σ e^(x−max), with
// x−max rounded to float32 as the reference implementation computes it, the
// exponentials from asm.Exp (within 2 ulps), their sum in float64 in index
// order and each divided by it (in float64, as a product with 1/sum). Elements of −Inf (masked) become 0; if every element is −Inf
// the result is NaN, as in the reference implementation.
func Softmax(x []float32) {
	if len(x) == 0 {
		return
	}
	softmax(x)
}

// FastSoftmax is Softmax vectorised in every sweep, for the short rows
// computed many times a pass (attention's scores): the maximum, the
// exponentials and their sum as ExpSum computes them (float32 sums of
// chunks in asm.Sum's order, added in float64), then each exponential
// times 1/sum rounded to float32. Its results may differ from Softmax's
// in the last place; a row's are the same bits wherever it is computed.
// x must not be empty.
func FastSoftmax(x []float32) {
	_, sum := ExpSum(x, x)
	asm.Scale(float32(1/sum), x)
}

// SoftmaxLogZ is Softmax returning the maximum of x and log Σ e^(x−max):
// the log-probability of element j is (x[j] − max) − logSum with x[j] its
// value before the call, as LogSoftmax computes it, without a second pass
// of exponentials. x must not be empty.
func SoftmaxLogZ(x []float32) (max, logSum float32) {
	m, sum := softmax(x)
	return m, float32(math.Log(sum))
}

// softmax is Softmax returning the maximum and the sum of exponentials.
func softmax(x []float32) (float32, float64) {
	m := maxOf(x)
	asm.ExpShifted(x, x, m)
	var sum float64
	for _, e := range x {
		sum += float64(e)
	}
	inv := 1 / sum
	for i, e := range x {
		x[i] = float32(float64(e) * inv)
	}
	return m, sum
}

// ExpSum sets dst[i] = e^(x[i]−max), the softmax of x before its division,
// and returns max (the largest element of x) and Σ dst: a training pass's
// softmax over a vocabulary in two sweeps of the row (the maximum, then
// the exponentials and their sum a cache-sized chunk at a time), each
// vectorised, leaving the division to whoever reads the row. The
// exponentials are asm.Exp's of the float32 differences (within 2 ulps);
// the sum adds each chunk's float32 sum (asm.Sum's order) in float64. x
// must not be empty; dst may be x. It panics if dst is shorter than x.
func ExpSum(dst, x []float32) (max float32, sum float64) {
	if len(dst) < len(x) {
		panic(fmt.Sprintf("tensor.ExpSum: x %d, dst %d elements", len(x), len(dst)))
	}
	max = asm.Max(x)
	for lo := 0; lo < len(x); lo += expSumChunk {
		hi := min(lo+expSumChunk, len(x))
		asm.ExpShifted(dst[lo:hi], x[lo:hi], max)
		sum += float64(asm.Sum(dst[lo:hi]))
	}
	return max, sum
}

// expSumChunk is the elements ExpSum sums while they are still in L1.
const expSumChunk = 1024

// LogSoftmax replaces x by log(softmax(x)) = (x − max) − log Σ e^(x−max), the
// sum in float64; −Inf elements stay −Inf.
func LogSoftmax(x []float32) {
	if len(x) == 0 {
		return
	}
	m := maxOf(x)
	var buf [expChunk]float32
	var sum float64
	for lo := 0; lo < len(x); lo += expChunk {
		e := buf[:min(expChunk, len(x)-lo)]
		for i := range e {
			e[i] = x[lo+i] - m
		}
		asm.Exp(e, e)
		for _, v := range e {
			sum += float64(v)
		}
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

// SiLU sets dst[i] = x[i]·sigmoid(x[i]) = x[i] / (1 + e^−x[i]), each step
// rounded to float32 as the reference implementation computes it. dst may
// be x.
func SiLU(dst, x []float32) {
	if len(dst) < len(x) {
		panic(fmt.Sprintf("tensor.SiLU: x %d, dst %d elements", len(x), len(dst)))
	}
	swiglu(dst, x, nil)
}

// SwiGLU sets dst[i] = SiLU(gate[i]) · up[i], the gating of the Llama MLP
// (the activation rounded to float32 before the product). dst may be gate or
// up. It panics if the lengths differ.
func SwiGLU(dst, gate, up []float32) {
	if len(gate) != len(up) || len(dst) < len(gate) {
		panic(fmt.Sprintf("tensor.SwiGLU: gate %d, up %d, dst %d elements", len(gate), len(up), len(dst)))
	}
	swiglu(dst, gate, up)
}

// swiglu is SiLU(gate)·up, or SiLU(gate) alone for a nil up.
func swiglu(dst, gate, up []float32) {
	var buf [expChunk]float32
	for lo := 0; lo < len(gate); lo += expChunk {
		g := gate[lo:min(lo+expChunk, len(gate))]
		// e^(−g), negated as a vector where an element loop set the pace:
		// times −1 is −g exactly (a NaN gate makes the output its own NaN
		// either way).
		e := buf[:len(g)]
		copy(e, g)
		asm.Scale(-1, e)
		asm.Exp(e, e)
		out := dst[lo : lo+len(g)]
		if up == nil {
			for i, v := range g {
				out[i] = v / (1 + e[i])
			}
			continue
		}
		asm.Gated(out, g, e, up[lo:lo+len(g)])
	}
}

// Add sets dst[i] = a[i] + b[i]; dst may be a or b. It panics if the lengths
// differ.
func Add(dst, a, b []float32) {
	if len(a) != len(b) || len(dst) < len(a) {
		panic(fmt.Sprintf("tensor.Add: a %d, b %d, dst %d elements", len(a), len(b), len(dst)))
	}
	if len(a) == 0 {
		return
	}
	b = b[:len(a)]
	dst = dst[:len(a)]
	// In place (a residual sum), the vectorised y += 1·x: the product by 1
	// is exact, so each element is the sum rounded once, as below.
	switch {
	case &dst[0] == &a[0]:
		asm.Axpy(1, b, dst)
	case &dst[0] == &b[0]:
		asm.Axpy(1, a, dst)
	default:
		for i, v := range a {
			dst[i] = v + b[i]
		}
	}
}

// SwiGLUBackward sets dGate and dUp to the gradients of a loss with respect
// to the inputs of SwiGLU(gate, up), given dAct, its gradient with respect
// to the output: with s = sigmoid(gate), dUp = dAct·gate·s and dGate =
// dAct·up·s·(1 + gate·(1 − s)). It panics if the lengths differ.
func SwiGLUBackward(dGate, dUp, dAct, gate, up []float32) {
	n := len(gate)
	if len(up) != n || len(dAct) != n || len(dGate) != n || len(dUp) != n {
		panic(fmt.Sprintf("tensor.SwiGLUBackward: gate %d, up %d, dAct %d, dGate %d, dUp %d elements", n, len(up), len(dAct), len(dGate), len(dUp)))
	}
	var buf [expChunk]float32
	for lo := 0; lo < n; lo += expChunk {
		g := gate[lo:min(lo+expChunk, n)]
		e := buf[:len(g)]
		for i, v := range g {
			e[i] = -v
		}
		asm.Exp(e, e)
		for i, v := range g {
			j := lo + i
			s := 1 / (1 + e[i])
			da := dAct[j]
			dUp[j] = da * v * s
			dGate[j] = da * up[j] * s * (1 + v*(1-s))
		}
	}
}
