//go:build ignore

// The four-row VNNI tile of the GGUF blocks-of-32 formats, where a
// prefill's or a batch's product is bound by its float32 steps.
package main

import (
	"fmt"
	"strings"
)

// kernel32Tile emits qdot<NAME>Tile: four rows of activations (k apart) by
// n columns of Q8_0, Q4_0 or Q5_0 (n a multiple of 4), four columns at a
// time, a ymm for each row and column: its eight lanes, kernel32's, and
// their accumulator. Every step is kernel32's on the same values in the
// same order (VPDPBUSD of the unsigned levels on top of −bias·Σx, the
// exact Σ w·x of four elements; converted; times d_w·d_x rounded once;
// rounded; added), so the tile gives the pure-Go bits.
//
// kernel32VNNI, two columns a zmm, multiplies d_w·d_x out to a column's
// eight lanes for each row (a vector product per row, pair and block,
// beside the one that scales the sums) and computes −bias·Σx for each
// row, block and tile; on CPUs that split a zmm step in two (Zen 4), its
// products and VPDPBUSD were the bound. Here the sixteen d_w·d_x of a
// block are one product (lane 4c+r: the columns' scales spread by VPERMPS
// times the rows' scales, laid out per block by the call), stored for
// every block of the tile before its products begin, and each row and
// column's product reads its own as an embedded broadcast;
// −bias·Σx is computed once a call (tileBias) and each row's is moved to
// its four columns' sums; a row's 32 bytes are read once for its four
// columns. The nibbles of a column's block are its 16 bytes broadcast to
// both halves, the low nibbles kept in the low half and the high moved
// down in the high half by one GF2P8AFFINEQB; Q5_0's fifth bits
// add 16 by a VPTESTMB mask, as kernel32VNNI's.
//
// Registers: SI row 0 of the activations at the block, R10 = k, R11 =
// 3k, R14 row 0's −bias·Σx at the block, 72(SP) the rows' scales per
// block (16 bytes a block, after −bias·Σx); R9 column 0's block, R12
// column 3's, R13 the next tile's (prefetched), BX the column stride; DI
// dst; CX columns left; DX = 4 × the block index, R8 = 4 × the block
// count; 0(SP) the tile's first column, 8(SP) the tile's d_w·d_x (64
// bytes a block, past the rows' scales); AX the block's d_w·d_x. Y16–Y31 the accumulators (row r, column c in
// Y(16+4r+c)), Y4–Y7 the columns' unsigned levels, Y8 the row's bytes, Y9
// its −bias·Σx, Y12–Y15 the columns' sums (and the scales' scratch), Y0
// the bias bytes, Y2 the nibbles' bit matrices (nibbleBits), Y3
// bitSelect and Y10 bitBytes (Q5_0), Z11 the columns' scales' spread;
// K2 the levels with a fifth bit.
func (g *gen) kernel32Tile(f format32) {
	name := tileName(f.name, 4)
	nibbles, five := f.name != "Q8_0", f.name == "Q5_0"
	lvOff := 2
	if five {
		lvOff = 6
	}
	fmt.Fprintf(&g.buf, "\n// func %s(dst *float32, ldd int, x *int8, xd *float32, k int, w *byte, wstride int, n int, nb int, bias *int32)\n", name)
	fmt.Fprintf(&g.buf, "TEXT ·%s(SB), NOSPLIT, $80-80\n", name)
	g.tile32Args()
	switch {
	case five:
		g.p("VPBROADCASTD sixteens<>(SB), Y0")
		g.p("VMOVDQU32 bitSelect<>(SB), Y3")
		g.p("VMOVDQU32 bitBytes<>(SB), Y10")
	case nibbles:
		g.p("VPBROADCASTD eights<>(SB), Y0")
	default:
		g.p("VPBROADCASTD signBits<>(SB), Y0")
	}
	g.p("VMOVDQU32 nibbleBits<>(SB), Y2")
	g.p("VMOVDQU64 tileScaleSpread<>(SB), Z11")
	g.p("VPXOR Y14, Y14, Y14")
	g.tileBias(name, 4, 0, 14)
	// The rows' scales, block after block: xd of row r and block b to
	// 16b + 4r past −bias·Σx (where R14 stopped).
	g.p("MOVQ R14, 72(SP)")
	g.p("LEAQ (R14)(R8*4), AX")
	g.p("MOVQ AX, 8(SP)")
	g.p("MOVQ xd+24(FP), AX")
	g.p("MOVQ nb+64(FP), DX")
	g.label(name + "_scales")
	g.p("LEAQ (AX)(R8*2), R13")
	for r := range 4 {
		g.p("MOVL %s, R12", [...]string{"(AX)", "(AX)(R8*1)", "(R13)", "(R13)(R8*1)"}[r])
		g.p("MOVL R12, %d(R14)", 4*r)
	}
	g.p("ADDQ $4, AX")
	g.p("ADDQ $16, R14")
	g.p("DECQ DX")
	g.p("JNZ %s_scales", name)
	g.label(name + "_tile")
	g.p("CMPQ CX, $4")
	g.p("JLT %s_done", name)
	for i := range 16 {
		g.p("VPXORD %s, %s, %s", y(16+i), y(16+i), y(16+i))
	}
	g.p("MOVQ R9, 0(SP)")
	g.column3()
	// The tile's sixteen d_w·d_x of every block, lane 4c+r, to the
	// scratch past the rows' scales (8(SP) points there), before the
	// products: a block's products read each as an embedded broadcast, and
	// a load from a zmm stored just before it waits for the store to
	// retire on Zen 4, which held the loop to one block at a time.
	g.p("MOVQ 72(SP), SI")
	g.p("MOVQ 8(SP), AX")
	g.p("MOVQ nb+64(FP), DX")
	g.label(name + "_dd")
	g.p("VPBROADCASTW %s, X12", vnniCol4Addr(0, 0))
	for c := 1; c < 4; c++ {
		g.p("VPINSRW $%d, %s, X12, X12", c, vnniCol4Addr(c, 0))
	}
	g.p("VCVTPH2PS X12, X12")
	g.p("VPERMPS Z12, Z11, Z12")
	g.p("VBROADCASTF32X4 (SI), Z13")
	g.p("VMULPS Z13, Z12, Z12")
	g.p("VMOVUPS Z12, (AX)")
	g.p("ADDQ $16, SI")
	g.p("ADDQ $64, AX")
	g.p("ADDQ $%d, R9", f.bytes)
	g.p("ADDQ $%d, R12", f.bytes)
	g.p("DECQ DX")
	g.p("JNZ %s_dd", name)
	g.p("MOVQ 0(SP), R9")
	g.column3()
	g.p("LEAQ (R9)(BX*4), R13")
	g.p("MOVQ bias+72(FP), R14")
	g.p("MOVQ x+16(FP), SI")
	g.p("MOVQ 8(SP), AX")
	g.p("XORQ DX, DX")
	g.label(name + "_loop")
	g.prefetchAhead("R13", 4*f.bytes)
	for c := range 4 {
		lv := y(4 + c)
		if !nibbles {
			g.p("VPXORD %s, Y0, %s", vnniCol4Addr(c, lvOff), lv)
			continue
		}
		g.p("VBROADCASTI32X4 %s, %s", vnniCol4Addr(c, lvOff), lv)
		g.p("VGF2P8AFFINEQB $0, Y2, %s, %s", lv, lv)
		if five {
			g.p("VPBROADCASTD %s, Y12", vnniCol4Addr(c, 2))
			g.p("VPSHUFB Y10, Y12, Y12")
			g.p("VPTESTMB Y3, Y12, K2")
			g.p("VPADDB Y0, %s, K2, %s", lv, lv)
		}
	}
	for r := range 4 {
		g.p("VMOVDQU %s, Y8", vnniRowAddr(r, 0))
		g.p("VMOVDQU %s, Y9", [...]string{"(R14)", "(R14)(R10*1)", "(R14)(R10*2)", "(R14)(R11*1)"}[r])
		for c := range 4 {
			s := y(12 + c)
			g.p("VMOVDQA Y9, %s", s)
			g.p("VPDPBUSD Y8, %s, %s", y(4+c), s)
			g.p("VCVTDQ2PS %s, %s", s, s)
			g.p("VMULPS.BCST %d(AX), %s, %s", 4*(4*c+r), s, s)
			g.p("VADDPS %s, %s, %s", s, y(16+4*r+c), y(16+4*r+c))
		}
	}
	g.p("ADDQ $32, SI")
	g.p("ADDQ $32, R14")
	g.p("ADDQ $64, AX")
	g.p("ADDQ $%d, R9", f.bytes)
	g.p("ADDQ $%d, R12", f.bytes)
	g.p("ADDQ $4, DX")
	g.p("CMPQ DX, R8")
	g.p("JLT %s_loop", name)
	// Each accumulator folded as reduceLanes does, row r's at dst + r·ldd.
	g.p("MOVQ ldd+8(FP), R12")
	g.p("SHLQ $2, R12")
	g.p("MOVQ DI, AX")
	for r := range 4 {
		for c := range 4 {
			g.reduceStore(16+4*r+c, 12, 4*c)
		}
		if r < 3 {
			g.p("ADDQ R12, AX")
		}
	}
	g.tileEnd(name, 4)
}

// column3 points R12 at column 3 of the tile whose column 0 is at R9.
func (g *gen) column3() {
	g.p("LEAQ (R9)(BX*2), R12")
	g.p("ADDQ BX, R12")
}

// tileScaleSpread is kernel32Tile's VPERMPS index: the four columns'
// scales, each to four lanes.
func tileScaleSpread() string {
	var b strings.Builder
	for q := range 8 {
		lo, hi := uint64(2*q/4), uint64((2*q+1)/4)
		fmt.Fprintf(&b, "DATA tileScaleSpread<>+%d(SB)/8, $0x%016x\n", 8*q, lo|hi<<32)
	}
	b.WriteString("GLOBL tileScaleSpread<>(SB), RODATA|NOPTR, $64\n")
	return b.String()
}
