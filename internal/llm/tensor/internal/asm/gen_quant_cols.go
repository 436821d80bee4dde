//go:build ignore

// The AVX-512 VNNI products of Q8_0, Q4_0 and Q5_0 with sixteen columns in a
// register's lanes: decode, the rows a batch leaves past its groups of
// four, and prefill.
package main

import (
	"fmt"
	"strings"
)

// colsFormat is a format kernelCols takes: blocks of size bytes, a leading
// f16 scale and, at lvOff, the levels: 16 bytes of nibbles (Q4_0, Q5_0,
// whose 32 fifth bits lie at byte 2) or 32 signed bytes (Q8_0). Its levels
// made unsigned are the signed ones plus 1<<shift (8, 16 or 128), so the
// exact Σ w·x of a block is VPDPBUSD's sum of the unsigned levels times x
// minus Σx << shift.
type colsFormat struct {
	name          string
	size, lvOff   int
	nibble, fifth bool
	shift         int
}

var colsFormats = []colsFormat{
	{"Q8_0", 34, 2, false, false, 7},
	{"Q4_0", 18, 2, true, false, 3},
	{"Q5_0", 22, 6, true, true, 4},
}

// colsName is the name of a colsFormat's kernel over rows rows.
func colsName(f colsFormat, rows int) string {
	return fmt.Sprintf("qdot%sCols%d", f.name, rows)
}

// colsBlock is the scratch of a kernel of several rows per block: the
// rows' 32 bytes, then their −Σx << shift, then their scales.
func colsBlock(rows int) int { return 40 * rows }

// colsRegs are kernelCols' zmm registers for a count of rows. Up to four
// rows, each row sums its block in two chains of four VPDPBUSD (added),
// whose latency four rows alone would not hide; eight rows take one chain
// each, in the registers of the parts, which are dead by then.
type colsRegs struct {
	rows  int
	lv    int // group g of the levels in Z(lv+g)
	parts int // the parts in Z(parts)…Z(parts+3), their unpacks past them
}

func colsRegsFor(rows int) colsRegs {
	if rows == 8 {
		return colsRegs{rows, 8, 16}
	}
	return colsRegs{rows, 4, 12}
}

// chains are row r's sums: the second is −1 with one chain.
func (c colsRegs) chains(r int) (a, b int) {
	if c.rows == 8 {
		return 16 + r, -1
	}
	return 20 + 2*r, 21 + 2*r
}

// scale is row r's register of d_w·d_x.
func (c colsRegs) scale(r int) int {
	if c.rows == 8 {
		return 24 + r%4
	}
	return 21 + 2*r
}

// kernelCols emits qdot<NAME>Cols<rows>: rows rows of activations (1, 4 or 8)
// by n columns (n a multiple of 16), sixteen at a time, column c of the
// sixteen in lane c of every register. Per block:
//   - the sixteen columns' levels are loaded a 16-byte part at a time
//     into the 128-bit lanes of four registers (lane l of register j holds
//     column 4l+j's part) and transposed within the lanes by eight
//     unpacks, so that register g holds the 4-byte group g of every
//     column, made unsigned (Q4_0's nibbles split by a mask and one
//     GF2P8AFFINEQB, Q5_0's fifth bits gathered, spread to their levels'
//     bytes by a VPSHUFB and added as 16 under a VPTESTMB's mask, Q8_0's
//     sign bits flipped);
//   - the columns' f16 scales are one gather, converted;
//   - for each row, eight VPDPBUSD, each with group g of the row's 32
//     bytes broadcast from memory, sum the block's 32 products of the
//     sixteen columns exactly (colsRegs' chains), on top of
//     −Σx << shift; then converted, times d_w·d_x (the columns' d_w times
//     the row's d_x, rounded once), rounded, and added to the row's
//     accumulator: dot32's steps, for sixteen outputs at once.
//
// The unpacking and the transposition are shared by the rows, and no sum
// is folded at the end: a row's sixteen results are one store.
//
// Registers: DI dst; R9, R12, R13 and AX columns 0, 4, 8 and 12 at the
// block, BX the column stride, R8 three of it; CX columns left, DX blocks
// left; 0(SP) the tile's first column. With several rows R14 is the
// scratch at the block (colsBlock bytes a block, laid out once a call)
// and SI the prefetch stream; with one, SI, R10 and R11 are the row's
// bytes, scale and sum at the block and R14 the prefetch stream.
// Z0–Z7 the rows' accumulators; the levels, the parts and the rows'
// chains and scales as colsRegs places them; Z28 the columns' d_w, Z29
// the gather's offsets (c·wstride), Z30 the nibble mask (Q4_0) or the
// sign bits (Q8_0), Z31 GF2P8AFFINEQB's matrix of the high nibbles
// (Q4_0, Q5_0); Z24–Z26 Q5_0's fifth bits, their bytes and the 16s while
// the levels are made; Z22 zero with one row; K1 the gathers' mask, K2
// the levels with a fifth bit.
func (g *gen) kernelCols(f colsFormat, rows int) {
	name, regs := colsName(f, rows), colsRegsFor(rows)
	fmt.Fprintf(&g.buf, "\n// func %s(dst *float32, ldd int, x *int8, xd *float32, xs *int32, k int, w *byte, wstride int, n int, nb int, scratch *int32)\n", name)
	fmt.Fprintf(&g.buf, "TEXT ·%s(SB), NOSPLIT, $8-88\n", name)
	g.p("MOVQ dst+0(FP), DI")
	g.p("MOVQ w+48(FP), R9")
	g.p("MOVQ wstride+56(FP), BX")
	g.p("MOVQ n+64(FP), CX")
	g.p("LEAQ (BX)(BX*2), R8")
	if f.nibble {
		g.p("VPBROADCASTD nibbleMask<>(SB), Z30")
		g.p("VPBROADCASTQ colsHighNibbles<>(SB), Z31")
	} else {
		g.p("VPBROADCASTD signBits<>(SB), Z30")
	}
	g.p("VPBROADCASTD wstride+56(FP), Z29")
	g.p("VPMULLD colsLanes<>(SB), Z29, Z29")
	pf := "R14"
	if rows > 1 {
		pf = "SI"
		g.colsLayout(f, name, rows)
	} else {
		g.p("VPXORD Z22, Z22, Z22")
	}
	if rows > 1 {
		g.colsTiles(f, rows, name, regs, pf, "PREFETCHT0")
		return
	}
	// Decode reads the weights from memory: the next group's bytes are
	// asked for one group ahead, to the first-level cache where a group
	// fits it twice over and to the second level where it does not, where
	// the first level would drop them before they were read.
	g.p("CMPQ BX, $%d", colsNearStride)
	g.p("JA %s_far_tile", name)
	g.colsTiles(f, rows, name, regs, pf, "PREFETCHT0")
	g.colsTiles(f, rows, name+"_far", regs, pf, "PREFETCHT1")
}

// colsNearStride is the largest column stride at which a one-row kernel
// prefetches the next group of sixteen columns (12 KiB at most) to the
// first-level cache; past it, to the second. One thread, one row, weights
// from memory (k=1024: n=65536; k=4096: n=32768): Q4_0 at k=1024 (9 KiB
// a group) 22 GB/s to the first level against 17 to the second; Q8_0 at
// k=1024 (17 KiB) 14–16 against 23–25, and at k=4096 11 against 20–24.
const colsNearStride = 768

// colsTiles emits kernelCols' loop over groups of sixteen columns, its
// labels prefixed by lbl, prefetching the next group with the prefetch
// instruction given.
func (g *gen) colsTiles(f colsFormat, rows int, lbl string, regs colsRegs, pf, prefetch string) {
	g.label(lbl + "_tile")
	g.p("CMPQ CX, $16")
	g.p("JLT %s_done", lbl)
	for r := range rows {
		g.p("VPXORD %s, %s, %s", z(r), z(r), z(r))
	}
	g.p("MOVQ R9, 0(SP)")
	g.p("LEAQ (R9)(BX*4), R12")
	g.p("LEAQ (R12)(BX*4), R13")
	g.p("LEAQ (R13)(BX*4), AX")
	g.p("LEAQ (AX)(BX*4), %s", pf)
	if rows > 1 {
		g.p("MOVQ scratch+80(FP), R14")
	} else {
		g.p("MOVQ x+16(FP), SI")
		g.p("MOVQ xd+24(FP), R10")
		g.p("MOVQ xs+32(FP), R11")
	}
	g.p("MOVQ nb+72(FP), DX")
	g.label(lbl + "_loop")
	g.prefetchAheadTo(prefetch, pf, 16*f.size)
	lv := regs.lv
	if f.nibble {
		g.colsParts(f.lvOff, regs.parts, lv)
		for h := range 4 {
			g.p("VGF2P8AFFINEQB $0, Z31, %s, %s", z(lv+h), z(lv+4+h))
			g.p("VPANDD Z30, %s, %s", z(lv+h), z(lv+h))
		}
	}
	if f.fifth {
		// Level e of group grp (element 4grp+e) takes bit 4grp+e of its
		// column's 32 fifth bits (Z24): byte grp/2 of the column's dword,
		// copied to the group's four bytes (Z25), bit 4(grp mod 2)+e.
		g.p("KXNORW K1, K1, K1")
		g.p("VPGATHERDD 2(R9)(Z29*1), K1, Z24")
		g.p("VPBROADCASTD sixteens<>(SB), Z26")
		for grp := range 8 {
			g.p("VPSHUFB colsFifthBytes<>+%d(SB), Z24, Z25", 64*(grp/2))
			g.p("VPTESTMB colsFifthBits<>+%d(SB), Z25, K2", 64*(grp%2))
			g.p("VPADDB Z26, %s, K2, %s", z(lv+grp), z(lv+grp))
		}
	}
	if !f.nibble {
		g.colsParts(f.lvOff, regs.parts, lv)
		g.colsParts(f.lvOff+16, regs.parts, lv+4)
		for l := range 8 {
			g.p("VPXORD Z30, %s, %s", z(lv+l), z(lv+l))
		}
	}
	g.p("KXNORW K1, K1, K1")
	g.p("VPGATHERDD (R9)(Z29*1), K1, Z28")
	g.p("VPMOVDW Z28, Y28")
	g.p("VCVTPH2PS Y28, Z28")
	xAddr := func(r, grp int) string {
		if rows == 1 {
			return fmt.Sprintf("%d(SI)", 4*grp)
		}
		return fmt.Sprintf("%d(R14)", 32*r+4*grp)
	}
	for r := range rows {
		a, b := regs.chains(r)
		if rows == 1 {
			g.p("VPBROADCASTD (R11), %s", z(a))
			g.p("VPSLLD $%d, %s, %s", f.shift, z(a), z(a))
			g.p("VPSUBD %s, Z22, %s", z(a), z(a))
		} else {
			g.p("VPBROADCASTD %d(R14), %s", 32*rows+4*r, z(a))
		}
		if b >= 0 {
			g.p("VPXORD %s, %s, %s", z(b), z(b), z(b))
		}
		for grp := range 8 {
			sum := a
			if grp >= 4 && b >= 0 {
				sum = b
			}
			g.p("VPDPBUSD.BCST %s, %s, %s", xAddr(r, grp), z(lv+grp), z(sum))
		}
	}
	for r := range rows {
		a, b := regs.chains(r)
		xd, dd := fmt.Sprintf("%d(R14)", 36*rows+4*r), regs.scale(r)
		if rows == 1 {
			xd = "(R10)"
		}
		if b >= 0 {
			g.p("VPADDD %s, %s, %s", z(b), z(a), z(a))
		}
		g.p("VCVTDQ2PS %s, %s", z(a), z(a))
		g.p("VMULPS.BCST %s, Z28, %s", xd, z(dd))
		g.p("VMULPS %s, %s, %s", z(dd), z(a), z(a))
		g.p("VADDPS %s, %s, %s", z(a), z(r), z(r))
	}
	for _, reg := range []string{"R9", "R12", "R13", "AX"} {
		g.p("ADDQ $%d, %s", f.size, reg)
	}
	if rows == 1 {
		g.p("ADDQ $32, SI")
		g.p("ADDQ $4, R10")
		g.p("ADDQ $4, R11")
	} else {
		g.p("ADDQ $%d, R14", colsBlock(rows))
	}
	g.p("DECQ DX")
	g.p("JNZ %s_loop", lbl)
	g.dstRows(rows, func(r int) { g.p("VMOVUPS %s, (AX)", z(r)) })
	g.p("ADDQ $64, DI")
	g.p("SUBQ $16, CX")
	g.p("MOVQ 0(SP), R9")
	g.p("LEAQ (R9)(BX*8), R9")
	g.p("LEAQ (R9)(BX*8), R9")
	g.tileLoopEnd(lbl)
}

// colsParts loads the 16 bytes at off of each of the sixteen columns'
// blocks, column 4l+j to 128-bit lane l of Z(p+j), and transposes the
// lanes' 4×4 dwords into Z(dst)…Z(dst+3): dword j of lane l of Z(dst+h)
// is dword h of column 4l+j's bytes. Z(p+4)…Z(p+7) scratch.
func (g *gen) colsParts(off, p, dst int) {
	bases := []string{"R9", "R12", "R13", "AX"}
	for j := range 4 {
		for l, base := range bases {
			addr := fmt.Sprintf([...]string{"%d(%s)", "%d(%s)(BX*1)", "%d(%s)(BX*2)", "%d(%s)(R8*1)"}[j], off, base)
			if l == 0 {
				g.p("VMOVDQU32 %s, X%d", addr, p+j)
				continue
			}
			g.p("VINSERTI32X4 $%d, %s, Z%d, Z%d", l, addr, p+j, p+j)
		}
	}
	g.p("VPUNPCKLDQ %s, %s, %s", z(p+1), z(p), z(p+4))
	g.p("VPUNPCKHDQ %s, %s, %s", z(p+1), z(p), z(p+5))
	g.p("VPUNPCKLDQ %s, %s, %s", z(p+3), z(p+2), z(p+6))
	g.p("VPUNPCKHDQ %s, %s, %s", z(p+3), z(p+2), z(p+7))
	g.p("VPUNPCKLQDQ %s, %s, %s", z(p+6), z(p+4), z(dst))
	g.p("VPUNPCKHQDQ %s, %s, %s", z(p+6), z(p+4), z(dst+1))
	g.p("VPUNPCKLQDQ %s, %s, %s", z(p+7), z(p+5), z(dst+2))
	g.p("VPUNPCKHQDQ %s, %s, %s", z(p+7), z(p+5), z(dst+3))
}

// colsLayout lays out the scratch of a four-row kernel once a call: per
// block, each row's 32 bytes, then each row's −Σx << shift, then each
// row's scale (colsBlock bytes a block). Rows are k bytes (x) and 4·nb
// bytes (xd, xs) apart.
func (g *gen) colsLayout(f colsFormat, name string, rows int) {
	g.p("MOVQ k+40(FP), R12")
	g.p("MOVQ nb+72(FP), R13")
	g.p("SHLQ $2, R13")
	g.p("MOVQ x+16(FP), SI")
	g.p("MOVQ xd+24(FP), R10")
	g.p("MOVQ xs+32(FP), R11")
	for r := range rows {
		lbl := fmt.Sprintf("%s_layout%d", name, r)
		if r > 0 {
			g.p("MOVQ x+16(FP), SI")
			g.p("MOVQ xd+24(FP), R10")
			g.p("MOVQ xs+32(FP), R11")
			for range r {
				g.p("ADDQ R12, SI")
				g.p("ADDQ R13, R10")
				g.p("ADDQ R13, R11")
			}
		}
		g.p("MOVQ scratch+80(FP), R14")
		g.p("MOVQ nb+72(FP), DX")
		g.label(lbl)
		g.p("VMOVDQU (SI), Y12")
		g.p("VMOVDQU Y12, %d(R14)", 32*r)
		g.p("MOVL (R11), AX")
		g.p("SHLL $%d, AX", f.shift)
		g.p("NEGL AX")
		g.p("MOVL AX, %d(R14)", 32*rows+4*r)
		g.p("MOVL (R10), AX")
		g.p("MOVL AX, %d(R14)", 36*rows+4*r)
		g.p("ADDQ $32, SI")
		g.p("ADDQ $4, R10")
		g.p("ADDQ $4, R11")
		g.p("ADDQ $%d, R14", colsBlock(rows))
		g.p("DECQ DX")
		g.p("JNZ %s", lbl)
	}
}

// colsConstants are kernelCols' tables: the lanes' indices 0–15 (times
// the column stride, the gather's offsets) and GF2P8AFFINEQB's matrix that
// moves a byte's high nibble down (row 7−i of the matrix selects the
// input bit of output bit i).
func colsConstants() string {
	var b strings.Builder
	for q := range 8 {
		fmt.Fprintf(&b, "DATA colsLanes<>+%d(SB)/8, $0x%016x\n", 8*q, uint64(2*q)|uint64(2*q+1)<<32)
	}
	b.WriteString("GLOBL colsLanes<>(SB), RODATA|NOPTR, $64\n")
	b.WriteString("DATA colsHighNibbles<>+0(SB)/8, $0x1020408000000000\n")
	b.WriteString("GLOBL colsHighNibbles<>(SB), RODATA|NOPTR, $8\n")
	// Q5_0's fifth bits: VPSHUFB's index (within 16-byte lanes) that
	// copies byte t of each dword to its four bytes, for t = 0…3, and the bit each byte of a group
	// takes: 1<<e, then 1<<(4+e), for its byte e.
	for t := range 4 {
		for q := range 8 {
			var v uint64
			for e := range 8 {
				v |= uint64(4*(2*(q%2)+e/4)+t) << (8 * e)
			}
			fmt.Fprintf(&b, "DATA colsFifthBytes<>+%d(SB)/8, $0x%016x\n", 64*t+8*q, v)
		}
	}
	b.WriteString("GLOBL colsFifthBytes<>(SB), RODATA|NOPTR, $256\n")
	for h := range 2 {
		for q := range 8 {
			var v uint64
			for e := range 8 {
				v |= uint64(1) << (4*h + e%4) << (8 * e)
			}
			fmt.Fprintf(&b, "DATA colsFifthBits<>+%d(SB)/8, $0x%016x\n", 64*h+8*q, v)
		}
	}
	b.WriteString("GLOBL colsFifthBits<>(SB), RODATA|NOPTR, $128\n")
	return b.String()
}
