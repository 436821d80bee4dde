//go:build amd64 && !purego

package asm

// matmulAddKernels are the MatMulAdd paths this CPU runs: each tile set it
// has, so the AVX2 tiles are checked on an AVX-512 machine too.
func matmulAddKernels() map[string]func(accumulate bool, dst []float32, ldd int, a []float32, lda int, b []float32, ldb, m, n, k int) {
	out := map[string]func(accumulate bool, dst []float32, ldd int, a []float32, lda int, b []float32, ldb, m, n, k int){
		"pure Go": matmulAddGeneric,
	}
	if useAVX2 {
		out["avx2"] = func(accumulate bool, dst []float32, ldd int, a []float32, lda int, b []float32, ldb, m, n, k int) {
			matmulAddTiled(false, accumulate, dst, ldd, a, lda, b, ldb, m, n, k)
		}
	}
	if useAVX512 {
		out["avx512"] = func(accumulate bool, dst []float32, ldd int, a []float32, lda int, b []float32, ldb, m, n, k int) {
			matmulAddTiled(true, accumulate, dst, ldd, a, lda, b, ldb, m, n, k)
		}
	}
	return out
}

// forQuantPaths runs f under each quantised-product path this CPU has: the
// AVX2 kernels and, where the CPU has AVX-512 VNNI, its tiles.
func forQuantPaths(f func(path string)) {
	defer func(v bool) { useVNNI = v }(useVNNI)
	has := useVNNI
	useVNNI = false
	f("avx2")
	if has {
		useVNNI = true
		f("avx512vnni")
	}
}

// avx2Time is f's time per call with the AVX2 kernels, measured once per
// key (pureGoTime's cache).
func avx2Time(key string, f func()) float64 {
	defer func(v bool) { useVNNI = v }(useVNNI)
	useVNNI = false
	return pureGoTime("avx2/"+key, f)
}

// forHalfPaths runs f under each MatMulTHalf path this CPU has: the AVX2
// kernels and, where the CPU has AVX-512, its tiles.
func forHalfPaths(f func(path string)) {
	defer func(v bool) { halfTiles = v }(halfTiles)
	halfTiles = false
	f("avx2")
	if useAVX512 {
		halfTiles = true
		f("avx512")
	}
}
