//go:build ignore

// The AVX-512 tile of gen_kernels.go: 8 rows of a by 6 rows of b, each zmm
// accumulator holding the 8 lanes of two output rows (rows 2p and 2p+1 of
// the tile, one column), so every element keeps the 8-lane order of the AVX2
// kernels and comes out bit-identical to them, with twice the lanes per
// multiply-add.
package main

import "fmt"

func z(i int) string { return fmt.Sprintf("Z%d", i) }

// zmm registers: accumulators Z0..Z(4C-1), row pairs of a Z24..Z27, the
// broadcast chunk of b Z28, the tail mask Z29; Y24/X25 are reduction
// scratch once the loop is done.
const (
	zPair = 24
	zB    = 28
	zMask = 29
)

// Pointer registers: rows 0, 3 and 6 of a, columns 0 and 3 of b; every other
// row or column is one of them plus 1, 2 or 4 row strides (zLA for a, zLB
// for b).
const (
	zA0, zA3, zA6, zB0, zB3, zLA, zLB, zCount = "SI", "DI", "R8", "R9", "R10", "R11", "R12", "DX"
)

func zAAddr(r int) string {
	return [...]string{"(SI)", "(SI)(R11*1)", "(SI)(R11*2)", "(DI)", "(SI)(R11*4)", "(DI)(R11*2)", "(R8)", "(R8)(R11*1)"}[r]
}

func zBAddr(c int) string {
	return [...]string{"(R9)", "(R9)(R12*1)", "(R9)(R12*2)", "(R10)", "(R9)(R12*4)", "(R10)(R12*2)"}[c]
}

// The prefetch pointers: the next column tile's b rows 0 and 3 (it starts
// 6 rows past this one's), so that rows coming from beyond the caches (a
// batch of decode steps streams the weights once) arrive while this tile
// computes, as the grouped AVX2 tile does.
const zPF0, zPF3 = "R13", "R14"

// zChunk emits one 8-element step of an 8×cols tile; the unmasked steps of
// a 6-column tile also prefetch the next tile's 32 bytes of each column.
func (g *gen) zChunk(cols int, masked bool) {
	if cols == 6 && !masked {
		for _, addr := range []string{"(R13)", "(R13)(R12*1)", "(R13)(R12*2)", "(R14)", "(R13)(R12*4)", "(R14)(R12*2)"} {
			g.p("PREFETCHT0 %s", addr)
		}
	}
	for p := 0; p < 4; p++ {
		g.p("VMOVUPS %s, %s", zAAddr(2*p), y(zPair+p))
		g.p("VINSERTF32X8 $1, %s, %s, %s", zAAddr(2*p+1), z(zPair+p), z(zPair+p))
		if masked {
			g.p("VANDPS %s, %s, %s", z(zMask), z(zPair+p), z(zPair+p))
		}
	}
	for c := 0; c < cols; c++ {
		g.p("VBROADCASTF32X8 %s, %s", zBAddr(c), z(zB))
		if masked {
			g.p("VANDPS %s, %s, %s", z(zMask), z(zB), z(zB))
		}
		for p := 0; p < 4; p++ {
			g.p("VFMADD231PS %s, %s, %s", z(zB), z(zPair+p), z(p*cols+c))
		}
	}
}

// zReduce8 folds the 8 lanes of ymm v as reduceStore does and stores lane 0.
func (g *gen) zReduce8(v int, dst string) {
	t := x(25)
	g.p("VEXTRACTF32X4 $1, %s, %s", y(v), t)
	g.p("VADDPS %s, %s, %s", t, x(v), x(v))
	g.p("VMOVHLPS %s, %s, %s", x(v), x(v), t)
	g.p("VADDPS %s, %s, %s", t, x(v), x(v))
	g.p("VMOVSHDUP %s, %s", x(v), t)
	g.p("VADDSS %s, %s, %s", t, x(v), x(v))
	g.p("VMOVSS %s, %s", x(v), dst)
}

// zTile emits the 8×cols tile's sweep over the columns.
func (g *gen) zTile(name string, cols int) {
	pfx := fmt.Sprintf("%s_8x%d", name, cols)
	g.label(pfx + "_tile")
	g.p("CMPQ %s, $%d", slotCols, cols)
	g.p("JLT %s_done", pfx)
	g.p("MOVQ %s, %s", slotBRow, zLB)
	g.p("MOVQ %s, %s", slotARow, zLA)
	g.p("MOVQ %s, %s", slotB, zB0)
	g.p("LEAQ (%s)(%s*2), %s", zB0, zLB, zB3)
	g.p("ADDQ %s, %s", zLB, zB3)
	if cols == 6 {
		g.p("LEAQ (%s)(%s*2), %s", zB3, zLB, zPF0)
		g.p("ADDQ %s, %s", zLB, zPF0)
		g.p("LEAQ (%s)(%s*2), %s", zPF0, zLB, zPF3)
		g.p("ADDQ %s, %s", zLB, zPF3)
	}
	g.p("MOVQ a+16(FP), %s", zA0)
	g.p("LEAQ (%s)(%s*2), %s", zA0, zLA, zA3)
	g.p("ADDQ %s, %s", zLA, zA3)
	g.p("LEAQ (%s)(%s*2), %s", zA3, zLA, zA6)
	g.p("ADDQ %s, %s", zLA, zA6)
	for i := 0; i < 4*cols; i++ {
		g.p("VPXORD %s, %s, %s", z(i), z(i), z(i))
	}
	g.p("MOVQ %s, %s", slotKMain, zCount)
	g.p("SHRQ $3, %s", zCount)
	g.label(pfx + "_loop")
	g.zChunk(cols, false)
	advanced := []string{zA0, zA3, zA6, zB0, zB3}
	if cols == 6 {
		advanced = append(advanced, zPF0, zPF3)
	}
	for _, r := range advanced {
		g.p("ADDQ $32, %s", r)
	}
	g.p("DECQ %s", zCount)
	g.p("JNZ %s_loop", pfx)
	g.p("CMPQ %s, $0", slotAux3)
	g.p("JEQ %s_reduce", pfx)
	// Step back so the last chunk ends at k, as the AVX2 tail does.
	g.p("MOVQ %s, AX", slotAux2)
	for _, r := range []string{zA0, zA3, zA6, zB0, zB3} {
		g.p("SUBQ AX, %s", r)
	}
	g.zChunk(cols, true)
	g.label(pfx + "_reduce")
	g.p("MOVQ %s, AX", slotDst)
	g.p("MOVQ %s, CX", slotLdd)
	if cols == 6 {
		g.zReduceTile6()
		g.advance(cols)
		g.p("JMP %s_tile", pfx)
		g.label(pfx + "_done")
		return
	}
	for p := 0; p < 4; p++ {
		for c := 0; c < cols; c++ {
			acc := p*cols + c
			g.p("VEXTRACTF32X8 $1, %s, %s", z(acc), y(24))
			g.zReduce8(acc, fmt.Sprintf("%d(AX)", 4*c))
			g.zReduce8(24, fmt.Sprintf("%d(AX)(CX*1)", 4*c))
		}
		g.p("LEAQ (AX)(CX*2), AX")
	}
	g.advance(cols)
	g.p("JMP %s_tile", pfx)
	g.label(pfx + "_done")
}

// zKernel emits matmulTRows8AVX512, the 8-row kernel of the column-blocked
// order (same arguments as matmulTRows4).
func (g *gen) zKernel() {
	name := "matmulTRows8AVX512"
	g.raw(fmt.Sprintf("\n// func %s(dst *float32, ldd int, a *float32, lda int, b *float32, ldb int, n int, k int)\n", name))
	g.raw("// Requires k >= 8 and AVX-512 F, DQ and VL.\n")
	g.raw(fmt.Sprintf("TEXT ·%s(SB), NOSPLIT, $%d-64\n", name, frameBytes))
	g.p("MOVQ k+56(FP), CX")
	g.p("MOVQ CX, AX")
	g.p("ANDQ $-8, AX")
	g.p("MOVQ AX, %s", slotKMain)
	g.p("MOVQ CX, AX")
	g.p("ANDQ $7, AX")
	g.p("MOVQ AX, %s", slotAux3)
	g.p("LEAQ tailMask<>(SB), DX")
	g.p("LEAQ (DX)(AX*4), DX")
	g.p("VMOVUPS (DX), %s", y(zMask))
	g.p("VINSERTF32X8 $1, (DX), %s, %s", z(zMask), z(zMask))
	g.p("NEGQ AX")
	g.p("ADDQ $8, AX")
	g.p("SHLQ $2, AX")
	g.p("MOVQ AX, %s", slotAux2) // bytes to step back for the tail: (8 - k mod 8)·4
	g.p("MOVQ ldb+40(FP), AX")
	g.p("SHLQ $2, AX")
	g.p("MOVQ AX, %s", slotBRow)
	g.p("MOVQ lda+24(FP), AX")
	g.p("SHLQ $2, AX")
	g.p("MOVQ AX, %s", slotARow)
	g.p("MOVQ ldd+8(FP), AX")
	g.p("SHLQ $2, AX")
	g.p("MOVQ AX, %s", slotLdd)
	g.p("MOVQ b+32(FP), AX")
	g.p("MOVQ AX, %s", slotB)
	g.p("MOVQ dst+0(FP), AX")
	g.p("MOVQ AX, %s", slotDst)
	g.p("MOVQ n+48(FP), AX")
	g.p("MOVQ AX, %s", slotCols)
	g.zTile(name, 6)
	g.zTile(name, 1)
	g.p("VZEROUPPER")
	g.p("RET")
}

// The 8×6 tile's 24 accumulators fold together, a few instructions for
// sixteen elements where one element took six: each element's lanes go
// through zReduce8's additions in zReduce8's order (additions of the same
// two numbers, only gathered from other places), so the same bits.
//
// Accumulator p·6+c holds rows 2p and 2p+1 of column c. Step 1 takes the
// 128-bit halves of two columns' lanes (VSHUFF32X4) and adds them: S(p,q)
// holds v_i = l_i + l_(i+4) of (2p,2q), (2p+1,2q), (2p,2q+1), (2p+1,2q+1),
// one element a 128-bit block. Step 2 takes two S's v0,v1 and v2,v3
// (VSHUFPS) and adds them: each block holds v0+v2 and v1+v3 of both S's
// elements. Step 3 adds those pairs of two step-2 results: each block holds
// its element's sum in four S's. The S's are taken in the order of
// zFoldOrder, so the 16-element results F0, F1, F2 hold rows 0–3, 2–5 and
// 4–7 of the tile; each row's six columns are gathered from two of them
// (VPERMI2PS, indices at zRowIndex<>) and stored under a mask of six lanes.

// zFoldOrder lists the S's (p, q) as step 2 pairs them (0 with 1, 2 with 3,
// …) and step 3 pairs their sums: F_f is made of S's 4f to 4f+3.
var zFoldOrder = [12][2]int{{0, 0}, {0, 1}, {0, 2}, {1, 0}, {1, 1}, {1, 2}, {2, 0}, {2, 1}, {2, 2}, {3, 0}, {3, 1}, {3, 2}}

// zRowTables is the pair of results (F_a, F_a+1) row r of the tile is
// gathered from: a = 0 for rows 0–3, 1 for rows 4–7.
func zRowTables(r int) int { return r / 4 }

// zRowIndex returns the VPERMI2PS indices that gather row r's six
// columns from F_a (0–15) and F_a+1 (16–31).
func zRowIndex(r int) [16]int {
	var idx [16]int
	p, s := r/2, r%2
	for c := range 6 {
		q, u := c/2, c%2
		at := -1
		for i, pq := range zFoldOrder {
			if pq == [2]int{p, q} {
				at = i
			}
		}
		f, t, j := at/4, at%4, s+2*u
		idx[c] = 4*j + t + 16*(f-zRowTables(r))
	}
	return idx
}

// zRowIndexTable emits zRowIndex<>, the eight rows' indices.
func (g *gen) zRowIndexTable() {
	g.raw("\n// zRowIndex<>: the VPERMI2PS indices of each row of the 8×6 AVX-512 tile\n// (gen_kernels_avx512.go, zReduceTile6).\n")
	for r := range 8 {
		for l, v := range zRowIndex(r) {
			g.raw(fmt.Sprintf("DATA zRowIndex<>+%d(SB)/4, $%d\n", 64*r+4*l, v))
		}
	}
	g.raw("GLOBL zRowIndex<>(SB), RODATA|NOPTR, $512\n")
}

// zReduceTile6 folds the 8×6 tile's accumulators and stores its 48
// elements (AX = dst row 0 at the tile's first column, CX = bytes between
// dst rows).
func (g *gen) zReduceTile6() {
	acc := func(p, c int) string { return z(p*6 + c) }
	lo, hi := z(24), z(25)
	// Step 1, in place of the pair's first column.
	for p := range 4 {
		for q := range 3 {
			a, b := acc(p, 2*q), acc(p, 2*q+1)
			g.p("VSHUFF32X4 $0x88, %s, %s, %s", b, a, lo)
			g.p("VSHUFF32X4 $0xdd, %s, %s, %s", b, a, hi)
			g.p("VADDPS %s, %s, %s", hi, lo, a)
		}
	}
	sReg := func(i int) string { return acc(zFoldOrder[i][0], 2*zFoldOrder[i][1]) }
	// Step 2: S's 2i and 2i+1, into S 2i's register.
	for i := 0; i < 12; i += 2 {
		g.p("VSHUFPS $0x44, %s, %s, %s", sReg(i+1), sReg(i), lo)
		g.p("VSHUFPS $0xee, %s, %s, %s", sReg(i+1), sReg(i), hi)
		g.p("VADDPS %s, %s, %s", hi, lo, sReg(i))
	}
	// Step 3: the sums of S's 4f, 4f+1 and 4f+2, 4f+3, into F_f's = S
	// 4f's register.
	for i := 0; i < 12; i += 4 {
		g.p("VSHUFPS $0x88, %s, %s, %s", sReg(i+2), sReg(i), lo)
		g.p("VSHUFPS $0xdd, %s, %s, %s", sReg(i+2), sReg(i), hi)
		g.p("VADDPS %s, %s, %s", hi, lo, sReg(i))
	}
	g.p("MOVL $0x3f, DX")
	g.p("KMOVW DX, K1")
	idx := z(26)
	for r := range 8 {
		a := zRowTables(r)
		g.p("VMOVUPS zRowIndex<>+%d(SB), %s", 64*r, idx)
		g.p("VPERMI2PS %s, %s, %s", sReg(4*(a+1)), sReg(4*a), idx)
		if r%2 == 0 {
			g.p("VMOVUPS %s, K1, (AX)", idx)
		} else {
			g.p("VMOVUPS %s, K1, (AX)(CX*1)", idx)
			g.p("LEAQ (AX)(CX*2), AX")
		}
	}
}
