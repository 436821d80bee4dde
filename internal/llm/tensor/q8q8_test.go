package tensor

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestMatMulTQ8Q8WithinQuantisationBound: the int8 × int8 product differs
// from the float64 product of the float activations and the dequantised
// weights by no more than the activations' quantisation can explain,
// Σ_p |x_p − x̂_p|·|w_p| (each |x_p − x̂_p| at most half its block's scale),
// plus float32 rounding of the sums; a misplaced scale, block or term breaks
// the bound by orders of magnitude. Activations are spread like a layer's
// (a few large ones), and a row is the same bits alone or among others.
func TestMatMulTQ8Q8WithinQuantisationBound(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	for _, kn := range [][2]int{{64, 7}, {288, 768}, {1024, 301}} {
		k, n := kn[0], kn[1]
		w, err := QuantizeQ8(randFloats(r, n*k), n, k, ActivationBlock)
		if err != nil {
			t.Fatal(err)
		}
		deq := w.Dequantize()
		const m = 5
		x := randFloats(r, m*k)
		for i := range 3 {
			x[r.IntN(len(x))] *= float32(10 * (i + 1)) // outliers
		}
		var xq Q8
		QuantizeRows(&xq, x, m, k)
		got := make([]float32, m*n)
		MatMulTQ8Q8Strided(got, n, &xq, w.Data, w.Scales, n)
		xhat := xq.Dequantize()
		worst := 0.0
		for i := range m {
			for j := range n {
				var exact, quant, abs float64
				for p := range k {
					wp := float64(deq[j*k+p])
					exact += float64(x[i*k+p]) * wp
					quant += math.Abs(float64(x[i*k+p])-float64(xhat[i*k+p])) * math.Abs(wp)
					abs += math.Abs(float64(xhat[i*k+p]) * wp)
				}
				bound := quant + 1e-6*abs // rounding: a few float32 ulps of Σ|x̂·w|
				d := math.Abs(float64(got[i*n+j]) - exact)
				if d > bound {
					t.Fatalf("k=%d n=%d element (%d,%d): %v, float product %v: off by %g, bound %g", k, n, i, j, got[i*n+j], exact, d, bound)
				}
				worst = max(worst, d/(abs+1e-30))
			}
		}
		t.Logf("k=%d n=%d: worst |Δ| / Σ|x·w| = %.2g", k, n, worst)

		one := make([]float32, n)
		var row Q8
		QuantizeRows(&row, x[2*k:3*k], 1, k)
		MatMulTQ8Q8Strided(one, n, &row, w.Data, w.Scales, n)
		if i := sameBits(one, got[2*n:3*n]); i >= 0 {
			t.Fatalf("k=%d: row 2 alone differs at %d: %v, among others %v", k, i, one[i], got[2*n+i])
		}
	}
}

// TestQuantizeRowsNonFinite: a non-finite activation makes the products that
// read it NaN rather than a finite wrong value.
func TestQuantizeRowsNonFinite(t *testing.T) {
	x := make([]float32, 64)
	x[40] = float32(math.Inf(1))
	var xq Q8
	QuantizeRows(&xq, x, 1, 64)
	w, err := QuantizeQ8(make([]float32, 64), 1, 64, ActivationBlock)
	if err != nil {
		t.Fatal(err)
	}
	dst := make([]float32, 1)
	MatMulTQ8Q8Strided(dst, 1, &xq, w.Data, w.Scales, 1)
	if !math.IsNaN(float64(dst[0])) {
		t.Fatalf("product with an infinite activation = %v, want NaN", dst[0])
	}
}
