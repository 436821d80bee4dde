//go:build amd64 && !purego

#include "textflag.h"

// The element-wise and streaming kernels, written by hand (the matrix
// kernels are generated into kernels_amd64.s).

// func axpyAVX2(alpha float32, x *float32, y *float32, n int)
TEXT ·axpyAVX2(SB), NOSPLIT, $0-32
	VBROADCASTSS alpha+0(FP), Y0
	MOVQ x+8(FP), SI
	MOVQ y+16(FP), DI
	MOVQ n+24(FP), CX
	XORQ AX, AX
	MOVQ CX, DX
	ANDQ $-32, DX
	JZ axpy_by8
axpy_by32:
	VMOVUPS (DI)(AX*4), Y1
	VMOVUPS 32(DI)(AX*4), Y2
	VMOVUPS 64(DI)(AX*4), Y3
	VMOVUPS 96(DI)(AX*4), Y4
	VFMADD231PS (SI)(AX*4), Y0, Y1
	VFMADD231PS 32(SI)(AX*4), Y0, Y2
	VFMADD231PS 64(SI)(AX*4), Y0, Y3
	VFMADD231PS 96(SI)(AX*4), Y0, Y4
	VMOVUPS Y1, (DI)(AX*4)
	VMOVUPS Y2, 32(DI)(AX*4)
	VMOVUPS Y3, 64(DI)(AX*4)
	VMOVUPS Y4, 96(DI)(AX*4)
	ADDQ $32, AX
	CMPQ AX, DX
	JLT axpy_by32
axpy_by8:
	MOVQ CX, DX
	ANDQ $-8, DX
	CMPQ AX, DX
	JGE axpy_tail
axpy_loop8:
	VMOVUPS (DI)(AX*4), Y1
	VFMADD231PS (SI)(AX*4), Y0, Y1
	VMOVUPS Y1, (DI)(AX*4)
	ADDQ $8, AX
	CMPQ AX, DX
	JLT axpy_loop8
axpy_tail:
	CMPQ AX, CX
	JGE axpy_done
	VMOVSS (DI)(AX*4), X1
	VFMADD231SS (SI)(AX*4), X0, X1
	VMOVSS X1, (DI)(AX*4)
	INCQ AX
	JMP axpy_tail
axpy_done:
	VZEROUPPER
	RET

// func sumAVX2(x *float32, n int) float32
// Requires n a multiple of 64.
TEXT ·sumAVX2(SB), NOSPLIT, $0-20
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	XORQ AX, AX
	TESTQ CX, CX
	JZ sum_reduce
sum_loop:
	VADDPS (SI)(AX*4), Y0, Y0
	VADDPS 32(SI)(AX*4), Y1, Y1
	VADDPS 64(SI)(AX*4), Y2, Y2
	VADDPS 96(SI)(AX*4), Y3, Y3
	VADDPS 128(SI)(AX*4), Y4, Y4
	VADDPS 160(SI)(AX*4), Y5, Y5
	VADDPS 192(SI)(AX*4), Y6, Y6
	VADDPS 224(SI)(AX*4), Y7, Y7
	ADDQ $64, AX
	CMPQ AX, CX
	JLT sum_loop
sum_reduce:
	VADDPS Y4, Y0, Y0
	VADDPS Y5, Y1, Y1
	VADDPS Y6, Y2, Y2
	VADDPS Y7, Y3, Y3
	VADDPS Y2, Y0, Y0
	VADDPS Y3, Y1, Y1
	VADDPS Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0
	VMOVHLPS X0, X0, X1
	VADDPS X1, X0, X0
	VMOVSHDUP X0, X1
	VADDSS X1, X0, X0
	VMOVSS X0, ret+16(FP)
	VZEROUPPER
	RET

// func maxAVX2(x *float32, n int) float32
// Requires n >= 8. Four accumulators over the 32-element steps, one over
// the 8-element steps, then the last 8 elements (overlapping those already
// seen: a maximum does not mind an element seen twice), so no element is
// left to a scalar loop.
TEXT ·maxAVX2(SB), NOSPLIT, $0-20
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	VMOVUPS (SI), Y0
	VMOVAPS Y0, Y1
	VMOVAPS Y0, Y2
	VMOVAPS Y0, Y3
	XORQ AX, AX
	MOVQ CX, DX
	ANDQ $-32, DX
	JZ max_by8
max_loop:
	VMAXPS (SI)(AX*4), Y0, Y0
	VMAXPS 32(SI)(AX*4), Y1, Y1
	VMAXPS 64(SI)(AX*4), Y2, Y2
	VMAXPS 96(SI)(AX*4), Y3, Y3
	ADDQ $32, AX
	CMPQ AX, DX
	JLT max_loop
max_by8:
	MOVQ CX, DX
	ANDQ $-8, DX
	CMPQ AX, DX
	JGE max_tail
max_loop8:
	VMAXPS (SI)(AX*4), Y0, Y0
	ADDQ $8, AX
	CMPQ AX, DX
	JLT max_loop8
max_tail:
	CMPQ AX, CX
	JGE max_reduce
	VMAXPS -32(SI)(CX*4), Y1, Y1
max_reduce:
	VMAXPS Y2, Y0, Y0
	VMAXPS Y3, Y1, Y1
	VMAXPS Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VMAXPS X1, X0, X0
	VMOVHLPS X0, X0, X1
	VMAXPS X1, X0, X0
	VMOVSHDUP X0, X1
	VMAXSS X1, X0, X0
	VMOVSS X0, ret+16(FP)
	VZEROUPPER
	RET

// expConsts: the constants of expAVX2 (see exp.go), one float32 each.
DATA expConsts<>+0(SB)/4, $88.72284      // above: +Inf
DATA expConsts<>+4(SB)/4, $-103.972084   // below: 0
DATA expConsts<>+8(SB)/4, $1.44269504    // log2(e)
DATA expConsts<>+12(SB)/4, $0.693359375  // ln 2, high part
DATA expConsts<>+16(SB)/4, $-2.12194440e-4 // ln 2, low part
DATA expConsts<>+20(SB)/4, $1.9875691500e-4
DATA expConsts<>+24(SB)/4, $1.3981999507e-3
DATA expConsts<>+28(SB)/4, $8.3334519073e-3
DATA expConsts<>+32(SB)/4, $4.1665795894e-2
DATA expConsts<>+36(SB)/4, $1.6666665459e-1
DATA expConsts<>+40(SB)/4, $5.0000001201e-1
DATA expConsts<>+44(SB)/4, $1.0
DATA expConsts<>+48(SB)/4, $127
DATA expConsts<>+52(SB)/4, $0x7f800000
GLOBL expConsts<>(SB), RODATA|NOPTR, $56

// func expAVX2(dst *float32, x *float32, n int, shift float32)
// Requires n a multiple of 8. The steps of expGeneric on x[i]−shift, with
// fused multiply-adds.
TEXT ·expAVX2(SB), NOSPLIT, $0-28
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSS expConsts<>+0(SB), Y15
	VBROADCASTSS expConsts<>+4(SB), Y14
	VBROADCASTSS expConsts<>+8(SB), Y13
	VBROADCASTSS expConsts<>+12(SB), Y12
	VBROADCASTSS expConsts<>+16(SB), Y11
	VBROADCASTSS expConsts<>+44(SB), Y10
	VPBROADCASTD expConsts<>+48(SB), Y9
	XORQ AX, AX
	TESTQ CX, CX
	JZ exp_done
exp_loop:
	VMOVUPS (SI)(AX*4), Y0
	VBROADCASTSS shift+24(FP), Y8
	VSUBPS Y8, Y0, Y0
	VMINPS Y15, Y0, Y1
	VMAXPS Y14, Y1, Y1
	// Lanes below the underflow bound (a masked logit's -Inf) compute
	// e^0 instead, replaced by 0 at the end: computing them at the bound
	// would make subnormal products, which cost the processor a slow
	// assist each.
	VCMPPS $0x11, Y14, Y0, Y7
	VXORPS Y8, Y8, Y8
	VBLENDVPS Y7, Y8, Y1, Y1
	VMULPS Y13, Y1, Y2
	VROUNDPS $0, Y2, Y2
	VFNMADD231PS Y12, Y2, Y1
	VFNMADD231PS Y11, Y2, Y1
	VMULPS Y1, Y1, Y3
	VBROADCASTSS expConsts<>+20(SB), Y4
	VBROADCASTSS expConsts<>+24(SB), Y5
	VFMADD213PS Y5, Y1, Y4
	VBROADCASTSS expConsts<>+28(SB), Y5
	VFMADD213PS Y5, Y1, Y4
	VBROADCASTSS expConsts<>+32(SB), Y5
	VFMADD213PS Y5, Y1, Y4
	VBROADCASTSS expConsts<>+36(SB), Y5
	VFMADD213PS Y5, Y1, Y4
	VBROADCASTSS expConsts<>+40(SB), Y5
	VFMADD213PS Y5, Y1, Y4
	VFMADD213PS Y1, Y3, Y4
	VADDPS Y10, Y4, Y4
	VCVTPS2DQ Y2, Y2
	VPSRAD $1, Y2, Y5
	VPSUBD Y5, Y2, Y6
	VPADDD Y9, Y5, Y5
	VPSLLD $23, Y5, Y5
	VPADDD Y9, Y6, Y6
	VPSLLD $23, Y6, Y6
	VMULPS Y5, Y4, Y4
	VMULPS Y6, Y4, Y4
	VCMPPS $0x1e, Y15, Y0, Y7
	VBROADCASTSS expConsts<>+52(SB), Y8
	VBLENDVPS Y7, Y8, Y4, Y4
	VCMPPS $0x11, Y14, Y0, Y7
	VXORPS Y8, Y8, Y8
	VBLENDVPS Y7, Y8, Y4, Y4
	VCMPPS $3, Y0, Y0, Y7
	VBLENDVPS Y7, Y0, Y4, Y4
	VMOVUPS Y4, (DI)(AX*4)
	ADDQ $8, AX
	CMPQ AX, CX
	JLT exp_loop
exp_done:
	VZEROUPPER
	RET

// func expAVX512(dst *float32, x *float32, n int, shift float32)
// expAVX2's steps on 16 lanes, any n: the same operations in the same
// order on each lane, so each value's bits are expAVX2's. The blends are
// masked moves. The last n mod 16 elements are loaded and stored under a
// mask (K4) of their lanes, the other lanes computing e^(0−shift) for
// nothing, so a short row is one call.
TEXT ·expAVX512(SB), NOSPLIT, $0-28
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), DX
	VBROADCASTSS expConsts<>+0(SB), Z15
	VBROADCASTSS expConsts<>+4(SB), Z14
	VBROADCASTSS expConsts<>+8(SB), Z13
	VBROADCASTSS expConsts<>+12(SB), Z12
	VBROADCASTSS expConsts<>+16(SB), Z11
	VBROADCASTSS expConsts<>+44(SB), Z10
	VPBROADCASTD expConsts<>+48(SB), Z9
	VBROADCASTSS expConsts<>+20(SB), Z16
	VBROADCASTSS expConsts<>+24(SB), Z17
	VBROADCASTSS expConsts<>+28(SB), Z18
	VBROADCASTSS expConsts<>+32(SB), Z19
	VBROADCASTSS expConsts<>+36(SB), Z20
	VBROADCASTSS expConsts<>+40(SB), Z21
	VBROADCASTSS expConsts<>+52(SB), Z22
	VBROADCASTSS shift+24(FP), Z23
	VXORPS Z24, Z24, Z24
	XORQ AX, AX
	KXNORW K4, K4, K4
	TESTQ DX, DX
	JZ exp512_done
exp512_loop:
	MOVQ DX, CX
	SUBQ AX, CX
	CMPQ CX, $16
	JGE exp512_full
	MOVL $1, R8
	SHLL CX, R8
	DECL R8
	KMOVW R8, K4
exp512_full:
	VMOVUPS.Z (SI)(AX*4), K4, Z0
	VSUBPS Z23, Z0, Z0
	VMINPS Z15, Z0, Z1
	VMAXPS Z14, Z1, Z1
	// Lanes below the underflow bound compute e^0, replaced by 0 at the
	// end (see expAVX2).
	VCMPPS $0x11, Z14, Z0, K1
	VMOVAPS Z24, K1, Z1
	VMULPS Z13, Z1, Z2
	VRNDSCALEPS $0, Z2, Z2
	VFNMADD231PS Z12, Z2, Z1
	VFNMADD231PS Z11, Z2, Z1
	VMULPS Z1, Z1, Z3
	VMOVAPS Z16, Z4
	VFMADD213PS Z17, Z1, Z4
	VFMADD213PS Z18, Z1, Z4
	VFMADD213PS Z19, Z1, Z4
	VFMADD213PS Z20, Z1, Z4
	VFMADD213PS Z21, Z1, Z4
	VFMADD213PS Z1, Z3, Z4
	VADDPS Z10, Z4, Z4
	VCVTPS2DQ Z2, Z2
	VPSRAD $1, Z2, Z5
	VPSUBD Z5, Z2, Z6
	VPADDD Z9, Z5, Z5
	VPSLLD $23, Z5, Z5
	VPADDD Z9, Z6, Z6
	VPSLLD $23, Z6, Z6
	VMULPS Z5, Z4, Z4
	VMULPS Z6, Z4, Z4
	VCMPPS $0x1e, Z15, Z0, K2
	VMOVAPS Z22, K2, Z4
	VMOVAPS Z24, K1, Z4
	VCMPPS $3, Z0, Z0, K3
	VMOVAPS Z0, K3, Z4
	VMOVUPS Z4, K4, (DI)(AX*4)
	ADDQ $16, AX
	CMPQ AX, DX
	JLT exp512_loop
exp512_done:
	VZEROUPPER
	RET

// func peakAVX2(n int)
// n rounds of 12 independent 8-lane multiply-adds: the FMA units' peak.
TEXT ·peakAVX2(SB), NOSPLIT, $0-8
	MOVQ n+0(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11
	VXORPS Y12, Y12, Y12
	VXORPS Y13, Y13, Y13
	TESTQ CX, CX
	JZ peaky_done
peaky_loop:
	VFMADD231PS Y12, Y13, Y0
	VFMADD231PS Y12, Y13, Y1
	VFMADD231PS Y12, Y13, Y2
	VFMADD231PS Y12, Y13, Y3
	VFMADD231PS Y12, Y13, Y4
	VFMADD231PS Y12, Y13, Y5
	VFMADD231PS Y12, Y13, Y6
	VFMADD231PS Y12, Y13, Y7
	VFMADD231PS Y12, Y13, Y8
	VFMADD231PS Y12, Y13, Y9
	VFMADD231PS Y12, Y13, Y10
	VFMADD231PS Y12, Y13, Y11
	DECQ CX
	JNZ peaky_loop
peaky_done:
	VZEROUPPER
	RET

// func peakAVX512(n int)
// n rounds of 12 independent 16-lane multiply-adds.
TEXT ·peakAVX512(SB), NOSPLIT, $0-8
	MOVQ n+0(FP), CX
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11
	VPXORD Z20, Z20, Z20
	VPXORD Z21, Z21, Z21
	TESTQ CX, CX
	JZ peakz_done
peakz_loop:
	VFMADD231PS Z20, Z21, Z0
	VFMADD231PS Z20, Z21, Z1
	VFMADD231PS Z20, Z21, Z2
	VFMADD231PS Z20, Z21, Z3
	VFMADD231PS Z20, Z21, Z4
	VFMADD231PS Z20, Z21, Z5
	VFMADD231PS Z20, Z21, Z6
	VFMADD231PS Z20, Z21, Z7
	VFMADD231PS Z20, Z21, Z8
	VFMADD231PS Z20, Z21, Z9
	VFMADD231PS Z20, Z21, Z10
	VFMADD231PS Z20, Z21, Z11
	DECQ CX
	JNZ peakz_loop
peakz_done:
	VZEROUPPER
	RET

// func f16ToF32F16C(dst *float32, src *uint16, n int)
// Requires n a multiple of 8.
TEXT ·f16ToF32F16C(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	XORQ AX, AX
	TESTQ CX, CX
	JZ f16_done
f16_loop:
	VCVTPH2PS (SI)(AX*2), Y0
	VMOVUPS Y0, (DI)(AX*4)
	ADDQ $8, AX
	CMPQ AX, CX
	JLT f16_loop
f16_done:
	VZEROUPPER
	RET

// func f32ToF16F16C(dst *uint16, src *float32, n int)
// Requires n a multiple of 8. Rounds to nearest, ties to even.
TEXT ·f32ToF16F16C(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	XORQ AX, AX
	TESTQ CX, CX
	JZ f32f16_done
f32f16_loop:
	VMOVUPS (SI)(AX*4), Y0
	VCVTPS2PH $0, Y0, X1
	VMOVDQU X1, (DI)(AX*2)
	ADDQ $8, AX
	CMPQ AX, CX
	JLT f32f16_loop
f32f16_done:
	VZEROUPPER
	RET

// func bf16ToF32AVX2(dst *float32, src *uint16, n int)
// Requires n a multiple of 8.
TEXT ·bf16ToF32AVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	XORQ AX, AX
	TESTQ CX, CX
	JZ bf16_done
bf16_loop:
	VPMOVZXWD (SI)(AX*2), Y0
	VPSLLD $16, Y0, Y0
	VMOVDQU Y0, (DI)(AX*4)
	ADDQ $8, AX
	CMPQ AX, CX
	JLT bf16_loop
bf16_done:
	VZEROUPPER
	RET

// func scaleAVX2(alpha float32, x *float32, n int)
TEXT ·scaleAVX2(SB), NOSPLIT, $0-24
	VBROADCASTSS alpha+0(FP), Y0
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	XORQ AX, AX
	MOVQ CX, DX
	ANDQ $-32, DX
	JZ scale_by8
scale_by32:
	VMULPS (SI)(AX*4), Y0, Y1
	VMULPS 32(SI)(AX*4), Y0, Y2
	VMULPS 64(SI)(AX*4), Y0, Y3
	VMULPS 96(SI)(AX*4), Y0, Y4
	VMOVUPS Y1, (SI)(AX*4)
	VMOVUPS Y2, 32(SI)(AX*4)
	VMOVUPS Y3, 64(SI)(AX*4)
	VMOVUPS Y4, 96(SI)(AX*4)
	ADDQ $32, AX
	CMPQ AX, DX
	JLT scale_by32
scale_by8:
	MOVQ CX, DX
	ANDQ $-8, DX
	CMPQ AX, DX
	JGE scale_tail
scale_loop8:
	VMULPS (SI)(AX*4), Y0, Y1
	VMOVUPS Y1, (SI)(AX*4)
	ADDQ $8, AX
	CMPQ AX, DX
	JLT scale_loop8
scale_tail:
	CMPQ AX, CX
	JGE scale_done
	VMULSS (SI)(AX*4), X0, X1
	VMOVSS X1, (SI)(AX*4)
	INCQ AX
	JMP scale_tail
scale_done:
	VZEROUPPER
	RET

// func gatedAVX2(dst, gate, ex, up *float32, n int)
//
// dst[i] = (g[i] / (1 + e[i])) · u[i], each operation rounded once as in
// pure Go (a quotient and a product: nothing to fuse).
TEXT ·gatedAVX2(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ gate+8(FP), SI
	MOVQ ex+16(FP), BX
	MOVQ up+24(FP), DX
	MOVQ n+32(FP), CX
	MOVL $0x3f800000, AX
	VMOVD AX, X0
	VBROADCASTSS X0, Y0
	XORQ AX, AX
	MOVQ CX, R8
	ANDQ $-8, R8
	JZ gated_tail
gated_loop8:
	VADDPS (BX)(AX*4), Y0, Y1
	VMOVUPS (SI)(AX*4), Y2
	VDIVPS Y1, Y2, Y2
	VMULPS (DX)(AX*4), Y2, Y2
	VMOVUPS Y2, (DI)(AX*4)
	ADDQ $8, AX
	CMPQ AX, R8
	JLT gated_loop8
gated_tail:
	CMPQ AX, CX
	JGE gated_done
	VADDSS (BX)(AX*4), X0, X1
	VMOVSS (SI)(AX*4), X2
	VDIVSS X1, X2, X2
	VMULSS (DX)(AX*4), X2, X2
	VMOVSS X2, (DI)(AX*4)
	INCQ AX
	JMP gated_tail
gated_done:
	VZEROUPPER
	RET

// func prefetchL2(p *float32, bytes int)
//
// PREFETCHT1: into the per-core second-level cache, not the first, which
// the product running meanwhile fills with its own rows.
TEXT ·prefetchL2(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), SI
	MOVQ bytes+8(FP), CX
	XORQ AX, AX
	TESTQ CX, CX
	JLE prefetch_done
prefetch_loop:
	PREFETCHT1 (SI)(AX*1)
	ADDQ $64, AX
	CMPQ AX, CX
	JLT prefetch_loop
prefetch_done:
	RET

DATA qaConsts<>+0(SB)/4, $0x7fffffff // |x| mask
DATA qaConsts<>+4(SB)/4, $0x7f7fffff // the largest finite |x|
DATA qaConsts<>+8(SB)/4, $127.0
DATA qaConsts<>+12(SB)/4, $0x7f800000 // +Inf
DATA qaConsts<>+16(SB)/4, $0x7fc00000 // NaN, as float32(math.NaN())
GLOBL qaConsts<>(SB), RODATA|NOPTR, $20

// packOrder undoes the lane interleaving of VPACKSSDW and VPACKSSWB.
DATA packOrder<>+0(SB)/8, $0x0000000400000000
DATA packOrder<>+8(SB)/8, $0x0000000500000001
DATA packOrder<>+16(SB)/8, $0x0000000600000002
DATA packOrder<>+24(SB)/8, $0x0000000700000003
GLOBL packOrder<>(SB), RODATA|NOPTR, $32

// func quantizeActBlockAVX2(q *int8, x *float32, n int, sums *int32) float32
//
// quantizeActBlockGeneric on n floats (n a multiple of 32): a first pass
// takes max|x| and whether any element is not finite (|x|'s bits above
// the largest finite's); the second multiplies by 127/max|x|, rounds to
// the nearest integer, ties to even (VCVTPS2DQ under Go's rounding mode),
// packs to int8 and sums each 32.
TEXT ·quantizeActBlockAVX2(SB), NOSPLIT, $0-36
	MOVQ q+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ sums+24(FP), DX
	VPBROADCASTD qaConsts<>+0(SB), Y15
	VPBROADCASTD qaConsts<>+4(SB), Y14
	VXORPS Y8, Y8, Y8
	VPXOR Y9, Y9, Y9
	MOVQ SI, AX
	MOVQ CX, BX

qa_max:
	VANDPS (AX), Y15, Y0
	VANDPS 32(AX), Y15, Y1
	VANDPS 64(AX), Y15, Y2
	VANDPS 96(AX), Y15, Y3
	VPCMPGTD Y14, Y0, Y4
	VPCMPGTD Y14, Y1, Y5
	VPCMPGTD Y14, Y2, Y6
	VPCMPGTD Y14, Y3, Y7
	VPOR Y4, Y5, Y4
	VPOR Y6, Y7, Y6
	VPOR Y4, Y9, Y9
	VPOR Y6, Y9, Y9
	VMAXPS Y0, Y8, Y8
	VMAXPS Y1, Y8, Y8
	VMAXPS Y2, Y8, Y8
	VMAXPS Y3, Y8, Y8
	ADDQ $128, AX
	SUBQ $32, BX
	JNZ qa_max
	VPTEST Y9, Y9
	JNZ qa_nan
	VEXTRACTF128 $1, Y8, X0
	VMAXPS X0, X8, X8
	VMOVHLPS X8, X8, X0
	VMAXPS X0, X8, X8
	VMOVSHDUP X8, X0
	VMAXSS X0, X8, X8
	VXORPS X1, X1, X1
	VUCOMISS X1, X8
	JEQ qa_zero
	VMOVSS qaConsts<>+8(SB), X2
	VDIVSS X8, X2, X3 // 127/max|x|
	VDIVSS X2, X8, X4 // max|x|/127
	VMOVSS X4, ret+32(FP)
	VUCOMISS qaConsts<>+12(SB), X3
	JEQ qa_zeros
	VBROADCASTSS X3, Y3
	VMOVDQU packOrder<>(SB), Y13

qa_quant:
	VMULPS (SI), Y3, Y4
	VMULPS 32(SI), Y3, Y5
	VMULPS 64(SI), Y3, Y6
	VMULPS 96(SI), Y3, Y7
	VCVTPS2DQ Y4, Y4
	VCVTPS2DQ Y5, Y5
	VCVTPS2DQ Y6, Y6
	VCVTPS2DQ Y7, Y7
	VPADDD Y5, Y4, Y10
	VPADDD Y7, Y6, Y11
	VPADDD Y11, Y10, Y10
	VEXTRACTI128 $1, Y10, X11
	VPADDD X11, X10, X10
	VPSHUFD $0x4e, X10, X11
	VPADDD X11, X10, X10
	VPSHUFD $0xb1, X10, X11
	VPADDD X11, X10, X10
	VMOVD X10, (DX)
	VPACKSSDW Y5, Y4, Y4
	VPACKSSDW Y7, Y6, Y6
	VPACKSSWB Y6, Y4, Y4
	VPERMD Y4, Y13, Y4
	VMOVDQU Y4, (DI)
	ADDQ $128, SI
	ADDQ $32, DI
	ADDQ $4, DX
	SUBQ $32, CX
	JNZ qa_quant
	VZEROUPPER
	RET

qa_nan:
	MOVL qaConsts<>+16(SB), AX
	MOVL AX, ret+32(FP)
	JMP qa_zeros

qa_zero:
	MOVL $0, ret+32(FP)

qa_zeros:
	VPXOR Y0, Y0, Y0

qa_clear:
	VMOVDQU Y0, (DI)
	MOVL $0, (DX)
	ADDQ $32, DI
	ADDQ $4, DX
	SUBQ $32, CX
	JNZ qa_clear
	VZEROUPPER
	RET
