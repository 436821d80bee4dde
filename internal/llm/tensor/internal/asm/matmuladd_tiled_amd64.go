//go:build amd64 && !purego

package asm

import "sync"

// matmulAdd runs the widest tiles the CPU has; without accumulate it sets
// dst to a·b.
func matmulAdd(accumulate bool, dst []float32, ldd int, a []float32, lda int, b []float32, ldb, m, n, k int) {
	switch {
	case useAVX512:
		matmulAddTiled(true, accumulate, dst, ldd, a, lda, b, ldb, m, n, k)
	case useAVX2:
		matmulAddTiled(false, accumulate, dst, ldd, a, lda, b, ldb, m, n, k)
	default:
		matmulAddGeneric(accumulate, dst, ldd, a, lda, b, ldb, m, n, k)
	}
}

// Blocking of matmulAddTiled: a block of b is at most addKBlock rows by
// addNBlock columns (768 KiB packed, in the per-core L2 cache); the rows
// of a tile of a over the block's steps (12 KiB) stay in L1 while the
// block's strips of columns stream past them. (Packing a's tiles too was
// measured no faster: a tile's rows are few and each is read in order.)
const (
	addKBlock = 384
	addNBlock = 512
)

// addPacks keeps the packing space of a block of b between calls, so that
// a product allocates nothing once warm.
var addPacks = sync.Pool{New: func() any { return new([addKBlock * addNBlock]float32) }}

// matmulAddTiled, with the AVX-512 tiles or the AVX2 ones, takes k in
// blocks of steps and b's block of those rows in blocks of columns; it
// packs each block strip by strip (the strip's rows contiguous, 2·lanes
// columns wide, then one of lanes) and runs every tile of up to maxRows
// rows of a against every strip. The first block of steps starts from
// dst's value (accumulate) or from zero, the others add to dst, so an
// element is summed in the order of k either way. Columns past the last
// strip take the pure-Go loop.
func matmulAddTiled(avx512, accumulate bool, dst []float32, ldd int, a []float32, lda int, b []float32, ldb, m, n, k int) {
	if lanes, maxRows := tileOf(avx512); m <= maxRows {
		// One band of rows reads each strip of b once: a packing would
		// copy all of b for no reuse (a low-rank adapter's gradient, 8
		// rows against thousands of columns, spent most of its time so).
		// The tiles read b where it is, over the whole k, which sums each
		// element in the same order as the blocked loop.
		tiled := n / lanes * lanes
		for s := 0; s < tiled; {
			w := stripWidth(tiled-s, lanes)
			if avx512 {
				matmulAddTileAVX512(m, w == lanes, &dst[s], ldd, &a[0], lda, &b[s], ldb, k, accumulate)
			} else {
				matmulAddTileAVX2(m, w == lanes, &dst[s], ldd, &a[0], lda, &b[s], ldb, k, accumulate)
			}
			s += w
		}
		if tiled < n {
			matmulAddGeneric(accumulate, dst[tiled:], ldd, a, lda, b[tiled:], ldb, m, n-tiled, k)
		}
		return
	}
	bp := addPacks.Get().(*[addKBlock * addNBlock]float32)
	defer addPacks.Put(bp)
	tiled := forAddBlocks(avx512, k, n, func(p0, kb, j0, nb int) {
		packAddBlock(avx512, bp[:], b, ldb, p0, kb, j0, nb)
		runAddBlock(avx512, accumulate || p0 > 0, dst[j0:], ldd, a[p0:], lda, bp[:], m, kb, nb, nil)
	})
	if tiled < n {
		matmulAddGeneric(accumulate, dst[tiled:], ldd, a, lda, b[tiled:], ldb, m, n-tiled, k)
	}
}

// packBTiled packs the tiled columns of b, every block as matmulAddTiled
// packs it, one after the other in the order it visits them; it returns
// the packing and the number of columns it holds (a multiple of the
// lanes, the rest left to the pure-Go loop).
func packBTiled(avx512 bool, b []float32, ldb, k, n int) ([]float32, int) {
	packed := make([]float32, k*(n/lanesOf(avx512)*lanesOf(avx512)))
	at := 0
	tiled := forAddBlocks(avx512, k, n, func(p0, kb, j0, nb int) {
		packAddBlock(avx512, packed[at:], b, ldb, p0, kb, j0, nb)
		at += kb * nb
	})
	return packed, tiled
}

// matmulPackedTiled is matmulAddTiled's loop over the blocks of
// packBTiled's packing: the same tiles in the same order, the same sums.
// Each tile first asks for its share of ahead (Prefetch), so a product
// fetches memory it does not read itself a little at a time, while the
// tiles keep the multipliers busy.
func matmulPackedTiled(avx512, accumulate bool, dst []float32, ldd int, a []float32, lda int, packed []float32, m, n, k int, ahead []float32) {
	at := 0
	var pf *prefetcher
	if len(ahead) > 0 {
		lanes, maxRows := tileOf(avx512)
		tiles := (m + maxRows - 1) / maxRows * ((n + 2*lanes - 1) / (2 * lanes)) * ((k + addKBlock - 1) / addKBlock)
		pf = &prefetcher{rest: ahead, per: (len(ahead)/max(1, tiles) + 15) &^ 15}
	}
	forAddBlocks(avx512, k, n, func(p0, kb, j0, nb int) {
		runAddBlock(avx512, accumulate || p0 > 0, dst[j0:], ldd, a[p0:], lda, packed[at:], m, kb, nb, pf)
		at += kb * nb
	})
	pf.finish()
}

// prefetcher hands out memory to prefetch in equal shares.
type prefetcher struct {
	rest []float32
	per  int
}

// next prefetches the next share.
func (p *prefetcher) next() {
	if p == nil || len(p.rest) == 0 {
		return
	}
	n := min(p.per, len(p.rest))
	prefetchL2(&p.rest[0], 4*n)
	p.rest = p.rest[n:]
}

// finish prefetches what the shares left.
func (p *prefetcher) finish() {
	if p != nil && len(p.rest) > 0 {
		prefetchL2(&p.rest[0], 4*len(p.rest))
	}
}

// forAddBlocks calls block for each block of b that matmulAddTiled packs,
// in order — steps [p0, p0+kb) of the nb columns from j0 — and returns the
// number of columns the blocks cover, a multiple of the lanes.
func forAddBlocks(avx512 bool, k, n int, block func(p0, kb, j0, nb int)) int {
	kBlocks := (k + addKBlock - 1) / addKBlock
	kc := (k + kBlocks - 1) / kBlocks // balanced: no short last block
	tiled := n / lanesOf(avx512) * lanesOf(avx512)
	for p0 := 0; p0 < k; p0 += kc {
		kb := min(kc, k-p0)
		for j0 := 0; j0 < tiled; j0 += addNBlock {
			block(p0, kb, j0, min(addNBlock, tiled-j0))
		}
	}
	return tiled
}

// lanesOf is the float32 lanes of a vector of the tiles.
func lanesOf(avx512 bool) int {
	lanes, _ := tileOf(avx512)
	return lanes
}

// tileOf is the lanes of a vector and the most rows of a tile.
func tileOf(avx512 bool) (lanes, maxRows int) {
	if avx512 {
		return 16, 12
	}
	return 8, 6
}

// stripWidth is the width of the strip of a block's columns that starts
// rest columns before the block's end: two vectors, or one at the end.
func stripWidth(rest, lanes int) int {
	if rest < 2*lanes {
		return lanes
	}
	return 2 * lanes
}

// packAddBlock packs steps [p0, p0+kb) of b's nb columns from j0 into bp,
// strip by strip, each strip's rows contiguous.
func packAddBlock(avx512 bool, bp, b []float32, ldb, p0, kb, j0, nb int) {
	lanes := lanesOf(avx512)
	for p := range kb {
		row := b[(p0+p)*ldb+j0 : (p0+p)*ldb+j0+nb]
		at := 0
		for s := 0; s < nb; {
			w := stripWidth(nb-s, lanes)
			copy(bp[at+p*w:at+(p+1)*w], row[s:s+w])
			at += kb * w
			s += w
		}
	}
}

// runAddBlock runs every tile of rows of a (from its block's first step)
// against every strip of a packed block of nb columns, onto dst from the
// block's first column; load adds to dst's value rather than starting
// from zero.
func runAddBlock(avx512, load bool, dst []float32, ldd int, a []float32, lda int, bp []float32, m, kb, nb int, pf *prefetcher) {
	lanes, maxRows := tileOf(avx512)
	for i0 := 0; i0 < m; i0 += maxRows {
		r := min(maxRows, m-i0)
		at := 0
		for s := 0; s < nb; {
			w := stripWidth(nb-s, lanes)
			d, ai := &dst[i0*ldd+s], &a[i0*lda]
			pf.next()
			if avx512 {
				matmulAddTileAVX512(r, w == lanes, d, ldd, ai, lda, &bp[at], w, kb, load)
			} else {
				matmulAddTileAVX2(r, w == lanes, d, ldd, ai, lda, &bp[at], w, kb, load)
			}
			at += kb * w
			s += w
		}
	}
}

// packB packs b's tiled columns for the widest tiles the CPU has; none
// without them.
func packB(b []float32, ldb, k, n int) ([]float32, int) {
	switch {
	case useAVX512:
		return packBTiled(true, b, ldb, k, n)
	case useAVX2:
		return packBTiled(false, b, ldb, k, n)
	}
	return nil, 0
}

// matmulPacked runs packB's packing of the tiled columns.
func matmulPacked(accumulate bool, dst []float32, ldd int, a []float32, lda int, packed []float32, m, n, k int, ahead []float32) {
	matmulPackedTiled(useAVX512, accumulate, dst, ldd, a, lda, packed, m, n, k, ahead)
}
