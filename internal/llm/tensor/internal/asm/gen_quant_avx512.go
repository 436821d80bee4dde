//go:build ignore

// The AVX-512 VNNI tiles of gen_quant.go for Q4_K, Q5_K, Q6_K and MatMulTQ8Q8's
// int8 weights: four rows of activations (prefill), or one, by two or
// four columns of weights, in zmm registers that hold two columns' lanes,
// or two parts of one block. Each weight block is unpacked once for the
// tile's rows and each activation row is read from the cache once per
// column, so a four-row tile does a quarter of the unpacking and half the
// float32 steps per product of the AVX2 Rows4 kernels. The integers are
// exact whatever instruction sums them (VPDPWSSD, VPDPBUSD), and every
// float32 step is the pure-Go version's, on the same values in the same
// order, so the tiles give the same bits.
package main

import (
	"fmt"
	"strings"
)

func z(i int) string { return fmt.Sprintf("Z%d", i) }

// vnniRowAddr is row r of the tile's activations at byte off: rows are k
// (R10) apart, R11 = 3k.
func vnniRowAddr(r, off int) string {
	return fmt.Sprintf([...]string{"%d(SI)", "%d(SI)(R10*1)", "%d(SI)(R10*2)", "%d(SI)(R11*1)"}[r], off)
}

// vnniColAddr is column c of the tile's weights at byte off of the current
// block: columns are wstride (BX) apart.
func vnniColAddr(c, off int) string {
	return fmt.Sprintf([...]string{"%d(R9)", "%d(R9)(BX*1)"}[c], off)
}

// tileName is the name of a VNNI tile of a format: qdot<NAME>Tile for
// four rows of activations, qdot<NAME>Tile1 for one (decode).
func tileName(format string, rows int) string {
	if rows == 1 {
		return "qdot" + format + "Tile1"
	}
	return "qdot" + format + "Tile"
}

// vnniStore folds each accumulator (one column in lanes 0–7, the next in
// lanes 8–15) as reduceLanes does and stores row r's sums of column pair p,
// held in z(acc(r, p)), at dst + r·ldd + 8p.
func (g *gen) vnniStore(rows int, acc func(r, p int) int, pairs int) {
	g.dstRows(rows, func(r int) {
		for p := range pairs {
			a := acc(r, p)
			g.p("VEXTRACTF64X4 $1, %s, Y14", z(a))
			g.p("VMOVAPS %s, Y13", y(a))
			g.reduceStore(13, 15, 8*p)
			g.reduceStore(14, 15, 8*p+4)
		}
	})
}

// dstRows points AX at dst (DI) and moves it down one row (ldd floats;
// R12 the stride in bytes) after each of rows rows' stores.
func (g *gen) dstRows(rows int, store func(r int)) { g.dstRowsIn("AX", "R12", rows, store) }

// dstRowsIn is dstRows with ptr and stride for AX and R12, for a kernel
// that still needs those.
func (g *gen) dstRowsIn(ptr, stride string, rows int, store func(r int)) {
	g.p("MOVQ ldd+8(FP), %s", stride)
	g.p("SHLQ $2, %s", stride)
	g.p("MOVQ DI, %s", ptr)
	for r := range rows {
		store(r)
		if r < rows-1 {
			g.p("ADDQ %s, %s", stride, ptr)
		}
	}
}

// unpackQ4KScales sets y(dst) to the sixteen words of the Q4_K block of
// column c: its eight 6-bit scales, then its eight minima (as kernelQ4K4
// unpacks them).
func (g *gen) unpackQ4KScales(c, dst int) {
	g.unpackQ4KScaleBytes(c, dst)
	g.p("VPMOVZXBW %s, %s", x(dst), y(dst))
}

// unpackQ4KScaleBytes sets x(dst) to the sixteen bytes of the Q4_K block
// of column c: its eight 6-bit scales, then its eight minima, in general
// registers (AX, R12, R13, R14 scratch) and moved across whole, so that no
// vector load waits on narrower stores.
func (g *gen) unpackQ4KScaleBytes(c, dst int) {
	// AX = u0, R14 = u2, then R12 = u1 (the 12 bytes at offset 4).
	g.p("MOVL %s, AX", vnniColAddr(c, 4))
	g.p("MOVL %s, R14", vnniColAddr(c, 12))
	// Scales 4–7: low nibbles of u2 | (u0>>6 & 3) << 4; 0–3: u0 & 63.
	g.p("MOVL AX, R13")
	g.p("SHRL $2, R13")
	g.p("ANDL $0x30303030, R13")
	g.p("MOVL R14, R12")
	g.p("ANDL $0x0f0f0f0f, R12")
	g.p("ORL R12, R13")
	g.p("MOVL %s, R12", vnniColAddr(c, 8))
	g.p("SHLQ $32, R13")
	g.p("ANDL $0x3f3f3f3f, AX")
	g.p("ORQ R13, AX")
	g.p("MOVQ AX, %s", x(dst))
	// Minima 4–7: high nibbles of u2 | (u1>>6 & 3) << 4; 0–3: u1 & 63.
	g.p("MOVL R12, R13")
	g.p("SHRL $2, R13")
	g.p("ANDL $0x30303030, R13")
	g.p("SHRL $4, R14")
	g.p("ANDL $0x0f0f0f0f, R14")
	g.p("ORL R14, R13")
	g.p("SHLQ $32, R13")
	g.p("ANDL $0x3f3f3f3f, R12")
	g.p("ORQ R13, R12")
	g.p("VPINSRQ $1, R12, %s, %s", x(dst), x(dst))
}

// halfPair sets z(dst) to 16 float32: the half at byte off of column 0's
// block in lanes 0–7, column 1's in lanes 8–15; z(tmp) is scratch.
func (g *gen) halfPair(off, dst, tmp int) {
	g.p("VPBROADCASTW %s, %s", vnniColAddr(0, off), x(dst))
	g.p("VPBROADCASTW %s, %s", vnniColAddr(1, off), x(tmp))
	g.p("VINSERTI32X4 $1, %s, %s, %s", x(tmp), y(dst), y(dst))
	g.p("VCVTPH2PS %s, %s", y(dst), z(dst))
}

// kernelQ4KVNNI emits qdot<NAME>Tile1 (rows = 1: the rows a batch leaves
// past its groups of four; kernelQ4KTile takes the four): dst[r*ldd+j] =
// x_r · w_j for rows of activations (k apart) and n columns of Q4_K or
// Q5_K weights (n even), two columns at a time.
//
// Per super-block and column, the 32-byte part cp of the levels is
// broadcast to both halves of a zmm, its low nibbles (sub-block 2cp) kept
// in the low half and its high nibbles (sub-block 2cp+1) in the high half;
// VPERMW spreads the two sub-blocks' scales likewise; per row, VPMADDUBSW
// against the row's 64 bytes of those sub-blocks and VPDPWSSD with the
// scales add scale × the 4-element sums to an int32 lane per half. The
// halves' sum is dotQ4_K's exact p[l]. The float32 steps then run on both
// columns at once: p·(d·dx) − n·(dmin·dx), each product and the
// difference rounded once, added to the accumulator. Q5_K's fifth bits
// join the nibbles as in its stream (fifthBitsZ, q5kTileRot: sub-block
// 2cp's bits in the low half, 2cp+1's in the high).
//
// Registers: SI row 0 of the activations at the super-block, R10 = k, R11
// = 3k; R9 column 0's block, BX the column stride; DI dst; CX columns
// left; DX = 4 × the super-block index, R8 = 4 × the super-block count;
// 0(SP) the tile's first column; AX, R12, R13, R14 scratch. Z0–Z7 the integer sums
// (row r, column c in Z(2r+c)), Z8–Z11 the rows' accumulators, Z12–Z13 the
// columns' scales and minima as words, Z14 levels, Z15 products, Z16–Z19
// the scale permutations, Z20 the nibble mask, Z21 the half shifts, Z22 the
// permuted scales, Z23–Z31 float32 scratch (Z24–Z26 Q5_K's fifth bits of
// the columns and their scratch while the levels are made).
func (g *gen) kernelQ4KVNNI(f q4kFormat, rows int) {
	name := tileName(f.name, rows)
	fmt.Fprintf(&g.buf, "\n// func %s(dst *float32, ldd int, x *int8, xd *float32, xs *int32, k int, w *byte, wstride int, n int, nb int)\n", name)
	fmt.Fprintf(&g.buf, "TEXT ·%s(SB), NOSPLIT, $16-80\n", name)
	g.p("MOVQ dst+0(FP), DI")
	g.p("MOVQ w+48(FP), R9")
	g.p("MOVQ wstride+56(FP), BX")
	g.p("MOVQ n+64(FP), CX")
	g.p("MOVQ nb+72(FP), R8")
	g.p("SHLQ $2, R8")
	g.p("MOVQ k+40(FP), R10")
	g.p("LEAQ (R10)(R10*2), R11")
	for cp := range 4 {
		g.p("VMOVDQU64 q4kScaleIdx<>+%d(SB), %s", 64*cp, z(16+cp))
	}
	g.p("VPBROADCASTD nibbleMask<>(SB), Z20")
	g.p("VMOVDQU64 halfShifts<>(SB), Z21")
	g.label(name + "_tile")
	g.p("CMPQ CX, $2")
	g.p("JLT %s_done", name)
	for r := range rows {
		g.p("VPXORD %s, %s, %s", z(8+r), z(8+r), z(8+r))
	}
	g.p("MOVQ R9, 0(SP)")
	g.p("LEAQ (R9)(BX*2), AX")
	g.p("MOVQ AX, 8(SP)")
	g.p("MOVQ x+16(FP), SI")
	g.p("XORQ DX, DX")
	g.label(name + "_loop")
	g.p("MOVQ 8(SP), AX")
	g.prefetchAhead("AX", 2*f.size)
	g.p("MOVQ AX, 8(SP)")
	for c := range 2 {
		g.unpackQ4KScales(c, 12+c)
		if f.five {
			g.p("VBROADCASTI64X4 %s, %s", vnniColAddr(c, q5kHigh), z(24+c))
		}
	}
	for i := range 8 {
		g.p("VPXORD %s, %s, %s", z(i), z(i), z(i))
	}
	for cp := range 4 {
		for c := range 2 {
			g.p("VBROADCASTI64X4 %s, Z14", vnniColAddr(c, f.qs+32*cp))
			g.p("VPSRLVW Z21, Z14, Z14")
			g.p("VPANDD Z20, Z14, Z14")
			if f.five {
				g.fifthBitsZ(fmt.Sprintf("q5kTileRot<>+%d(SB)", 64*cp), 24+c, 14, 26)
			}
			g.p("VPERMW %s, %s, Z22", z(12+c), z(16+cp))
			for r := range rows {
				g.p("VPMADDUBSW %s, Z14, Z15", vnniRowAddr(r, 64*cp))
				g.p("VPDPWSSD Z22, Z15, %s", z(2*r+c))
			}
		}
	}
	// Both columns' d and dmin, and their minima as int32.
	g.halfPair(0, 23, 31)
	g.halfPair(2, 24, 31)
	g.p("VEXTRACTI32X4 $1, Y12, X25")
	g.p("VPMOVZXWD X25, Y25")
	g.p("VEXTRACTI128 $1, Y13, X14")
	g.p("VPMOVZXWD X14, Y14")
	g.p("VINSERTI64X4 $1, Y14, Z25, Z25")
	// Row r's scale at xd + DX + r·R8, its sums at xs + 8·DX + 8r·R8.
	g.p("MOVQ xd+24(FP), AX")
	g.p("ADDQ DX, AX")
	g.p("MOVQ xs+32(FP), R12")
	g.p("LEAQ (R12)(DX*8), R12")
	for r := range rows {
		if r > 0 {
			g.p("ADDQ R8, AX")
			g.p("LEAQ (R12)(R8*8), R12")
		}
		// p of both columns: the halves of Z(2r) and Z(2r+1) summed.
		g.p("VSHUFI64X2 $0x44, %s, %s, Z29", z(2*r+1), z(2*r))
		g.p("VSHUFI64X2 $0xee, %s, %s, Z31", z(2*r+1), z(2*r))
		g.p("VPADDD Z31, Z29, Z29")
		g.p("VBROADCASTI64X4 (R12), Z30")
		g.p("VPMULLD Z25, Z30, Z30")
		g.p("VBROADCASTSS (AX), Z26")
		g.p("VMULPS Z26, Z23, Z27")
		g.p("VMULPS Z26, Z24, Z28")
		g.p("VCVTDQ2PS Z29, Z29")
		g.p("VMULPS Z27, Z29, Z29")
		g.p("VCVTDQ2PS Z30, Z30")
		g.p("VMULPS Z28, Z30, Z30")
		g.p("VSUBPS Z30, Z29, Z29")
		g.p("VADDPS Z29, %s, %s", z(8+r), z(8+r))
	}
	g.p("ADDQ $256, SI")
	g.p("ADDQ $%d, R9", f.size)
	g.p("ADDQ $4, DX")
	g.p("CMPQ DX, R8")
	g.p("JLT %s_loop", name)
	g.vnniStore(rows, func(r, _ int) int { return 8 + r }, 1)
	g.tileEnd(name, 2)
}

// kernelQ6KVNNI emits qdotQ6_KTile: four rows of activations (k apart)
// by n columns of Q6_K weights (n even), two columns at a time, as
// kernelQ4KVNNI: each zmm holds two consecutive 32-element parts of a
// super-block (the 64 bytes of their low nibbles are contiguous, their
// high bits one 32-byte run shifted per half), and per row VPMADDUBSW of
// the levels and of 32 against the row's 64 bytes, subtracted, gives
// Σ(q−32)·x in exact pairs, which VPDPWSSD scales (VPERMW spreads the
// parts' four 16-element scales) and sums. The halves' sum is dotQ6_K's
// p[l]; acc += p·(d·dx), each product rounded once.
//
// The four-row tile reads the columns' levels as qdotQ6_KCols laid them
// out (q6kLevels) in its scratch, once for every group of four rows that
// passes over the columns, where each group's tile unpacked them again
// (nine steps a column and part pair: 18% of its time at 256 rows).
//
// Registers as kernelQ4KVNNI's; Z12–Z13 the columns' scales as words,
// Z20 the nibble mask, Z21 the high-bit mask, Z22 the byte 32, Z24–Z27 the
// rows' 32·x pairs, Z28 the permuted scales; R13 (four rows) the tile's
// levels.
func (g *gen) kernelQ6KVNNI(rows int) {
	name := tileName("Q6_K", rows)
	prepared := rows > 1
	if prepared {
		fmt.Fprintf(&g.buf, "\n// func %s(dst *float32, ldd int, x *int8, xd *float32, k int, w *byte, wstride int, n int, nb int, scratch *int32)\n", name)
		fmt.Fprintf(&g.buf, "TEXT ·%s(SB), NOSPLIT, $16-80\n", name)
		g.p("MOVQ scratch+72(FP), R13")
		g.p("ADDQ $63, R13")
		g.p("ANDQ $-64, R13")
	} else {
		fmt.Fprintf(&g.buf, "\n// func %s(dst *float32, ldd int, x *int8, xd *float32, k int, w *byte, wstride int, n int, nb int)\n", name)
		fmt.Fprintf(&g.buf, "TEXT ·%s(SB), NOSPLIT, $16-72\n", name)
	}
	g.tile32Args()
	for pp := range 4 {
		g.p("VMOVDQU64 q6kScaleIdx<>+%d(SB), %s", 64*pp, z(16+pp))
	}
	g.p("VPBROADCASTD nibbleMask<>(SB), Z20")
	g.p("VPBROADCASTD bits45<>(SB), Z21")
	g.p("VPBROADCASTD thirtyTwos<>(SB), Z22")
	g.label(name + "_tile")
	g.p("CMPQ CX, $2")
	g.p("JLT %s_done", name)
	for r := range rows {
		g.p("VPXORD %s, %s, %s", z(8+r), z(8+r), z(8+r))
	}
	g.p("MOVQ R9, 0(SP)")
	g.p("LEAQ (R9)(BX*2), AX")
	g.p("MOVQ AX, 8(SP)")
	g.p("MOVQ x+16(FP), SI")
	g.p("XORQ DX, DX")
	g.label(name + "_loop")
	g.p("MOVQ 8(SP), AX")
	g.prefetchAhead("AX", 2*210)
	g.p("MOVQ AX, 8(SP)")
	for c := range 2 {
		g.p("VPMOVSXBW %s, %s", vnniColAddr(c, 192), y(12+c))
	}
	for i := range 8 {
		g.p("VPXORD %s, %s, %s", z(i), z(i), z(i))
	}
	for pp := range 4 {
		for row := range rows {
			g.p("VPMADDUBSW %s, Z22, %s", vnniRowAddr(row, 64*pp), z(24+row))
		}
		for c := range 2 {
			if prepared {
				g.p("VMOVDQU64 %d(R13), Z14", q6kLevelsAt(c, pp))
			} else {
				g.q6kLevels(c, pp, 14, 15)
			}
			g.p("VPERMW %s, %s, Z28", z(12+c), z(16+pp))
			for row := range rows {
				g.p("VPMADDUBSW %s, Z14, Z15", vnniRowAddr(row, 64*pp))
				g.p("VPSUBW %s, Z15, Z15", z(24+row))
				g.p("VPDPWSSD Z28, Z15, %s", z(2*row+c))
			}
		}
	}
	g.halfPair(208, 23, 31)
	g.p("MOVQ xd+24(FP), AX")
	g.p("ADDQ DX, AX")
	for r := range rows {
		if r > 0 {
			g.p("ADDQ R8, AX")
		}
		g.p("VSHUFI64X2 $0x44, %s, %s, Z29", z(2*r+1), z(2*r))
		g.p("VSHUFI64X2 $0xee, %s, %s, Z31", z(2*r+1), z(2*r))
		g.p("VPADDD Z31, Z29, Z29")
		g.p("VBROADCASTSS (AX), Z26")
		g.p("VMULPS Z26, Z23, Z27")
		g.p("VCVTDQ2PS Z29, Z29")
		g.p("VMULPS Z27, Z29, Z29")
		g.p("VADDPS Z29, %s, %s", z(8+r), z(8+r))
	}
	g.p("ADDQ $256, SI")
	g.p("ADDQ $210, R9")
	if prepared {
		g.p("ADDQ $%d, R13", q6kRecord)
	}
	g.p("ADDQ $4, DX")
	g.p("CMPQ DX, R8")
	g.p("JLT %s_loop", name)
	g.vnniStore(rows, func(r, _ int) int { return 8 + r }, 1)
	g.tileEnd(name, 2)
}

// kernelQ8Q8VNNI emits qdotQ8Q8Tile: four rows of activations (k apart)
// by n columns of MatMulTQ8Q8's int8 weights (plain rows of k bytes,
// wstride apart, n a multiple of 4), four columns at a time, each zmm
// holding two columns' eight lanes (column 2p in lanes 0–7, 2p+1 in 8–15).
// The levels are made unsigned (plus 128: their sign bit flipped) and the
// row's 32 bytes broadcast to both halves; VPDPBUSD adds the 4-element sums
// of the unsigned levels times x to −128·Σx (per row and block), which is
// the exact Σ w·x of each lane. Then, as matmulTQ8Q8Generic: converted,
// times the two blocks' scales rounded once, rounded, added to the lane's
// accumulator, block after block.
//
// Registers: SI row 0 of the activations at the block, R10 = k, R11 = 3k;
// R9 column 0's block, R12 column 3's, BX the column stride; R13 column
// 0's scale of the block, R14 = 4·nb (the columns' scales lie nb apart),
// 8(SP) the tile's first; DI dst; CX columns left; DX = 4 × the block
// index, R8 = 4 × the block count; 0(SP) the tile's first column; AX
// scratch. Z0–Z7 the accumulators (row r, column pair p in Z(2r+p)),
// Z8–Z9 the pairs' unsigned levels, Z10–Z11 their scales, Z12 the row's
// bytes, Z13 its −128·Σx, Z14 its scale, Z15–Z16 the pairs' sums and
// scales, Z17–Z18 scratch, Z20 the sign bits, Z23 zero.
func (g *gen) kernelQ8Q8VNNI() {
	const rows, name = 4, "qdotQ8Q8Tile"
	fmt.Fprintf(&g.buf, "\n// func %s(dst *float32, ldd int, x *int8, xd *float32, k int, w *byte, wstride int, n int, nb int, ws *float32)\n", name)
	fmt.Fprintf(&g.buf, "TEXT ·%s(SB), NOSPLIT, $16-80\n", name)
	g.p("MOVQ ws+72(FP), R13")
	g.p("MOVQ nb+64(FP), R14")
	g.p("SHLQ $2, R14")
	g.tile32Args()
	g.p("VPBROADCASTD signBits<>(SB), Z20")
	g.p("VPXORD Z23, Z23, Z23")
	g.label(name + "_tile")
	g.p("CMPQ CX, $4")
	g.p("JLT %s_done", name)
	for i := range 8 {
		g.p("VPXORD %s, %s, %s", z(i), z(i), z(i))
	}
	g.p("MOVQ R9, 0(SP)")
	g.p("MOVQ R13, 8(SP)")
	g.p("LEAQ (R9)(BX*2), R12")
	g.p("ADDQ BX, R12")
	g.p("MOVQ x+16(FP), SI")
	g.p("XORQ DX, DX")
	g.label(name + "_loop")
	cols := [...]string{"(R9)", "(R9)(BX*1)", "(R9)(BX*2)", "(R12)"}
	for p := range 2 {
		lv := 8 + p
		g.p("VMOVDQU32 %s, Y17", cols[2*p])
		g.p("VINSERTI64X4 $1, %s, Z17, Z17", cols[2*p+1])
		g.p("VPXORD Z20, Z17, %s", z(lv))
		// The columns' float32 scales, nb·4 bytes (R14) apart.
		if p == 0 {
			g.p("VBROADCASTSS (R13), Y10")
			g.p("VBROADCASTSS (R13)(R14*1), Y18")
		} else {
			g.p("LEAQ (R13)(R14*2), AX")
			g.p("VBROADCASTSS (AX), Y11")
			g.p("VBROADCASTSS (AX)(R14*1), Y18")
		}
		g.p("VINSERTF32X8 $1, Y18, Z%d, Z%d", 10+p, 10+p)
	}
	g.p("MOVQ xd+24(FP), AX")
	g.p("ADDQ DX, AX")
	for r := range rows {
		if r > 0 {
			g.p("ADDQ R8, AX")
		}
		g.p("VBROADCASTI64X4 %s, Z12", vnniRowAddr(r, 0))
		g.p("VPXORD Z13, Z13, Z13")
		g.p("VPDPBUSD Z12, Z20, Z13")
		g.p("VPSUBD Z13, Z23, Z13")
		g.p("VBROADCASTSS (AX), Z14")
		for p := range 2 {
			g.p("VMOVDQA64 Z13, Z15")
			g.p("VPDPBUSD Z12, %s, Z15", z(8+p))
			g.p("VCVTDQ2PS Z15, Z15")
			g.p("VMULPS Z14, %s, Z16", z(10+p))
			g.p("VMULPS Z16, Z15, Z15")
			g.p("VADDPS Z15, %s, %s", z(2*r+p), z(2*r+p))
		}
	}
	g.p("ADDQ $32, SI")
	g.p("ADDQ $32, R9")
	g.p("ADDQ $32, R12")
	g.p("ADDQ $4, R13")
	g.p("ADDQ $4, DX")
	g.p("CMPQ DX, R8")
	g.p("JLT %s_loop", name)
	g.vnniStore(rows, func(r, p int) int { return 2*r + p }, 2)
	g.nextTile(4)
	g.p("MOVQ 8(SP), R13")
	g.p("LEAQ (R13)(R14*4), R13")
	g.tileLoopEnd(name)
}

// tile32Args loads the arguments that the tiles whose signature begins
// (dst, ldd, x, xd, k, w, wstride, n, nb) share: DI dst, R9 w, BX
// wstride, CX n, R8 = 4·nb, R10 = k, R11 = 3k.
func (g *gen) tile32Args() {
	g.p("MOVQ dst+0(FP), DI")
	g.p("MOVQ w+40(FP), R9")
	g.p("MOVQ wstride+48(FP), BX")
	g.p("MOVQ n+56(FP), CX")
	g.p("MOVQ nb+64(FP), R8")
	g.p("SHLQ $2, R8")
	g.p("MOVQ k+32(FP), R10")
	g.p("LEAQ (R10)(R10*2), R11")
}

// prefetchAhead asks for the cache lines of the next step of a stream of
// weights at reg, step bytes, and advances reg: a tile of neighbouring
// columns reads them as short streams that the hardware prefetcher does
// not follow, so the tile reads the next tile's bytes (one stream) ahead.
// Prefetches 64 bytes apart from each step's start, to the step's end,
// miss no line of the stream.
func (g *gen) prefetchAhead(reg string, step int) {
	g.prefetchAheadTo("PREFETCHT0", reg, step)
}

// prefetchAheadTo is prefetchAhead with the prefetch instruction op: to
// the first-level cache (PREFETCHT0) or the second (PREFETCHT1).
func (g *gen) prefetchAheadTo(op, reg string, step int) {
	for off := 0; off < step; off += 64 {
		g.p("%s %d(%s)", op, off, reg)
	}
	g.p("ADDQ $%d, %s", step, reg)
}

// vnniConstants are the tables of the VNNI tiles: for part cp of a Q4_K
// super-block, the word indices that spread scale 2cp over the low half of
// a zmm and scale 2cp+1 over the high half; the word shifts that keep a
// byte's low nibble in the low half and move its high nibble down in the
// high half.
func vnniConstants() string {
	var b strings.Builder
	for cp := range 4 {
		for q := range 8 {
			v := uint64(2*cp + q/4)
			fmt.Fprintf(&b, "DATA q4kScaleIdx<>+%d(SB)/8, $0x%016x\n", 64*cp+8*q, v*0x0001000100010001)
		}
	}
	b.WriteString("GLOBL q4kScaleIdx<>(SB), RODATA|NOPTR, $256\n\n")
	for q := range 8 {
		v := uint64(0)
		if q >= 4 {
			v = 4
		}
		fmt.Fprintf(&b, "DATA halfShifts<>+%d(SB)/8, $0x%016x\n", 8*q, v*0x0001000100010001)
	}
	b.WriteString("GLOBL halfShifts<>(SB), RODATA|NOPTR, $64\n\n")
	b.WriteString(fifthBitRotations("q5kTileRot", [4][2]int{{0, 1}, {2, 3}, {4, 5}, {6, 7}}))
	// Q6_K: for the part pair pp, the words of scales 4pp … 4pp+3, eight
	// each; the shifts of the high bits of parts 0, 1 (pairs 0 and 2) and
	// 2, 3 (pairs 1 and 3).
	for pp := range 4 {
		for q := range 8 {
			v := uint64(4*pp + q/2)
			fmt.Fprintf(&b, "DATA q6kScaleIdx<>+%d(SB)/8, $0x%016x\n", 64*pp+8*q, v*0x0001000100010001)
		}
	}
	b.WriteString("GLOBL q6kScaleIdx<>(SB), RODATA|NOPTR, $256\n\n")
	for pair := range 2 {
		for q := range 8 {
			v := uint64(4*pair + 2*(q/4))
			fmt.Fprintf(&b, "DATA q6kHighShifts<>+%d(SB)/8, $0x%016x\n", 64*pair+8*q, v*0x0001000100010001)
		}
	}
	b.WriteString("GLOBL q6kHighShifts<>(SB), RODATA|NOPTR, $128\n\n")
	return b.String()
}

// fifthBitsZ ORs into z(dst), the nibbles of Q5_K levels, their fifth
// bits: z(qh), the 32 bytes of fifth bits in both halves, rotated by the
// counts at rot (each dword: a rotation by 4 − j mod 32 brings bit j of
// each of its bytes to bit 4, left or right) and masked to bit 4; z(tmp)
// scratch.
func (g *gen) fifthBitsZ(rot string, qh, dst, tmp int) {
	g.p("VPROLVD %s, %s, %s", rot, z(qh), z(tmp))
	g.p("VPTERNLOGD.BCST $0xf8, bit4<>(SB), %s, %s", z(tmp), z(dst)) // dst | tmp&bit4
}

// fifthBitRotations is a table of 64-byte rows of dword rotation counts
// for fifthBitsZ, row t bringing bit pairs[t][0] of each byte to bit 4 in
// the low half of a zmm and bit pairs[t][1] in the high half: the
// sub-blocks whose levels the halves hold.
func fifthBitRotations(name string, pairs [4][2]int) string {
	var b strings.Builder
	for t, pr := range pairs {
		for q := range 8 {
			v := uint64((4-pr[q/4])&31) * 0x0000000100000001
			fmt.Fprintf(&b, "DATA %s<>+%d(SB)/8, $0x%016x\n", name, 64*t+8*q, v)
		}
	}
	fmt.Fprintf(&b, "GLOBL %s<>(SB), RODATA|NOPTR, $256\n\n", name)
	return b.String()
}

// streamStore stores the sums of y(accs), the streams' columns, 0(SP)
// bytes of dst apart from DI, and moves DI and R9 to the next column.
func (g *gen) streamStore(pfx string, accs []int) {
	g.label(pfx + "_store")
	g.p("MOVQ DI, AX")
	for s, a := range accs {
		if s > 0 {
			g.p("ADDQ 0(SP), AX")
		}
		g.reduceStore(a, 14, 0)
	}
	g.p("ADDQ $4, DI")
	g.p("DECQ CX")
	g.p("ADDQ BX, R9")
}

// q6kRecord is the bytes of a pair of Q6_K columns' levels a super-block as
// qdotQ6_KCols lays them out: column c's levels of part pair pp (as
// q6kLevels sets them) at q6kLevelsAt(c, pp).
const q6kRecord = 512

func q6kLevelsAt(c, pp int) int { return 256*c + 64*pp }

// q6kLevels sets z(dst) to the 64 levels (0–63) of parts 2pp and 2pp+1 of
// the Q6_K super-block of column c: the low nibbles, contiguous, and the
// high bits, one 32-byte run shifted per half (Z20 the nibble mask, Z21
// the high-bit mask; z(tmp) scratch).
func (g *gen) q6kLevels(c, pp, dst, tmp int) {
	h, r := pp/2, 2*(pp%2)
	g.p("VMOVDQU64 %s, %s", vnniColAddr(c, 64*h), z(dst))
	if r == 2 {
		g.p("VPSRLW $4, %s, %s", z(dst), z(dst))
	}
	g.p("VPANDD Z20, %s, %s", z(dst), z(dst))
	g.p("VBROADCASTI64X4 %s, %s", vnniColAddr(c, 128+32*h), z(tmp))
	g.p("VPSRLVW q6kHighShifts<>+%d(SB), %s, %s", 64*(r/2), z(tmp), z(tmp))
	g.p("VPSLLW $4, %s, %s", z(tmp), z(tmp))
	g.p("VPANDD Z21, %s, %s", z(tmp), z(tmp))
	g.p("VPORD %s, %s, %s", z(tmp), z(dst), z(dst))
}

// kernelQ6KCols emits qdotQ6_KCols (pairColumns): the levels of n columns
// of Q6_K weights, q6kRecord bytes a pair and super-block, where the
// four-row qdotQ6_KTile reads them (from the scratch, 64-byte aligned).
func (g *gen) kernelQ6KCols() {
	g.pairColumns("qdotQ6_KCols", 210, q6kRecord, func() {
		g.p("MOVQ scratch+0(FP), R10")
		g.p("ADDQ $63, R10")
		g.p("ANDQ $-64, R10")
		g.p("VPBROADCASTD nibbleMask<>(SB), Z20")
		g.p("VPBROADCASTD bits45<>(SB), Z21")
	}, func() {
		for c := range 2 {
			for pp := range 4 {
				g.q6kLevels(c, pp, 14, 15)
				g.p("VMOVDQU64 Z14, %d(R10)", q6kLevelsAt(c, pp))
			}
		}
	})
}
