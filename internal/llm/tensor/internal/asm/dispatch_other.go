//go:build !amd64 || purego

package asm

import "github.com/weftlabs/weft/internal/llm/quant"

func path() string { return "purego" }

func dot(a, b []float32) float32 { return dotGeneric(a, b) }

func matmulT(dst []float32, ldd int, a []float32, lda int, b []float32, ldb, m, n, k int) {
	matmulTGeneric(dst, ldd, a, lda, b, ldb, m, n, k)
}

func matmulTGrowing(dst []float32, ldd int, a []float32, lda int, b []float32, ldb, m, n, k int) {
	matmulTGrowingRows(dst, ldd, a, lda, b, ldb, 0, m, n, k)
}

func matmulTQ8(dst []float32, ldd int, a []float32, b []int8, scales []float32, m, n, k, blockSize int) {
	matmulTQ8Generic(dst, ldd, a, b, scales, m, n, k, blockSize)
}

func axpy(alpha float32, x, y []float32) { axpyGeneric(alpha, x, y) }

func scale(alpha float32, x []float32) { scaleGeneric(alpha, x) }

func gated(dst, g, e, u []float32) { gatedGeneric(dst, g, e, u) }

func prefetch([]float32) {}

func sum(x []float32) float32 { return sumGeneric(x) }

func f16ToF32(dst []float32, src []uint16) { f16ToF32Generic(dst, src) }

func bf16ToF32(dst []float32, src []uint16) { bf16ToF32Generic(dst, src) }

func exp(dst, x []float32, shift float32) { expGeneric(dst, x, shift) }

func maxOf(x []float32) float32 { return maxGeneric(x) }

func peak(rounds int) int { return peakGeneric(rounds) }

func f32ToF16(dst []uint16, src []float32) { f32ToF16Generic(dst, src) }

func matmulTQ8Q8(dst []float32, ldd int, a []int8, as []float32, b []int8, bs []float32, m, n, k int) {
	matmulTQ8Q8Generic(dst, ldd, a, as, b, bs, m, n, k)
}

func matmulAdd(accumulate bool, dst []float32, ldd int, a []float32, lda int, b []float32, ldb, m, n, k int) {
	matmulAddGeneric(accumulate, dst, ldd, a, lda, b, ldb, m, n, k)
}

// packB packs nothing: every column is the pure-Go loop's.
func packB(b []float32, ldb, k, n int) ([]float32, int) { return nil, 0 }

// matmulPacked has no packed columns to run.
func matmulPacked(accumulate bool, dst []float32, ldd int, a []float32, lda int, packed []float32, m, n, k int, ahead []float32) {
}

func matmulTQuant(t quant.Type, dst []float32, ldd int, x *QActs, w []byte, rowBytes, n int) {
	matmulTQuantGeneric(t, dst, ldd, x, w, rowBytes, n)
}

func matmulTHalf(t quant.Type, dst []float32, ldd int, a []float32, lda int, w []byte, m, n, k int) {
	matmulTHalfGeneric(t, dst, ldd, a, lda, w, m, n, k)
}

func quantizeActBlock(q []int8, v []float32, sums []int32) float32 {
	return quantizeActBlockGeneric(q, v, sums)
}
