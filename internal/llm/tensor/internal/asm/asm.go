package asm

//go:generate go run gen_kernels.go gen_kernels_avx512.go gen_kernels_stream.go gen_kernels_causal.go
//go:generate go run gen_matmuladd.go
//go:generate go run gen_quant.go gen_quant_avx512.go gen_quant_stream.go gen_quant_ktile.go gen_quant_cols.go gen_quant_half.go

import (
	"fmt"
	"math"
)

// Dot returns Σ a[i]·b[i] in the order described in the package comment, so
// that Dot(a, b) equals the element MatMulT computes for the same rows.
// It panics if the lengths differ.
func Dot(a, b []float32) float32 {
	if len(a) != len(b) {
		panic(fmt.Sprintf("asm.Dot: lengths %d and %d differ", len(a), len(b)))
	}
	return dot(a, b)
}

// MatMulT sets dst[i*n+j] = Σ_p a[i*k+p]·b[j*k+p] for i < m, j < n: dst[m×n] =
// a[m×k] · bᵀ with b stored n×k row-major. It panics if a slice is too short.
func MatMulT(dst, a, b []float32, m, n, k int) {
	MatMulTStrided(dst, n, a, k, b, k, m, n, k)
}

// MatMulTStrided is MatMulT over rows that need not be packed: row i of a
// starts at a[i*lda], row j of b at b[j*ldb] and row i of the result at
// dst[i*ldd] (each stride at least the row's length), so a band of a wider
// matrix, or one head's rows of a [positions × heads·headDim] cache, is
// multiplied in place. The strides change no sum: the result is bit-identical
// to MatMulT on packed copies.
func MatMulTStrided(dst []float32, ldd int, a []float32, lda int, b []float32, ldb, m, n, k int) {
	checkMatMul("MatMulT", len(dst), ldd, len(a), lda, len(b), ldb, m, n, k)
	if m == 0 || n == 0 {
		return
	}
	if k == 0 {
		for i := 0; i < m; i++ {
			clear(dst[i*ldd : i*ldd+n])
		}
		return
	}
	matmulT(dst, ldd, a, lda, b, ldb, m, n, k)
}

// MatMulTGrowing is MatMulTStrided over sums that grow by one element a
// row: row i of dst is row i of a times b over the first k+i elements (a
// causal product of consecutive positions, as the weighted sums of values
// of a prompt's rows). Every element is bit-identical to MatMulTStrided's
// for that row alone with k+i; the rows share the loads of b.
func MatMulTGrowing(dst []float32, ldd int, a []float32, lda int, b []float32, ldb, m, n, k int) {
	checkMatMul("MatMulTGrowing", len(dst), ldd, len(a), lda, len(b), ldb, m, n, k+max(m-1, 0))
	if m == 0 || n == 0 {
		return
	}
	matmulTGrowing(dst, ldd, a, lda, b, ldb, m, n, k)
}

// matmulTGrowingRows computes rows [from, m) of MatMulTGrowing one at a
// time.
func matmulTGrowingRows(dst []float32, ldd int, a []float32, lda int, b []float32, ldb, from, m, n, k int) {
	for i := from; i < m; i++ {
		if k+i == 0 {
			clear(dst[i*ldd : i*ldd+n])
			continue
		}
		matmulT(dst[i*ldd:], ldd, a[i*lda:], lda, b, ldb, 1, n, k+i)
	}
}

// MatMulTQ8 is MatMulT with b quantised to int8 in blocks of blockSize
// consecutive elements along k: b[j*k+p] stands for
// float32(b[j*k+p])·scales[j*(k/blockSize)+p/blockSize]. blockSize must be a
// positive multiple of 8 dividing k.
func MatMulTQ8(dst, a []float32, b []int8, scales []float32, m, n, k, blockSize int) {
	MatMulTQ8Strided(dst, n, a, b, scales, m, n, k, blockSize)
}

// MatMulTQ8Strided is MatMulTQ8 writing row i of the result at dst[i*ldd:].
func MatMulTQ8Strided(dst []float32, ldd int, a []float32, b []int8, scales []float32, m, n, k, blockSize int) {
	checkMatMul("MatMulTQ8", len(dst), ldd, len(a), k, len(b), k, m, n, k)
	if blockSize <= 0 || blockSize%8 != 0 || k%blockSize != 0 {
		panic(fmt.Sprintf("asm.MatMulTQ8: block size %d is not a positive multiple of 8 dividing k=%d", blockSize, k))
	}
	if len(scales) < n*(k/blockSize) {
		panic(fmt.Sprintf("asm.MatMulTQ8: %d scales, want %d", len(scales), n*(k/blockSize)))
	}
	if m == 0 || n == 0 {
		return
	}
	if k == 0 {
		for i := 0; i < m; i++ {
			clear(dst[i*ldd : i*ldd+n])
		}
		return
	}
	matmulTQ8(dst, ldd, a, b, scales, m, n, k, blockSize)
}

// Axpy sets y[i] += alpha·x[i]. It panics if the lengths differ. The
// assembly fuses the multiply and the add.
func Axpy(alpha float32, x, y []float32) {
	if len(x) != len(y) {
		panic(fmt.Sprintf("asm.Axpy: lengths %d and %d differ", len(x), len(y)))
	}
	axpy(alpha, x, y)
}

// Scale sets x[i] *= alpha.
func Scale(alpha float32, x []float32) { scale(alpha, x) }

// Gated sets dst[i] = (g[i] / (1 + e[i])) · u[i]: SiLU's gate times the up
// projection, given e[i] = e^(−g[i]). dst may be g, e or u. It panics if e,
// u or dst is shorter than g.
func Gated(dst, g, e, u []float32) {
	if len(e) < len(g) || len(u) < len(g) || len(dst) < len(g) {
		panic(fmt.Sprintf("asm.Gated: g %d, e %d, u %d, dst %d elements", len(g), len(e), len(u), len(dst)))
	}
	gated(dst, g, e, u)
}

// Prefetch asks for x in the per-core second-level cache ahead of its use,
// without waiting for it: a block of a product that the hardware would
// otherwise fetch line by line as the kernel first reads it. It changes no
// value; where the CPU has no such hint it does nothing.
func Prefetch(x []float32) {
	if len(x) > 0 {
		prefetch(x)
	}
}

// Sum returns Σ x[i] in an order fixed by len(x): 64 interleaved partial sums
// (element i goes to sum i mod 64) folded pairwise, then the elements past the
// last multiple of 64 in turn. It is written to read memory as fast as the
// machine streams it.
func Sum(x []float32) float32 { return sum(x) }

// F16ToF32 widens IEEE 754 half-precision values to float32. Every value
// converts exactly, subnormals, infinities and signed zeros included; a NaN
// keeps its sign and payload and comes out quiet. It panics if dst is shorter
// than src.
func F16ToF32(dst []float32, src []uint16) {
	if len(dst) < len(src) {
		panic(fmt.Sprintf("asm.F16ToF32: dst has %d elements, src %d", len(dst), len(src)))
	}
	f16ToF32(dst[:len(src)], src)
}

// F32ToF16 narrows float32 values to IEEE half precision, rounding to
// nearest with ties to even (as the F16C instruction and numpy do): values
// past the largest half become ±Inf, small ones subnormal or ±0; a NaN stays
// a NaN of the same sign, quiet, with the top 9 bits of its payload. It
// panics if dst is shorter than src.
func F32ToF16(dst []uint16, src []float32) {
	if len(dst) < len(src) {
		panic(fmt.Sprintf("asm.F32ToF16: dst has %d elements, src %d", len(dst), len(src)))
	}
	f32ToF16(dst[:len(src)], src)
}

// F32ToBF16 narrows float32 values to bfloat16, rounding to nearest with ties
// to even (as PyTorch does); a NaN stays a NaN of the same sign, quiet, with
// the top 6 bits of its payload. It panics if dst is shorter than src.
func F32ToBF16(dst []uint16, src []float32) {
	if len(dst) < len(src) {
		panic(fmt.Sprintf("asm.F32ToBF16: dst has %d elements, src %d", len(dst), len(src)))
	}
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = bf16Bits(math.Float32bits(v))
	}
}

// BF16ToF32 widens bfloat16 values to float32: the 16 bits become the high
// half of the float32, which is exact for every value, NaNs included.
// It panics if dst is shorter than src.
func BF16ToF32(dst []float32, src []uint16) {
	if len(dst) < len(src) {
		panic(fmt.Sprintf("asm.BF16ToF32: dst has %d elements, src %d", len(dst), len(src)))
	}
	bf16ToF32(dst[:len(src)], src)
}

// Peak runs rounds of independent multiply-adds on the widest vectors the
// kernels use and returns the floating-point operations done (2 per lane of
// a multiply-add): timed, it gives one thread's peak FLOP rate, the yardstick
// for compute-bound work such as prefill.
func Peak(rounds int) int { return peak(rounds) }

// Path names the kernel set in use: "avx512vnni+avx2+fma",
// "avx512+avx2+fma", "avx2+fma" or "purego".
func Path() string { return path() }

func checkMatMul(op string, lenDst, ldd, lenA, lda, lenB, ldb, m, n, k int) {
	switch {
	case m < 0 || n < 0 || k < 0:
		panic(fmt.Sprintf("asm.%s: negative shape m=%d n=%d k=%d", op, m, n, k))
	case ldd < n || lda < k || ldb < k:
		panic(fmt.Sprintf("asm.%s: strides dst %d, a %d, b %d below n=%d, k=%d", op, ldd, lda, ldb, n, k))
	case m > 0 && lenA < (m-1)*lda+k:
		panic(fmt.Sprintf("asm.%s: a has %d elements, want %d", op, lenA, (m-1)*lda+k))
	case n > 0 && lenB < (n-1)*ldb+k:
		panic(fmt.Sprintf("asm.%s: b has %d elements, want %d", op, lenB, (n-1)*ldb+k))
	case m > 0 && lenDst < (m-1)*ldd+n:
		panic(fmt.Sprintf("asm.%s: dst has %d elements, want %d", op, lenDst, (m-1)*ldd+n))
	}
}
