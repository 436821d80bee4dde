//go:build ignore

// The decode kernels of gen_quant.go written for one format, where its
// decode is bound by instructions rather than by memory.
package main

import (
	"fmt"
	"strings"
)

// streamConstants are the K-quants' decode tables (kernelKStream).
func streamConstants() string {
	var b strings.Builder
	// q4kStreamBlocks' VPSHUFB controls: pair t's first sub-block's scale
	// byte, widened, to words 0–15, its second's to 16–31.
	for t, pr := range q4kStreamPairs {
		for q := range 8 {
			v := uint64(0x80<<8|pr[q/4]) * 0x0001000100010001
			fmt.Fprintf(&b, "DATA q4kStreamScales<>+%d(SB)/8, $0x%016x\n", 64*t+8*q, v)
		}
	}
	b.WriteString("GLOBL q4kStreamScales<>(SB), RODATA|NOPTR, $256\n\n")
	// And the minima (bytes 8–15) as int32: 8–11 in the first lane, 12–15
	// in the second.
	for q := range 4 {
		m := 8 + 2*q
		v := uint64(0x80808000|m) | uint64(0x80808000|(m+1))<<32
		fmt.Fprintf(&b, "DATA q4kStreamMins<>+%d(SB)/8, $0x%016x\n", 8*q, v)
	}
	b.WriteString("GLOBL q4kStreamMins<>(SB), RODATA|NOPTR, $32\n\n")
	b.WriteString(fifthBitRotations("q5kStreamRot", q4kStreamPairs))
	// q4kStreamScales' tables, each the same in both 16-byte lanes: the
	// bytes of a block (scales at 4–15) giving the low bits of each output
	// byte, the bytes giving the high bits of 4–7 and 12–15, the word
	// shifts that bring the high nibbles down for minima 4–7, and the masks
	// of the low bits and of the high.
	lanes := [][16]byte{
		{4, 5, 6, 7, 12, 13, 14, 15, 8, 9, 10, 11, 12, 13, 14, 15},
		{4, 5, 6, 7, 4, 5, 6, 7, 8, 9, 10, 11, 8, 9, 10, 11},
		{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 4, 0},
		{0x3f, 0x3f, 0x3f, 0x3f, 0x0f, 0x0f, 0x0f, 0x0f, 0x3f, 0x3f, 0x3f, 0x3f, 0x0f, 0x0f, 0x0f, 0x0f},
		{0, 0, 0, 0, 0x30, 0x30, 0x30, 0x30, 0, 0, 0, 0, 0x30, 0x30, 0x30, 0x30},
	}
	for t, lane := range lanes {
		for q := range 4 {
			var v uint64
			for e := range 8 {
				v |= uint64(lane[8*(q%2)+e]) << (8 * e)
			}
			fmt.Fprintf(&b, "DATA q4kScaleBytes<>+%d(SB)/8, $0x%016x\n", 32*t+8*q, v)
		}
	}
	b.WriteString("GLOBL q4kScaleBytes<>(SB), RODATA|NOPTR, $160\n\n")
	// q6kStreamBlocks' tables: the word shifts that move bits 2r–2r+1 of
	// the high bits to 4–5 (left for r = 0 and 1 in the low and high half,
	// right for r = 2 and 3), and, per part t of 64 levels, the byte of
	// each word's 16-element scale (in the high byte: scale·256, signed).
	for dir, shifts := range [2][2]int{{4, 2}, {0, 2}} {
		for q := range 8 {
			fmt.Fprintf(&b, "DATA q6kStreamShifts<>+%d(SB)/8, $0x%016x\n", 64*dir+8*q, uint64(shifts[q/4])*0x0001000100010001)
		}
	}
	b.WriteString("GLOBL q6kStreamShifts<>(SB), RODATA|NOPTR, $128\n\n")
	for t := range 4 {
		for q := range 8 {
			// Lane q/2 of part t holds elements 16·(q/2) to 16·(q/2)+15
			// of its 64: scale 4t + q/2.
			v := uint64(4*t+q/2)<<8 | 0x80
			fmt.Fprintf(&b, "DATA q6kStreamScales<>+%d(SB)/8, $0x%016x\n", 64*t+8*q, v*0x0001000100010001)
		}
	}
	b.WriteString("GLOBL q6kStreamScales<>(SB), RODATA|NOPTR, $256\n")
	return strings.TrimSuffix(b.String(), "\n")
}

// q4kStreamPairs are the sub-blocks whose levels share a zmm in
// qdotQ4_KStream: a 64-byte load of a super-block's levels holds two
// 32-byte parts, each the low nibbles of one sub-block and the high of
// the next, so the low nibbles of the load are sub-blocks a and b, its
// high nibbles a+1 and b+1.
var q4kStreamPairs = [4][2]int{{0, 2}, {1, 3}, {4, 6}, {5, 7}}

// kStreamFormat is a K-quant kernelKStream takes: its super-blocks of
// size bytes, the steps shared by the columns at each super-block
// (activations at SI, their scale at R8 and sums at R11), and those that
// add a super-block of each column to its accumulator.
type kStreamFormat struct {
	name   string
	size   int
	setup  func(g *gen)
	shared func(g *gen)
	blocks func(g *gen, cols []kStreamColumn)
}

// kStreamColumn is a column of a kernelKStream step: its block at blk,
// its accumulator y(acc), and ten scratch registers from z(scratch).
type kStreamColumn struct {
	blk          string
	acc, scratch int
}

var kStreamFormats = []kStreamFormat{
	q4kStream(q4kFormats[0]),
	q4kStream(q4kFormats[1]),
	{"Q6_K", 210, q6kStreamSetup, q6kStreamShared, q6kStreamBlocks},
}

// kernelKStream emits qdot<NAME>Stream, decode of a K-quant on AVX-512
// VNNI: dotK's steps in its order, each column's super-blocks read in
// order, two sequential streams of columns (j beside j+n/2; an odd last
// column alone), where the tile (qdot…Tile1) takes two neighbouring
// columns 32 bytes at a time; the activations' pieces are loaded once a
// super-block for both columns, and every load of weights lies inside its
// super-block, so none passes a column's end. Every format takes the
// activations' sums (Q6_K, without minima, leaves them), so one skeleton
// serves them.
//
// Registers: DI dst of stream 0, 0(SP) the distance between the streams'
// outputs; R9 stream 0's column, 8(SP) the distance between streams; BX
// the column stride; CX columns left; SI the activations at the
// super-block, R8 their scales, R11 their sums, 16(SP) the activations'
// end; R10 and R13 the columns' blocks; AX, DX, R12, R14 scratch. Y0, Y1
// the accumulators, Z2–Z11 and Z12–Z21 the columns' scratch, Z22–Z31 the
// format's.
func (g *gen) kernelKStream(f kStreamFormat) {
	name := "qdot" + f.name + "Stream"
	cols := []kStreamColumn{{"R10", 0, 2}, {"R13", 1, 12}}
	fmt.Fprintf(&g.buf, "\n// func %s(dst *float32, x *int8, xd *float32, xs *int32, w *byte, wstride int, n int, nb int)\n", name)
	fmt.Fprintf(&g.buf, "TEXT ·%s(SB), NOSPLIT, $24-64\n", name)
	g.p("MOVQ dst+0(FP), DI")
	g.p("MOVQ w+32(FP), R9")
	g.p("MOVQ wstride+40(FP), BX")
	g.p("MOVQ n+48(FP), CX")
	f.setup(g)
	// The activations end nb·256 bytes on.
	g.p("MOVQ nb+56(FP), AX")
	g.p("SHLQ $8, AX")
	g.p("ADDQ x+8(FP), AX")
	g.p("MOVQ AX, 16(SP)")
	// The second stream starts at column n/2.
	g.streamsApart(1)
	for _, single := range []bool{false, true} {
		pfx, cs := name+"_two", cols
		if single {
			pfx, cs = name+"_one", cols[:1]
			// The odd last column, n−1, follows the second stream's.
			g.p("TESTQ $1, n+48(FP)")
			g.p("JZ %s_done", name)
			g.p("ADDQ 8(SP), R9")
			g.p("ADDQ 0(SP), DI")
			g.p("MOVQ $1, CX")
		}
		g.label(pfx + "_col")
		g.p("CMPQ CX, $1")
		g.p("JLT %s_end", pfx)
		for _, c := range cs {
			g.p("VXORPS %s, %s, %s", y(c.acc), y(c.acc), y(c.acc))
		}
		g.p("MOVQ x+8(FP), SI")
		g.p("MOVQ xd+16(FP), R8")
		g.p("MOVQ xs+24(FP), R11")
		g.p("MOVQ R9, R10")
		if !single {
			g.p("MOVQ R9, R13")
			g.p("ADDQ 8(SP), R13")
		}
		g.label(pfx + "_block")
		g.p("CMPQ SI, 16(SP)")
		g.p("JGE %s_store", pfx)
		f.shared(g)
		f.blocks(g, cs)
		g.p("ADDQ $256, SI")
		g.p("ADDQ $4, R8")
		g.p("ADDQ $32, R11")
		for _, c := range cs {
			g.p("ADDQ $%d, %s", f.size, c.blk)
		}
		g.p("JMP %s_block", pfx)
		accs := []int{}
		for _, c := range cs {
			accs = append(accs, c.acc)
		}
		g.streamStore(pfx, accs)
		g.p("JMP %s_col", pfx)
		g.label(pfx + "_end")
	}
	g.label(name + "_done")
	g.p("VZEROUPPER")
	g.p("RET")
}

// Q4_K (dotQ4_K):
//   - A super-block's 128 bytes of levels are two 64-byte loads at bytes
//     16 and 80, each split by one shift and two masks into the low
//     nibbles (sub-blocks a and b of q4kStreamPairs) and the high (a+1
//     and b+1).
//   - x is loaded in the same pairs of 32 bytes; VPMADDUBSW and VPDPWSSD
//     with the sub-blocks' scales as words (spread by VPSHUFB from the
//     scales and minima broadcast to every lane) add scale × the
//     4-element sums to an int32 lane per half, and the halves' sum is
//     dotQ4_K's exact p[l].
//   - n[l] = min_l·Σx_l by VPMULLD; then acc += p·(d·dx) − n·(dmin·dx),
//     each product and the difference rounded once, on ymm.
//
// Q5_K's fifth bits, 32 bytes broadcast to both halves of a zmm, are
// rotated (per dword, by q5kStreamRot: the sub-blocks of each half) so that
// each level's bit lands on bit 4, and ORed into the nibbles.
//
// Registers: Z22–Z25 x in the pairs, Y26 the sums, Y27 d_x, Z28 the
// nibble mask, Y29–Y31 scratch of the scales' unpacking.

func q4kStreamSetup(g *gen) { g.p("VPBROADCASTD nibbleMask<>(SB), Z28") }

func q4kStreamShared(g *gen) {
	for t, pr := range q4kStreamPairs {
		g.p("VMOVDQU32 %d(SI), %s", 32*pr[0], y(22+t))
		g.p("VINSERTI64X4 $1, %d(SI), %s, %s", 32*pr[1], z(22+t), z(22+t))
	}
	g.p("VMOVDQU32 (R11), Y26")
	g.p("VBROADCASTSS (R8), Y27")
}

// q4kStream is Q4_K's stream, or Q5_K's.
func q4kStream(f q4kFormat) kStreamFormat {
	return kStreamFormat{f.name, f.size, q4kStreamSetup, q4kStreamShared, func(g *gen, cols []kStreamColumn) {
		g.q4kStreamBlocks(f, cols)
	}}
}

func (g *gen) q4kStreamBlocks(f q4kFormat, cols []kStreamColumn) {
	// Scales and minima of each column, in every lane of z(scratch+1).
	last := cols[len(cols)-1]
	g.q4kStreamScales(cols[0].blk, cols[0].scratch+1, len(cols) > 1, last.blk, last.scratch+1)
	for _, c := range cols {
		isum, sw, lv, lv2, lv3, prod, sc := c.scratch, c.scratch+1, c.scratch+2, c.scratch+3, c.scratch+4, c.scratch+5, c.scratch+6
		qh, tmp := c.scratch+7, c.scratch+8
		blk := c.blk
		g.p("VPXORD %s, %s, %s", z(isum), z(isum), z(isum))
		if f.five {
			g.p("VBROADCASTI64X4 %d(%s), %s", q5kHigh, blk, z(qh))
		}
		for half := range 2 {
			g.p("VMOVDQU64 %d(%s), %s", f.qs+64*half, blk, z(lv))
			g.p("VPSRLW $4, %s, %s", z(lv), z(lv2))
			g.p("VPANDD Z28, %s, %s", z(lv), z(lv))
			g.p("VPANDD Z28, %s, %s", z(lv2), z(lv2))
			for i, l := range []int{lv, lv2} {
				t := 2*half + i
				if f.five {
					g.fifthBitsZ(fmt.Sprintf("q5kStreamRot<>+%d(SB)", 64*t), qh, l, tmp)
				}
				g.p("VPMADDUBSW %s, %s, %s", z(22+t), z(l), z(prod))
				g.p("VPSHUFB q4kStreamScales<>+%d(SB), %s, %s", 64*t, z(sw), z(sc))
				g.p("VPDPWSSD %s, %s, %s", z(sc), z(prod), z(isum))
			}
		}
		// p: the halves summed; n: the minima times the sums.
		g.p("VEXTRACTI64X4 $1, %s, %s", z(isum), y(prod))
		g.p("VPADDD %s, %s, %s", y(prod), y(isum), y(isum))
		g.p("VPSHUFB q4kStreamMins<>(SB), %s, %s", y(sw), y(lv3))
		g.p("VPMULLD Y26, %s, %s", y(lv3), y(lv3))
		// d·d_x and dmin·d_x, each rounded once.
		g.p("VPBROADCASTW (%s), %s", blk, x(lv))
		g.p("VCVTPH2PS %s, %s", x(lv), y(lv))
		g.p("VMULPS Y27, %s, %s", y(lv), y(lv))
		g.p("VPBROADCASTW 2(%s), %s", blk, x(lv2))
		g.p("VCVTPH2PS %s, %s", x(lv2), y(lv2))
		g.p("VMULPS Y27, %s, %s", y(lv2), y(lv2))
		g.p("VCVTDQ2PS %s, %s", y(isum), y(isum))
		g.p("VMULPS %s, %s, %s", y(lv), y(isum), y(isum))
		g.p("VCVTDQ2PS %s, %s", y(lv3), y(lv3))
		g.p("VMULPS %s, %s, %s", y(lv2), y(lv3), y(lv3))
		g.p("VSUBPS %s, %s, %s", y(lv3), y(isum), y(isum))
		g.p("VADDPS %s, %s, %s", y(isum), y(c.acc), y(c.acc))
	}
}

// q4kStreamScales sets z(sw0) to the scales (bytes 0–7) and minima
// (8–15) of the super-block at blk0 in each of its four lanes and, with
// two, z(sw1) to those at blk1: both blocks' 12 bytes of 6-bit values in
// the lanes of one ymm, spread by VPSHUFB to the bytes whose low six bits
// (scales and minima 0–3) or low or high nibble (4–7) they give, and the
// two high bits of 4–7 from the bytes of 0–3. Y29–Y31 scratch.
func (g *gen) q4kStreamScales(blk0 string, sw0 int, two bool, blk1 string, sw1 int) {
	g.p("VMOVDQU32 (%s), X29", blk0)
	if two {
		g.p("VINSERTI32X4 $1, (%s), Y29, Y29", blk1)
	}
	g.p("VPSHUFB q4kScaleBytes<>(SB), Y29, Y30")
	g.p("VPSHUFB q4kScaleBytes<>+32(SB), Y29, Y31")
	g.p("VPSRLVW q4kScaleBytes<>+64(SB), Y30, Y30")
	g.p("VPANDD q4kScaleBytes<>+96(SB), Y30, Y30")
	g.p("VPSRLW $2, Y31, Y31")
	g.p("VPANDD q4kScaleBytes<>+128(SB), Y31, Y31")
	g.p("VPORD Y31, Y30, Y30")
	g.p("VSHUFI32X4 $0x00, Z30, Z30, %s", z(sw0))
	if two {
		g.p("VSHUFI32X4 $0x55, Z30, Z30, %s", z(sw1))
	}
}

// Q6_K (dotQ6_K):
//   - Each half of a super-block is one 64-byte load of its low nibbles
//     (bytes 64h: sub-blocks 4h and 4h+1 in the low nibbles, 4h+2 and
//     4h+3 in the high) and its 32 bytes of high bits broadcast to both
//     halves of a zmm, shifted per half and masked into bits 4–5 of each
//     level: two zmm of 64 unsigned levels q, sub-blocks in the order of
//     x, so x is read straight from memory.
//   - VPMADDUBSW of q against x less that of 32 (shared by the columns)
//     is Σ(q−32)·x in exact pairs of words; VPDPWSSD adds them times the
//     16-element scales, spread by VPSHUFB to the high byte of each word
//     (scale·256, each lane of eight words one scale: no lane crossing),
//     into two int32 accumulators, each of two zmm at most 2·8128·128·256
//     ·2 < 2³¹ in magnitude; each is shifted back by 8 exactly before
//     they and the halves are summed: dotQ6_K's p[l].
//   - acc += p·(d·dx), the product rounded once, then less 0 as dotK
//     subtracts the minima's term, which is 0 (a −0 stays −0, a NaN a
//     NaN).
//
// Registers: Z22–Z25 32·x in pairs, Z26 the nibble mask, Z27 the bits 4–5
// mask, Y28 d_x, Y29 zero.

func q6kStreamSetup(g *gen) {
	g.p("VPBROADCASTD nibbleMask<>(SB), Z26")
	g.p("VPBROADCASTD bits45<>(SB), Z27")
	g.p("VPXORD Y29, Y29, Y29")
}

func q6kStreamShared(g *gen) {
	g.p("VPBROADCASTD thirtyTwos<>(SB), Z22")
	for t := range 4 {
		if t < 3 {
			g.p("VPMADDUBSW %d(SI), Z22, %s", 64*t, z(23+t))
		} else {
			g.p("VPMADDUBSW %d(SI), Z22, Z22", 64*t)
		}
	}
	g.p("VBROADCASTSS (R8), Y28")
}

func q6kStreamBlocks(g *gen, cols []kStreamColumn) {
	// 32·x of part t (64 elements) is in thirty(t).
	thirty := func(t int) int { return [4]int{23, 24, 25, 22}[t] }
	for _, c := range cols {
		s := c.scratch
		scales, low, high, lv, tmp, prod, sc, acc0, acc1 := s, s+1, s+2, s+3, s+4, s+5, s+6, s+7, s+8
		blk := c.blk
		g.p("VBROADCASTI32X4 192(%s), %s", blk, z(scales))
		g.p("VPXORD %s, %s, %s", z(acc0), z(acc0), z(acc0))
		g.p("VPXORD %s, %s, %s", z(acc1), z(acc1), z(acc1))
		for h := range 2 {
			g.p("VMOVDQU64 %d(%s), %s", 64*h, blk, z(low))
			g.p("VBROADCASTI64X4 %d(%s), %s", 128+32*h, blk, z(high))
			for nib := range 2 {
				t := 2*h + nib
				// Levels of sub-blocks 4h+2nib and 4h+2nib+1: nibble nib
				// of the low bits, bits 2r and 2r+1 of the high (r =
				// 2nib and 2nib+1) moved to bits 4–5.
				if nib == 0 {
					g.p("VPANDD Z26, %s, %s", z(low), z(lv))
					g.p("VPSLLVW q6kStreamShifts<>(SB), %s, %s", z(high), z(tmp))
				} else {
					g.p("VPSRLW $4, %s, %s", z(low), z(lv))
					g.p("VPANDD Z26, %s, %s", z(lv), z(lv))
					g.p("VPSRLVW q6kStreamShifts<>+64(SB), %s, %s", z(high), z(tmp))
				}
				g.p("VPTERNLOGD $0xf8, Z27, %s, %s", z(tmp), z(lv))
				g.p("VPMADDUBSW %d(SI), %s, %s", 64*t, z(lv), z(prod))
				g.p("VPSUBW %s, %s, %s", z(thirty(t)), z(prod), z(prod))
				g.p("VPSHUFB q6kStreamScales<>+%d(SB), %s, %s", 64*t, z(scales), z(sc))
				g.p("VPDPWSSD %s, %s, %s", z(sc), z(prod), z([2]int{acc0, acc1}[h]))
			}
		}
		// p: both accumulators shifted back by 8, summed, halves summed.
		g.p("VPSRAD $8, %s, %s", z(acc0), z(acc0))
		g.p("VPSRAD $8, %s, %s", z(acc1), z(acc1))
		g.p("VPADDD %s, %s, %s", z(acc1), z(acc0), z(acc0))
		g.p("VEXTRACTI64X4 $1, %s, %s", z(acc0), y(acc1))
		g.p("VPADDD %s, %s, %s", y(acc1), y(acc0), y(acc0))
		// d·d_x rounded once; p times it, less 0·(0·d_x).
		g.p("VPBROADCASTW 208(%s), %s", blk, x(tmp))
		g.p("VCVTPH2PS %s, %s", x(tmp), y(tmp))
		g.p("VMULPS Y28, %s, %s", y(tmp), y(tmp))
		g.p("VMULPS Y29, Y28, %s", y(sc))
		g.p("VMULPS Y29, %s, %s", y(sc), y(sc))
		g.p("VCVTDQ2PS %s, %s", y(acc0), y(acc0))
		g.p("VMULPS %s, %s, %s", y(tmp), y(acc0), y(acc0))
		g.p("VSUBPS %s, %s, %s", y(sc), y(acc0), y(acc0))
		g.p("VADDPS %s, %s, %s", y(acc0), y(c.acc), y(c.acc))
	}
}

// streamsApart sets how far apart a kernel's streams of columns start:
// n>>shift columns (CX holds n, BX a column's bytes of weights), kept as
// 8(SP) bytes of weights and 0(SP) bytes of dst (four a float32 column).
func (g *gen) streamsApart(shift int) {
	g.p("SHRQ $%d, CX", shift)
	g.p("MOVQ CX, AX")
	g.p("IMULQ BX, AX")
	g.p("MOVQ AX, 8(SP)")
	g.p("LEAQ (CX*4), AX")
	g.p("MOVQ AX, 0(SP)")
}
