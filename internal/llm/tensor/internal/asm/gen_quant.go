//go:build ignore

// gen_quant writes quant_amd64.s, the AVX2 products of quantised
// activations with weights in GGUF block formats (MatMulTQuant). Run it
// with `go generate` in this directory; the output is committed.
//
// Each kernel multiplies one row of activations, or four, by n rows of
// weights (output columns), streaming the weights' blocks as they are
// stored. Per block, row and column it computes the integers and roundings
// of the pure-Go version (qdot.go) in the same order, so the two give the
// same bits. The blocks-of-32 kernels sum a block's eight exact lanes in
// integers by VPHADDD trees that take several outputs (rows or columns) at
// once, so that those outputs' totals are converted, scaled and added in
// one step each.
package main

import (
	"bytes"
	"fmt"
	"log"
	"os"
	"strings"
)

type gen struct{ buf bytes.Buffer }

func (g *gen) p(format string, args ...any) { fmt.Fprintf(&g.buf, "\t"+format+"\n", args...) }
func (g *gen) label(name string)            { fmt.Fprintf(&g.buf, "%s:\n", name) }

func y(i int) string { return fmt.Sprintf("Y%d", i) }
func x(i int) string { return fmt.Sprintf("X%d", i) }

// colRegs hold the weight pointers of the four columns of a tile.
var colRegs = []string{"R9", "R10", "R11", "R12"}

// format32 is a blocks-of-32 format: its block size and the code that
// loads a block's levels into a register.
type format32 struct {
	name  string
	bytes int
	// levels loads the 32 levels of the block at (reg)(DX*1) into y(dst);
	// tmp is a free register. With shift 0 they are the signed levels,
	// which may be −128, whose negation int8 cannot hold: the product then
	// takes |w| and x·sign(w) (activations are within ±127). Otherwise they
	// are the levels plus 1<<shift, unsigned, whose products with x are
	// VPMADDUBSW's own: the block's Σ w·x is their sum minus Σx << shift.
	levels func(g *gen, reg string, dst, tmp int)
	shift  int
}

var formats32 = []format32{
	{"Q8_0", 34, func(g *gen, reg string, dst, tmp int) {
		g.p("VMOVDQU 2(%s)(DX*1), %s", reg, y(dst))
	}, 0},
	{"Q4_0", 18, func(g *gen, reg string, dst, tmp int) {
		// Low nibbles are levels 0–15, high nibbles 16–31.
		g.p("VMOVDQU 2(%s)(DX*1), %s", reg, x(dst))
		g.p("VPSRLW $4, %s, %s", x(dst), x(tmp))
		g.p("VINSERTI128 $1, %s, %s, %s", x(tmp), y(dst), y(dst))
		g.p("VPAND nibbleMask<>(SB), %s, %s", y(dst), y(dst))
	}, 3},
	{"Q5_0", 22, func(g *gen, reg string, dst, tmp int) {
		// Nibbles as Q4_0's (after the 4 bytes of high bits); bit i of
		// the high bits spread to bit 4 of level i.
		g.p("VMOVDQU 6(%s)(DX*1), %s", reg, x(dst))
		g.p("VPSRLW $4, %s, %s", x(dst), x(tmp))
		g.p("VINSERTI128 $1, %s, %s, %s", x(tmp), y(dst), y(dst))
		g.p("VPAND nibbleMask<>(SB), %s, %s", y(dst), y(dst))
		g.highBits32(fmt.Sprintf("2(%s)(DX*1)", reg), tmp)
		g.p("VPOR %s, %s, %s", y(tmp), y(dst), y(dst))
	}, 4},
}

// highBits32 sets y(dst) to 32 bytes, byte i 16 where bit i of the 32
// bits at addr is set and 0 where it is not (the fifth bits of Q5_0).
func (g *gen) highBits32(addr string, dst int) {
	g.p("VPBROADCASTD %s, %s", addr, y(dst))
	g.p("VPSHUFB bitBytes<>(SB), %s, %s", y(dst), y(dst))
	g.p("VPAND bitSelect<>(SB), %s, %s", y(dst), y(dst))
	g.p("VPMINUB ones<>(SB), %s, %s", y(dst), y(dst))
	g.p("VPSLLW $4, %s, %s", y(dst), y(dst))
}

// reduceStore folds the 8 lanes of y(a) as reduceLanes does and stores the
// sum at off(AX).
func (g *gen) reduceStore(a, tmp, off int) {
	extract := "VEXTRACTF128" // AVX's, for Y0–Y15
	if a >= 16 || tmp >= 16 {
		extract = "VEXTRACTF32X4"
	}
	g.p("%s $1, %s, %s", extract, y(a), x(tmp))
	g.p("VADDPS %s, %s, %s", x(tmp), x(a), x(a))
	g.p("VMOVHLPS %s, %s, %s", x(a), x(a), x(tmp))
	g.p("VADDPS %s, %s, %s", x(tmp), x(a), x(a))
	g.p("VMOVSHDUP %s, %s", x(a), x(tmp))
	g.p("VADDSS %s, %s, %s", x(tmp), x(a), x(a))
	g.p("VMOVSS %s, %d(AX)", x(a), off)
}

// lanes32 emits the exact integer products of one block of 32: y(dst)'s
// eight int32 lanes are Σ_{e=4l}^{4l+3} of the levels in y(lv) times the
// activations at xv (an address, or a register with shift 0). With shift
// 0, |w| is in y(absLv) and those are Σ w·x; otherwise they are Σ of the
// unsigned levels times x. Y15 holds 16-bit ones.
func (g *gen) lanes32(f format32, lv, absLv int, xv string, dst int) {
	if f.shift == 0 {
		g.p("VPSIGNB %s, %s, %s", y(lv), xv, y(dst))
		g.p("VPMADDUBSW %s, %s, %s", y(dst), y(absLv), y(dst))
	} else {
		g.p("VPMADDUBSW %s, %s, %s", xv, y(lv), y(dst))
	}
	g.p("VPMADDWD Y15, %s, %s", y(dst), y(dst))
}

// unbias32 subtracts Σx << shift from block totals in tot (an xmm or ymm),
// for formats whose levels are loaded unsigned; sums holds the Σx.
func (g *gen) unbias32(f format32, sums, tot string) {
	if f.shift == 0 {
		return
	}
	g.p("VPSLLD $%d, %s, %s", f.shift, sums, sums)
	g.p("VPSUBD %s, %s, %s", sums, tot, tot)
}

// nextBlock32 closes the block loop of kernel32 and kernel32Rows4: SI,
// R8, R14 (shift ≠ 0) and DX to the next block's activations, scale, Σx
// and weights, and back to loop while DX is short of end-8(SP), the
// columns' length.
func (g *gen) nextBlock32(f format32, loop string) {
	g.p("ADDQ $32, SI")
	g.p("ADDQ $4, R8")
	if f.shift != 0 {
		g.p("ADDQ $4, R14")
	}
	g.p("ADDQ $%d, DX", f.bytes)
	g.p("CMPQ DX, end-8(SP)")
	g.p("JLT %s", loop)
}

// colsEnd stores nb·f.bytes, the byte length of a column, at end-8(SP)
// for nextBlock32.
func (g *gen) colsEnd(f format32, nb string) {
	g.p("MOVQ %s, DX", nb)
	g.p("IMULQ $%d, DX", f.bytes)
	g.p("MOVQ DX, end-8(SP)")
}

// kernel32 emits qdot<NAME>Row: dst[j] = x · w_j for the n columns, four
// at a time, columns j, j+n/4, j+2n/4 and j+3n/4 (then the n mod 4 left,
// one at a time): the weights are read as four sequential streams, which
// the hardware prefetcher follows (a tile of four neighbouring columns,
// four short streams of one row of weights each, read them 4× slower from
// memory and no faster from the cache).
//
// Per block, each column's eight exact lanes (lanes32) are summed in
// integers by a VPHADDD tree into one xmm of the four columns' totals S
// (less Σx << shift, unbias32); the four d_w, widened, times d_x (one
// rounding each); S converted, times that (one rounding), added to one xmm
// of the four columns' accumulators: one addition a block for four
// outputs, where each output's additions are a chain. A column left alone
// sums its block's lanes in integers and takes the same steps on one
// float. These are dot32's roundings in its order, so the same bits.
//
// Registers: SI activations, R8 their scales, R14 their Σx, DI dst, CX n,
// BX the column stride in bytes, R9–R12 the columns, AX the byte distance
// between their outputs, R13 the fours left, DX the block's byte offset in
// a column. X0 the accumulators, Y4 x (shift 0), Y6–Y9 two columns'
// levels and lanes, Y10 and Y11 the tree, X12 d_w·d_x, Y15 16-bit ones.
func (g *gen) kernel32(f format32) {
	name := "qdot" + f.name + "Row"
	fmt.Fprintf(&g.buf, "\n// func %s(dst *float32, x *int8, xd *float32, xs *int32, w *byte, wstride int, n int, nb int)\n", name)
	fmt.Fprintf(&g.buf, "TEXT ·%s(SB), NOSPLIT, $8-64\n", name)
	g.p("MOVQ dst+0(FP), DI")
	g.p("MOVQ w+32(FP), R9")
	g.p("MOVQ wstride+40(FP), BX")
	g.p("MOVQ n+48(FP), CX")
	g.colsEnd(f, "nb+56(FP)")
	g.p("VPCMPEQW Y15, Y15, Y15")
	g.p("VPSRLW $15, Y15, Y15")
	g.p("MOVQ CX, R13")
	g.p("SHRQ $2, R13")
	g.p("MOVQ R13, AX")
	g.p("IMULQ BX, AX")
	for c := 1; c < 4; c++ {
		g.p("LEAQ (%s)(AX*1), %s", colRegs[c-1], colRegs[c])
	}
	g.p("LEAQ (R13*4), AX")
	// lanes emits column c's lanes of the block at DX into y(6+2(c%2)).
	lanes := func(c int) {
		lv, abs := 6+2*(c%2), 7+2*(c%2)
		f.levels(g, colRegs[c], lv, abs)
		xv := "(SI)"
		if f.shift == 0 {
			g.p("VPABSB %s, %s", y(lv), y(abs))
			xv = "Y4"
		}
		g.lanes32(f, lv, abs, xv, lv)
	}
	for _, cols := range []int{4, 1} {
		pfx := fmt.Sprintf("%s_%d", name, cols)
		if cols == 1 {
			// The n mod 4 columns left, from column 4·(n/4), where the
			// fours left the last column's pointer; their outputs from
			// dst + 4·(n/4).
			g.p("MOVQ R12, R9")
			g.p("LEAQ (AX)(AX*2), DX")
			g.p("ADDQ DX, DI")
			g.p("MOVQ CX, R13")
			g.p("ANDQ $3, R13")
		}
		g.label(pfx + "_col")
		g.p("CMPQ R13, $1")
		g.p("JLT %s_done", pfx)
		g.p("VXORPS X0, X0, X0")
		g.p("MOVQ x+8(FP), SI")
		g.p("MOVQ xd+16(FP), R8")
		g.p("MOVQ xs+24(FP), R14")
		g.p("XORQ DX, DX")
		g.label(pfx + "_loop")
		if f.shift == 0 {
			g.p("VMOVDQU (SI), Y4")
		}
		if cols == 4 {
			// Columns 0 and 1 paired, 2 and 3, then the pairs: each
			// 128-bit half holds the four columns' sums of lanes 0–3
			// (low) or 4–7 (high).
			for c := range 4 {
				lanes(c)
				if c%2 == 1 {
					g.p("VPHADDD Y8, Y6, %s", y(10+c/2))
				}
			}
			g.p("VPHADDD Y11, Y10, Y10")
			g.p("VEXTRACTI128 $1, Y10, X11")
			g.p("VPADDD X11, X10, X10")
			if f.shift != 0 {
				g.p("VPBROADCASTD (R14), X11")
				g.unbias32(f, "X11", "X10")
			}
			g.p("VPBROADCASTW (R9)(DX*1), X12")
			for c := 1; c < 4; c++ {
				g.p("VPINSRW $%d, (%s)(DX*1), X12, X12", c, colRegs[c])
			}
			g.p("VCVTPH2PS X12, X12")
			g.p("VBROADCASTSS (R8), X13")
			g.p("VMULPS X13, X12, X12")
			g.p("VCVTDQ2PS X10, X10")
			g.p("VMULPS X12, X10, X10")
			g.p("VADDPS X10, X0, X0")
		} else {
			lanes(0)
			g.p("VEXTRACTI128 $1, Y6, X10")
			g.p("VPADDD X10, X6, X10")
			g.p("VPSHUFD $0x4e, X10, X11")
			g.p("VPADDD X11, X10, X10")
			g.p("VPSHUFD $0xb1, X10, X11")
			g.p("VPADDD X11, X10, X10")
			if f.shift != 0 {
				g.p("VMOVD (R14), X11")
				g.unbias32(f, "X11", "X10")
			}
			g.p("VPBROADCASTW (R9)(DX*1), X12")
			g.p("VCVTPH2PS X12, X12")
			g.p("VMULSS (R8), X12, X12")
			g.p("VCVTDQ2PS X10, X10")
			g.p("VMULSS X12, X10, X10")
			g.p("VADDSS X10, X0, X0")
		}
		g.nextBlock32(f, pfx+"_loop")
		g.p("VMOVSS X0, (DI)")
		if cols == 4 {
			g.p("VEXTRACTPS $1, X0, (DI)(AX*1)")
			g.p("VEXTRACTPS $2, X0, (DI)(AX*2)")
			g.p("LEAQ (AX)(AX*2), DX")
			g.p("VEXTRACTPS $3, X0, (DI)(DX*1)")
			for _, r := range colRegs {
				g.p("ADDQ BX, %s", r)
			}
		} else {
			g.p("ADDQ BX, R9")
		}
		g.p("ADDQ $4, DI")
		g.p("DECQ R13")
		g.p("JMP %s_col", pfx)
		g.label(pfx + "_done")
	}
	g.p("VZEROUPPER")
	g.p("RET")
}

// kernel32Rows4 emits qdot<NAME>Rows4: dst[r*ldd+j] = x_r · w_j for four
// rows of activations (k apart) and n columns, two columns at a time (then
// one): each block's levels and scale are loaded once for the four rows,
// each row's activations once for the two columns (prefill).
//
// Per block, each (row, column)'s eight exact lanes (lanes32) are summed in
// integers by a VPHADDD tree over the four rows into one ymm of eight
// totals S, column 0's rows in the low half and column 1's in the high,
// less the rows' Σx << shift (unbias32); the four rows' d_x, gathered,
// times each column's d_w (one rounding each); S converted, times that
// (one rounding), added to one ymm of the eight outputs' accumulators:
// dot32's roundings in its order, so the same bits.
//
// Registers: SI row 0 of x, R10 = k, R11 = 3k; R8 row 0's scales, R14 its
// Σx, R12 and AX the byte distance to rows 1 and 3's; DI dst, CX columns
// left, BX the column stride, R9 and R13 the columns, DX the block offset.
// Y0 the accumulators, Y2–Y7 the tree, Y8 and Y10 the columns' levels, Y9
// and Y11 their magnitudes (shift 0), Y12 x (and the levels' scratch, and
// the Σx), Y13 |x| (and d_w), Y14 d_w·d_x, Y15 16-bit ones.
func (g *gen) kernel32Rows4(f format32) {
	name := "qdot" + f.name + "Rows4"
	fmt.Fprintf(&g.buf, "\n// func %s(dst *float32, ldd int, x *int8, xd *float32, xs *int32, k int, w *byte, wstride int, n int, nb int)\n", name)
	fmt.Fprintf(&g.buf, "TEXT ·%s(SB), NOSPLIT, $8-80\n", name)
	g.p("MOVQ dst+0(FP), DI")
	g.p("MOVQ w+48(FP), R9")
	g.p("MOVQ wstride+56(FP), BX")
	g.p("MOVQ n+64(FP), CX")
	g.p("MOVQ k+40(FP), R10")
	g.p("LEAQ (R10)(R10*2), R11")
	g.p("MOVQ nb+72(FP), R12")
	g.colsEnd(f, "R12")
	g.p("SHLQ $2, R12")
	g.p("LEAQ (R12)(R12*2), AX")
	g.p("VPCMPEQW Y15, Y15, Y15")
	g.p("VPSRLW $15, Y15, Y15")
	rows := []string{"(SI)", "(SI)(R10*1)", "(SI)(R10*2)", "(SI)(R11*1)"}
	colReg := []string{"R9", "R13"}
	for _, cols := range []int{2, 1} {
		pfx := fmt.Sprintf("%s_%d", name, cols)
		g.label(pfx + "_tile")
		g.p("CMPQ CX, $%d", cols)
		g.p("JLT %s_done", pfx)
		if cols == 2 {
			g.p("LEAQ (R9)(BX*1), R13")
		}
		g.p("VXORPS Y0, Y0, Y0")
		g.p("MOVQ x+16(FP), SI")
		g.p("MOVQ xd+24(FP), R8")
		g.p("MOVQ xs+32(FP), R14")
		g.p("XORQ DX, DX")
		g.label(pfx + "_loop")
		for c := range cols {
			f.levels(g, colReg[c], 8+2*c, 12)
			if f.shift == 0 {
				g.p("VPABSB %s, %s", y(8+2*c), y(9+2*c))
			}
		}
		// d_w·d_x: the rows' d_x in each half, column c's d_w in half c.
		g.p("VMOVSS (R8), X14")
		g.p("VINSERTPS $0x10, (R8)(R12*1), X14, X14")
		g.p("VINSERTPS $0x20, (R8)(R12*2), X14, X14")
		g.p("VINSERTPS $0x30, (R8)(AX*1), X14, X14")
		g.p("VPBROADCASTW (R9)(DX*1), X13")
		if cols == 2 {
			g.p("VINSERTF128 $1, X14, Y14, Y14")
			g.p("VPBROADCASTW (R13)(DX*1), X12")
			g.p("VPBLENDW $0xf0, X12, X13, X13")
			g.p("VCVTPH2PS X13, Y13")
			g.p("VMULPS Y13, Y14, Y14")
		} else {
			g.p("VCVTPH2PS X13, X13")
			g.p("VMULPS X13, X14, X14")
		}
		// Row r, column c's lanes in y(lanes[r]+c); rows 0 and 1, then 2
		// and 3, paired by VPHADDD, then the pairs.
		lanes := []int{2, 4, 4, 6}
		for r := range 4 {
			xv := rows[r]
			if f.shift == 0 {
				g.p("VMOVDQU %s, Y12", rows[r])
				xv = "Y12"
			}
			for c := range cols {
				g.lanes32(f, 8+2*c, 9+2*c, xv, lanes[r]+c)
			}
			if r%2 == 1 {
				for c := range cols {
					g.p("VPHADDD %s, %s, %s", y(lanes[r]+c), y(lanes[r-1]+c), y(lanes[r-1]+c))
				}
			}
		}
		for c := range cols {
			g.p("VPHADDD %s, %s, %s", y(4+c), y(2+c), y(2+c))
		}
		if f.shift != 0 {
			g.p("VMOVD (R14), X12")
			g.p("VPINSRD $1, (R14)(R12*1), X12, X12")
			g.p("VPINSRD $2, (R14)(R12*2), X12, X12")
			g.p("VPINSRD $3, (R14)(AX*1), X12, X12")
		}
		if cols == 2 {
			g.p("VPERM2I128 $0x20, Y3, Y2, Y4")
			g.p("VPERM2I128 $0x31, Y3, Y2, Y5")
			g.p("VPADDD Y5, Y4, Y4")
			if f.shift != 0 {
				g.p("VINSERTI128 $1, X12, Y12, Y12")
			}
			g.unbias32(f, "Y12", "Y4")
			g.p("VCVTDQ2PS Y4, Y4")
			g.p("VMULPS Y14, Y4, Y4")
			g.p("VADDPS Y4, Y0, Y0")
		} else {
			g.p("VEXTRACTI128 $1, Y2, X4")
			g.p("VPADDD X4, X2, X4")
			g.unbias32(f, "X12", "X4")
			g.p("VCVTDQ2PS X4, X4")
			g.p("VMULPS X14, X4, X4")
			g.p("VADDPS X4, X0, X0")
		}
		g.nextBlock32(f, pfx+"_loop")
		// Row r's outputs to dst + r·ldd (DX and R14 are free now): with
		// two columns, rows 0 and 1 in X2's halves, 2 and 3 in X3's.
		if cols == 2 {
			g.p("VEXTRACTF128 $1, Y0, X1")
			g.p("VUNPCKLPS X1, X0, X2")
			g.p("VUNPCKHPS X1, X0, X3")
		}
		g.dstRowsIn("DX", "R14", 4, func(r int) {
			switch {
			case cols == 2 && r%2 == 0:
				g.p("VMOVQ %s, (DX)", x(2+r/2))
			case cols == 2:
				g.p("VMOVHPS %s, (DX)", x(2+r/2))
			case r == 0:
				g.p("VMOVSS X0, (DX)")
			default:
				g.p("VEXTRACTPS $%d, X0, (DX)", r)
			}
		})
		g.p("ADDQ $%d, DI", 4*cols)
		g.p("SUBQ $%d, CX", cols)
		g.p("LEAQ (R9)(BX*%d), R9", cols)
		g.p("JMP %s_tile", pfx)
		g.label(pfx + "_done")
	}
	g.p("VZEROUPPER")
	g.p("RET")
}

// q4kFormat is Q4_K, or Q5_K: the same super-block of 256 (d and dmin at
// bytes 0 and 2, the eight 6-bit scales and minima packed in 4–15), the
// levels' nibbles at qs (sub-block 2i's low nibbles and 2i+1's high in the
// 32 bytes at qs+32i), and, for Q5_K, the 32 bytes of fifth bits at 16:
// bit j of byte i is bit 4 of level i of sub-block j (dotQ5_K). Each of
// Q4_K's generators serves both, Q5_K's steps where the nibbles are made.
type q4kFormat struct {
	name     string
	size, qs int
	five     bool
}

// q5kHigh is the offset of Q5_K's fifth bits in its super-block.
const q5kHigh = 16

var q4kFormats = []q4kFormat{{"Q4_K", 144, 16, false}, {"Q5_K", 176, 48, true}}

// fifthBits ORs into y(dst) bit j of each byte of y(qh) moved to bit 4:
// the fifth bits of Q5_K's sub-block j, where y(dst) holds its nibbles
// (word shifts: the bits that cross from the neighbouring byte are masked
// off); y(tmp) is scratch.
func (g *gen) fifthBits(qh, j, dst, tmp int) {
	switch {
	case j < 4:
		g.p("VPSLLW $%d, %s, %s", 4-j, y(qh), y(tmp))
	case j == 4:
		g.p("VMOVDQU %s, %s", y(qh), y(tmp))
	default:
		g.p("VPSRLW $%d, %s, %s", j-4, y(qh), y(tmp))
	}
	g.p("VPAND bit4<>(SB), %s, %s", y(tmp), y(tmp))
	g.p("VPOR %s, %s, %s", y(tmp), y(dst), y(dst))
}

// q4kLevels sets y(lo) and y(hi) to the levels of sub-blocks 2cp and
// 2cp+1 of the super-block at blk (an address with a %d for the offset):
// the low and high nibbles of its 32 bytes at qs+32cp and, for Q5_K, the
// fifth bits from y(qh), its 32 bytes at 16; y(tmp) is scratch.
func (g *gen) q4kLevels(f q4kFormat, blk string, cp, lo, hi, qh, tmp int) {
	g.p("VMOVDQU "+blk+", %s", f.qs+32*cp, y(lo))
	g.p("VPSRLW $4, %s, %s", y(lo), y(hi))
	g.p("VPAND nibbleMask<>(SB), %s, %s", y(lo), y(lo))
	g.p("VPAND nibbleMask<>(SB), %s, %s", y(hi), y(hi))
	if f.five {
		g.fifthBits(qh, 2*cp, lo, tmp)
		g.fifthBits(qh, 2*cp+1, hi, tmp)
	}
}

// kernelQ4K emits qdot<NAME>Row: dst[j] = x · w_j for the n columns of
// Q4_K or Q5_K weights, one column at a time (qdot.go's dotQ4_K, dotQ5_K).
//
// Registers: SI activations, R8 their scales, DI dst, CX columns left, BX
// the column stride, R9 the column, R13 the super-block count, R14 the
// super-block index, DX the block offset, AX and R10–R12 scratch (R15 is
// left alone: dynamic linking uses it).
// Y0 the accumulator, Y1 the super-block's integer sums p, Y2 the minima
// term n, Y3–Y7 temporaries, Y8 Q5_K's fifth bits, Y9 x's scale.
func (g *gen) kernelQ4K(f q4kFormat) {
	name := "qdot" + f.name + "Row"
	fmt.Fprintf(&g.buf, "\n// func %s(dst *float32, x *int8, xd *float32, xs *int32, w *byte, wstride int, n int, nb int)\n", name)
	fmt.Fprintf(&g.buf, "TEXT ·%s(SB), NOSPLIT, $16-64\n", name)
	g.p("MOVQ dst+0(FP), DI")
	g.p("MOVQ w+32(FP), R9")
	g.p("MOVQ wstride+40(FP), BX")
	g.p("MOVQ n+48(FP), CX")
	g.p("MOVQ nb+56(FP), R13")
	g.label(name + "_col")
	g.p("CMPQ CX, $1")
	g.p("JLT %s_done", name)
	g.p("VXORPS Y0, Y0, Y0")
	g.p("MOVQ x+8(FP), SI")
	g.p("MOVQ xd+16(FP), R8")
	g.p("XORQ DX, DX")
	g.p("XORQ R14, R14")
	g.label(name + "_loop")
	// The eight 6-bit scales and minima of the 12 bytes at 4(R9)(DX*1):
	// scales to 0(SP), minima to 8(SP), a byte each.
	// The minima go in one 8-byte store, which VPMOVZXBD below reads
	// whole: a load spanning two narrower stores waits for both to retire.
	g.p("MOVL 4(R9)(DX*1), AX")   // u0: scales 0–3 (low 6 bits)
	g.p("MOVL 8(R9)(DX*1), R10")  // u1: minima 0–3
	g.p("MOVL 12(R9)(DX*1), R11") // u2: low nibbles of 4–7
	g.p("MOVL AX, R12")
	g.p("ANDL $0x3f3f3f3f, R12")
	g.p("MOVL R12, 0(SP)")
	g.p("SHRL $2, AX")
	g.p("ANDL $0x30303030, AX")
	g.p("MOVL R11, R12")
	g.p("ANDL $0x0f0f0f0f, R12")
	g.p("ORL AX, R12")
	g.p("MOVL R12, 4(SP)")
	g.p("MOVL R10, R12")
	g.p("ANDL $0x3f3f3f3f, R12")
	g.p("SHRL $2, R10")
	g.p("ANDL $0x30303030, R10")
	g.p("SHRL $4, R11")
	g.p("ANDL $0x0f0f0f0f, R11")
	g.p("ORL R10, R11")
	g.p("SHLQ $32, R11")
	g.p("ORQ R12, R11")
	g.p("MOVQ R11, 8(SP)")
	// n = minima × the activations' sums of 32.
	g.p("MOVQ xs+24(FP), AX")
	g.p("MOVQ R14, R10")
	g.p("SHLQ $5, R10")
	g.p("VPMOVZXBD 8(SP), Y2")
	g.p("VPMULLD (AX)(R10*1), Y2, Y2")
	// p: per sub-block j, maddubs of its levels and x, then madd with the
	// scale broadcast as 16-bit words.
	g.p("VPXOR Y1, Y1, Y1")
	if f.five {
		g.p("VMOVDQU %d(R9)(DX*1), Y8", q5kHigh)
	}
	for cp := range 4 {
		g.q4kLevels(f, "%d(R9)(DX*1)", cp, 3, 4, 8, 5)
		for half, lv := range []int{3, 4} {
			j := 2*cp + half
			g.p("VPMADDUBSW %d(SI), %s, %s", 32*j, y(lv), y(lv))
			g.p("VPBROADCASTB %d(SP), X5", j)
			g.p("VPMOVZXBW X5, Y5")
			g.p("VPMADDWD Y5, %s, %s", y(lv), y(lv))
			g.p("VPADDD %s, Y1, Y1", y(lv))
		}
	}
	// acc += p·(d·dx) − n·(dmin·dx).
	g.p("VBROADCASTSS (R8), Y9")
	g.p("VPBROADCASTW (R9)(DX*1), X6")
	g.p("VCVTPH2PS X6, Y6")
	g.p("VMULPS Y9, Y6, Y6")
	g.p("VPBROADCASTW 2(R9)(DX*1), X7")
	g.p("VCVTPH2PS X7, Y7")
	g.p("VMULPS Y9, Y7, Y7")
	g.p("VCVTDQ2PS Y1, Y1")
	g.p("VMULPS Y6, Y1, Y1")
	g.p("VCVTDQ2PS Y2, Y2")
	g.p("VMULPS Y7, Y2, Y2")
	g.p("VSUBPS Y2, Y1, Y1")
	g.p("VADDPS Y1, Y0, Y0")
	g.p("ADDQ $256, SI")
	g.p("ADDQ $4, R8")
	g.p("ADDQ $%d, DX", f.size)
	g.p("INCQ R14")
	g.p("CMPQ R14, R13")
	g.p("JLT %s_loop", name)
	g.p("MOVQ DI, AX")
	g.reduceStore(0, 14, 0)
	g.p("ADDQ $4, DI")
	g.p("DECQ CX")
	g.p("ADDQ BX, R9")
	g.p("JMP %s_col", name)
	g.label(name + "_done")
	g.p("VZEROUPPER")
	g.p("RET")
}

// kernelQ4K4 emits qdot<NAME>Rows4: dst[r*ldd+j] = x_r · w_j for four rows
// of activations (k apart) and n columns of Q4_K or Q5_K weights, one
// column at a time: each super-block's scales and levels are unpacked once
// for the four rows (prefill). Per row it computes dotQ4_K's (dotQ5_K's)
// integers and roundings, in its order.
//
// Registers: SI row 0 of x, R10 = k and R11 = 3k (rows 1–3 at SI+R10,
// SI+2·R10, SI+R11), DI dst, CX columns left, BX the column stride, R9 the
// column, R13 the super-block count, R14 the super-block index, DX the
// block offset, AX and R12 scratch. Y0–Y3 the rows' accumulators, Y4–Y7
// their integer sums, Y8–Y15 temporaries (Y12 Q5_K's fifth bits while
// the levels are made).
func (g *gen) kernelQ4K4(f q4kFormat) {
	name := "qdot" + f.name + "Rows4"
	fmt.Fprintf(&g.buf, "\n// func %s(dst *float32, ldd int, x *int8, xd *float32, xs *int32, k int, w *byte, wstride int, n int, nb int)\n", name)
	fmt.Fprintf(&g.buf, "TEXT ·%s(SB), NOSPLIT, $16-80\n", name)
	g.p("MOVQ dst+0(FP), DI")
	g.p("MOVQ w+48(FP), R9")
	g.p("MOVQ wstride+56(FP), BX")
	g.p("MOVQ n+64(FP), CX")
	g.p("MOVQ nb+72(FP), R13")
	g.p("MOVQ k+40(FP), R10")
	g.p("LEAQ (R10)(R10*2), R11")
	g.label(name + "_col")
	g.p("CMPQ CX, $1")
	g.p("JLT %s_done", name)
	for r := range 4 {
		g.p("VXORPS %s, %s, %s", y(r), y(r), y(r))
	}
	g.p("MOVQ x+16(FP), SI")
	g.p("XORQ DX, DX")
	g.p("XORQ R14, R14")
	g.label(name + "_loop")
	// Scales to 0(SP), minima to 8(SP), as kernelQ4K unpacks them.
	g.p("MOVL 4(R9)(DX*1), AX")
	g.p("ANDL $0x3f3f3f3f, AX")
	g.p("MOVL AX, 0(SP)")
	g.p("MOVL 4(R9)(DX*1), AX")
	g.p("SHRL $2, AX")
	g.p("ANDL $0x30303030, AX")
	g.p("MOVL 12(R9)(DX*1), R12")
	g.p("ANDL $0x0f0f0f0f, R12")
	g.p("ORL AX, R12")
	g.p("MOVL R12, 4(SP)")
	// The minima in one 8-byte store (VPMOVZXBD reads them whole).
	g.p("MOVL 8(R9)(DX*1), AX")
	g.p("SHRL $2, AX")
	g.p("ANDL $0x30303030, AX")
	g.p("MOVL 12(R9)(DX*1), R12")
	g.p("SHRL $4, R12")
	g.p("ANDL $0x0f0f0f0f, R12")
	g.p("ORL AX, R12")
	g.p("SHLQ $32, R12")
	g.p("MOVL 8(R9)(DX*1), AX")
	g.p("ANDL $0x3f3f3f3f, AX")
	g.p("ORQ AX, R12")
	g.p("MOVQ R12, 8(SP)")
	rowAddr := func(r, off int) string {
		switch r {
		case 0:
			return fmt.Sprintf("%d(SI)", off)
		case 1:
			return fmt.Sprintf("%d(SI)(R10*1)", off)
		case 2:
			return fmt.Sprintf("%d(SI)(R10*2)", off)
		}
		return fmt.Sprintf("%d(SI)(R11*1)", off)
	}
	for r := range 4 {
		g.p("VPXOR %s, %s, %s", y(4+r), y(4+r), y(4+r))
	}
	if f.five {
		g.p("VMOVDQU %d(R9)(DX*1), Y12", q5kHigh)
	}
	for cp := range 4 {
		g.q4kLevels(f, "%d(R9)(DX*1)", cp, 8, 9, 12, 13)
		for half, lv := range []int{8, 9} {
			j := 2*cp + half
			g.p("VPBROADCASTB %d(SP), X10", j)
			g.p("VPMOVZXBW X10, Y10")
			for r := range 4 {
				g.p("VPMADDUBSW %s, %s, Y11", rowAddr(r, 32*j), y(lv))
				g.p("VPMADDWD Y10, Y11, Y11")
				g.p("VPADDD Y11, %s, %s", y(4+r), y(4+r))
			}
		}
	}
	// Per row: acc += p·(d·dx) − n·(dmin·dx), n = minima × the row's sums.
	g.p("VPBROADCASTW (R9)(DX*1), X12")
	g.p("VCVTPH2PS X12, Y12")
	g.p("VPBROADCASTW 2(R9)(DX*1), X13")
	g.p("VCVTPH2PS X13, Y13")
	g.p("VPMOVZXBD 8(SP), Y14")
	for r := range 4 {
		// Row r's scale: xd + 4·(r·nb + index); its sums: xs + 32·(r·nb + index).
		g.p("MOVQ R13, AX")
		g.p("IMULQ $%d, AX", r)
		g.p("ADDQ R14, AX")
		g.p("MOVQ xd+24(FP), R12")
		g.p("VBROADCASTSS (R12)(AX*4), Y15")
		g.p("SHLQ $5, AX")
		g.p("ADDQ xs+32(FP), AX")
		g.p("VPMULLD (AX), Y14, Y11")
		g.p("VCVTDQ2PS Y11, Y11")
		g.p("VMULPS Y15, Y13, Y10")
		g.p("VMULPS Y10, Y11, Y11")
		g.p("VMULPS Y15, Y12, Y10")
		g.p("VCVTDQ2PS %s, %s", y(4+r), y(4+r))
		g.p("VMULPS Y10, %s, %s", y(4+r), y(4+r))
		g.p("VSUBPS Y11, %s, %s", y(4+r), y(4+r))
		g.p("VADDPS %s, %s, %s", y(4+r), y(r), y(r))
	}
	g.p("ADDQ $256, SI")
	g.p("ADDQ $%d, DX", f.size)
	g.p("INCQ R14")
	g.p("CMPQ R14, R13")
	g.p("JLT %s_loop", name)
	g.dstRows(4, func(r int) { g.reduceStore(r, 14, 0) })
	g.p("ADDQ $4, DI")
	g.p("DECQ CX")
	g.p("ADDQ BX, R9")
	g.p("JMP %s_col", name)
	g.label(name + "_done")
	g.p("VZEROUPPER")
	g.p("RET")
}

// kernelQ6K emits qdotQ6_KRow: dst[j] = x · w_j for the n columns of Q6_K
// weights, one column at a time (qdot.go's dotQ6_K). Registers as
// kernelQ4K's; Y1 the super-block's integer sums, X10 its 16 scales, Y12
// the byte 32.
func (g *gen) kernelQ6K() {
	name := "qdotQ6_KRow"
	fmt.Fprintf(&g.buf, "\n// func %s(dst *float32, x *int8, xd *float32, w *byte, wstride int, n int, nb int)\n", name)
	fmt.Fprintf(&g.buf, "TEXT ·%s(SB), NOSPLIT, $0-56\n", name)
	g.p("MOVQ dst+0(FP), DI")
	g.p("MOVQ w+24(FP), R9")
	g.p("MOVQ wstride+32(FP), BX")
	g.p("MOVQ n+40(FP), CX")
	g.p("MOVQ nb+48(FP), R13")
	g.p("VMOVDQU thirtyTwos<>(SB), Y12")
	g.label(name + "_col")
	g.p("CMPQ CX, $1")
	g.p("JLT %s_done", name)
	g.p("VXORPS Y0, Y0, Y0")
	g.p("MOVQ x+8(FP), SI")
	g.p("MOVQ xd+16(FP), R8")
	g.p("XORQ DX, DX")
	g.p("XORQ R14, R14")
	g.label(name + "_loop")
	g.p("VMOVDQU 192(R9)(DX*1), X10")
	g.p("VPXOR Y1, Y1, Y1")
	for h := range 2 {
		g.p("VMOVDQU %d(R9)(DX*1), Y3", 64*h)
		g.p("VMOVDQU %d(R9)(DX*1), Y4", 64*h+32)
		g.p("VMOVDQU %d(R9)(DX*1), Y5", 128+32*h)
		for r := range 4 {
			c := 4*h + r
			low := 3 + r%2
			if r < 2 {
				g.p("VPAND nibbleMask<>(SB), %s, Y6", y(low))
			} else {
				g.p("VPSRLW $4, %s, Y6", y(low))
				g.p("VPAND nibbleMask<>(SB), Y6, Y6")
			}
			// Bits 2r and 2r+1 of the high byte to bits 4 and 5.
			switch {
			case r < 2:
				g.p("VPSLLW $%d, Y5, Y7", 4-2*r)
			case r == 2:
				g.p("VMOVDQU Y5, Y7")
			default:
				g.p("VPSRLW $2, Y5, Y7")
			}
			g.p("VPAND bits45<>(SB), Y7, Y7")
			g.p("VPOR Y7, Y6, Y6")
			// Σ (q−32)·x in pairs: q and 32 against x, subtracted.
			g.p("VPMADDUBSW %d(SI), Y6, Y6", 32*c)
			g.p("VPMADDUBSW %d(SI), Y12, Y7", 32*c)
			g.p("VPSUBW Y7, Y6, Y6")
			g.p("VPSHUFB q6ScaleShuffle<>+%d(SB), X10, X11", 16*c)
			g.p("VPMOVSXBW X11, Y11")
			g.p("VPMADDWD Y11, Y6, Y6")
			g.p("VPADDD Y6, Y1, Y1")
		}
	}
	g.p("VBROADCASTSS (R8), Y9")
	g.p("VPBROADCASTW 208(R9)(DX*1), X8")
	g.p("VCVTPH2PS X8, Y8")
	g.p("VMULPS Y9, Y8, Y8")
	g.p("VCVTDQ2PS Y1, Y1")
	g.p("VMULPS Y8, Y1, Y1")
	g.p("VADDPS Y1, Y0, Y0")
	g.p("ADDQ $256, SI")
	g.p("ADDQ $4, R8")
	g.p("ADDQ $210, DX")
	g.p("INCQ R14")
	g.p("CMPQ R14, R13")
	g.p("JLT %s_loop", name)
	g.p("MOVQ DI, AX")
	g.reduceStore(0, 14, 0)
	g.p("ADDQ $4, DI")
	g.p("DECQ CX")
	g.p("ADDQ BX, R9")
	g.p("JMP %s_col", name)
	g.label(name + "_done")
	g.p("VZEROUPPER")
	g.p("RET")
}

// kernelQ6K4 emits qdotQ6_KRows4: four rows of activations (k apart) by n
// columns of Q6_K weights, one column at a time, each 32-element part's
// levels and scales built once for the four rows (prefill); per row
// kernelQ6K's integers and roundings. Registers as kernelQ4K4's; Y8–Y10
// the super-block half's bytes, Y11 the part's levels, Y13 its scales, Y15
// the byte 32.
func (g *gen) kernelQ6K4() {
	name := "qdotQ6_KRows4"
	fmt.Fprintf(&g.buf, "\n// func %s(dst *float32, ldd int, x *int8, xd *float32, k int, w *byte, wstride int, n int, nb int)\n", name)
	fmt.Fprintf(&g.buf, "TEXT ·%s(SB), NOSPLIT, $0-72\n", name)
	g.p("MOVQ dst+0(FP), DI")
	g.p("MOVQ w+40(FP), R9")
	g.p("MOVQ wstride+48(FP), BX")
	g.p("MOVQ n+56(FP), CX")
	g.p("MOVQ nb+64(FP), R13")
	g.p("MOVQ k+32(FP), R10")
	g.p("LEAQ (R10)(R10*2), R11")
	g.label(name + "_col")
	g.p("CMPQ CX, $1")
	g.p("JLT %s_done", name)
	for r := range 4 {
		g.p("VXORPS %s, %s, %s", y(r), y(r), y(r))
	}
	g.p("MOVQ x+16(FP), SI")
	g.p("XORQ DX, DX")
	g.p("XORQ R14, R14")
	g.label(name + "_loop")
	g.p("VMOVDQU thirtyTwos<>(SB), Y15")
	for r := range 4 {
		g.p("VPXOR %s, %s, %s", y(4+r), y(4+r), y(4+r))
	}
	rowAddr := func(r, off int) string {
		return [...]string{"%d(SI)", "%d(SI)(R10*1)", "%d(SI)(R10*2)", "%d(SI)(R11*1)"}[r]
	}
	for h := range 2 {
		g.p("VMOVDQU %d(R9)(DX*1), Y8", 64*h)
		g.p("VMOVDQU %d(R9)(DX*1), Y9", 64*h+32)
		g.p("VMOVDQU %d(R9)(DX*1), Y10", 128+32*h)
		for r := range 4 {
			c := 4*h + r
			low := 8 + r%2
			if r < 2 {
				g.p("VPAND nibbleMask<>(SB), %s, Y11", y(low))
			} else {
				g.p("VPSRLW $4, %s, Y11", y(low))
				g.p("VPAND nibbleMask<>(SB), Y11, Y11")
			}
			switch {
			case r < 2:
				g.p("VPSLLW $%d, Y10, Y12", 4-2*r)
			case r == 2:
				g.p("VMOVDQU Y10, Y12")
			default:
				g.p("VPSRLW $2, Y10, Y12")
			}
			g.p("VPAND bits45<>(SB), Y12, Y12")
			g.p("VPOR Y12, Y11, Y11")
			g.p("VMOVDQU 192(R9)(DX*1), X13")
			g.p("VPSHUFB q6ScaleShuffle<>+%d(SB), X13, X13", 16*c)
			g.p("VPMOVSXBW X13, Y13")
			for row := range 4 {
				addr := fmt.Sprintf(rowAddr(row, 0), 32*c)
				g.p("VPMADDUBSW %s, Y11, Y14", addr)
				g.p("VPMADDUBSW %s, Y15, Y12", addr)
				g.p("VPSUBW Y12, Y14, Y14")
				g.p("VPMADDWD Y13, Y14, Y14")
				g.p("VPADDD Y14, %s, %s", y(4+row), y(4+row))
			}
		}
	}
	g.p("VPBROADCASTW 208(R9)(DX*1), X8")
	g.p("VCVTPH2PS X8, Y8")
	for r := range 4 {
		g.p("MOVQ R13, AX")
		g.p("IMULQ $%d, AX", r)
		g.p("ADDQ R14, AX")
		g.p("MOVQ xd+24(FP), R12")
		g.p("VBROADCASTSS (R12)(AX*4), Y9")
		g.p("VMULPS Y8, Y9, Y9")
		g.p("VCVTDQ2PS %s, %s", y(4+r), y(4+r))
		g.p("VMULPS Y9, %s, %s", y(4+r), y(4+r))
		g.p("VADDPS %s, %s, %s", y(4+r), y(r), y(r))
	}
	g.p("ADDQ $256, SI")
	g.p("ADDQ $210, DX")
	g.p("INCQ R14")
	g.p("CMPQ R14, R13")
	g.p("JLT %s_loop", name)
	g.dstRows(4, func(r int) { g.reduceStore(r, 14, 0) })
	g.p("ADDQ $4, DI")
	g.p("DECQ CX")
	g.p("ADDQ BX, R9")
	g.p("JMP %s_col", name)
	g.label(name + "_done")
	g.p("VZEROUPPER")
	g.p("RET")
}

// kernelHalf emits halfDot<F16|BF16>Rows<rows>: dst[r*ldd+j] = a_r · w_j
// for rows rows of float32 activations (lda apart) and n columns of k
// half-precision weights (2k bytes apart), cols columns at a time (n a
// multiple of cols, k of 8). Each step widens eight weights of each column
// exactly (VCVTPH2PS, or the 16 bits shifted up for BF16) and, per row,
// adds the rounded product to the lane's sum (VMULPS then VADDPS, no
// fused multiply-add): dotUnfused's order, so the same bits.
//
// Registers: SI row 0 of a at the step, R10 = 4·lda, R11 = 12·lda; R9
// column 0 at the step, BX the column stride, R12 column 3; DI dst; CX
// columns left; DX the steps left; AX scratch. Accumulators Y0 … (row r,
// column c in Y(cols·r+c)), weights Y8 …, products Y12 ….
func (g *gen) kernelHalf(bf bool, rows, cols int) {
	name := g.halfPrologue(bf, fmt.Sprintf("Rows%d", rows))
	colAddr := [...]string{"(R9)", "(R9)(BX*1)", "(R9)(BX*2)", "(R12)"}
	g.label(name + "_tile")
	g.p("CMPQ CX, $%d", cols)
	g.p("JLT %s_done", name)
	for i := range rows * cols {
		g.p("VXORPS %s, %s, %s", y(i), y(i), y(i))
	}
	g.p("MOVQ R8, R9")
	g.p("LEAQ (R8)(BX*2), R12")
	g.p("ADDQ BX, R12")
	g.p("MOVQ a+16(FP), SI")
	g.p("MOVQ k+48(FP), DX")
	g.p("SHRQ $3, DX")
	g.label(name + "_loop")
	for c := range cols {
		g.widenHalf(bf, colAddr[c], 8+c)
	}
	for r := range rows {
		for c := range cols {
			t := 12 + (r*cols+c)%4
			g.p("VMULPS %s, %s, %s", halfRowAddr[r], y(8+c), y(t))
			g.p("VADDPS %s, %s, %s", y(t), y(r*cols+c), y(r*cols+c))
		}
	}
	g.p("ADDQ $32, SI")
	g.p("ADDQ $16, R9")
	g.p("ADDQ $16, R12")
	g.p("DECQ DX")
	g.p("JNZ %s_loop", name)
	g.p("MOVQ ldd+8(FP), AX")
	g.p("SHLQ $2, AX")
	g.p("MOVQ AX, R12")
	g.p("MOVQ DI, AX")
	for r := range rows {
		for c := range cols {
			g.reduceStore(r*cols+c, 15, 4*c)
		}
		if r < rows-1 {
			g.p("ADDQ R12, AX")
		}
	}
	g.p("ADDQ $%d, DI", 4*cols)
	g.p("SUBQ $%d, CX", cols)
	g.p("LEAQ (R8)(BX*%d), R8", cols)
	g.tileLoopEnd(name)
}

// halfRowAddr are the four rows of a half-precision kernel's activations
// at the step: SI row 0, R10 = 4·lda, R11 = 12·lda.
var halfRowAddr = [...]string{"(SI)", "(SI)(R10*1)", "(SI)(R10*2)", "(SI)(R11*1)"}

// halfPrologue opens halfDot<F16|BF16><kind> and returns its name: DI dst,
// R8 w, CX n, BX the column stride (2k), R10 and R11 as halfRowAddr's.
func (g *gen) halfPrologue(bf bool, kind string) string {
	typ := "F16"
	if bf {
		typ = "BF16"
	}
	name := "halfDot" + typ + kind
	fmt.Fprintf(&g.buf, "\n// func %s(dst *float32, ldd int, a *float32, lda int, w *byte, n int, k int)\n", name)
	fmt.Fprintf(&g.buf, "TEXT ·%s(SB), NOSPLIT, $0-56\n", name)
	g.p("MOVQ dst+0(FP), DI")
	g.p("MOVQ w+32(FP), R8")
	g.p("MOVQ n+40(FP), CX")
	g.p("MOVQ k+48(FP), BX")
	g.p("SHLQ $1, BX")
	g.p("MOVQ lda+24(FP), R10")
	g.p("SHLQ $2, R10")
	g.p("LEAQ (R10)(R10*2), R11")
	return name
}

// widenHalf sets y(dst) to the eight half-precision weights at addr, each
// widened exactly: VCVTPH2PS for F16, the 16 bits shifted up for BF16.
func (g *gen) widenHalf(bf bool, addr string, dst int) {
	if bf {
		g.p("VPMOVZXWD %s, %s", addr, y(dst))
		g.p("VPSLLD $16, %s, %s", y(dst), y(dst))
	} else {
		g.p("VCVTPH2PS %s, %s", addr, y(dst))
	}
}

// q6ScaleShuffle: for 32-element part c of a Q6_K super-block, the bytes
// that spread its two 16-element scales over the low and high 8 bytes.
func q6ScaleShuffle() string {
	var b strings.Builder
	for c := range 8 {
		for half := range 2 {
			v := uint64(0)
			for i := range 8 {
				v |= uint64(2*c+half) << (8 * i)
			}
			fmt.Fprintf(&b, "DATA q6ScaleShuffle<>+%d(SB)/8, $0x%016x\n", 16*c+8*half, v)
		}
	}
	b.WriteString("GLOBL q6ScaleShuffle<>(SB), RODATA|NOPTR, $128\n")
	return b.String()
}

// bitTables are highBits32's: bitBytes moves byte i/8 of a broadcast
// 32-bit word to byte i, bitSelect keeps bit i mod 8 of byte i; both
// repeated over 64 bytes for the zmm tiles.
func bitTables() string {
	var b strings.Builder
	for q := range 8 {
		sel, sh := uint64(0), uint64(0)
		for i := range 8 {
			e := (8*q + i) % 32
			sh |= uint64(e/8) << (8 * i)
			sel |= uint64(1<<(e%8)) << (8 * i)
		}
		fmt.Fprintf(&b, "DATA bitBytes<>+%d(SB)/8, $0x%016x\n", 8*q, sh)
		fmt.Fprintf(&b, "DATA bitSelect<>+%d(SB)/8, $0x%016x\n", 8*q, sel)
	}
	b.WriteString("GLOBL bitBytes<>(SB), RODATA|NOPTR, $64\n")
	b.WriteString("GLOBL bitSelect<>(SB), RODATA|NOPTR, $64\n")
	return b.String()
}

// bytes32 is a 32-byte constant of one repeated byte.
func bytes32(name string, v byte) string {
	var b strings.Builder
	for i := range 4 {
		fmt.Fprintf(&b, "DATA %s<>+%d(SB)/8, $0x%016x\n", name, 8*i, uint64(v)*0x0101010101010101)
	}
	fmt.Fprintf(&b, "GLOBL %s<>(SB), RODATA|NOPTR, $32\n", name)
	return b.String()
}

const header = `// Code generated by gen_quant.go; DO NOT EDIT.

//go:build amd64 && !purego

#include "textflag.h"
`

func main() {
	var g gen
	g.buf.WriteString(header)
	for _, c := range []struct {
		name string
		v    byte
	}{{"nibbleMask", 0x0f}, {"bit4", 0x10}, {"bits45", 0x30}, {"thirtyTwos", 0x20}, {"signBits", 0x80}, {"sixteens", 0x10}, {"ones", 0x01}} {
		g.buf.WriteString("\n" + bytes32(c.name, c.v))
	}
	g.buf.WriteString("\n" + q6ScaleShuffle())
	g.buf.WriteString("\n" + bitTables())
	g.buf.WriteString("\n" + vnniConstants())
	g.buf.WriteString("\n" + streamConstants())
	g.buf.WriteString("\n" + colsConstants())
	for _, f := range formats32 {
		g.kernel32(f)
		g.kernel32Rows4(f)
	}
	for _, f := range q4kFormats {
		g.kernelQ4K(f)
		g.kernelQ4K4(f)
	}
	g.kernelQ6K()
	g.kernelQ6K4()
	for _, bf := range []bool{false, true} {
		g.kernelHalf(bf, 4, 2)
		g.kernelHalf(bf, 1, 4)
		for _, rc := range [][2]int{{4, 4}, {2, 8}, {1, 8}} {
			g.kernelHalfWide(bf, rc[0], rc[1])
		}
	}
	for _, f := range q4kFormats {
		g.kernelQ4KTile(f)
		g.kernelQ4KCols(f)
		g.kernelQ4KVNNI(f, 1)
	}
	g.kernelQ6KCols()
	for _, rows := range []int{4, 1} {
		g.kernelQ6KVNNI(rows)
	}
	g.kernelQ8Q8VNNI()
	for _, f := range kStreamFormats {
		g.kernelKStream(f)
	}
	for _, f := range colsFormats {
		for _, rows := range []int{1, 4, 8} {
			g.kernelCols(f, rows)
		}
	}
	out := strings.ReplaceAll(g.buf.String(), "\t\n", "\n")
	if err := os.WriteFile("quant_amd64.s", []byte(out), 0o644); err != nil {
		log.Fatal(err)
	}
}
