package tensor

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSoftmaxLogZ: the same probabilities as Softmax, bit for bit, and
// log-probabilities equal to LogSoftmax's, bit for bit.
func TestSoftmaxLogZ(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	x := randFloats(r, 1000)
	for i := range x {
		x[i] *= 20
	}
	p, logp, z := slices.Clone(x), slices.Clone(x), slices.Clone(x)
	Softmax(p)
	LogSoftmax(logp)
	mx, logSum := SoftmaxLogZ(z)
	if i := sameBits(z, p); i >= 0 {
		t.Fatalf("probability %d: %v, Softmax %v", i, z[i], p[i])
	}
	for i, v := range x {
		if got := (v - mx) - logSum; got != logp[i] {
			t.Fatalf("log-probability %d: %v, LogSoftmax %v", i, got, logp[i])
		}
	}
}

// numericGradient is the central difference of f at x along each element.
func numericGradient(x []float32, f func([]float32) float64) []float64 {
	g := make([]float64, len(x))
	for i := range x {
		v := x[i]
		h := float32(1e-2) * max(1, float32(math.Abs(float64(v))))
		x[i] = v + h
		up := f(x)
		x[i] = v - h
		down := f(x)
		x[i] = v
		g[i] = (up - down) / float64(2*h)
	}
	return g
}

func checkGradient(t *testing.T, what string, got []float32, want []float64) {
	t.Helper()
	var diff, scale float64
	for i := range want {
		diff = max(diff, math.Abs(float64(got[i])-want[i]))
		scale = max(scale, math.Abs(want[i]))
	}
	if diff/scale > 2e-3 {
		t.Fatalf("%s: gradient off by %.3g relative (max |Δ| %.3g): %v, numerically %v", what, diff/scale, diff, got, want)
	}
}

// weighted is Σ w·y: a loss whose gradient with respect to y is w.
func weighted(y, w []float32) float64 {
	var s float64
	for i := range y {
		s += float64(y[i]) * float64(w[i])
	}
	return s
}

// TestBackwardKernelsMatchDifferences: RMSNormBackward, SwiGLUBackward,
// GeGLUBackward and RoPE.ApplyTranspose give the gradients that central differences of the
// forward kernels give, for a linear loss of the output.
func TestBackwardKernelsMatchDifferences(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	const dim, rows = 16, 3
	x, w, dy := randFloats(r, rows*dim), randFloats(r, dim), randFloats(r, rows*dim)

	// Rows of RMS 3, so that the norm's scale r (1/3) is far from 1 and
	// a wrong power of it shows.
	big := slices.Clone(x)
	for i := range big {
		big[i] *= 3
	}
	dx := make([]float32, len(big))
	RMSNormBackward(dx, dy, big, w, 1e-5)
	checkGradient(t, "RMSNorm", dx, numericGradient(big, func(x []float32) float64 {
		y := make([]float32, len(x))
		RMSNorm(y, x, w, 1e-5)
		return weighted(y, dy)
	}))

	gate, up := randFloats(r, rows*dim), randFloats(r, rows*dim)
	dGate, dUp := make([]float32, len(gate)), make([]float32, len(up))
	SwiGLUBackward(dGate, dUp, dy, gate, up)
	swiglu := func(gate, up []float32) float64 {
		y := make([]float32, len(gate))
		SwiGLU(y, gate, up)
		return weighted(y, dy)
	}
	checkGradient(t, "SwiGLU gate", dGate, numericGradient(gate, func(g []float32) float64 { return swiglu(g, up) }))
	checkGradient(t, "SwiGLU up", dUp, numericGradient(up, func(u []float32) float64 { return swiglu(gate, u) }))

	gelu := func(gate, up []float32) float64 {
		y := make([]float32, len(gate))
		GeGLU(y, gate, up)
		return weighted(y, dy)
	}
	GeGLUBackward(dGate, dUp, dy, gate, up)
	checkGradient(t, "GeGLU gate", dGate, numericGradient(gate, func(g []float32) float64 { return gelu(g, up) }))
	checkGradient(t, "GeGLU up", dUp, numericGradient(up, func(u []float32) float64 { return gelu(gate, u) }))

	inv := []float32{1, 0.1, 0.01, 0.001, 0.5, 0.25}
	rope := NewRoPE(inv, 8, 1.3)
	const headDim = 16 // 12 rotated, 4 kept
	back := slices.Clone(dy)
	rope.ApplyTranspose(back, headDim, 5)
	checkGradient(t, "RoPE", back, numericGradient(x, func(x []float32) float64 {
		y := slices.Clone(x)
		rope.Apply(y, headDim, 5)
		return weighted(y, dy)
	}))
}

// TestPoolMatMulAdd: dst + a·b (and a·b alone, MatMul) as MatMulT computes
// it against b's transpose, to rounding, with the same bits on any number
// of threads, for each way the pool splits the work: the columns of a wide
// product, the columns of a short one (few rows), and the rows; against b
// packed once (MatMulPacked, MatMulAddPacked), the same bits again.
func TestPoolMatMulAdd(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, s := range [][3]int{{5, 4200, 40}, {8, 300, 700}, {70, 90, 300}} {
		m, n, k := s[0], s[1], s[2]
		a, b, base := randFloats(r, m*k), randFloats(r, k*n), randFloats(r, m*n)
		bT := make([]float32, n*k)
		Transpose(bT, b, k, n)
		product := make([]float32, m*n)
		MatMulT(product, a, bT, m, n, k)
		sum := make([]float32, m*n)
		Add(sum, product, base)
		var first []float32
		for _, threads := range []int{1, 2, 3} {
			p := NewPool(threads)
			got, set := slices.Clone(base), slices.Clone(base)
			p.MatMulAdd(got, a, b, m, n, k)
			p.MatMul(set, a, b, m, n, k)
			packed := PackB(b, n, k, n)
			gotPacked, setPacked := slices.Clone(base), slices.Clone(base)
			p.MatMulAddPacked(gotPacked, a, packed, m)
			p.MatMulPacked(setPacked, a, packed, m)
			p.Close()
			if i := sameBits(gotPacked, got); i >= 0 {
				t.Fatalf("%v threads %d: MatMulAddPacked element %d = %v, MatMulAdd %v", s, threads, i, gotPacked[i], got[i])
			}
			if i := sameBits(setPacked, set); i >= 0 {
				t.Fatalf("%v threads %d: MatMulPacked element %d = %v, MatMul %v", s, threads, i, setPacked[i], set[i])
			}
			for i := range sum {
				if d := math.Abs(float64(got[i] - sum[i])); d > 1e-3 {
					t.Fatalf("%v threads %d: MatMulAdd element %d = %v, want %v", s, threads, i, got[i], sum[i])
				}
				if d := math.Abs(float64(set[i] - product[i])); d > 1e-3 {
					t.Fatalf("%v threads %d: MatMul element %d = %v, want %v", s, threads, i, set[i], product[i])
				}
			}
			if first == nil {
				first = got
			} else if i := sameBits(got, first); i >= 0 {
				t.Fatalf("%v threads %d: element %d differs from one thread's", s, threads, i)
			}
		}
	}
}
