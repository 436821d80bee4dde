package asm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// Shapes that exercise every tile, remainder and tail: k below, at and past
// multiples of 8; m covering each row kernel, the grouped kernel (4 to 16
// rows, full and partial last group) and the column-blocked order beyond;
// n covering each tile width and its remainders.
var (
	testKs = []int{1, 3, 7, 8, 9, 15, 16, 17, 31, 33, 64, 65, 127, 288, 301}
	testMs = []int{1, 2, 3, 4, 5, 6, 7, 9, 13, 16, 17, 22}
	testNs = []int{1, 2, 3, 5, 7, 8, 9, 13, 25, 31, 49}
)

func randInts(r *rand.Rand, n, lim int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.IntN(2*lim+1) - lim)
	}
	return x
}

func randFloats(r *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	return x
}

// TestMatMulTExactOnIntegers uses small integers, whose products and sums are
// exact in float32 whatever the order: every path must give the true result
// bit for bit, so a dropped, repeated or misplaced term fails.
func TestMatMulTExactOnIntegers(t *testing.T) {
	t.Logf("kernels: %s", Path())
	r := rand.New(rand.NewPCG(1, 2))
	for _, k := range testKs {
		for _, m := range testMs {
			for _, n := range testNs {
				a, b := randInts(r, m*k, 8), randInts(r, n*k, 8)
				want := make([]float32, m*n)
				for i := 0; i < m; i++ {
					for j := 0; j < n; j++ {
						var s int64
						for p := 0; p < k; p++ {
							s += int64(a[i*k+p]) * int64(b[j*k+p])
						}
						want[i*n+j] = float32(s)
					}
				}
				got := make([]float32, m*n)
				MatMulT(got, a, b, m, n, k)
				gen := make([]float32, m*n)
				matmulTGeneric(gen, n, a, k, b, k, m, n, k)
				for e := range want {
					if got[e] != want[e] || gen[e] != want[e] {
						t.Fatalf("m=%d n=%d k=%d element %d: got %v, pure Go %v, want %v", m, n, k, e, got[e], gen[e], want[e])
					}
				}
			}
		}
	}
}

// TestMatMulTColumnBlocksExact: rows of 4099 elements make the column
// blocks of the large-m order 48 wide, so n=101 crosses two block bounds.
func TestMatMulTColumnBlocksExact(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	const m, n, k = 21, 101, 4099
	a, b := randInts(r, m*k, 3), randInts(r, n*k, 3)
	got := make([]float32, m*n)
	MatMulT(got, a, b, m, n, k)
	for i := 0; i < m; i++ {
		alone := make([]float32, n)
		MatMulT(alone, a[i*k:(i+1)*k], b, 1, n, k)
		for j := 0; j < n; j++ {
			var s int64
			for p := 0; p < k; p++ {
				s += int64(a[i*k+p]) * int64(b[j*k+p])
			}
			if got[i*n+j] != float32(s) || alone[j] != float32(s) {
				t.Fatalf("(%d,%d): batch %v, alone %v, want %d", i, j, got[i*n+j], alone[j], s)
			}
		}
	}
}

// TestMatMulTStridedRowsMatchPacked: a and b rows inside wider rows (as one
// head's rows of a key cache) give the packed product's bits, for every
// kernel and order.
func TestMatMulTStridedRowsMatchPacked(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	for _, k := range []int{5, 48, 67} {
		for _, m := range []int{1, 3, 4, 9, 17, 24} {
			const n = 29
			lda, ldb := k+13, 3*k+1
			aw, bw := randFloats(r, m*lda), randFloats(r, n*ldb)
			a, b := make([]float32, m*k), make([]float32, n*k)
			for i := 0; i < m; i++ {
				copy(a[i*k:(i+1)*k], aw[i*lda+7:])
			}
			for j := 0; j < n; j++ {
				copy(b[j*k:(j+1)*k], bw[j*ldb+k:])
			}
			want := make([]float32, m*n)
			MatMulT(want, a, b, m, n, k)
			got := make([]float32, m*n)
			MatMulTStrided(got, n, aw[7:], lda, bw[k:], ldb, m, n, k)
			if i := sameBits(got, want); i >= 0 {
				t.Fatalf("k=%d m=%d: element %d strided %v, packed %v", k, m, i, got[i], want[i])
			}
		}
	}
}

// TestMatMulTStridedLeavesOtherColumns writes a band of a wider matrix and
// checks the columns around it keep their values.
func TestMatMulTStridedLeavesOtherColumns(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const m, n, k, ldd, off = 5, 11, 37, 20, 4
	a, b := randInts(r, m*k, 5), randInts(r, n*k, 5)
	dst := make([]float32, (m-1)*ldd+off+n+3)
	for i := range dst {
		dst[i] = -12345
	}
	MatMulTStrided(dst[off:], ldd, a, k, b, k, m, n, k)
	want := make([]float32, m*n)
	MatMulT(want, a, b, m, n, k)
	for e, v := range dst {
		i, j := (e-off)/ldd, (e-off)%ldd
		inBand := e >= off && i < m && j < n
		switch {
		case inBand && v != want[i*n+j]:
			t.Fatalf("dst[%d] (row %d col %d) = %v, want %v", e, i, j, v, want[i*n+j])
		case !inBand && v != -12345:
			t.Fatalf("dst[%d] outside the band was overwritten with %v", e, v)
		}
	}
}

// dotBound is a rigorous bound on |computed - exact| for an element of length
// k: each product passes through at most ceil(k/8) accumulation steps, one
// tail step and three tree additions, each rounding with relative error at
// most u = 2^-24 (and once more for the product when it is not fused), so
// the error is at most γ_d·Σ|a_p·b_p| with γ_d = d·u/(1-d·u) (Higham, Accuracy
// and Stability of Numerical Algorithms, §3.1, §4.2).
func dotBound(absSum float64, k int) float64 {
	d := float64((k+7)/8 + 1 + 3 + 1)
	u := math.Ldexp(1, -24)
	return d * u / (1 - d*u) * absSum
}

// TestMatMulTMatchesReferenceWithinBound compares both paths on Gaussian
// inputs with a float64 reference, within the bound of dotBound.
func TestMatMulTMatchesReferenceWithinBound(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, k := range testKs {
		for _, m := range []int{1, 4, 7} {
			for _, n := range []int{1, 7, 9, 25} {
				a, b := randFloats(r, m*k), randFloats(r, n*k)
				got := make([]float32, m*n)
				MatMulT(got, a, b, m, n, k)
				gen := make([]float32, m*n)
				matmulTGeneric(gen, n, a, k, b, k, m, n, k)
				for i := 0; i < m; i++ {
					for j := 0; j < n; j++ {
						var exact, abs float64
						for p := 0; p < k; p++ {
							v := float64(a[i*k+p]) * float64(b[j*k+p])
							exact += v
							abs += math.Abs(v)
						}
						bound := dotBound(abs, k)
						for name, v := range map[string]float32{"dispatch": got[i*n+j], "pure Go": gen[i*n+j]} {
							if diff := math.Abs(float64(v) - exact); diff > bound {
								t.Fatalf("%s m=%d n=%d k=%d (%d,%d): %v, exact %v, error %g above bound %g", name, m, n, k, i, j, v, exact, diff, bound)
							}
						}
					}
				}
			}
		}
	}
}

// TestMatMulTRowIndependentOfBatchAndBand is the determinism contract: a
// row's bits are the same computed alone (m=1), inside batches of 2 to 22, or as
// bands of columns (as threads split the work), and equal Dot's.
func TestMatMulTRowIndependentOfBatchAndBand(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, k := range []int{5, 8, 29, 288, 301} {
		const m, n = 22, 53
		a, b := randFloats(r, m*k), randFloats(r, n*k)
		batch := make([]float32, m*n)
		MatMulT(batch, a, b, m, n, k)
		for _, mm := range []int{2, 3, 5, 8, 16, 17} { // each kernel and order
			sub := make([]float32, mm*n)
			MatMulT(sub, a[(m-mm)*k:], b, mm, n, k)
			if i := sameBits(sub, batch[(m-mm)*n:]); i >= 0 {
				t.Fatalf("k=%d: the last %d rows batched alone differ at %d", k, mm, i)
			}
		}
		for i := 0; i < m; i++ {
			alone := make([]float32, n)
			MatMulT(alone, a[i*k:(i+1)*k], b, 1, n, k)
			for _, bands := range [][]int{{0, n}, {0, 24, n}, {0, 1, 2, 29, 30, n}} {
				banded := make([]float32, n)
				for s := 0; s+1 < len(bands); s++ {
					lo, hi := bands[s], bands[s+1]
					MatMulTStrided(banded[lo:], n, a[i*k:(i+1)*k], k, b[lo*k:], k, 1, hi-lo, k)
				}
				for j := 0; j < n; j++ {
					bits := math.Float32bits(batch[i*n+j])
					d := Dot(a[i*k:(i+1)*k], b[j*k:(j+1)*k])
					if math.Float32bits(alone[j]) != bits || math.Float32bits(banded[j]) != bits || math.Float32bits(d) != bits {
						t.Fatalf("k=%d row %d col %d: batch %v, alone %v, bands %v %v, Dot %v", k, i, j, batch[i*n+j], alone[j], bands, banded[j], d)
					}
				}
			}
		}
	}
}

func sameBits(a, b []float32) int {
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return i
		}
	}
	return -1
}

func TestMatMulTPanicsOnShortSlices(t *testing.T) {
	cases := map[string]func(){
		"short a":      func() { MatMulT(make([]float32, 4), make([]float32, 7), make([]float32, 8), 2, 2, 4) },
		"short b":      func() { MatMulT(make([]float32, 4), make([]float32, 8), make([]float32, 7), 2, 2, 4) },
		"short dst":    func() { MatMulT(make([]float32, 3), make([]float32, 8), make([]float32, 8), 2, 2, 4) },
		"small stride": func() { MatMulTStrided(make([]float32, 8), 1, make([]float32, 8), 4, make([]float32, 8), 4, 2, 2, 4) },
		"a stride": func() {
			MatMulTStrided(make([]float32, 8), 2, make([]float32, 8), 3, make([]float32, 8), 4, 2, 2, 4)
		},
		"dot lengths": func() { Dot(make([]float32, 3), make([]float32, 4)) },
		"q8 block": func() {
			MatMulTQ8(make([]float32, 1), make([]float32, 12), make([]int8, 12), make([]float32, 3), 1, 1, 12, 4)
		},
		"q8 scales": func() {
			MatMulTQ8(make([]float32, 1), make([]float32, 16), make([]int8, 16), make([]float32, 1), 1, 1, 16, 8)
		},
	}
	for name, f := range cases {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("no panic")
				}
			}()
			f()
		})
	}
}

func TestMatMulTZeroK(t *testing.T) {
	dst := []float32{1, 2, 3, 4}
	MatMulT(dst, nil, nil, 2, 2, 0)
	for _, v := range dst {
		if v != 0 {
			t.Fatalf("k=0 left %v, want zeros", dst)
		}
	}
}

func randQ8(r *rand.Rand, n, k, blockSize int, pow2 bool) ([]int8, []float32) {
	q := make([]int8, n*k)
	for i := range q {
		q[i] = int8(r.IntN(255) - 127)
	}
	s := make([]float32, n*(k/blockSize))
	for i := range s {
		if pow2 {
			s[i] = float32(math.Ldexp(1, r.IntN(5)-2))
		} else {
			s[i] = float32(r.Float64() * 0.02)
		}
	}
	return q, s
}

// TestMatMulTQ8EqualsMatMulTOnDequantised: the int8 kernel must equal the f32
// kernel on the dequantised matrix bit for bit, on both paths.
func TestMatMulTQ8EqualsMatMulTOnDequantised(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, kb := range [][2]int{{8, 8}, {16, 8}, {64, 32}, {96, 32}, {288, 32}, {40, 40}, {256, 256}} {
		k, bs := kb[0], kb[1]
		for _, m := range testMs {
			for _, n := range testNs {
				a := randFloats(r, m*k)
				q, s := randQ8(r, n, k, bs, false)
				w := make([]float32, n*k)
				for j := 0; j < n; j++ {
					dequantRow(w[j*k:(j+1)*k], q[j*k:(j+1)*k], s[j*(k/bs):(j+1)*(k/bs)], bs)
				}
				want := make([]float32, m*n)
				MatMulT(want, a, w, m, n, k)
				got := make([]float32, m*n)
				MatMulTQ8(got, a, q, s, m, n, k, bs)
				gen := make([]float32, m*n)
				matmulTQ8Generic(gen, n, a, q, s, m, n, k, bs)
				genF32 := make([]float32, m*n)
				matmulTGeneric(genF32, n, a, k, w, k, m, n, k)
				for e := range want {
					if math.Float32bits(got[e]) != math.Float32bits(want[e]) || math.Float32bits(gen[e]) != math.Float32bits(genF32[e]) {
						t.Fatalf("m=%d n=%d k=%d bs=%d element %d: q8 %v vs f32 %v; pure Go q8 %v vs f32 %v", m, n, k, bs, e, got[e], want[e], gen[e], genF32[e])
					}
				}
			}
		}
	}
}

// TestMatMulTQ8ExactOnIntegers: integer activations and power-of-two scales
// keep every step exact, so the result must be the true one.
func TestMatMulTQ8ExactOnIntegers(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, kb := range [][2]int{{8, 8}, {64, 16}, {288, 32}} {
		k, bs := kb[0], kb[1]
		for _, m := range []int{1, 3, 4, 6} {
			for _, n := range []int{1, 2, 6, 7, 13} {
				a := randInts(r, m*k, 4)
				q, s := randQ8(r, n, k, bs, true)
				got := make([]float32, m*n)
				MatMulTQ8(got, a, q, s, m, n, k, bs)
				for i := 0; i < m; i++ {
					for j := 0; j < n; j++ {
						var exact float64
						for p := 0; p < k; p++ {
							exact += float64(a[i*k+p]) * float64(q[j*k+p]) * float64(s[j*(k/bs)+p/bs])
						}
						if float64(got[i*n+j]) != exact {
							t.Fatalf("m=%d n=%d k=%d (%d,%d): %v, want %v", m, n, k, i, j, got[i*n+j], exact)
						}
					}
				}
			}
		}
	}
}

func TestDotShortVectors(t *testing.T) {
	for k := 0; k < 20; k++ {
		a, b := make([]float32, k), make([]float32, k)
		var want float32
		for i := range a {
			a[i], b[i] = float32(i+1), float32(2*i-3)
			want += a[i] * b[i]
		}
		if got := Dot(a, b); got != want {
			t.Fatalf("k=%d: Dot %v, want %v", k, got, want)
		}
	}
}

func ExampleMatMulT() {
	a := []float32{1, 2, 3, 4, 5, 6, 7, 8, 9} // 1×9
	b := make([]float32, 2*9)                 // 2×9: rows of ones and of twos
	for p := 0; p < 9; p++ {
		b[p], b[9+p] = 1, 2
	}
	dst := make([]float32, 2)
	MatMulT(dst, a, b, 1, 2, 9)
	fmt.Println(dst)
	// Output: [45 90]
}
