//go:build amd64 && !purego

package asm

import "github.com/weftlabs/weft/internal/llm/quant"

// quantKernel is one assembly product of rows of x (from row i: one row,
// or four) by n columns of weights, wstride bytes apart, into dst (rows
// ldd apart). Every format's kernels are called through it, so one
// dispatch (matmulTQuant) serves them all. scratch is the tiles' scratch
// of the formats that have tileScratch.
type quantKernel func(dst *float32, ldd int, x *QActs, i int, w *byte, wstride, n int, scratch []int32)

// quantKernels are a format's assembly products; a nil one is a kernel
// the format does not have.
type quantKernels struct {
	// row is the AVX2 product of one row (decode, and the rows a batch
	// leaves past its groups of four), column after column; the
	// blocks-of-32 formats' four columns at a time, j to j+3n/4, each a
	// sequential stream.
	row quantKernel
	// rows4 is the AVX2 product of four rows, each block unpacked once
	// for the four (prefill).
	rows4 quantKernel
	// stream is the AVX-512 VNNI product of one row (decode) of the
	// K-quants that reads the columns as sequential streams (j beside j+n/2,
	// gen_quant_stream.go), half a super-block's levels per instruction.
	// Q8_0, Q4_0 and Q5_0 decode with tile1, their sixteen-column kernel
	// (gen_quant_cols.go), which reads the next columns ahead.
	stream quantKernel
	// tile and tile1 are the AVX-512 VNNI products of four rows and of
	// one row by n columns, n a multiple of tileCols. They read the next
	// tile's weights ahead (prefetchAhead in gen_quant_avx512.go):
	// without it, their neighbouring columns are short streams the
	// hardware prefetcher does not follow, and at 8 rows and 17 MiB of
	// weights the four-row tile of Q4_K ran at 0.97× the AVX2 four-row
	// kernel; with it, 1.5× (Q6_K's 1.7–2.4×).
	tile, tile1 quantKernel
	// tile8, where set, is the product of eight rows, which the groups of
	// eight rows of a batch take before its groups of four: the
	// blocks-of-32 formats', whose unpacking of a block for the rows costs as much as
	// four rows' products.
	tile8    quantKernel
	tileCols int
	// tileScratch is the int32 count of the tiles' scratch for rows of k
	// activations, where they take one: the blocks-of-32 formats' rows'
	// bytes, −Σx << shift and scales block after block (cols32Scratch),
	// which depend on neither the column nor the tile, so they are laid
	// out once a call; Q4_K's and Q5_K's four rows' bytes, sums and
	// scales in row pairs, laid out once a call, and the records of
	// prepareCols columns (kernelQ4KTile); Q6_K's levels of prepareCols
	// columns (kernelQ6KVNNI).
	tileScratch func(k int) int
	// prepare, where set, lays out in the scratch what the four-row tile
	// reads of n columns (n ≤ prepareCols(k), a multiple of tileCols)
	// and that depends on the column alone, before the groups of four rows
	// pass over them: Q4_K's and Q5_K's columns' scales, minima and d,
	// dmin (qdotQ4_KCols, qdotQ5_KCols), Q6_K's levels (qdotQ6_KCols),
	// once for every group.
	prepare     func(scratch []int32, w *byte, wstride, n, nb int)
	prepareCols func(k int) int
}

// cols32Scratch is the scratch of the blocks-of-32 formats' kernels of
// four and eight rows: per block of 32, the rows' bytes, −Σx << shift and
// scales (colsBlock in gen_quant_cols.go): 160 KiB at k = 16384.
func cols32Scratch(k int) int { return k / Q8Block * 320 / 4 }

// kTileScratch is qdotQ4_KTile's and qdotQ5_KTile's scratch, whose
// columns' records take colBytes a column and super-block (96 for Q4_K;
// 352 for Q5_K, whose records hold the levels too): per super-block its
// rows' record (1280 bytes, gen_quant_ktile.go) and the records of
// kTileCols columns, and 64 bytes to align it: 144 KiB (Q4_K) at k =
// 16384.
func kTileScratch(colBytes int) func(k int) int {
	return func(k int) int { return k/QKBlock*(1280+colBytes*kTileCols(colBytes)(k))/4 + 16 }
}

// kTileCols is how many columns' records qdotQ4_KCols (qdotQ5_KCols) lays
// out at once, an even count: about 64 KiB of them, which stay in the
// per-core cache while the groups of four rows pass over their columns.
func kTileCols(colBytes int) func(k int) int {
	return func(k int) int { return max(64<<10/(k/QKBlock*colBytes)/2, 1) * 2 }
}

// q6kScratch is qdotQ6_KTile's scratch: the levels of q6kCols columns
// (256 bytes a column and super-block, gen_quant_avx512.go), and 64 bytes
// to align them.
func q6kScratch(k int) int { return k/QKBlock*256*q6kCols(k)/4 + 16 }

// q6kCols is how many columns' levels qdotQ6_KCols lays out at once, an
// even count: about 64 KiB of them, as kTileCols.
func q6kCols(k int) int { return max(64<<10/(k/QKBlock*256)/2, 1) * 2 }

// colsPrepare makes a format's qdot…Cols kernel a prepare.
func colsPrepare(k func(scratch *int32, w *byte, wstride, n, nb int)) func(scratch []int32, w *byte, wstride, n, nb int) {
	return func(scratch []int32, w *byte, wstride, n, nb int) { k(&scratch[0], w, wstride, n, nb) }
}

var quantKernelsOf = map[quant.Type]quantKernels{
	quant.Q8_0: {
		row: oneRowSums(qdotQ8_0Row), rows4: rowsSums(qdotQ8_0Rows4),
		tile8: rowsSumsScratch(qdotQ8_0Cols8), tile: rowsSumsScratch(qdotQ8_0Cols4), tile1: rowsSumsScratch(qdotQ8_0Cols1), tileCols: 16, tileScratch: cols32Scratch,
	},
	quant.Q4_0: {
		row: oneRowSums(qdotQ4_0Row), rows4: rowsSums(qdotQ4_0Rows4),
		tile8: rowsSumsScratch(qdotQ4_0Cols8), tile: rowsSumsScratch(qdotQ4_0Cols4), tile1: rowsSumsScratch(qdotQ4_0Cols1), tileCols: 16, tileScratch: cols32Scratch,
	},
	quant.Q5_0: {
		row: oneRowSums(qdotQ5_0Row), rows4: rowsSums(qdotQ5_0Rows4),
		tile8: rowsSumsScratch(qdotQ5_0Cols8), tile: rowsSumsScratch(qdotQ5_0Cols4), tile1: rowsSumsScratch(qdotQ5_0Cols1), tileCols: 16, tileScratch: cols32Scratch,
	},
	quant.Q4_K: {
		row: oneRowSums(qdotQ4_KRow), rows4: rowsSums(qdotQ4_KRows4), stream: oneRowSums(qdotQ4_KStream),
		tile: rowsSumsScratch(qdotQ4_KTile), tile1: rowsSums(qdotQ4_KTile1), tileCols: 2, tileScratch: kTileScratch(96),
		prepare: colsPrepare(qdotQ4_KCols), prepareCols: kTileCols(96),
	},
	quant.Q5_K: {
		row: oneRowSums(qdotQ5_KRow), rows4: rowsSums(qdotQ5_KRows4), stream: oneRowSums(qdotQ5_KStream),
		tile: rowsSumsScratch(qdotQ5_KTile), tile1: rowsSums(qdotQ5_KTile1), tileCols: 2, tileScratch: kTileScratch(352),
		prepare: colsPrepare(qdotQ5_KCols), prepareCols: kTileCols(352),
	},
	quant.Q6_K: {
		row: oneRow(qdotQ6_KRow), rows4: rows(qdotQ6_KRows4), stream: oneRowSums(qdotQ6_KStream),
		tile: rowsScratch(qdotQ6_KTile), tile1: rows(qdotQ6_KTile1), tileCols: 2, tileScratch: q6kScratch,
		prepare: colsPrepare(qdotQ6_KCols), prepareCols: q6kCols,
	},
}

// operands are the kernels' pointers into row i of x: its levels, its
// scales, and its sums per 32 elements, with the count of scales a row.
func (x *QActs) operands(i int) (q *int8, d *float32, sums *int32, nb int) {
	nb = x.Cols / x.Kind.block()
	return &x.Q[i*x.Cols], &x.D[i*nb], &x.Sums[i*x.Cols/Q8Block], nb
}

// The assembly kernels come in four signatures, one row or several, with
// the sums of the formats with minima or without; these make each a
// quantKernel.

func oneRow(k func(dst *float32, x *int8, xd *float32, w *byte, wstride, n, nb int)) quantKernel {
	return func(dst *float32, _ int, x *QActs, i int, w *byte, wstride, n int, _ []int32) {
		q, d, _, nb := x.operands(i)
		k(dst, q, d, w, wstride, n, nb)
	}
}

func oneRowSums(k func(dst *float32, x *int8, xd *float32, xs *int32, w *byte, wstride, n, nb int)) quantKernel {
	return func(dst *float32, _ int, x *QActs, i int, w *byte, wstride, n int, _ []int32) {
		q, d, s, nb := x.operands(i)
		k(dst, q, d, s, w, wstride, n, nb)
	}
}

func rows(k func(dst *float32, ldd int, x *int8, xd *float32, cols int, w *byte, wstride, n, nb int)) quantKernel {
	return func(dst *float32, ldd int, x *QActs, i int, w *byte, wstride, n int, _ []int32) {
		q, d, _, nb := x.operands(i)
		k(dst, ldd, q, d, x.Cols, w, wstride, n, nb)
	}
}

func rowsScratch(k func(dst *float32, ldd int, x *int8, xd *float32, cols int, w *byte, wstride, n, nb int, scratch *int32)) quantKernel {
	return func(dst *float32, ldd int, x *QActs, i int, w *byte, wstride, n int, scratch []int32) {
		q, d, _, nb := x.operands(i)
		k(dst, ldd, q, d, x.Cols, w, wstride, n, nb, &scratch[0])
	}
}

func rowsSumsScratch(k func(dst *float32, ldd int, x *int8, xd *float32, xs *int32, cols int, w *byte, wstride, n, nb int, scratch *int32)) quantKernel {
	return func(dst *float32, ldd int, x *QActs, i int, w *byte, wstride, n int, scratch []int32) {
		q, d, s, nb := x.operands(i)
		var sp *int32 // none for one row
		if len(scratch) > 0 {
			sp = &scratch[0]
		}
		k(dst, ldd, q, d, s, x.Cols, w, wstride, n, nb, sp)
	}
}

func rowsSums(k func(dst *float32, ldd int, x *int8, xd *float32, xs *int32, cols int, w *byte, wstride, n, nb int)) quantKernel {
	return func(dst *float32, ldd int, x *QActs, i int, w *byte, wstride, n int, _ []int32) {
		q, d, s, nb := x.operands(i)
		k(dst, ldd, q, d, s, x.Cols, w, wstride, n, nb)
	}
}

// matmulTQuant runs the row kernel over every row of x; with several rows
// it takes the columns in blocks that stay in the per-core cache while
// every row passes over them, so w is read from memory once.
func matmulTQuant(t quant.Type, dst []float32, ldd int, x *QActs, w []byte, rowBytes, n int) {
	ks := quantKernelsOf[t]
	if !useAVX2 || ks.row == nil {
		matmulTQuantGeneric(t, dst, ldd, x, w, rowBytes, n)
		return
	}
	if !useVNNI {
		ks.stream, ks.tile, ks.tile1, ks.tile8 = nil, nil, nil, nil
	}
	m := x.Rows
	var scratch []int32
	if ks.tileScratch != nil && ks.tile != nil && m >= 4 {
		scratch = make([]int32, ks.tileScratch(x.Cols))
	}
	cols := rowBlock(m, n, rowBytes)
	for j0 := 0; j0 < n; j0 += cols {
		c := min(cols, n-j0)
		i := 0
		if ks.tile != nil && m >= 4 {
			whole := c - c%ks.tileCols
			step := whole
			if ks.prepare != nil {
				step = ks.prepareCols(x.Cols)
			}
			for c0 := 0; c0 < whole; c0 += step {
				cn := min(step, whole-c0)
				if ks.prepare != nil {
					ks.prepare(scratch, &w[(j0+c0)*rowBytes], rowBytes, cn, x.Cols/x.Kind.block())
				}
				i := 0
				if ks.tile8 != nil {
					for ; i+8 <= m; i += 8 {
						ks.tile8(&dst[i*ldd+j0+c0], ldd, x, i, &w[(j0+c0)*rowBytes], rowBytes, cn, scratch)
					}
				}
				for ; i+4 <= m; i += 4 {
					ks.tile(&dst[i*ldd+j0+c0], ldd, x, i, &w[(j0+c0)*rowBytes], rowBytes, cn, scratch)
				}
			}
			for ; i+4 <= m; i += 4 {
				if whole < c {
					ks.rows4(&dst[i*ldd+j0+whole], ldd, x, i, &w[(j0+whole)*rowBytes], rowBytes, c-whole, scratch)
				}
			}
		}
		if ks.rows4 != nil {
			for ; i+4 <= m; i += 4 {
				ks.rows4(&dst[i*ldd+j0], ldd, x, i, &w[j0*rowBytes], rowBytes, c, scratch)
			}
		}
		for ; i < m; i++ {
			if ks.stream != nil && m < 4 {
				// Decode: the weights come from memory, in order.
				ks.stream(&dst[i*ldd+j0], ldd, x, i, &w[j0*rowBytes], rowBytes, c, scratch)
				continue
			}
			whole := 0
			if ks.tile1 != nil {
				whole = c - c%ks.tileCols
				if whole > 0 {
					ks.tile1(&dst[i*ldd+j0], ldd, x, i, &w[j0*rowBytes], rowBytes, whole, scratch)
				}
			}
			if whole < c {
				ks.row(&dst[i*ldd+j0+whole], ldd, x, i, &w[(j0+whole)*rowBytes], rowBytes, c-whole, scratch)
			}
		}
	}
}
