package asm

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// Shapes for MatMulAdd: rows covering every tile height (1 to 12, 1 to 6
// for AVX2) and its remainders, columns every strip width (16, 32 lanes; 8, 16 for AVX2) and
// the pure-Go remainder, and past one packed block of b's columns; steps
// below, at and past the k block.
var (
	addMs = []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 25}
	addNs = []int{1, 7, 8, 15, 16, 17, 31, 32, 33, 49, 72, 529}
	addKs = []int{1, 9, 384, 385, 800}
)

// padded returns the strides of a shape with room on the right of every
// row, so a kernel that strays past n or k, or ignores a stride, is caught.
func padded(n, k int) (ldd, lda, ldb int) { return n + 3, k + 5, n + 2 }

// TestMatMulAddExactOnIntegers: small integers make every product and sum
// exact in float32 whatever the order, so every path must give the true
// dst + a·b bit for bit, and leave the padding of dst alone.
func TestMatMulAddExactOnIntegers(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	for _, k := range addKs {
		for _, m := range addMs {
			for _, n := range addNs {
				if k > 9 && n > 49 && !slices.Contains([]int{1, 12, 13, 25}, m) {
					continue // every height is checked on the smaller shapes
				}
				ldd, lda, ldb := padded(n, k)
				a, b, dst0 := randInts(r, m*lda, 4), randInts(r, k*ldb, 4), randInts(r, m*ldd, 100)
				want := append([]float32(nil), dst0...)
				for i := range m {
					for j := range n {
						s := int64(dst0[i*ldd+j])
						for p := range k {
							s += int64(a[i*lda+p]) * int64(b[p*ldb+j])
						}
						want[i*ldd+j] = float32(s)
					}
				}
				for name, f := range matmulAddKernels() {
					for _, accumulate := range []bool{true, false} {
						got, want := append([]float32(nil), dst0...), want
						if !accumulate {
							// Set: the sums without dst's values, padding kept.
							want = append([]float32(nil), want...)
							for i := range m {
								for j := range n {
									want[i*ldd+j] -= dst0[i*ldd+j]
								}
							}
						}
						f(accumulate, got, ldd, a, lda, b, ldb, m, n, k)
						if e := sameBits(got, want); e >= 0 {
							t.Fatalf("%s accumulate=%v m=%d n=%d k=%d element %d (row %d col %d): got %v, want %v", name, accumulate, m, n, k, e, e/ldd, e%ldd, got[e], want[e])
						}
					}
				}
				got := append([]float32(nil), dst0...)
				MatMulAdd(got, ldd, a, lda, b, ldb, m, n, k)
				if d := sameBits(got, want); d >= 0 {
					t.Fatalf("MatMulAdd m=%d n=%d k=%d element %d: got %v, want %v", m, n, k, d, got[d], want[d])
				}
			}
		}
	}
}

// TestMatMulAddMatchesReferenceWithinBound compares every path on Gaussian
// inputs with a float64 reference. Summed in order onto dst, an element's
// error is at most γ_k·(|dst| + Σ|a_p·b_p|) (a recursive sum of k+1 terms,
// Higham §3.1), with γ_k = k·u/(1−k·u).
func TestMatMulAddMatchesReferenceWithinBound(t *testing.T) {
	r := rand.New(rand.NewPCG(33, 34))
	u := math.Ldexp(1, -24)
	for _, k := range []int{1, 9, 256, 600} {
		for _, m := range []int{1, 8, 11} {
			for _, n := range []int{7, 33, 49} {
				a, b, dst0 := randFloats(r, m*k), randFloats(r, k*n), randFloats(r, m*n)
				for name, f := range matmulAddKernels() {
					got := append([]float32(nil), dst0...)
					f(true, got, n, a, k, b, n, m, n, k)
					for i := range m {
						for j := range n {
							exact, abs := float64(dst0[i*n+j]), math.Abs(float64(dst0[i*n+j]))
							for p := range k {
								v := float64(a[i*k+p]) * float64(b[p*n+j])
								exact += v
								abs += math.Abs(v)
							}
							d := float64(k + 1)
							bound := d * u / (1 - d*u) * abs
							if diff := math.Abs(float64(got[i*n+j]) - exact); diff > bound {
								t.Fatalf("%s m=%d n=%d k=%d (%d,%d): %v, exact %v, error %g above bound %g", name, m, n, k, i, j, got[i*n+j], exact, diff, bound)
							}
						}
					}
				}
			}
		}
	}
}

// TestMatMulAddIndependentOfSplit is the determinism contract: an element's
// bits are the same whether its row is computed alone or with others, and
// whether its columns are computed as one product or as bands (as threads
// split the work), because each element is summed in the order of k.
func TestMatMulAddIndependentOfSplit(t *testing.T) {
	r := rand.New(rand.NewPCG(35, 36))
	const m, n, k = 21, 97, 700
	a, b, dst0 := randFloats(r, m*k), randFloats(r, k*n), randFloats(r, m*n)
	whole := append([]float32(nil), dst0...)
	MatMulAdd(whole, n, a, k, b, n, m, n, k)
	split := append([]float32(nil), dst0...)
	for i := range m {
		for _, band := range [][2]int{{0, 32}, {32, 48}, {48, 97}} {
			j0, j1 := band[0], band[1]
			MatMulAdd(split[i*n+j0:], n, a[i*k:], k, b[j0:], n, 1, j1-j0, k)
		}
	}
	if d := sameBits(whole, split); d >= 0 {
		t.Fatalf("element %d: %v as one product, %v by rows and bands", d, whole[d], split[d])
	}
}

func TestMatMulAddPanicsOnShortSlices(t *testing.T) {
	const m, n, k = 3, 5, 4
	ok := func() ([]float32, []float32, []float32) {
		return make([]float32, m*n), make([]float32, m*k), make([]float32, k*n)
	}
	for name, call := range map[string]func(){
		"dst": func() { d, a, b := ok(); MatMulAdd(d[:m*n-1], n, a, k, b, n, m, n, k) },
		"a":   func() { d, a, b := ok(); MatMulAdd(d, n, a[:m*k-1], k, b, n, m, n, k) },
		"b":   func() { d, a, b := ok(); MatMulAdd(d, n, a, k, b[:k*n-1], n, m, n, k) },
		"ldb": func() { d, a, b := ok(); MatMulAdd(d, n, a, k, b, n-1, m, n, k) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s too short: no panic", name)
				}
			}()
			call()
		}()
	}
}

// TestMatMulPackedEqualsMatMul: a product against b packed once is MatMul's
// (MatMulAdd's) bit for bit, over every tile height, strip width, the pure-Go columns
// and more than one block of steps and of columns, and leaves dst's
// padding alone.
func TestMatMulPackedEqualsMatMul(t *testing.T) {
	r := rand.New(rand.NewPCG(37, 38))
	for _, k := range addKs {
		for _, n := range addNs {
			ldd, lda, ldb := padded(n, k)
			b := randFloats(r, k*ldb)
			pb := PackB(b, ldb, k, n)
			for _, m := range []int{1, 5, 12, 13, 25} {
				a, dst0 := randFloats(r, m*lda), randFloats(r, m*ldd)
				want := append([]float32(nil), dst0...)
				MatMul(want, ldd, a, lda, b, ldb, m, n, k)
				got := append([]float32(nil), dst0...)
				MatMulPacked(got, ldd, a, lda, pb, m)
				if e := sameBits(got, want); e >= 0 {
					t.Fatalf("m=%d n=%d k=%d element %d (row %d col %d): packed %v, MatMul %v", m, n, k, e, e/ldd, e%ldd, got[e], want[e])
				}
				want = append([]float32(nil), dst0...)
				MatMulAdd(want, ldd, a, lda, b, ldb, m, n, k)
				got = append([]float32(nil), dst0...)
				MatMulAddPacked(got, ldd, a, lda, pb, m)
				if e := sameBits(got, want); e >= 0 {
					t.Fatalf("m=%d n=%d k=%d element %d (row %d col %d): packed %v, MatMulAdd %v", m, n, k, e, e/ldd, e%ldd, got[e], want[e])
				}
			}
		}
	}
}
