package asm

import (
	"math"
	"math/rand/v2"
	"testing"
)

var q8q8Ks = []int{32, 64, 96, 288, 1024}

// q8q8Reference is the product in float64 from the quantised values.
func q8q8Reference(a []int8, as []float32, b []int8, bs []float32, m, n, k int) []float64 {
	nb := k / Q8Block
	out := make([]float64, m*n)
	for i := range m {
		for j := range n {
			var s float64
			for p := range k {
				s += float64(a[i*k+p]) * float64(as[i*nb+p/Q8Block]) * float64(b[j*k+p]) * float64(bs[j*nb+p/Q8Block])
			}
			out[i*n+j] = s
		}
	}
	return out
}

// TestMatMulTQ8Q8ExactOnPowersOfTwo: with scales of 1 or 1/2 every step is
// exact in float32 (partial sums stay below 2^20, multiples of 1/4), so both paths must give the true product bit for bit; a
// dropped, repeated or misplaced term or scale fails.
func TestMatMulTQ8Q8ExactOnPowersOfTwo(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for _, k := range []int{32, 64, 288} {
		for _, m := range []int{1, 2, 3, 5} {
			for _, n := range testNs {
				a, as := randQ8(r, m, k, Q8Block, true)
				b, bs := randQ8(r, n, k, Q8Block, true)
				for _, s := range [][]float32{as, bs} {
					for i := range s {
						s[i] = float32(1+r.IntN(2)) / 2
					}
				}
				want := q8q8Reference(a, as, b, bs, m, n, k)
				got, pure := make([]float32, m*n), make([]float32, m*n)
				MatMulTQ8Q8Strided(got, n, a, as, b, bs, m, n, k)
				matmulTQ8Q8Generic(pure, n, a, as, b, bs, m, n, k)
				for i := range want {
					if float64(got[i]) != want[i] || float64(pure[i]) != want[i] {
						t.Fatalf("k=%d m=%d n=%d element %d: %v (pure Go %v), want %v", k, m, n, i, got[i], pure[i], want[i])
					}
				}
			}
		}
	}
}

// TestMatMulTQ8Q8AssemblyEqualsPureGo: on arbitrary scales the two paths sum
// in the same order and round the same steps, so they agree bit for bit,
// also with row strides and with more columns than one cache block holds.
func TestMatMulTQ8Q8AssemblyEqualsPureGo(t *testing.T) {
	t.Logf("kernels: %s", Path())
	r := rand.New(rand.NewPCG(23, 24))
	check := func(m, n, k, ldd int) {
		a, as := randQ8(r, m, k, Q8Block, false)
		b, bs := randQ8(r, n, k, Q8Block, false)
		got, pure := make([]float32, m*ldd), make([]float32, m*ldd)
		MatMulTQ8Q8Strided(got, ldd, a, as, b, bs, m, n, k)
		matmulTQ8Q8Generic(pure, ldd, a, as, b, bs, m, n, k)
		if i := sameBits(got, pure); i >= 0 {
			t.Fatalf("m=%d n=%d k=%d ldd=%d element %d: assembly %v, pure Go %v", m, n, k, ldd, i, got[i], pure[i])
		}
		ref := q8q8Reference(a, as, b, bs, m, n, k)
		for i := range m {
			for j := range n {
				if d := math.Abs(float64(got[i*ldd+j]) - ref[i*n+j]); d > 1e-4*(1+math.Abs(ref[i*n+j])) {
					t.Fatalf("m=%d n=%d k=%d element (%d,%d): %v, float64 %v", m, n, k, i, j, got[i*ldd+j], ref[i*n+j])
				}
			}
		}
	}
	for _, k := range q8q8Ks {
		for _, m := range []int{1, 2, 4, 9} {
			for _, n := range testNs {
				check(m, n, k, n+3)
			}
		}
	}
	check(3, 1037, 1024, 1040)        // more columns than one cache block of the assembly holds
	for _, m := range []int{32, 37} { // the VNNI tile's groups of four, and rows past them
		for _, n := range []int{1, 4, 5, 13, 49} {
			check(m, n, 96, n+1)
		}
	}
	check(33, 1030, 1024, 1030)
}

// TestMatMulTQ8Q8TileOnAdversarialBlocks gives the four-row tiles (32 rows
// or more) levels at ±127, all-zero blocks, subnormal, huge and zero
// scales: the assembly must give the pure-Go bits.
func TestMatMulTQ8Q8TileOnAdversarialBlocks(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	blocks := func(rows, k int) ([]int8, []float32) {
		q, s := make([]int8, rows*k), make([]float32, rows*k/Q8Block)
		for b := range s {
			lv := q[b*Q8Block : (b+1)*Q8Block]
			switch r.IntN(5) {
			case 0: // zeros
			case 1:
				for i := range lv {
					lv[i] = int8(127 - 254*r.IntN(2))
				}
			default:
				for i := range lv {
					lv[i] = int8(r.IntN(255) - 127)
				}
			}
			switch r.IntN(5) {
			case 0:
				s[b] = math.Float32frombits(uint32(1 + r.IntN(1<<23))) // subnormal
			case 1:
				s[b] = float32(r.Float64()) * 1e18
			case 2:
				s[b] = 0
			default:
				s[b] = float32(r.Float64() * 0.02)
			}
		}
		return q, s
	}
	for _, mnk := range [][3]int{{32, 24, 64}, {36, 13, 256}, {40, 7, 1024}} {
		m, n, k := mnk[0], mnk[1], mnk[2]
		a, as := blocks(m, k)
		b, bs := blocks(n, k)
		got, pure := make([]float32, m*n), make([]float32, m*n)
		MatMulTQ8Q8Strided(got, n, a, as, b, bs, m, n, k)
		matmulTQ8Q8Generic(pure, n, a, as, b, bs, m, n, k)
		if i := sameBits(got, pure); i >= 0 {
			t.Fatalf("m=%d n=%d k=%d element %d: assembly %v, pure Go %v", m, n, k, i, got[i], pure[i])
		}
	}
}

// TestQuantizeBlock: every element within half a scale of its value, the
// largest magnitude at ±127, zeros exact, a non-finite element a NaN scale.
func TestQuantizeBlock(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 26))
	src := randFloats(r, Q8Block)
	src[7] = -3 * float32(math.Abs(float64(slicesMax(src)))) // the largest magnitude, negative
	dst := make([]int8, Q8Block)
	scale, ok := QuantizeBlock(dst, src)
	if !ok || scale <= 0 {
		t.Fatalf("scale %v, ok %v", scale, ok)
	}
	if dst[7] != -127 {
		t.Fatalf("largest magnitude quantised to %d, want -127", dst[7])
	}
	for p, v := range src {
		if d := math.Abs(float64(v) - float64(dst[p])*float64(scale)); d > float64(scale)/2*(1+1e-6) {
			t.Fatalf("element %d: %v quantised to %d×%v, off by %v > scale/2", p, v, dst[p], scale, d)
		}
	}
	if s, ok := QuantizeBlock(dst, make([]float32, Q8Block)); s != 0 || !ok || dst[0] != 0 {
		t.Fatalf("zeros: scale %v ok %v", s, ok)
	}
	src[3] = float32(math.Inf(1))
	if s, ok := QuantizeBlock(dst, src); ok || !math.IsNaN(float64(s)) {
		t.Fatalf("infinite element: scale %v ok %v, want NaN and false", s, ok)
	}
}

func slicesMax(x []float32) float32 {
	m := x[0]
	for _, v := range x {
		m = max(m, v)
	}
	return m
}

func TestMatMulTQ8Q8PanicsOnBadShapes(t *testing.T) {
	for name, f := range map[string]func(){
		"k not a multiple of 32": func() {
			MatMulTQ8Q8Strided(make([]float32, 1), 1, make([]int8, 40), make([]float32, 2), make([]int8, 40), make([]float32, 2), 1, 1, 40)
		},
		"short scales": func() {
			MatMulTQ8Q8Strided(make([]float32, 1), 1, make([]int8, 64), make([]float32, 1), make([]int8, 64), make([]float32, 2), 1, 1, 64)
		},
	} {
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
