package asm

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestMatMulTGrowingMatchesRowAlone checks that every element of the
// growing-rows product has the bits of its row computed alone over k+i
// elements by MatMulTStrided, and on small integers (summed exactly, so
// rounding does not part the two paths: see doc.go) those of the pure-Go
// kernel too, across the kernel's
// groups of four rows, odd column counts, sums on both sides of each 8-element
// step and strides wider than the rows; and that no element of a row past its
// k+i, nor of dst outside the product, is read or written.
func TestMatMulTGrowingMatchesRowAlone(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	for _, s := range []struct{ m, n, k, lda, ldb, ldd int }{
		{1, 48, 1, 200, 200, 48},
		{4, 48, 8, 16, 16, 48},
		{4, 2, 13, 16, 16, 2},
		{5, 7, 5, 12, 12, 9},
		{16, 48, 7, 200, 200, 288},
		{16, 48, 185, 200, 200, 288},
		{16, 47, 93, 120, 110, 50},
		{13, 33, 40, 60, 64, 40},
		{9, 1, 30, 40, 40, 1},
	} {
		for _, exact := range []bool{false, true} {
			a, b := randFloats(r, s.m*s.lda), randFloats(r, s.n*s.ldb)
			if exact {
				a, b = randInts(r, s.m*s.lda, 8), randInts(r, s.n*s.ldb, 8)
			}
			// Elements past a row's sum are NaN: reading one would show.
			for i := range s.m {
				for p := s.k + i; p < s.lda; p++ {
					a[i*s.lda+p] = float32(math.NaN())
				}
			}
			for j := range s.n {
				for p := s.k + s.m - 1; p < s.ldb; p++ {
					b[j*s.ldb+p] = float32(math.NaN())
				}
			}
			got := make([]float32, s.m*s.ldd)
			for i := range got {
				got[i] = -7
			}
			MatMulTGrowing(got, s.ldd, a, s.lda, b, s.ldb, s.m, s.n, s.k)
			for i := range s.m {
				alone, generic := make([]float32, s.n), make([]float32, s.n)
				MatMulTStrided(alone, s.n, a[i*s.lda:], s.lda, b, s.ldb, 1, s.n, s.k+i)
				matmulTGeneric(generic, s.n, a[i*s.lda:], s.lda, b, s.ldb, 1, s.n, s.k+i)
				row := got[i*s.ldd : i*s.ldd+s.n]
				if j := sameBits(row, alone); j >= 0 {
					t.Fatalf("%+v: row %d column %d = %v, alone %v", s, i, j, row[j], alone[j])
				}
				if j := sameBits(row, generic); exact && j >= 0 {
					t.Fatalf("%+v: row %d column %d = %v, pure Go %v", s, i, j, row[j], generic[j])
				}
				for j := s.n; j < s.ldd && i*s.ldd+j < len(got); j++ {
					if got[i*s.ldd+j] != -7 {
						t.Fatalf("%+v: row %d wrote column %d past n", s, i, j)
					}
				}
			}
		}
	}
}
