//go:build amd64 && !purego

package asm

// Declarations of the assembly in kernels_amd64.s (generated), q8q8_amd64.s,
// vector_amd64.s and cpuid_amd64.s.

//go:noescape
func matmulTRows1(dst *float32, ldd int, a *float32, lda int, b *float32, ldb int, n int, k int)

//go:noescape
func matmulTRows2(dst *float32, ldd int, a *float32, lda int, b *float32, ldb int, n int, k int)

//go:noescape
func matmulTRows3(dst *float32, ldd int, a *float32, lda int, b *float32, ldb int, n int, k int)

//go:noescape
func matmulTRows4(dst *float32, ldd int, a *float32, lda int, b *float32, ldb int, n int, k int)

//go:noescape
func matmulTRows8AVX512(dst *float32, ldd int, a *float32, lda int, b *float32, ldb int, n int, k int)

//go:noescape
func matmulTGroups4(dst *float32, ldd int, a *float32, lda int, b *float32, ldb int, m int, n int, k int)

//go:noescape
func matmulTQ8Rows1(dst *float32, ldd int, a *float32, b *int8, scales *float32, n int, k int, blockSize int, scaleStride int)

//go:noescape
func matmulTQ8Rows2(dst *float32, ldd int, a *float32, b *int8, scales *float32, n int, k int, blockSize int, scaleStride int)

//go:noescape
func matmulTQ8Rows3(dst *float32, ldd int, a *float32, b *int8, scales *float32, n int, k int, blockSize int, scaleStride int)

//go:noescape
func matmulTQ8Rows4(dst *float32, ldd int, a *float32, b *int8, scales *float32, n int, k int, blockSize int, scaleStride int)

//go:noescape
func axpyAVX2(alpha float32, x *float32, y *float32, n int)

//go:noescape
func sumAVX2(x *float32, n int) float32

//go:noescape
func expAVX2(dst *float32, x *float32, n int, shift float32)

//go:noescape
func maxAVX2(x *float32, n int) float32

func peakAVX2(n int)

func peakAVX512(n int)

//go:noescape
func f16ToF32F16C(dst *float32, src *uint16, n int)

//go:noescape
func f32ToF16F16C(dst *uint16, src *float32, n int)

//go:noescape
func bf16ToF32AVX2(dst *float32, src *uint16, n int)

// cpuidECX1 returns ECX of CPUID leaf 1.
func cpuidECX1() uint32

//go:noescape
func matmulTQ8Q8Row(dst *float32, a *int8, as *float32, b *int8, bs *float32, n int, k int)

//go:noescape
func expAVX512(dst *float32, x *float32, n int, shift float32)

//go:noescape
func scaleAVX2(alpha float32, x *float32, n int)

//go:noescape
func prefetchL2(p *float32, bytes int)
