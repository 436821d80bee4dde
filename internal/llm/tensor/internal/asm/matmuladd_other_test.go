//go:build !amd64 || purego

package asm

// matmulAddKernels are the MatMulAdd paths this build runs: the pure-Go one.
func matmulAddKernels() map[string]func(accumulate bool, dst []float32, ldd int, a []float32, lda int, b []float32, ldb, m, n, k int) {
	return map[string]func(accumulate bool, dst []float32, ldd int, a []float32, lda int, b []float32, ldb, m, n, k int){
		"pure Go": matmulAddGeneric,
	}
}

// forQuantPaths runs f once: this build has the pure-Go products only.
func forQuantPaths(f func(path string)) { f("purego") }

// avx2Time is unused without the assembly.
func avx2Time(key string, f func()) float64 { return pureGoTime(key, f) }

// forHalfPaths runs f once: this build has the pure-Go product only.
func forHalfPaths(f func(path string)) { f("purego") }
