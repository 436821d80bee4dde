package tensor

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/weftlabs/weft/internal/llm/quant"
)

// matrixTypes are the weight formats with a product of their own.
var matrixTypes = []quant.Type{quant.F16, quant.BF16, quant.Q8_0, quant.Q4_0, quant.Q4_1, quant.Q5_0, quant.Q5_1, quant.Q4_K, quant.Q5_K, quant.Q6_K}

// TestMatMulTMatrixRowsIdenticalAcrossBatchAndThreads extends the
// determinism contract to every weight format: a row comes out the same
// bits computed alone or in a batch of 7, on 1, 2, 3 or 5 threads, and in
// bands of the output columns.
func TestMatMulTMatrixRowsIdenticalAcrossBatchAndThreads(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 4))
	for _, typ := range matrixTypes {
		for _, shape := range [][2]int{{256, 301}, {768, 96}} {
			k, n := shape[0], shape[1]
			const m = 7
			a := randFloats(r, m*k)
			w, err := quant.QuantizeMatrix(typ, randFloats(r, n*k), n, k)
			if err != nil {
				t.Fatal(err)
			}
			var acts QActs
			want := make([]float32, m*n)
			NewPool(1).MatMulTMatrix(want, a, m, w, &acts)
			for _, threads := range []int{2, 3, 5} {
				p := NewPool(threads)
				batch := make([]float32, m*n)
				p.MatMulTMatrix(batch, a, m, w, &acts)
				if i := sameBits(batch, want); i >= 0 {
					t.Fatalf("%v k=%d n=%d threads=%d: element %d = %v, one thread %v", typ, k, n, threads, i, batch[i], want[i])
				}
				for i := range m {
					alone := make([]float32, n)
					p.MatMulTMatrix(alone, a[i*k:(i+1)*k], 1, w, &acts)
					if j := sameBits(alone, want[i*n:(i+1)*n]); j >= 0 {
						t.Fatalf("%v k=%d n=%d threads=%d: row %d alone differs at column %d", typ, k, n, threads, i, j)
					}
				}
				p.Close()
			}
		}
	}
}

// TestMatMulTMatrixCloseToFloat: the product is the float64 one over the
// dequantised weights, within the activations' quantisation (half a block
// scale per element, against Σ|w| over the block) and float32 rounding.
func TestMatMulTMatrixCloseToFloat(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 5))
	const m, n, k = 3, 40, 512
	p := NewPool(2)
	defer p.Close()
	for _, typ := range matrixTypes {
		a := randFloats(r, m*k)
		w, err := quant.QuantizeMatrix(typ, randFloats(r, n*k), n, k)
		if err != nil {
			t.Fatal(err)
		}
		wf := w.Dequantize()
		got := make([]float32, m*n)
		var acts QActs
		p.MatMulTMatrix(got, a, m, w, &acts)
		blk := 32
		if !SameActs(typ, quant.Q8_0) {
			blk = quant.QK
		}
		for i := range m {
			for j := range n {
				var ref, bound float64
				for b := 0; b < k; b += blk {
					var amax, wsum float64
					for q := b; q < b+blk; q++ {
						ref += float64(a[i*k+q]) * float64(wf[j*k+q])
						amax = max(amax, math.Abs(float64(a[i*k+q])))
						wsum += math.Abs(float64(wf[j*k+q]))
					}
					if Quantized(typ) {
						bound += amax / 127 / 2 * wsum
					}
					bound += 1e-6 * amax * wsum
				}
				if d := math.Abs(float64(got[i*n+j]) - ref); d > bound {
					t.Fatalf("%v (%d,%d): %v, float64 %v, |Δ| %g above %g", typ, i, j, got[i*n+j], ref, d, bound)
				}
			}
		}
	}
}
