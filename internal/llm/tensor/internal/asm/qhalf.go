package asm

import (
	"fmt"

	"github.com/weftlabs/weft/internal/llm/quant"
)

// MatMulTHalf sets dst[i*ldd+j] = Σ_p a[i*lda+p]·w(j, p) for i < m, j < n:
// float32 activations times the transpose of w, n rows of k half-precision
// weights (t is F16 or BF16) stored row after row. Each weight is widened
// exactly; every element is summed in MatMulT's order of lanes and tail,
// with each product rounded before it is added (no fused multiply-add), so
// the assembly gives the pure-Go version's bits.
func MatMulTHalf(t quant.Type, dst []float32, ldd int, a []float32, lda int, w []byte, m, n, k int) {
	if t != quant.F16 && t != quant.BF16 {
		panic(fmt.Sprintf("asm.MatMulTHalf: %v weights", t))
	}
	switch {
	case m < 0 || n < 0 || k < 0:
		panic(fmt.Sprintf("asm.MatMulTHalf: negative shape m=%d n=%d k=%d", m, n, k))
	case ldd < n || lda < k:
		panic(fmt.Sprintf("asm.MatMulTHalf: strides dst %d, a %d below n=%d, k=%d", ldd, lda, n, k))
	case m > 0 && len(a) < (m-1)*lda+k:
		panic(fmt.Sprintf("asm.MatMulTHalf: a has %d elements, want %d", len(a), (m-1)*lda+k))
	case len(w) < 2*n*k:
		panic(fmt.Sprintf("asm.MatMulTHalf: %d weight bytes for %d×%d", len(w), n, k))
	case m > 0 && len(dst) < (m-1)*ldd+n:
		panic(fmt.Sprintf("asm.MatMulTHalf: dst has %d elements, want %d", len(dst), (m-1)*ldd+n))
	}
	if m == 0 || n == 0 {
		return
	}
	matmulTHalf(t, dst, ldd, a, lda, w, m, n, k)
}

func matmulTHalfGeneric(t quant.Type, dst []float32, ldd int, a []float32, lda int, w []byte, m, n, k int) {
	widen := quant.HalfToFloat
	if t == quant.BF16 {
		widen = quant.BFloatToFloat
	}
	row := make([]float32, k)
	for j := range n {
		wr := w[2*j*k : 2*(j+1)*k]
		for p := range row {
			row[p] = widen(uint16(wr[2*p]) | uint16(wr[2*p+1])<<8)
		}
		for i := range m {
			dst[i*ldd+j] = dotUnfused(a[i*lda:i*lda+k], row)
		}
	}
}

// dotUnfused is dotGeneric with each product rounded before its sum.
func dotUnfused(a, b []float32) float32 {
	k := len(a)
	b = b[:k]
	var s [8]float32
	p := 0
	for ; p+8 <= k; p += 8 {
		for l := range s {
			s[l] += float32(a[p+l] * b[p+l])
		}
	}
	if t := k - p; t > 0 {
		for l := 8 - t; l < 8; l++ {
			s[l] += float32(a[k-8+l] * b[k-8+l])
		}
	}
	return reduceLanes(&s)
}
