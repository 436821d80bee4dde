//go:build ignore

// The AVX-512 products of gen_quant.go's half-precision weights (F16,
// BF16): four rows of activations (prefill) by four columns, two rows (a
// batch's rows past its groups of four) and one (decode) by eight, in ymm
// registers. AVX-512's thirty-two of them hold
// twice the AVX2 kernels' columns of accumulators, so each row's eight
// activations are read once for more columns; the next tile's weights are
// read ahead into L2 (PREFETCHT1), since the tile's neighbouring columns
// are short streams the hardware prefetcher does not follow.
//
// The tiles stay in ymm: zmm tiles holding two columns' lanes (four rows
// by eight columns, one row by eight) measured 0.78–0.85× the AVX2
// kernels on Zen 4 with the weights in cache (one thread, m=1 and m=256,
// k=1024, n=4096): the 512-bit widening (VCVTPH2PS, VPMOVZXWD), the lane
// inserts and the broadcast of activations to both halves cost more than
// they save beside products that run at the ymm rate.
package main

import "fmt"

// halfColBase is a column of a tile that keeps a pointer.
type halfColBase struct {
	reg string
	col int
}

// halfColBases are the columns of a tile of cols columns that keep a
// pointer: with the column stride BX as a scaled index, R9 (column 0) and
// R12 (column 3) reach four columns, R13 (column 5) eight.
func halfColBases(cols int) []halfColBase {
	b := []halfColBase{{"R9", 0}, {"R12", 3}, {"R13", 5}}
	if cols <= 4 {
		return b[:2]
	}
	return b
}

// halfColAddr is column c of the tile's weights at the step.
func halfColAddr(bases []halfColBase, c int) string {
	for _, b := range bases {
		switch d := c - b.col; d {
		case 0:
			return "(" + b.reg + ")"
		case 1, 2, 4:
			return fmt.Sprintf("(%s)(BX*%d)", b.reg, d)
		}
	}
	panic(fmt.Sprintf("halfColAddr: column %d out of reach", c))
}

// kernelHalfWide emits halfDot<F16|BF16>Wide<rows>x<cols>: dst[r*ldd+j] =
// a_r · w_j for rows (1 to 4) rows of float32 activations (lda apart) and n
// columns of k half-precision weights (2k bytes apart), n a multiple of
// cols (at most 8) and k of 8. Each step widens eight weights of each
// column exactly (VCVTPH2PS, or the 16 bits shifted up for BF16) and, per
// row, adds the rounded product to the lane's sum (VMULPS then VADDPS, no
// fused multiply-add): dotUnfused's order; each column's lanes are folded
// as reduceLanes does, so the same bits as the pure-Go version.
//
// The next tile's columns are one run of 2·cols·k bytes, 16·cols a step,
// which the tile prefetches into L2 as it goes: into L1 (PREFETCHT0), as
// the VNNI tiles do, the one-row tile ran at 0.73–0.82× the AVX2 kernel at
// k=4096 from memory, its prefetches evicting lines it had yet to read;
// into L2, 1.3–2.0× at k=4096 and 1024.
//
// Registers: SI row 0 of a at the step, R10 = 4·lda, R11 = 12·lda;
// halfColBases at the step, BX the column stride, R14 the next tile's
// bytes; DI dst; R8 the tile's weights; CX columns left; AX the steps
// left. Y0 … the columns' weights, then products; accumulators after them
// to Y31 (row r, column c in Y(32−rows·cols+cols·r+c)).
func (g *gen) kernelHalfWide(bf bool, rows, cols int) {
	name := g.halfPrologue(bf, fmt.Sprintf("Wide%dx%d", rows, cols))
	accBase := 32 - rows*cols
	if rows > 4 || cols > 8 || accBase < cols+1 {
		panic(fmt.Sprintf("%s: no registers for the tile", name))
	}
	acc := func(r, c int) int { return accBase + cols*r + c }
	bases := halfColBases(cols)
	g.label(name + "_tile")
	g.p("CMPQ CX, $%d", cols)
	g.p("JLT %s_done", name)
	for r := range rows {
		for c := range cols {
			g.p("VPXORD %s, %s, %s", y(acc(r, c)), y(acc(r, c)), y(acc(r, c)))
		}
	}
	for _, b := range bases {
		g.p("IMUL3Q $%d, BX, AX", b.col)
		g.p("LEAQ (R8)(AX*1), %s", b.reg)
	}
	g.p("IMUL3Q $%d, BX, AX", cols)
	g.p("LEAQ (R8)(AX*1), R14")
	g.p("MOVQ a+16(FP), SI")
	g.p("MOVQ k+48(FP), AX")
	g.p("SHRQ $3, AX")
	g.label(name + "_loop")
	for off := 0; off < 16*cols; off += 64 {
		g.p("PREFETCHT1 %d(R14)", off)
	}
	g.p("ADDQ $%d, R14", 16*cols)
	for c := range cols {
		g.widenHalf(bf, halfColAddr(bases, c), c)
	}
	for r := range rows {
		for c := range cols {
			t := c // a lone row's product replaces the weights
			if rows > 1 {
				t = cols + (cols*r+c)%(accBase-cols)
			}
			g.p("VMULPS %s, %s, %s", halfRowAddr[r], y(c), y(t))
			g.p("VADDPS %s, %s, %s", y(t), y(acc(r, c)), y(acc(r, c)))
		}
	}
	g.p("ADDQ $32, SI")
	for _, b := range bases {
		g.p("ADDQ $16, %s", b.reg)
	}
	g.p("DECQ AX")
	g.p("JNZ %s_loop", name)
	g.dstRows(rows, func(r int) {
		for c := range cols {
			// Folded in Y0 and Y1 (dead after the loop), as VEX
			// instructions reach only Y0–Y15.
			g.p("VMOVAPS %s, Y0", y(acc(r, c)))
			g.reduceStore(0, 1, 4*c)
		}
	})
	g.p("ADDQ $%d, DI", 4*cols)
	g.p("SUBQ $%d, CX", cols)
	g.p("IMUL3Q $%d, BX, AX", cols)
	g.p("ADDQ AX, R8")
	g.tileLoopEnd(name)
}
