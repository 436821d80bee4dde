//go:build amd64 && !purego

#include "textflag.h"

// The int8 × int8 product behind MatMulTQ8Q8, written by hand: one row of
// quantised activations against n rows of quantised weights, both in blocks
// of 32 with a scale each. Per block and column, the 32 byte products are
// summed exactly in integers, lane l (0 ≤ l < 8) taking bytes 4l … 4l+3
// (VPMADDUBSW of |a| and sign(w, a), whose pair sums reach at most
// 2·127·127 and so never saturate, then VPMADDWD by ones); the lane's sum is
// converted to float32, multiplied by the block's scale (activation scale ×
// weight scale, one rounding) and added to lane l's accumulator (multiply and
// add rounded separately, as the pure-Go version does, so that both give the
// same bits). The eight lanes are reduced as MatMulT's are.

// func matmulTQ8Q8Row(dst *float32, a *int8, as *float32, b *int8, bs *float32, n int, k int)
// Requires k a positive multiple of 32; b is n rows of k, bs n rows of k/32.
TEXT ·matmulTQ8Q8Row(SB), NOSPLIT, $32-56
	MOVQ dst+0(FP), AX
	MOVQ AX, 0(SP)
	MOVQ n+40(FP), AX
	MOVQ AX, 8(SP)
	MOVQ b+24(FP), AX
	MOVQ AX, 16(SP)
	MOVQ bs+32(FP), AX
	MOVQ AX, 24(SP)
	MOVQ a+8(FP), SI
	MOVQ as+16(FP), R8
	MOVQ k+48(FP), DX
	VPCMPEQW Y15, Y15, Y15
	VPSRLW $15, Y15, Y15 // 16-bit ones
q8q8_tile4:
	CMPQ 8(SP), $4
	JLT q8q8_tile1
	MOVQ 16(SP), R9
	LEAQ (R9)(DX*1), R12
	LEAQ (R12)(DX*1), R13
	LEAQ (R13)(DX*1), R14
	MOVQ DX, AX
	SHRQ $3, AX // bytes per scale row: k/32 scales of 4 bytes
	MOVQ 24(SP), R10
	LEAQ (R10)(AX*1), R11
	LEAQ (R11)(AX*1), CX
	LEAQ (CX)(AX*1), DI
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	XORQ AX, AX
	XORQ BX, BX
q8q8_loop4:
	VMOVDQU (SI)(AX*1), Y4
	VPABSB Y4, Y5
	VBROADCASTSS (R8)(BX*4), Y6
	VMOVDQU (R9)(AX*1), Y7
	VPSIGNB Y4, Y7, Y7
	VPMADDUBSW Y7, Y5, Y7
	VPMADDWD Y15, Y7, Y7
	VCVTDQ2PS Y7, Y7
	VBROADCASTSS (R10)(BX*4), Y8
	VMULPS Y6, Y8, Y8
	VMULPS Y8, Y7, Y7
	VADDPS Y7, Y0, Y0
	VMOVDQU (R12)(AX*1), Y9
	VPSIGNB Y4, Y9, Y9
	VPMADDUBSW Y9, Y5, Y9
	VPMADDWD Y15, Y9, Y9
	VCVTDQ2PS Y9, Y9
	VBROADCASTSS (R11)(BX*4), Y10
	VMULPS Y6, Y10, Y10
	VMULPS Y10, Y9, Y9
	VADDPS Y9, Y1, Y1
	VMOVDQU (R13)(AX*1), Y11
	VPSIGNB Y4, Y11, Y11
	VPMADDUBSW Y11, Y5, Y11
	VPMADDWD Y15, Y11, Y11
	VCVTDQ2PS Y11, Y11
	VBROADCASTSS (CX)(BX*4), Y12
	VMULPS Y6, Y12, Y12
	VMULPS Y12, Y11, Y11
	VADDPS Y11, Y2, Y2
	VMOVDQU (R14)(AX*1), Y13
	VPSIGNB Y4, Y13, Y13
	VPMADDUBSW Y13, Y5, Y13
	VPMADDWD Y15, Y13, Y13
	VCVTDQ2PS Y13, Y13
	VBROADCASTSS (DI)(BX*4), Y14
	VMULPS Y6, Y14, Y14
	VMULPS Y14, Y13, Y13
	VADDPS Y13, Y3, Y3
	ADDQ $32, AX
	INCQ BX
	CMPQ AX, DX
	JLT q8q8_loop4
	MOVQ 0(SP), AX
	VEXTRACTF128 $1, Y0, X14
	VADDPS X14, X0, X0
	VMOVHLPS X0, X0, X14
	VADDPS X14, X0, X0
	VMOVSHDUP X0, X14
	VADDSS X14, X0, X0
	VMOVSS X0, 0(AX)
	VEXTRACTF128 $1, Y1, X14
	VADDPS X14, X1, X1
	VMOVHLPS X1, X1, X14
	VADDPS X14, X1, X1
	VMOVSHDUP X1, X14
	VADDSS X14, X1, X1
	VMOVSS X1, 4(AX)
	VEXTRACTF128 $1, Y2, X14
	VADDPS X14, X2, X2
	VMOVHLPS X2, X2, X14
	VADDPS X14, X2, X2
	VMOVSHDUP X2, X14
	VADDSS X14, X2, X2
	VMOVSS X2, 8(AX)
	VEXTRACTF128 $1, Y3, X14
	VADDPS X14, X3, X3
	VMOVHLPS X3, X3, X14
	VADDPS X14, X3, X3
	VMOVSHDUP X3, X14
	VADDSS X14, X3, X3
	VMOVSS X3, 12(AX)
	ADDQ $16, 0(SP)
	SUBQ $4, 8(SP)
	LEAQ (DX)(DX*1), AX
	LEAQ (AX)(DX*2), AX
	ADDQ AX, 16(SP) // 4 rows of k bytes
	MOVQ DX, AX
	SHRQ $1, AX
	ADDQ AX, 24(SP) // 4 rows of k/32 scales
	JMP q8q8_tile4
q8q8_tile1:
	CMPQ 8(SP), $1
	JLT q8q8_done
	MOVQ 16(SP), R9
	MOVQ 24(SP), R10
	VXORPS Y0, Y0, Y0
	XORQ AX, AX
	XORQ BX, BX
q8q8_loop1:
	VMOVDQU (SI)(AX*1), Y4
	VPABSB Y4, Y5
	VBROADCASTSS (R8)(BX*4), Y6
	VMOVDQU (R9)(AX*1), Y7
	VPSIGNB Y4, Y7, Y7
	VPMADDUBSW Y7, Y5, Y7
	VPMADDWD Y15, Y7, Y7
	VCVTDQ2PS Y7, Y7
	VBROADCASTSS (R10)(BX*4), Y8
	VMULPS Y6, Y8, Y8
	VMULPS Y8, Y7, Y7
	VADDPS Y7, Y0, Y0
	ADDQ $32, AX
	INCQ BX
	CMPQ AX, DX
	JLT q8q8_loop1
	MOVQ 0(SP), AX
	VEXTRACTF128 $1, Y0, X14
	VADDPS X14, X0, X0
	VMOVHLPS X0, X0, X14
	VADDPS X14, X0, X0
	VMOVSHDUP X0, X14
	VADDSS X14, X0, X0
	VMOVSS X0, 0(AX)
	ADDQ $4, 0(SP)
	SUBQ $1, 8(SP)
	ADDQ DX, 16(SP)
	MOVQ DX, AX
	SHRQ $3, AX
	ADDQ AX, 24(SP)
	JMP q8q8_tile1
q8q8_done:
	VZEROUPPER
	RET
