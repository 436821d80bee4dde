package asm

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/weftlabs/weft/internal/llm/quant"
)

// TestMatMulTHalfAssemblyEqualsPureGo: on random half-precision weights
// (every bit pattern but NaN) each assembly path (the AVX2 kernels, and
// the AVX-512 tiles where the CPU has them) and the pure-Go version give
// the same bits, for row counts on both sides of the four-row tiles,
// column counts past and short of whole tiles of two, four and eight, row
// strides, k not a multiple of 8 (the pure-Go loop serves it) and a matrix
// wider than one cache block of columns; the widened product is also close
// to the float64 one.
func TestMatMulTHalfAssemblyEqualsPureGo(t *testing.T) {
	t.Logf("kernels: %s", Path())
	forHalfPaths(func(path string) {
		r := rand.New(rand.NewPCG(31, 16))
		for _, typ := range []quant.Type{quant.F16, quant.BF16} {
			widen := quant.HalfToFloat
			if typ == quant.BF16 {
				widen = quant.BFloatToFloat
			}
			randHalves := func(n int) []byte {
				w := make([]byte, 2*n)
				for i := 0; i < n; i++ {
					for {
						h := uint16(r.Uint32())
						if v := widen(h); !math.IsNaN(float64(v)) && !math.IsInf(float64(v), 0) && math.Abs(float64(v)) < 1e4 {
							binary.LittleEndian.PutUint16(w[2*i:], h)
							break
						}
					}
				}
				return w
			}
			for _, k := range []int{8, 64, 20, 264, 1000, 13} {
				for _, m := range []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 33} {
					for _, n := range []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 16, 35} {
						lda, ldd := k+3, n+2
						a := randFloats(r, m*lda)
						w := randHalves(n * k)
						got, pure := make([]float32, m*ldd), make([]float32, m*ldd)
						MatMulTHalf(typ, got, ldd, a, lda, w, m, n, k)
						matmulTHalfGeneric(typ, pure, ldd, a, lda, w, m, n, k)
						if i := sameBits(got, pure); i >= 0 {
							t.Fatalf("%s %v k=%d m=%d n=%d element %d: assembly %v, pure Go %v", path, typ, k, m, n, i, got[i], pure[i])
						}
						for i := range m {
							for j := range n {
								var s, mag float64
								for p := range k {
									v := float64(a[i*lda+p]) * float64(widen(binary.LittleEndian.Uint16(w[2*(j*k+p):])))
									s += v
									mag += math.Abs(v)
								}
								if d := math.Abs(float64(got[i*ldd+j]) - s); d > 1e-5*mag+1e-30 {
									t.Fatalf("%s %v k=%d m=%d n=%d (%d,%d): %v, float64 %v", path, typ, k, m, n, i, j, got[i*ldd+j], s)
								}
							}
						}
					}
				}
			}
			k := 512
			n := (1<<20)/(2*k) + 9 // past the assembly's column block
			a, w := randFloats(r, 6*k), randHalves(n*k)
			got, pure := make([]float32, 6*n), make([]float32, 6*n)
			MatMulTHalf(typ, got, n, a, k, w, 6, n, k)
			matmulTHalfGeneric(typ, pure, n, a, k, w, 6, n, k)
			if i := sameBits(got, pure); i >= 0 {
				t.Fatalf("%s %v n=%d element %d: assembly %v, pure Go %v", path, typ, n, i, got[i], pure[i])
			}
		}
	})
}
