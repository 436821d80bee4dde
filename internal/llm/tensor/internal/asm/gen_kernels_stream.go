//go:build ignore

// The decode kernel of gen_kernels.go: one row of a times n rows of b
// (columns), read as a few long sequential streams rather than as tiles of
// neighbouring columns.
package main

import (
	"fmt"
	"math/bits"
)

// streamRegs hold the streams' column pointers; SI is a, DI dst of stream
// 0, AX the element index, CX the loop's end, DX the columns left.
var streamRegs = []string{"R8", "R9", "R10", "R11", "R12", "R13", "R14", "BX"}

// Stack slots of the stream kernel.
const (
	slotStreamB   = "0(SP)"  // bytes of weights between two streams
	slotStreamDst = "8(SP)"  // bytes of dst between two streams
	slotColBytes  = "16(SP)" // bytes between b rows
	slotTailAt    = "24(SP)" // tail start element (k-8)
	slotTailMask  = "32(SP)" // tail mask pointer
	slotTailLen   = "40(SP)" // k mod 8
	slotK8        = "48(SP)" // k rounded down to 8
	slotK16       = "56(SP)" // k rounded down to 16
	streamFrame   = 64
)

// f32Stream emits name, MatMulT's product for one row of a (decode): the
// n columns are split into streams sequential runs of q = n/streams
// columns (j, j+q, j+2q, … side by side), the n mod streams last columns
// run one at a time after them. Each column keeps the tiles' single 8-lane
// accumulator, the same fused multiply-adds in the same order, the same
// masked tail and the same reduction, so every element has the bits of
// matmulTRows1's. A tile of eight neighbouring columns reads eight runs of
// one column each, which the hardware prefetcher takes up anew every
// column; here each stream runs through its columns without a break, and
// the prefetcher follows it (software prefetches 256 to 2048 bytes ahead
// measured slower, four streams slower at k=4096). No load passes a
// column's end (the tail is the last 8 elements, masked).
func (g *gen) f32Stream(name string, streams int) {
	g.raw(fmt.Sprintf("\n// func %s(dst *float32, a *float32, b *float32, ldb int, n int, k int)\n", name))
	g.raw("// Requires k >= 8.\n")
	g.raw(fmt.Sprintf("TEXT ·%s(SB), NOSPLIT, $%d-48\n", name, streamFrame))
	g.tailSlots("k+40(FP)", slotK8, slotTailAt, slotTailLen, slotTailMask)
	g.p("MOVQ CX, AX")
	g.p("ANDQ $-16, AX")
	g.p("MOVQ AX, %s", slotK16)
	g.p("MOVQ ldb+24(FP), BX")
	g.p("SHLQ $2, BX")
	g.p("MOVQ BX, %s", slotColBytes)
	// q columns a stream: streams start q·ldb·4 bytes of b and q·4 of
	// dst apart.
	g.p("MOVQ n+32(FP), DX")
	g.p("MOVQ DX, AX")
	if streams&(streams-1) != 0 || streams > len(streamRegs) {
		panic(fmt.Sprintf("%s: %d streams", name, streams))
	}
	if shift := bits.TrailingZeros(uint(streams)); shift > 0 {
		g.p("SHRQ $%d, DX", shift) // q
	}
	g.p("MOVQ DX, AX")
	g.p("IMULQ BX, AX")
	g.p("MOVQ AX, %s", slotStreamB)
	g.p("LEAQ (DX*4), AX")
	g.p("MOVQ AX, %s", slotStreamDst)
	g.p("MOVQ a+8(FP), SI")
	g.p("MOVQ dst+0(FP), DI")
	g.p("MOVQ b+16(FP), %s", streamRegs[0])
	for _, single := range []bool{false, true} {
		ptrs, pfx := streamRegs[:streams], name+"_streams"
		if single {
			if streams == 1 {
				break
			}
			// The n mod streams last columns follow the last stream's,
			// where its pointer stopped.
			ptrs, pfx = streamRegs[:1], name+"_one"
			g.p("MOVQ %s, %s", streamRegs[streams-1], streamRegs[0])
			g.p("MOVQ %s, AX", slotStreamDst)
			g.p("IMULQ $%d, AX", streams-1)
			g.p("ADDQ AX, DI")
			g.p("MOVQ n+32(FP), DX")
			g.p("ANDQ $%d, DX", streams-1)
		} else {
			for s := 1; s < streams; s++ {
				g.p("MOVQ %s, %s", ptrs[s-1], ptrs[s])
				g.p("ADDQ %s, %s", slotStreamB, ptrs[s])
			}
		}
		g.streamColumns(pfx, ptrs)
	}
	g.p("VZEROUPPER")
	g.p("RET")
}

// streamColumns emits the loop over DX column steps, one column of each
// stream in ptrs a step, accumulators Y0…, x chunks in Y14 and Y15; two
// chunks (a cache line's worth) a step, then one, then the masked tail.
func (g *gen) streamColumns(pfx string, ptrs []string) {
	g.label(pfx + "_column")
	g.p("TESTQ DX, DX")
	g.p("JEQ %s_done", pfx)
	for s := range ptrs {
		g.p("VXORPS %s, %s, %s", y(s), y(s), y(s))
	}
	g.p("XORQ AX, AX")
	g.p("MOVQ %s, CX", slotK16)
	g.p("TESTQ CX, CX")
	g.p("JEQ %s_eight", pfx)
	g.label(pfx + "_line")
	g.p("VMOVUPS (SI)(AX*4), Y14")
	g.p("VMOVUPS 32(SI)(AX*4), Y15")
	for s, p := range ptrs {
		g.p("VFMADD231PS (%s)(AX*4), Y14, %s", p, y(s))
	}
	for s, p := range ptrs {
		g.p("VFMADD231PS 32(%s)(AX*4), Y15, %s", p, y(s))
	}
	g.p("ADDQ $16, AX")
	g.p("CMPQ AX, CX")
	g.p("JLT %s_line", pfx)
	g.label(pfx + "_eight")
	g.p("CMPQ AX, %s", slotK8)
	g.p("JGE %s_tail", pfx)
	g.p("VMOVUPS (SI)(AX*4), Y14")
	for s, p := range ptrs {
		g.p("VFMADD231PS (%s)(AX*4), Y14, %s", p, y(s))
	}
	g.label(pfx + "_tail")
	g.p("CMPQ %s, $0", slotTailLen)
	g.p("JEQ %s_reduce", pfx)
	g.p("MOVQ %s, AX", slotTailAt)
	g.p("MOVQ %s, CX", slotTailMask)
	g.p("VMOVUPS (SI)(AX*4), Y14")
	g.p("VANDPS (CX), Y14, Y14")
	for s, p := range ptrs {
		g.p("VMOVUPS (%s)(AX*4), Y15", p)
		g.p("VANDPS (CX), Y15, Y15")
		g.p("VFMADD231PS Y15, Y14, %s", y(s))
	}
	g.label(pfx + "_reduce")
	g.p("MOVQ DI, AX")
	for s := range ptrs {
		g.reduceLanes(s, 15)
		g.p("VMOVSS %s, (AX)", x(s))
		if s+1 < len(ptrs) {
			g.p("ADDQ %s, AX", slotStreamDst)
		}
	}
	for _, p := range ptrs {
		g.p("ADDQ %s, %s", slotColBytes, p)
	}
	g.p("ADDQ $4, DI")
	g.p("DECQ DX")
	g.p("JMP %s_column", pfx)
	g.label(pfx + "_done")
}
