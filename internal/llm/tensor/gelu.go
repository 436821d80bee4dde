package tensor

import (
	"fmt"
	"math"

	"github.com/weftlabs/weft/internal/llm/tensor/internal/asm"
)

// GELU's tanh approximation, as PyTorch's gelu(approximate="tanh") (Gemma's
// gelu_pytorch_tanh) defines it: GELU(x) = x/2·(1 + tanh(u)) with
// u = √(2/π)·(x + 0.044715·x³). Since (1 + tanh u)/2 is the sigmoid of 2u,
// GELU(x) = x / (1 + e^−2u): one exponential from asm.Exp, as SiLU takes.
const (
	geluSqrt2OverPi = 0.7978845608028654 // √(2/π)
	geluCubic       = 0.044715
)

// geluExps sets e[i] = e^−2u(x[i]), the exponential GELU(x) divides by.
func geluExps(e, x []float32) {
	for i, v := range x {
		e[i] = -2 * (geluSqrt2OverPi * (v + geluCubic*(v*v*v)))
	}
	asm.Exp(e, e)
}

// GeGLU sets dst[i] = GELU(gate[i]) · up[i] with GELU's tanh approximation,
// the gating of Gemma's MLP (the activation rounded to float32 before the
// product). It agrees with PyTorch's float32 gelu(approximate="tanh") to a
// few ulps: the same function, its tanh taken through one exponential.
// dst may be gate or up. It panics if the lengths differ.
func GeGLU(dst, gate, up []float32) {
	if len(gate) != len(up) || len(dst) < len(gate) {
		panic(fmt.Sprintf("tensor.GeGLU: gate %d, up %d, dst %d elements", len(gate), len(up), len(dst)))
	}
	var buf [expChunk]float32
	for lo := 0; lo < len(gate); lo += expChunk {
		g := gate[lo:min(lo+expChunk, len(gate))]
		e := buf[:len(g)]
		geluExps(e, g)
		u, out := up[lo:lo+len(g)], dst[lo:lo+len(g)]
		for i, v := range g {
			out[i] = (v / (1 + e[i])) * u[i]
		}
	}
}

// GeGLUBackward sets dGate and dUp to the gradients of a loss with respect
// to the inputs of GeGLU(gate, up), given dAct, its gradient with respect to
// the output: with s = 1/(1 + e^−2u), GELU(x) = x·s, dUp = dAct·x·s and
// dGate = dAct·up·(s + x·s·(1 − s)·2u′), u′ = √(2/π)·(1 + 3·0.044715·x²).
// It panics if the lengths differ.
func GeGLUBackward(dGate, dUp, dAct, gate, up []float32) {
	n := len(gate)
	if len(up) != n || len(dAct) != n || len(dGate) != n || len(dUp) != n {
		panic(fmt.Sprintf("tensor.GeGLUBackward: gate %d, up %d, dAct %d, dGate %d, dUp %d elements", n, len(up), len(dAct), len(dGate), len(dUp)))
	}
	var buf [expChunk]float32
	for lo := 0; lo < n; lo += expChunk {
		g := gate[lo:min(lo+expChunk, n)]
		e := buf[:len(g)]
		geluExps(e, g)
		for i, v := range g {
			j := lo + i
			s := 1 / (1 + e[i])
			if math.IsInf(float64(e[i]), 1) {
				s = 0 // far below zero GELU is flat: x·s·(1 − s) is 0, not ∞·0
			}
			du := 2 * geluSqrt2OverPi * (1 + 3*geluCubic*v*v)
			da := dAct[j]
			dUp[j] = da * v * s
			dGate[j] = da * up[j] * (s + v*s*(1-s)*du)
		}
	}
}
