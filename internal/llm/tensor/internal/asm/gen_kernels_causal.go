//go:build ignore

// The causal kernel of gen_kernels.go: consecutive rows of a whose sums grow
// by one element a row, as the weighted sums of values of a prompt's
// consecutive positions do.
package main

import "fmt"

// Stack slots of the growing-rows kernel.
const (
	slotGrowColBytes = "0(SP)" // bytes between b rows
	growFrame        = 8
)

// f32Growing4 emits name, four rows of MatMulT whose sums grow by one
// element a row: row r of dst is row r of a times b over the first k+r
// elements, two columns at a time (n even, k >= 8). Each element keeps the
// tiles' single 8-lane accumulator: the 8-element steps row 0's k shares
// with all four rows run once for the tile (b's chunks loaded once for the
// four rows, where a row at a time loads them four times), then each row
// its own last step (when k+r reaches it) and its masked tail at k+r−8,
// then the reduction; the same fused multiply-adds in the same order as
// matmulTRows1 and matmulTStream1 over k+r, so the same bits. No load
// passes a row's k+r elements.
func (g *gen) f32Growing4(name string) {
	g.raw(fmt.Sprintf("\n// func %s(dst *float32, ldd int, a *float32, lda int, b *float32, ldb int, n int, k int)\n", name))
	g.raw("// Requires n even and k >= 8.\n")
	g.raw(fmt.Sprintf("TEXT ·%s(SB), NOSPLIT, $%d-64\n", name, growFrame))
	aRegs := []string{"SI", "DI", "R8", "R9"}
	bRegs := []string{"R10", "R11"}
	acc := func(r, c int) string { return y(r*2 + c) }
	g.p("MOVQ lda+24(FP), CX")
	g.p("SHLQ $2, CX")
	g.p("MOVQ a+16(FP), SI")
	for r := 1; r < 4; r++ {
		g.p("LEAQ (%s)(CX*1), %s", aRegs[r-1], aRegs[r])
	}
	g.p("MOVQ ldb+40(FP), AX")
	g.p("SHLQ $2, AX")
	g.p("MOVQ AX, %s", slotGrowColBytes)
	g.p("MOVQ b+32(FP), R10")
	g.p("LEAQ (R10)(AX*1), R11")
	g.p("MOVQ ldd+8(FP), R12")
	g.p("SHLQ $2, R12")
	g.p("MOVQ dst+0(FP), BX")
	g.p("MOVQ n+48(FP), DX")
	g.p("SHRQ $1, DX")
	g.p("MOVQ k+56(FP), CX")
	g.p("ANDQ $-8, CX") // the steps every row takes
	g.label(name + "_column")
	g.p("TESTQ DX, DX")
	g.p("JEQ %s_done", name)
	for i := range 8 {
		g.p("VXORPS %s, %s, %s", y(i), y(i), y(i))
	}
	g.p("XORQ AX, AX")
	g.label(name + "_step")
	for r, a := range aRegs {
		g.p("VMOVUPS (%s)(AX*4), %s", a, y(8+r))
	}
	for c, b := range bRegs {
		g.p("VMOVUPS (%s)(AX*4), %s", b, y(12+c))
	}
	for r := range aRegs {
		for c := range bRegs {
			g.p("VFMADD231PS %s, %s, %s", y(12+c), y(8+r), acc(r, c))
		}
	}
	g.p("ADDQ $8, AX")
	g.p("CMPQ AX, CX")
	g.p("JLT %s_step", name)
	for r, a := range aRegs {
		pfx := fmt.Sprintf("%s_row%d", name, r)
		g.p("MOVQ k+56(FP), R14")
		if r > 0 {
			g.p("ADDQ $%d, R14", r)
		}
		// Row r's own last 8-element step, when k+r reaches past row 0's.
		g.p("MOVQ R14, AX")
		g.p("ANDQ $-8, AX")
		g.p("CMPQ AX, CX")
		g.p("JLE %s_tail", pfx)
		g.p("VMOVUPS (%s)(CX*4), Y14", a)
		for c, b := range bRegs {
			g.p("VFMADD231PS (%s)(CX*4), Y14, %s", b, acc(r, c))
		}
		g.label(pfx + "_tail")
		g.p("MOVQ R14, AX")
		g.p("ANDQ $7, AX")
		g.p("JEQ %s_end", pfx)
		g.p("LEAQ tailMask<>(SB), R13")
		g.p("LEAQ (R13)(AX*4), R13")
		g.p("SUBQ $8, R14")
		g.p("VMOVUPS (%s)(R14*4), Y14", a)
		g.p("VANDPS (R13), Y14, Y14")
		for c, b := range bRegs {
			g.p("VMOVUPS (%s)(R14*4), Y15", b)
			g.p("VANDPS (R13), Y15, Y15")
			g.p("VFMADD231PS Y15, Y14, %s", acc(r, c))
		}
		g.label(pfx + "_end")
	}
	g.p("MOVQ BX, AX")
	for r := range aRegs {
		for c := range bRegs {
			g.reduceLanes(r*2+c, 15)
			g.p("VMOVSS %s, %d(AX)", x(r*2+c), 4*c)
		}
		if r < 3 {
			g.p("ADDQ R12, AX")
		}
	}
	g.p("ADDQ $8, BX")
	g.p("MOVQ %s, AX", slotGrowColBytes)
	g.p("LEAQ (R10)(AX*2), R10")
	g.p("LEAQ (R10)(AX*1), R11")
	g.p("DECQ DX")
	g.p("JMP %s_column", name)
	g.label(name + "_done")
	g.p("VZEROUPPER")
	g.p("RET")
}
