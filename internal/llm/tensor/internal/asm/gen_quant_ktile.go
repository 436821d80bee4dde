//go:build ignore

// The four-row VNNI tile of Q4_K and Q5_K, where a prefill's product is bound by
// the steps around its integer products.
package main

import "fmt"

// The scratch of qdotQ4_KTile (64-byte aligned by the kernel): per
// super-block, the four rows' record (actsRecord bytes), then per
// super-block the tile's two columns' record (colsRecord bytes).
const (
	// actsRecord: for sub-block j (0–7) and row pair rp (rows 2rp and
	// 2rp+1), the pair's 32 bytes side by side at 64·(2j+rp); at 1024 +
	// 64·rp the pair's eight Σx of the super-block's sub-blocks as
	// float32; at 1152 + 64·rp the pair's d_x, each over eight lanes.
	actsRecord = 1280
	actsSums   = 1024
	actsScales = 1152
	// colsRecord: column c's eight scales, each as two equal words (a
	// dword for VPDPWSSD's broadcast), at 32c; its eight minima as float32
	// at 64 + 32c; d and dmin of column c as float32 at 128 + 8c.
	colsRecord = 192
	colsMins   = 64
	colsD      = 128
	// q5kColsRecord: Q5_K's columns' record, colsRecord's and then the
	// columns' levels, nibbles and fifth bits joined (q4kLevels): column
	// c's sub-block j at colsRecord + 256c + 32j.
	q5kColsRecord = colsRecord + 512
)

// colsRecord is the bytes of f's columns' record, a pair of columns and
// super-block.
func (f q4kFormat) colsRecord() int {
	if f.five {
		return q5kColsRecord
	}
	return colsRecord
}

// kernelQ4KTile emits qdot<NAME>Tile: dst[r*ldd+j] = x_r · w_j for four
// rows of activations (k apart) and n columns of Q4_K or Q5_K weights (n
// even), two columns at a time.
//
// A zmm holds one column's eight lanes for a pair of rows, row 2rp in
// lanes 0–7 and row 2rp+1 in 8–15, so a lane sums every sub-block of the
// super-block and needs no fold (kernelQ4KVNNI, two sub-blocks of a column
// a zmm, folded the halves of each row's sums, three steps a row and
// super-block), and the rows' pair of scales and sums are laid out once a
// call: the call copies the rows' bytes pair by pair, sub-block by
// sub-block, with their Σx as float32 and their d_x spread to eight lanes
// (actsRecord), so each product reads its pair's 64 bytes as one operand.
// The columns' scales, as dwords that VPDPWSSD broadcasts (no VPERMW),
// their minima and d, dmin as float32 (colsRecord) are laid out by
// qdotQ4_KCols before the groups of four rows pass over the columns, once
// for them all, where unpacking them took a tenth of the tile's time (0.4B
// Llama's FFN, 256 rows) and each group did it again. A column's 32 bytes of a part are broadcast to both halves
// and split into the low nibbles (sub-block 2cp) and the high ones
// (2cp+1); per row pair and sub-block, VPMADDUBSW against the pair's bytes
// and VPDPWSSD with the scale add scale × the 4-element sums to the lanes:
// dotQ4_K's exact p[l]. n[l] = min_l·Σx is the float32 product of the two
// (both integers, the product below 2^24: exact, as float32 of the integer
// product). Then p·(d·dx) − n·(dmin·dx), each product and the difference
// rounded once, is added to the lane's accumulator, super-block after
// super-block: dotK's steps on the same values in the same order. Q5_K's
// levels, whose fifth bits take two more steps a sub-block and column,
// are joined by qdotQ5_KCols too, once for every group of four rows, and
// the tile reads them broadcast from the columns' records: it reads no
// weights.
//
// Registers: SI the rows' record of the super-block, R10 the columns'
// record, R11 super-blocks left; R9 column 0's super-block, BX the column
// stride, R12 the next tile's weights (prefetched); DI dst; CX columns
// left; 0(SP) the tile's first column, 16(SP) the rows' records, 24(SP)
// the tile's columns' records. Z0–Z3 the
// integer sums (row pair rp, column c in Z(2rp+c)), Z4–Z7 the
// accumulators likewise, Z8–Z13 levels, Z14–Z19 products, Z20 the nibble
// mask, Z24–Z25 the pairs' d_x, Z26–Z27 the columns' minima, Z28–Z31
// float32 scratch.
func (g *gen) kernelQ4KTile(f q4kFormat) {
	name := "qdot" + f.name + "Tile"
	fmt.Fprintf(&g.buf, "\n// func %s(dst *float32, ldd int, x *int8, xd *float32, xs *int32, k int, w *byte, wstride int, n int, nb int, scratch *int32)\n", name)
	fmt.Fprintf(&g.buf, "TEXT ·%s(SB), NOSPLIT, $32-88\n", name)
	g.p("MOVQ nb+72(FP), R8")
	g.p("SHLQ $2, R8")
	g.q4kScratch("scratch+80(FP)", "nb+72(FP)", "DX", "AX")
	g.p("MOVQ DX, 16(SP)")
	g.p("MOVQ AX, 24(SP)")
	g.q4kActs(name)
	g.p("MOVQ dst+0(FP), DI")
	g.p("MOVQ w+48(FP), R9")
	g.p("MOVQ wstride+56(FP), BX")
	g.p("MOVQ n+64(FP), CX")
	g.p("VPBROADCASTD nibbleMask<>(SB), Z20")
	g.label(name + "_tile")
	g.p("CMPQ CX, $2")
	g.p("JLT %s_done", name)
	g.p("MOVQ R9, 0(SP)")
	for i := 4; i < 8; i++ {
		g.p("VPXORD %s, %s, %s", z(i), z(i), z(i))
	}
	g.p("LEAQ (R9)(BX*2), R12")
	g.p("MOVQ 16(SP), SI")
	g.p("MOVQ 24(SP), R10")
	g.p("MOVQ nb+72(FP), R11")
	g.label(name + "_loop")
	if !f.five {
		g.prefetchAhead("R12", 2*f.size)
	}
	for i := range 4 {
		g.p("VPXORD %s, %s, %s", z(i), z(i), z(i))
	}
	for cp := range 4 {
		for c := range 2 {
			raw, lo, hi := 8+c, 10+2*c, 11+2*c
			if f.five {
				g.p("VBROADCASTI64X4 %d(R10), %s", colsRecord+256*c+64*cp, z(lo))
				g.p("VBROADCASTI64X4 %d(R10), %s", colsRecord+256*c+64*cp+32, z(hi))
			} else {
				g.p("VBROADCASTI64X4 %s, %s", vnniColAddr(c, f.qs+32*cp), z(raw))
				g.p("VPANDD Z20, %s, %s", z(raw), z(lo))
				g.p("VPSRLW $4, %s, %s", z(raw), z(hi))
				g.p("VPANDD Z20, %s, %s", z(hi), z(hi))
			}
			for h, lv := range []int{lo, hi} {
				j := 2*cp + h
				for rp := range 2 {
					t := 14 + (4*c+2*h+rp)%6
					g.p("VPMADDUBSW %d(SI), %s, %s", 64*(2*j+rp), z(lv), z(t))
					g.p("VPDPWSSD.BCST %d(R10), %s, %s", 32*c+4*j, z(t), z(2*rp+c))
				}
			}
		}
	}
	for rp := range 2 {
		g.p("VMOVUPS %d(SI), %s", actsScales+64*rp, z(24+rp))
	}
	for c := range 2 {
		g.p("VBROADCASTF32X8 %d(R10), %s", colsMins+32*c, z(26+c))
	}
	for rp := range 2 {
		for c := range 2 {
			p, acc := 2*rp+c, 4+2*rp+c
			g.p("VMULPS.BCST %d(R10), %s, Z28", colsD+8*c, z(24+rp))
			g.p("VMULPS.BCST %d(R10), %s, Z29", colsD+8*c+4, z(24+rp))
			g.p("VMULPS %d(SI), %s, Z30", actsSums+64*rp, z(26+c))
			g.p("VMULPS Z29, Z30, Z30")
			g.p("VCVTDQ2PS %s, Z31", z(p))
			g.p("VMULPS Z28, Z31, Z31")
			g.p("VSUBPS Z30, Z31, Z31")
			g.p("VADDPS Z31, %s, %s", z(acc), z(acc))
		}
	}
	g.p("ADDQ $%d, SI", actsRecord)
	g.p("ADDQ $%d, R10", f.colsRecord())
	g.p("ADDQ $%d, R9", f.size)
	g.p("DECQ R11")
	g.p("JNZ %s_loop", name)
	g.p("MOVQ R10, 24(SP)")
	// Row 2rp+1's lanes of each accumulator to Z16–Z19, then each row's
	// folded as reduceLanes does, row r's at dst + r·ldd.
	for i := range 4 {
		g.p("VEXTRACTF64X4 $1, %s, %s", z(4+i), y(16+i))
	}
	g.dstRows(4, func(r int) {
		for c := range 2 {
			a := 4 + 2*(r/2) + c
			if r%2 == 1 {
				a = 16 + 2*(r/2) + c
			}
			g.reduceStore(a, 15, 4*c)
		}
	})
	g.tileEnd(name, 2)
}

// q4kActs writes the four rows' records (actsRecord), super-block after
// super-block, from 16(SP) on; R8 = 4·nb. Row r's bytes are at x + r·k,
// its Σx at xs + 32·nb·r, its d_x at xd + 4·nb·r.
func (g *gen) q4kActs(name string) {
	g.p("MOVQ x+16(FP), SI")
	g.p("MOVQ k+40(FP), R10")
	g.p("LEAQ (R10)(R10*2), R11")
	g.p("MOVQ xs+32(FP), R12")
	g.p("LEAQ (R12)(R8*8), R13")
	g.p("LEAQ (R13)(R8*8), R13")
	g.p("MOVQ xd+24(FP), R14")
	g.p("LEAQ (R14)(R8*2), AX")
	g.p("MOVQ nb+72(FP), CX")
	sums := [...]string{"(R12)", "(R12)(R8*8)", "(R13)", "(R13)(R8*8)"}
	scales := [...]string{"(R14)", "(R14)(R8*1)", "(AX)", "(AX)(R8*1)"}
	g.label(name + "_acts")
	for rp := range 2 {
		r0, r1 := 2*rp, 2*rp+1
		for j := range 8 {
			g.p("VMOVDQU %s, Y14", vnniRowAddr(r0, 32*j))
			g.p("VINSERTI64X4 $1, %s, Z14, Z14", vnniRowAddr(r1, 32*j))
			g.p("VMOVDQU64 Z14, %d(DX)", 64*(2*j+rp))
		}
		g.p("VCVTDQ2PS %s, Y15", sums[r0])
		g.p("VCVTDQ2PS %s, Y16", sums[r1])
		g.p("VINSERTF64X4 $1, Y16, Z15, Z15")
		g.p("VMOVUPS Z15, %d(DX)", actsSums+64*rp)
		g.p("VBROADCASTSS %s, Y15", scales[r0])
		g.p("VBROADCASTSS %s, Y16", scales[r1])
		g.p("VINSERTF64X4 $1, Y16, Z15, Z15")
		g.p("VMOVUPS Z15, %d(DX)", actsScales+64*rp)
	}
	g.p("ADDQ $256, SI")
	g.p("ADDQ $32, R12")
	g.p("ADDQ $32, R13")
	g.p("ADDQ $4, R14")
	g.p("ADDQ $4, AX")
	g.p("ADDQ $%d, DX", actsRecord)
	g.p("DECQ CX")
	g.p("JNZ %s_acts", name)
}

// kernelQ4KCols emits qdot<NAME>Cols (pairColumns): the columns' records
// (colsRecord, q5kColsRecord) of n columns of Q4_K or Q5_K weights, into
// the scratch past the rows' records, where qdot<NAME>Tile reads them;
// X0–X2 and Q5_K's Y3–Y6 scratch besides unpackQ4KScaleBytes's.
func (g *gen) kernelQ4KCols(f q4kFormat) {
	g.pairColumns("qdot"+f.name+"Cols", f.size, f.colsRecord(), func() {
		g.q4kScratch("scratch+0(FP)", "nb+32(FP)", "DX", "R10")
	}, func() {
		for c := range 2 {
			g.unpackQ4KScaleBytes(c, 0)
			// Scale s as the dword s | s<<16; the minima as float32.
			g.p("VPMOVZXBD X0, Y1")
			g.p("VPSLLD $16, Y1, Y2")
			g.p("VPOR Y2, Y1, Y1")
			g.p("VMOVDQU Y1, %d(R10)", 32*c)
			g.p("VPSRLDQ $8, X0, X0")
			g.p("VPMOVZXBD X0, Y1")
			g.p("VCVTDQ2PS Y1, Y1")
			g.p("VMOVUPS Y1, %d(R10)", colsMins+32*c)
			if !f.five {
				continue
			}
			g.p("VMOVDQU %s, Y3", vnniColAddr(c, q5kHigh))
			for cp := range 4 {
				g.q4kLevels(f, [...]string{"%d(R9)", "%d(R9)(BX*1)"}[c], cp, 4, 5, 3, 6)
				g.p("VMOVDQU Y4, %d(R10)", colsRecord+256*c+64*cp)
				g.p("VMOVDQU Y5, %d(R10)", colsRecord+256*c+64*cp+32)
			}
		}
		// d, dmin of column 0, then of column 1.
		g.p("VMOVD %s, X0", vnniColAddr(0, 0))
		g.p("VPINSRD $1, %s, X0, X0", vnniColAddr(1, 0))
		g.p("VCVTPH2PS X0, X0")
		g.p("VMOVUPS X0, %d(R10)", colsD)
	})
}

// pairColumns emits name(scratch *int32, w *byte, wstride int, n int, nb
// int), the layout of what a four-row tile reads of n columns (n even)
// that depends on the column alone: start sets R10 to the first record,
// then body writes a pair's record of a super-block (record bytes) at
// R10, R9 at column 0's super-block (blockBytes, BX the column stride),
// pair after pair and super-block after super-block. The kernel is the
// first to read the columns, from memory, and reads little of each line:
// it asks for the pair of columns eight pairs on ahead, whole (the tile
// reads them next), where it waited on them line by line (0.4B Llama
// Q4_K_M prefill: qdotQ4_KCols's time in the profile 0.68 → 0.38 s).
//
// Registers: R10 the record, R11 super-blocks left, CX pairs left, DX the
// pair's first column, R9 its super-block, R8 the columns prefetched;
// body may use AX, R12–R14 and the vector registers.
func (g *gen) pairColumns(name string, blockBytes, record int, start, body func()) {
	fmt.Fprintf(&g.buf, "\n// func %s(scratch *int32, w *byte, wstride int, n int, nb int)\n", name)
	fmt.Fprintf(&g.buf, "TEXT ·%s(SB), NOSPLIT, $0-40\n", name)
	start()
	g.p("MOVQ w+8(FP), DX")
	g.p("MOVQ wstride+16(FP), BX")
	g.p("MOVQ n+24(FP), CX")
	g.p("SHRQ $1, CX")
	g.p("JZ %s_done", name)
	g.label(name + "_pair")
	g.p("MOVQ DX, R9")
	g.p("MOVQ nb+32(FP), R11")
	g.p("LEAQ (DX)(BX*8), R8")
	g.p("LEAQ (R8)(BX*8), R8")
	g.label(name + "_block")
	g.prefetchAhead("R8", 2*blockBytes)
	body()
	g.p("ADDQ $%d, R9", blockBytes)
	g.p("ADDQ $%d, R10", record)
	g.p("DECQ R11")
	g.p("JNZ %s_block", name)
	g.p("LEAQ (DX)(BX*2), DX")
	g.p("DECQ CX")
	g.p("JNZ %s_pair", name)
	g.label(name + "_done")
	g.p("VZEROUPPER")
	g.p("RET")
}

// tileEnd closes a tile of cols columns: nextTile, back to name_tile;
// name_done returns.
func (g *gen) tileEnd(name string, cols int) {
	g.nextTile(cols)
	g.tileLoopEnd(name)
}

// nextTile moves dst (DI) and the weights (R9, from the tile's first
// column at 0(SP)) past a tile of cols columns, and counts them off the
// columns left (CX).
func (g *gen) nextTile(cols int) {
	g.p("ADDQ $%d, DI", 4*cols)
	g.p("SUBQ $%d, CX", cols)
	g.p("MOVQ 0(SP), R9")
	g.p("LEAQ (R9)(BX*%d), R9", cols)
}

// tileLoopEnd jumps back to name_tile; name_done returns.
func (g *gen) tileLoopEnd(name string) {
	g.p("JMP %s_tile", name)
	g.label(name + "_done")
	g.p("VZEROUPPER")
	g.p("RET")
}

// q4kScratch sets acts to the rows' records of qdotQ4_KTile's scratch (its
// argument at scratchArg, 64-byte aligned) and cols to the columns'
// records, past nb (at nbArg) rows' records.
func (g *gen) q4kScratch(scratchArg, nbArg, acts, cols string) {
	g.p("MOVQ %s, %s", scratchArg, acts)
	g.p("ADDQ $63, %s", acts)
	g.p("ANDQ $-64, %s", acts)
	g.p("MOVQ %s, %s", nbArg, cols)
	g.p("IMULQ $%d, %s", actsRecord, cols)
	g.p("ADDQ %s, %s", acts, cols)
}
