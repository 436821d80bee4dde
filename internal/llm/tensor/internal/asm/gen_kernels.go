//go:build ignore

// gen_kernels writes kernels_amd64.s, the matrix kernels of package asm.
// Run it with `go generate` in this directory (it is built together with
// gen_kernels_avx512.go); the output is committed.
//
// The matrix kernels are register-blocked tiles of R rows of a by C rows of b
// (output columns), each tile running over the whole k once. Every tile shape
// uses one 8-lane accumulator per output element, the same tail treatment and
// the same horizontal reduction, so an element's bits do not depend on the tile
// that computed it (see doc.go for the order).
package main

import (
	"bytes"
	"fmt"
	"log"
	"os"
	"strings"
)

// gpPool are the general registers a tile may hold pointers in. AX holds the
// element index and CX the loop end; BP and R15 stay untouched (frame pointer,
// dynamic-linking scratch).
var gpPool = []string{"SI", "DI", "R8", "R9", "R10", "R11", "R12", "R13", "R14", "BX", "DX"}

// Stack slots (hardware SP) shared by the matrix kernels.
const (
	slotB      = "0(SP)"  // pointer to b's row of the current tile's first column
	slotDst    = "8(SP)"  // pointer to dst's row 0 at the current tile's first column
	slotCols   = "16(SP)" // columns left
	slotBRow   = "24(SP)" // bytes between b rows
	slotLdd    = "32(SP)" // bytes between dst rows
	slotAux1   = "40(SP)" // f32: tail mask pointer; q8: scale pointer of the current tile
	slotAux2   = "48(SP)" // f32: tail start element (k-8); q8: bytes between scale rows
	slotAux3   = "56(SP)" // f32: k mod 8; q8: block size
	slotKMain  = "64(SP)" // f32: k rounded down to 8; q8: k
	slotRow    = "72(SP)" // grouped: first row of the current group of 4
	slotLast   = "80(SP)" // grouped: index of a's last row
	slotARow   = "88(SP)" // f32: bytes between a rows
	frameBytes = 96
)

type gen struct{ buf bytes.Buffer }

func (g *gen) p(format string, args ...any) { fmt.Fprintf(&g.buf, "\t"+format+"\n", args...) }
func (g *gen) label(name string)            { fmt.Fprintf(&g.buf, "%s:\n", name) }
func (g *gen) raw(s string)                 { g.buf.WriteString(s) }

func y(i int) string { return fmt.Sprintf("Y%d", i) }
func x(i int) string { return fmt.Sprintf("X%d", i) }

// tile describes one register-blocked shape.
type tile struct {
	rows, cols int
	// bInRegs keeps the C chunks of b in registers and streams a through one
	// register (used when C+1 registers fit better than R+1); otherwise the R
	// chunks of a stay in registers and b streams through one.
	bInRegs bool
	// prefetch fetches the next column tile's b rows while this one runs, so
	// a tile whose rows come from beyond the caches does not wait for them.
	prefetch bool
}

// f32Tiles lists, per row count, the main tile and the one-column remainder tile.
var f32Tiles = map[int][]tile{
	4: {{4, 3, true, true}, {4, 1, false, false}},
	3: {{3, 4, false, false}, {3, 1, false, false}},
	2: {{2, 6, false, false}, {2, 1, false, false}},
	1: {{1, 8, false, false}, {1, 1, false, false}},
}

// q8Tiles: the int8 tiles also hold one broadcast scale per column.
var q8Tiles = map[int][]tile{
	4: {{4, 2, false, false}, {4, 1, false, false}},
	3: {{3, 3, false, false}, {3, 1, false, false}},
	2: {{2, 4, false, false}, {2, 1, false, false}},
	1: {{1, 6, false, false}, {1, 1, false, false}},
}

func (t tile) acc(r, c int) string { return y(r*t.cols + c) }

// reduceStore sums the 8 lanes of every accumulator in the fixed tree
// ((l0+l4)+(l2+l6)) + ((l1+l5)+(l3+l7)) and stores it to dst (AX = dst row 0
// at the tile's first column, CX = bytes between dst rows).
func (g *gen) reduceStore(t tile, grouped bool) {
	if !grouped {
		g.p("MOVQ %s, AX", slotDst)
		g.p("MOVQ %s, CX", slotLdd)
	}
	tmp := 15
	for r := 0; r < t.rows; r++ {
		if grouped {
			g.clampedRow(r, "AX")
			g.p("IMULQ %s, AX", slotLdd)
			g.p("ADDQ %s, AX", slotDst)
		}
		for c := 0; c < t.cols; c++ {
			a := r*t.cols + c
			g.reduceLanes(a, tmp)
			g.p("VMOVSS %s, %d(AX)", x(a), 4*c)
		}
		if r+1 < t.rows && !grouped {
			g.p("ADDQ CX, AX")
		}
	}
}

// reduceLanes folds the 8 lanes of accumulator Y<a> into the low lane of
// X<a>, in the package's order, with X<tmp> as scratch.
func (g *gen) reduceLanes(a, tmp int) {
	g.p("VEXTRACTF128 $1, %s, %s", y(a), x(tmp))
	g.p("VADDPS %s, %s, %s", x(tmp), x(a), x(a))
	g.p("VMOVHLPS %s, %s, %s", x(a), x(a), x(tmp))
	g.p("VADDPS %s, %s, %s", x(tmp), x(a), x(a))
	g.p("VMOVSHDUP %s, %s", x(a), x(tmp))
	g.p("VADDSS %s, %s, %s", x(tmp), x(a), x(a))
}

// clampedRow sets reg to min(group's first row + r, last row). Rows past the
// end of a repeat its last row: they compute that row's values again, bit
// for bit, and store them over it.
func (g *gen) clampedRow(r int, reg string) {
	g.p("MOVQ %s, %s", slotRow, reg)
	if r > 0 {
		g.p("ADDQ $%d, %s", r, reg)
	}
	g.p("CMPQ %s, %s", reg, slotLast)
	g.p("CMOVQGT %s, %s", slotLast, reg)
}

// groupRowPointers points aRegs at the (clamped) rows of the current group.
func (g *gen) groupRowPointers(aRegs []string) {
	for r, reg := range aRegs {
		g.clampedRow(r, "CX")
		g.p("IMULQ %s, CX", slotARow)
		g.p("ADDQ a+16(FP), CX")
		g.p("MOVQ CX, %s", reg)
	}
}

// columnPointers loads the b row pointers of the tile's columns from slotB,
// using AX as scratch for the row stride.
func (g *gen) columnPointers(bRegs []string) {
	g.p("MOVQ %s, AX", slotBRow)
	g.p("MOVQ %s, %s", slotB, bRegs[0])
	for c := 1; c < len(bRegs); c++ {
		g.p("LEAQ (%s)(AX*1), %s", bRegs[c-1], bRegs[c])
	}
}

// advance moves the tile state past cols columns.
func (g *gen) advance(cols int) {
	g.p("MOVQ %s, AX", slotBRow)
	g.p("IMULQ $%d, AX", cols)
	g.p("ADDQ AX, %s", slotB)
	g.p("ADDQ $%d, %s", 4*cols, slotDst)
	g.p("SUBQ $%d, %s", cols, slotCols)
}

// f32Chunk emits one 8-element step of the tile at element index AX; masked
// ANDs every loaded chunk with the tail mask at (CX).
func (g *gen) f32Chunk(t tile, aRegs, bRegs []string, masked bool) {
	mask := func(reg string) {
		if masked {
			g.p("VANDPS (CX), %s, %s", reg, reg)
		}
	}
	nacc := t.rows * t.cols
	if t.prefetch && !masked {
		pf, stride := gpPool[t.rows+t.cols], gpPool[t.rows+t.cols+1]
		g.p("PREFETCHT0 (%s)", pf)
		for c := 1; c < t.cols; c++ {
			g.p("PREFETCHT0 (%s)(%s*%d)", pf, stride, c)
		}
		g.p("ADDQ $32, %s", pf)
	}
	if t.bInRegs {
		for c := 0; c < t.cols; c++ {
			g.p("VMOVUPS (%s)(AX*4), %s", bRegs[c], y(nacc+c))
			mask(y(nacc + c))
		}
		at := y(nacc + t.cols)
		for r := 0; r < t.rows; r++ {
			g.p("VMOVUPS (%s)(AX*4), %s", aRegs[r], at)
			mask(at)
			for c := 0; c < t.cols; c++ {
				g.p("VFMADD231PS %s, %s, %s", y(nacc+c), at, t.acc(r, c))
			}
		}
		return
	}
	for r := 0; r < t.rows; r++ {
		g.p("VMOVUPS (%s)(AX*4), %s", aRegs[r], y(nacc+r))
		mask(y(nacc + r))
	}
	bt := y(nacc + t.rows)
	for c := 0; c < t.cols; c++ {
		if t.rows == 1 && !masked {
			g.p("VFMADD231PS (%s)(AX*4), %s, %s", bRegs[c], y(nacc), t.acc(0, c))
			continue
		}
		g.p("VMOVUPS (%s)(AX*4), %s", bRegs[c], bt)
		mask(bt)
		for r := 0; r < t.rows; r++ {
			g.p("VFMADD231PS %s, %s, %s", bt, y(nacc+r), t.acc(r, c))
		}
	}
}

func (g *gen) zeroAcc(t tile) {
	for i := 0; i < t.rows*t.cols; i++ {
		g.p("VXORPS %s, %s, %s", y(i), y(i), y(i))
	}
}

// f32Tile emits the loop over all column tiles of shape t. grouped runs,
// for each column tile, every group of t.rows rows of a in turn, so the
// tile's b rows are read from memory once for all of a's rows.
func (g *gen) f32Tile(name string, t tile, aRegs []string, grouped bool) {
	bRegs := gpPool[t.rows : t.rows+t.cols]
	pfx := fmt.Sprintf("%s_%dx%d", name, t.rows, t.cols)
	g.label(pfx + "_tile")
	g.p("CMPQ %s, $%d", slotCols, t.cols)
	g.p("JLT %s_done", pfx)
	g.columnPointers(bRegs)
	if grouped {
		g.p("MOVQ $0, %s", slotRow)
		g.label(pfx + "_group")
		g.groupRowPointers(aRegs)
	}
	g.zeroAcc(t)
	if t.prefetch {
		pf, stride := gpPool[t.rows+t.cols], gpPool[t.rows+t.cols+1]
		g.p("MOVQ %s, %s", slotBRow, stride)
		g.p("LEAQ (%s)(%s*1), %s", bRegs[t.cols-1], stride, pf)
	}
	g.p("XORQ AX, AX")
	g.p("MOVQ %s, CX", slotKMain)
	g.label(pfx + "_loop")
	g.f32Chunk(t, aRegs, bRegs, false)
	g.p("ADDQ $8, AX")
	g.p("CMPQ AX, CX")
	g.p("JLT %s_loop", pfx)
	g.p("CMPQ %s, $0", slotAux3)
	g.p("JEQ %s_reduce", pfx)
	g.p("MOVQ %s, AX", slotAux2)
	g.p("MOVQ %s, CX", slotAux1)
	g.f32Chunk(t, aRegs, bRegs, true)
	g.label(pfx + "_reduce")
	g.reduceStore(t, grouped)
	if grouped {
		g.p("ADDQ $%d, %s", t.rows, slotRow)
		g.p("MOVQ %s, AX", slotLast)
		g.p("CMPQ %s, AX", slotRow)
		g.p("JLE %s_group", pfx)
	}
	g.advance(t.cols)
	g.p("JMP %s_tile", pfx)
	g.label(pfx + "_done")
}

// tailSlots stores, from k (kArg), k rounded down to 8 at kMain, the tail's
// first element k-8 at tailAt, k mod 8 at tailLen and the tail mask's
// address at tailMask; k stays in CX.
func (g *gen) tailSlots(kArg, kMain, tailAt, tailLen, tailMask string) {
	g.p("MOVQ %s, CX", kArg)
	g.p("MOVQ CX, AX")
	g.p("ANDQ $-8, AX")
	g.p("MOVQ AX, %s", kMain)
	g.p("LEAQ -8(CX), AX")
	g.p("MOVQ AX, %s", tailAt)
	g.p("MOVQ CX, AX")
	g.p("ANDQ $7, AX")
	g.p("MOVQ AX, %s", tailLen)
	g.p("LEAQ tailMask<>(SB), DX")
	g.p("LEAQ (DX)(AX*4), DX")
	g.p("MOVQ DX, %s", tailMask)
}

// rowPointers loads a's row pointers (row stride in bytes in CX).
func (g *gen) rowPointers(rows int, aRegs []string) {
	g.p("MOVQ a+16(FP), %s", aRegs[0])
	for r := 1; r < rows; r++ {
		g.p("LEAQ (%s)(CX*1), %s", aRegs[r-1], aRegs[r])
	}
}

// f32Kernel emits matmulTRows<rows>, or with grouped matmulTGroups4, which
// takes any m >= 1 in groups of 4 rows.
func (g *gen) f32Kernel(rows int, grouped bool) {
	name := fmt.Sprintf("matmulTRows%d", rows)
	nArg, kArg, argBytes := "n+48(FP)", "k+56(FP)", 64
	if grouped {
		name = fmt.Sprintf("matmulTGroups%d", rows)
		nArg, kArg, argBytes = "n+56(FP)", "k+64(FP)", 72
		g.raw(fmt.Sprintf("\n// func %s(dst *float32, ldd int, a *float32, lda int, b *float32, ldb int, m int, n int, k int)\n", name))
	} else {
		g.raw(fmt.Sprintf("\n// func %s(dst *float32, ldd int, a *float32, lda int, b *float32, ldb int, n int, k int)\n", name))
	}
	g.raw("// Requires k >= 8.\n")
	g.raw(fmt.Sprintf("TEXT ·%s(SB), NOSPLIT, $%d-%d\n", name, frameBytes, argBytes))
	aRegs := gpPool[:rows]
	if grouped {
		g.p("MOVQ m+48(FP), AX")
		g.p("DECQ AX")
		g.p("MOVQ AX, %s", slotLast)
	}
	g.tailSlots(kArg, slotKMain, slotAux2, slotAux3, slotAux1)
	g.p("MOVQ ldb+40(FP), AX")
	g.p("SHLQ $2, AX")
	g.p("MOVQ AX, %s", slotBRow)
	g.p("MOVQ lda+24(FP), CX")
	g.p("SHLQ $2, CX")
	g.p("MOVQ CX, %s", slotARow)
	g.p("MOVQ ldd+8(FP), AX")
	g.p("SHLQ $2, AX")
	g.p("MOVQ AX, %s", slotLdd)
	g.p("MOVQ b+32(FP), AX")
	g.p("MOVQ AX, %s", slotB)
	g.p("MOVQ dst+0(FP), AX")
	g.p("MOVQ AX, %s", slotDst)
	g.p("MOVQ %s, AX", nArg)
	g.p("MOVQ AX, %s", slotCols)
	if !grouped {
		g.rowPointers(rows, aRegs)
	}
	for _, t := range f32Tiles[rows] {
		g.f32Tile(name, t, aRegs, grouped)
	}
	g.p("VZEROUPPER")
	g.p("RET")
}

// scaleAddr returns the address of column c's scale given sp (column 0),
// sp3 (column 3) and the scale row stride register.
func scaleAddr(c int, sp, sp3, stride string) string {
	switch c {
	case 0:
		return "(" + sp + ")"
	case 1:
		return fmt.Sprintf("(%s)(%s*1)", sp, stride)
	case 2:
		return fmt.Sprintf("(%s)(%s*2)", sp, stride)
	case 3:
		return "(" + sp3 + ")"
	case 4:
		return fmt.Sprintf("(%s)(%s*4)", sp, stride)
	case 5:
		return fmt.Sprintf("(%s)(%s*2)", sp3, stride)
	}
	panic("scaleAddr: at most 6 columns")
}

func (g *gen) q8Tile(name string, t tile, aRegs []string) {
	bRegs := gpPool[t.rows : t.rows+t.cols]
	rest := gpPool[t.rows+t.cols:]
	blockEnd, sp, sp3, stride := rest[0], rest[1], rest[2], rest[3]
	nacc := t.rows * t.cols
	av := func(r int) string { return y(nacc + r) }
	sv := func(c int) string { return y(nacc + t.rows + c) }
	bt := y(nacc + t.rows + t.cols)
	pfx := fmt.Sprintf("%s_%dx%d", name, t.rows, t.cols)
	g.label(pfx + "_tile")
	g.p("CMPQ %s, $%d", slotCols, t.cols)
	g.p("JLT %s_done", pfx)
	g.columnPointers(bRegs)
	g.zeroAcc(t)
	g.p("MOVQ %s, %s", slotAux1, sp)
	g.p("MOVQ %s, %s", slotAux2, stride)
	if t.cols > 3 {
		g.p("LEAQ (%s)(%s*2), %s", sp, stride, sp3)
		g.p("ADDQ %s, %s", stride, sp3)
	}
	g.p("XORQ AX, AX")
	g.p("MOVQ %s, CX", slotKMain)
	g.label(pfx + "_block")
	for c := 0; c < t.cols; c++ {
		g.p("VBROADCASTSS %s, %s", scaleAddr(c, sp, sp3, stride), sv(c))
	}
	g.p("MOVQ %s, %s", slotAux3, blockEnd)
	g.p("ADDQ AX, %s", blockEnd)
	g.label(pfx + "_loop")
	for r := 0; r < t.rows; r++ {
		g.p("VMOVUPS (%s)(AX*4), %s", aRegs[r], av(r))
	}
	for c := 0; c < t.cols; c++ {
		g.p("VPMOVSXBD (%s)(AX*1), %s", bRegs[c], bt)
		g.p("VCVTDQ2PS %s, %s", bt, bt)
		g.p("VMULPS %s, %s, %s", sv(c), bt, bt)
		for r := 0; r < t.rows; r++ {
			g.p("VFMADD231PS %s, %s, %s", bt, av(r), t.acc(r, c))
		}
	}
	g.p("ADDQ $8, AX")
	g.p("CMPQ AX, %s", blockEnd)
	g.p("JLT %s_loop", pfx)
	g.p("ADDQ $4, %s", sp)
	if t.cols > 3 {
		g.p("ADDQ $4, %s", sp3)
	}
	g.p("CMPQ AX, CX")
	g.p("JLT %s_block", pfx)
	g.reduceStore(t, false)
	g.advance(t.cols)
	g.p("MOVQ %s, AX", slotAux2)
	g.p("IMULQ $%d, AX", t.cols)
	g.p("ADDQ AX, %s", slotAux1)
	g.p("JMP %s_tile", pfx)
	g.label(pfx + "_done")
}

func (g *gen) q8Kernel(rows int) {
	name := fmt.Sprintf("matmulTQ8Rows%d", rows)
	g.raw(fmt.Sprintf("\n// func %s(dst *float32, ldd int, a *float32, b *int8, scales *float32, n int, k int, blockSize int, scaleStride int)\n", name))
	g.raw("// Requires blockSize a positive multiple of 8 dividing k.\n")
	g.raw(fmt.Sprintf("TEXT ·%s(SB), NOSPLIT, $%d-72\n", name, frameBytes))
	aRegs := gpPool[:rows]
	g.p("MOVQ k+48(FP), CX")
	g.p("MOVQ CX, %s", slotKMain)
	g.p("MOVQ CX, %s", slotBRow)
	g.p("MOVQ blockSize+56(FP), AX")
	g.p("MOVQ AX, %s", slotAux3)
	g.p("MOVQ scaleStride+64(FP), AX")
	g.p("SHLQ $2, AX")
	g.p("MOVQ AX, %s", slotAux2)
	g.p("MOVQ scales+32(FP), AX")
	g.p("MOVQ AX, %s", slotAux1)
	g.p("MOVQ ldd+8(FP), AX")
	g.p("SHLQ $2, AX")
	g.p("MOVQ AX, %s", slotLdd)
	g.p("MOVQ b+24(FP), AX")
	g.p("MOVQ AX, %s", slotB)
	g.p("MOVQ dst+0(FP), AX")
	g.p("MOVQ AX, %s", slotDst)
	g.p("MOVQ n+40(FP), AX")
	g.p("MOVQ AX, %s", slotCols)
	g.p("SHLQ $2, CX")
	g.rowPointers(rows, aRegs)
	for _, t := range q8Tiles[rows] {
		g.q8Tile(name, t, aRegs)
	}
	g.p("VZEROUPPER")
	g.p("RET")
}

const header = `// Code generated by gen_kernels.go; DO NOT EDIT.

//go:build amd64 && !purego

#include "textflag.h"

// tailMask: 8 zero words then 8 all-ones words; the 8 words from index t
// keep the last t lanes of a chunk.
DATA tailMask<>+0(SB)/8, $0
DATA tailMask<>+8(SB)/8, $0
DATA tailMask<>+16(SB)/8, $0
DATA tailMask<>+24(SB)/8, $0
DATA tailMask<>+32(SB)/8, $0xffffffffffffffff
DATA tailMask<>+40(SB)/8, $0xffffffffffffffff
DATA tailMask<>+48(SB)/8, $0xffffffffffffffff
DATA tailMask<>+56(SB)/8, $0xffffffffffffffff
GLOBL tailMask<>(SB), RODATA|NOPTR, $64
`

func main() {
	var g gen
	g.raw(header)
	for rows := 1; rows <= 4; rows++ {
		g.f32Kernel(rows, false)
	}
	g.f32Kernel(4, true)
	g.f32Stream("matmulTStream1", 8)
	g.f32Growing4("matmulTGrowing4")
	g.zKernel()
	g.zRowIndexTable()
	for rows := 1; rows <= 4; rows++ {
		g.q8Kernel(rows)
	}
	out := strings.ReplaceAll(g.buf.String(), "\t\n", "\n")
	if err := os.WriteFile("kernels_amd64.s", []byte(out), 0o644); err != nil {
		log.Fatal(err)
	}
}
