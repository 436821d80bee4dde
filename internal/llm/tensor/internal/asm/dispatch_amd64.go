//go:build amd64 && !purego

package asm

import (
	"unsafe"

	"golang.org/x/sys/cpu"

	"github.com/weftlabs/weft/internal/llm/quant"
)

// useAVX2 is fixed at start-up: the assembly needs AVX2, FMA and F16C (every
// AVX2+FMA CPU has F16C, but it is a separate CPUID bit, so it is checked).
var useAVX2 = cpu.X86.HasAVX && cpu.X86.HasAVX2 && cpu.X86.HasFMA && hasF16C()

// useAVX512 adds the 8-row AVX-512 tile to the column-blocked order (large
// m); it sums in the same order as the AVX2 tiles, so results do not change.
var useAVX512 = useAVX2 && cpu.X86.HasAVX512F && cpu.X86.HasAVX512DQ && cpu.X86.HasAVX512VL

// useVNNI adds the AVX-512 VNNI tiles of the quantised products (four rows
// by two columns, zmm): they give the AVX2 kernels' bits. They spread
// nibbles with VPERMB, which is AVX512_VBMI's (CPUs with VNNI and without
// VBMI, as Cascade Lake, take the AVX2 kernels), and split them with
// GF2P8AFFINEQB (GFNI: every CPU with VNNI and VBMI has it).
var useVNNI = useAVX512 && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512VNNI && cpu.X86.HasAVX512VBMI && cpu.X86.HasAVX512GFNI

// colBlockBytes bounds the b rows one pass over a's rows reuses, so that they
// stay in the per-core cache while every tile of rows streams past them.
const colBlockBytes = 1 << 20

// groupedMaxRows is the largest m taken by matmulTGroups4, which runs every
// group of 4 rows of a against each tile of b while the tile is in L1. Past
// it, re-reading a for every tile costs more than re-reading blocks of b
// from L2, and the column-blocked order wins (measured at k=288 and 1024).
const groupedMaxRows = 16

func path() string {
	if useVNNI {
		return "avx512vnni+avx2+fma"
	}
	if useAVX512 {
		return "avx512+avx2+fma"
	}
	if useAVX2 {
		return "avx2+fma"
	}
	return "purego"
}

func dot(a, b []float32) float32 {
	if !useAVX2 || len(a) < 8 {
		return dotGeneric(a, b)
	}
	var r float32
	matmulTRows1(&r, 1, &a[0], len(a), &b[0], len(a), 1, len(a))
	return r
}

func matmulT(dst []float32, ldd int, a []float32, lda int, b []float32, ldb, m, n, k int) {
	if !useAVX2 || k < 8 {
		matmulTGeneric(dst, ldd, a, lda, b, ldb, m, n, k)
		return
	}
	if m == 1 {
		// Decode: the columns in eight long sequential streams, which the
		// hardware prefetcher follows, with the tiles' bits.
		matmulTStream1(&dst[0], &a[0], &b[0], ldb, n, k)
		return
	}
	if m >= 4 && m <= groupedMaxRows && !(useAVX512 && m >= 8) {
		// A small batch (concurrent decode steps): every b row is read once,
		// for all rows of a. With AVX-512, 8 rows or more take the 8-row
		// tile below, which prefetches as this order does and does twice
		// the lanes per multiply-add (1.3 to 1.5 times as fast at m=8).
		matmulTGroups4(&dst[0], ldd, &a[0], lda, &b[0], ldb, m, n, k)
		return
	}
	// m of 2 or 3 is one pass of a row kernel; m > groupedMaxRows sweeps
	// blocks of b that stay in L2 with every group of 4 rows of a.
	nb := columnBlock(m, n, k*4)
	m8 := 0 // rows the 8-row tile takes
	if useAVX512 {
		m8 = m / 8 * 8
	}
	a8, lda8 := a, lda
	if m8 > 0 && padAliasedRows && aliasedStride(lda) && k >= minPaddedK {
		buf := paddedRows.get(m8 * paddedStride(k))
		defer paddedRows.put(buf)
		a8, lda8 = padRows(*buf, a, lda, m8, k), paddedStride(k)
	}
	for j0 := 0; j0 < n; j0 += nb {
		w := min(nb, n-j0)
		bj := &b[j0*ldb]
		i := 0
		for ; i < m8; i += 8 {
			matmulTRows8AVX512(&dst[i*ldd+j0], ldd, &a8[i*lda8], lda8, bj, ldb, w, k)
		}
		for ; i+4 <= m; i += 4 {
			matmulTRows4(&dst[i*ldd+j0], ldd, &a[i*lda], lda, bj, ldb, w, k)
		}
		switch m - i {
		case 3:
			matmulTRows3(&dst[i*ldd+j0], ldd, &a[i*lda], lda, bj, ldb, w, k)
		case 2:
			matmulTRows2(&dst[i*ldd+j0], ldd, &a[i*lda], lda, bj, ldb, w, k)
		case 1:
			matmulTRows1(&dst[i*ldd+j0], ldd, &a[i*lda], lda, bj, ldb, w, k)
		}
	}
}

// matmulTGrowing takes groups of four rows with the growing-rows kernel,
// whose elements have the bits of a row computed alone, and the rest (the
// last odd column, the last rows, sums under 8 elements) a row at a time.
func matmulTGrowing(dst []float32, ldd int, a []float32, lda int, b []float32, ldb, m, n, k int) {
	i := 0
	if useAVX2 && k >= 8 && n >= 2 {
		even := n &^ 1
		for ; i+4 <= m; i += 4 {
			matmulTGrowing4(&dst[i*ldd], ldd, &a[i*lda], lda, &b[0], ldb, even, k+i)
			if even < n {
				matmulTGrowingRows(dst[i*ldd+even:], ldd, a[i*lda:], lda, b[even*ldb:], ldb, 0, 4, 1, k+i)
			}
		}
	}
	matmulTGrowingRows(dst, ldd, a, lda, b, ldb, i, m, n, k)
}

func matmulTQ8(dst []float32, ldd int, a []float32, b []int8, scales []float32, m, n, k, blockSize int) {
	if !useAVX2 {
		matmulTQ8Generic(dst, ldd, a, b, scales, m, n, k, blockSize)
		return
	}
	nbk := k / blockSize
	nb := columnBlock(m, n, k)
	for j0 := 0; j0 < n; j0 += nb {
		w := min(nb, n-j0)
		bj, sj := &b[j0*k], &scales[j0*nbk]
		i := 0
		for ; i+4 <= m; i += 4 {
			matmulTQ8Rows4(&dst[i*ldd+j0], ldd, &a[i*k], bj, sj, w, k, blockSize, nbk)
		}
		switch m - i {
		case 3:
			matmulTQ8Rows3(&dst[i*ldd+j0], ldd, &a[i*k], bj, sj, w, k, blockSize, nbk)
		case 2:
			matmulTQ8Rows2(&dst[i*ldd+j0], ldd, &a[i*k], bj, sj, w, k, blockSize, nbk)
		case 1:
			matmulTQ8Rows1(&dst[i*ldd+j0], ldd, &a[i*k], bj, sj, w, k, blockSize, nbk)
		}
	}
}

// columnBlock is how many b rows (of rowBytes each) one sweep over a's rows
// covers: all of them when a has a single tile of rows (nothing to reuse),
// else as many as fit colBlockBytes, in multiples of 24 (every tile width
// divides 24, so no block ends in a narrow remainder tile).
func columnBlock(m, n, rowBytes int) int {
	if m <= 4 {
		return n
	}
	nb := colBlockBytes / rowBytes / 24 * 24
	return max(nb, 24)
}

// rowBlock is columnBlock for the int8, quantised and half-precision
// weights: all n rows of rowBytes each for a lone row of activations, else
// as many as fit colBlockBytes, in multiples of 16 (their widest tile).
func rowBlock(m, n, rowBytes int) int {
	if m <= 1 {
		return n
	}
	return max(colBlockBytes/rowBytes/16*16, 16)
}

func axpy(alpha float32, x, y []float32) {
	if !useAVX2 || len(x) == 0 {
		axpyGeneric(alpha, x, y)
		return
	}
	axpyAVX2(alpha, &x[0], &y[0], len(x))
}

func scale(alpha float32, x []float32) {
	if !useAVX2 || len(x) == 0 {
		scaleGeneric(alpha, x)
		return
	}
	scaleAVX2(alpha, &x[0], len(x))
}

func gated(dst, g, e, u []float32) {
	if !useAVX2 || len(g) == 0 {
		gatedGeneric(dst, g, e, u)
		return
	}
	gatedAVX2(&dst[0], &g[0], &e[0], &u[0], len(g))
}

func prefetch(x []float32) { prefetchL2(&x[0], 4*len(x)) }

func sum(x []float32) float32 {
	main := len(x) &^ 63
	if !useAVX2 || main == 0 {
		return sumGeneric(x)
	}
	return sumAVX2(&x[0], main) + sumTail(x[main:])
}

func exp(dst, x []float32, shift float32) {
	if !useAVX2 {
		expGeneric(dst, x, shift)
		return
	}
	if len(x) == 0 {
		return
	}
	if useAVX512 {
		// The tail under a mask: one call for a row of any length.
		expAVX512(&dst[0], &x[0], len(x), shift)
		return
	}
	main := len(x) &^ 7
	if main > 0 {
		expAVX2(&dst[0], &x[0], main, shift)
	}
	if main < len(x) {
		// The tail goes through the same instructions, padded, so a value's
		// result does not depend on where it sits in x.
		var buf [8]float32
		copy(buf[:], x[main:])
		expAVX2(&buf[0], &buf[0], 8, shift)
		copy(dst[main:], buf[:])
	}
}

func maxOf(x []float32) float32 {
	if !useAVX2 || len(x) < 8 {
		return maxGeneric(x)
	}
	return maxAVX2(&x[0], len(x))
}

func peak(rounds int) int {
	switch {
	case useAVX512:
		peakAVX512(rounds)
		return rounds * 12 * 16 * 2
	case useAVX2:
		peakAVX2(rounds)
		return rounds * 12 * 8 * 2
	}
	return peakGeneric(rounds)
}

func f16ToF32(dst []float32, src []uint16) {
	main := len(src) &^ 7
	if useAVX2 && main > 0 {
		f16ToF32F16C(&dst[0], &src[0], main)
	}
	f16ToF32Generic(dst[main:], src[main:])
}

func f32ToF16(dst []uint16, src []float32) {
	main := len(src) &^ 7
	if useAVX2 && main > 0 {
		f32ToF16F16C(&dst[0], &src[0], main)
	}
	f32ToF16Generic(dst[main:], src[main:])
}

func bf16ToF32(dst []float32, src []uint16) {
	main := len(src) &^ 7
	if useAVX2 && main > 0 {
		bf16ToF32AVX2(&dst[0], &src[0], main)
	}
	bf16ToF32Generic(dst[main:], src[main:])
}

// quantizeActBlock is quantizeActBlockGeneric (len(v) a multiple of 32).
func quantizeActBlock(q []int8, v []float32, sums []int32) float32 {
	if !useAVX2 {
		return quantizeActBlockGeneric(q, v, sums)
	}
	_, _ = q[len(v)-1], sums[len(v)/Q8Block-1]
	return quantizeActBlockAVX2(&q[0], &v[0], len(v), &sums[0])
}

func hasF16C() bool {
	const f16cBit = 1 << 29
	return cpuidECX1()&f16cBit != 0
}

// matmulTQ8Q8 runs the one-row kernel over every row of a; with several
// rows it takes the columns in blocks that stay in the per-core cache while
// every row passes over them, so b is read from memory once.
func matmulTQ8Q8(dst []float32, ldd int, a []int8, as []float32, b []int8, bs []float32, m, n, k int) {
	if !useAVX2 {
		matmulTQ8Q8Generic(dst, ldd, a, as, b, bs, m, n, k)
		return
	}
	nbk := k / Q8Block
	cols := rowBlock(m, n, k)
	for j0 := 0; j0 < n; j0 += cols {
		w := min(cols, n-j0)
		i := 0
		if useVNNI && q8q8Tiles && m >= q8q8TileMinRows {
			// Groups of four rows by four columns (Q8_0's tile on the
			// int8 layout); the columns past the last whole tile row by
			// row.
			whole := w - w%4
			for ; i+4 <= m; i += 4 {
				if whole > 0 {
					qdotQ8Q8Tile(&dst[i*ldd+j0], ldd, &a[i*k], &as[i*nbk], k, (*byte)(unsafe.Pointer(&b[j0*k])), k, whole, nbk, &bs[j0*nbk])
				}
				for r := i; r < i+4 && whole < w; r++ {
					matmulTQ8Q8Row(&dst[r*ldd+j0+whole], &a[r*k], &as[r*nbk], &b[(j0+whole)*k], &bs[(j0+whole)*nbk], w-whole, k)
				}
			}
		}
		for ; i < m; i++ {
			matmulTQ8Q8Row(&dst[i*ldd+j0], &a[i*k], &as[i*nbk], &b[j0*k], &bs[j0*nbk], w, k)
		}
	}
}

// q8q8TileMinRows is the fewest rows MatMulTQ8Q8 gives the VNNI tile, as
// for Q8_0 (a batch of decode steps streams the weights faster through
// the AVX2 row kernel).
const q8q8TileMinRows = 32

// halfKernel is an assembly product of half-precision weights: rows of a
// (four, two or one) by n columns, n a multiple of the kernel's columns.
type halfKernel struct {
	run  func(dst *float32, ldd int, a *float32, lda int, w *byte, n int, k int)
	cols int
}

// halfTiles switches the AVX-512 tiles of MatMulTHalf on (where the CPU
// has AVX-512); the AVX2 kernels give the same bits.
var halfTiles = true

// halfGroup is a count of rows and the kernels that take groups of that
// many rows of a, widest first (the AVX-512 one's run is nil where the CPU
// lacks it).
type halfGroup struct {
	rows int
	ks   [2]halfKernel
}

// halfGroups are the products of t: groups of four rows, of two and single
// rows, each with AVX-512 (halfDot…Wide: four rows by four columns, two
// by eight, one by eight) and then, for four rows and one, the AVX2
// kernels (Rows4: four rows by two columns, Rows1: one row by four).
// Without AVX-512 the group of two has no kernel and its rows go singly.
func halfGroups(t quant.Type) [3]halfGroup {
	g := [3]halfGroup{{rows: 4}, {rows: 2}, {rows: 1}}
	g[0].ks[1], g[2].ks[1] = halfKernel{halfDotF16Rows4, 2}, halfKernel{halfDotF16Rows1, 4}
	w4, w2, w1 := halfKernel{halfDotF16Wide4x4, 4}, halfKernel{halfDotF16Wide2x8, 8}, halfKernel{halfDotF16Wide1x8, 8}
	if t == quant.BF16 {
		g[0].ks[1], g[2].ks[1] = halfKernel{halfDotBF16Rows4, 2}, halfKernel{halfDotBF16Rows1, 4}
		w4, w2, w1 = halfKernel{halfDotBF16Wide4x4, 4}, halfKernel{halfDotBF16Wide2x8, 8}, halfKernel{halfDotBF16Wide1x8, 8}
	}
	if useAVX512 && halfTiles {
		g[0].ks[0], g[1].ks[0], g[2].ks[0] = w4, w2, w1
	}
	return g
}

// matmulTHalf runs the rows of a in the groups of halfGroups, each group's
// kernels taking the whole tiles of the columns the wider ones left, the
// columns in blocks that stay in the per-core cache while every row passes
// over them; columns past the last whole tile, and every column when k is
// not a multiple of 8, take the pure-Go loop, which sums in the same order.
func matmulTHalf(t quant.Type, dst []float32, ldd int, a []float32, lda int, w []byte, m, n, k int) {
	if !useAVX2 || k%8 != 0 {
		matmulTHalfGeneric(t, dst, ldd, a, lda, w, m, n, k)
		return
	}
	groups := halfGroups(t)
	rowBytes := 2 * k
	cols := rowBlock(m, n, rowBytes)
	for j0 := 0; j0 < n; j0 += cols {
		c := min(cols, n-j0)
		i := 0
		for gi := range groups {
			g := &groups[gi]
			if g.ks[0].run == nil && g.ks[1].run == nil {
				continue
			}
			for ; i+g.rows <= m; i += g.rows {
				j := j0
				for _, kr := range g.ks {
					if kr.run == nil {
						continue
					}
					if whole := (j0 + c - j) / kr.cols * kr.cols; whole > 0 {
						kr.run(&dst[i*ldd+j], ldd, &a[i*lda], lda, &w[j*rowBytes], whole, k)
						j += whole
					}
				}
				if j < j0+c {
					matmulTHalfGeneric(t, dst[i*ldd+j:], ldd, a[i*lda:], lda, w[j*rowBytes:], g.rows, j0+c-j, k)
				}
			}
		}
	}
}
