package asm

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestMatMulTAliasedRowsMatchRowByRow multiplies rows whose stride is a
// multiple of 1 KiB (the rows the 8-row tile takes from a padded copy) and
// checks every element against Dot of its two rows and against the product
// taken without the copy, bit for bit, on random values and on adversarial
// ones (huge and tiny magnitudes side by side, zeros, subnormals).
func TestMatMulTAliasedRowsMatchRowByRow(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	adversarial := func(n int) []float32 {
		x := make([]float32, n)
		for i := range x {
			switch r.IntN(6) {
			case 0:
				x[i] = float32(r.NormFloat64()) * 1e30
			case 1:
				x[i] = float32(r.NormFloat64()) * 1e-30
			case 2:
				x[i] = math.Float32frombits(uint32(r.IntN(1 << 23))) // subnormal
			case 3:
				x[i] = 0
			default:
				x[i] = float32(r.NormFloat64())
			}
		}
		return x
	}
	for _, s := range []struct{ m, n, k, lda, ldb int }{
		{8, 30, 256, 256, 256},
		{8, 29, 1024, 1024, 1024}, // one 8-row group: one pass over k
		{17, 31, 1024, 1024, 1024},
		{40, 49, 1000, 1024, 1000},
		{24, 25, 259, 512, 259},
		{33, 13, 4096, 4096, 4096},
		{24, 25, 777, 777, 800},
		{16, 61, 1024, 1031, 1024},
	} {
		for _, values := range []func(int) []float32{func(n int) []float32 { return randFloats(r, n) }, adversarial} {
			a, b := values(s.m*s.lda), values(s.n*s.ldb)
			padded, unpadded := make([]float32, s.m*s.n), make([]float32, s.m*s.n)
			MatMulTStrided(padded, s.n, a, s.lda, b, s.ldb, s.m, s.n, s.k)
			padAliasedRows = false
			MatMulTStrided(unpadded, s.n, a, s.lda, b, s.ldb, s.m, s.n, s.k)
			padAliasedRows = true
			if i := sameBits(padded, unpadded); i >= 0 {
				t.Fatalf("%+v: element %d padded %v, unpadded %v", s, i, padded[i], unpadded[i])
			}
			for i := range s.m {
				for j := range s.n {
					d := Dot(a[i*s.lda:i*s.lda+s.k], b[j*s.ldb:j*s.ldb+s.k])
					if math.Float32bits(d) != math.Float32bits(padded[i*s.n+j]) {
						t.Fatalf("%+v: row %d col %d: product %v, Dot %v", s, i, j, padded[i*s.n+j], d)
					}
				}
			}
		}
	}
}
