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
	lanes, maxRows := 8, 6
	if avx512 {
		lanes, maxRows = 16, 12
	}
	bp := addPacks.Get().(*[addKBlock * addNBlock]float32)
	defer addPacks.Put(bp)
	kBlocks := (k + addKBlock - 1) / addKBlock
	kc := (k + kBlocks - 1) / kBlocks // balanced: no short last block
	tiled := n / lanes * lanes
	var strips [addNBlock / 8][2]int // column offset in the block, width
	for p0 := 0; p0 < k; p0 += kc {
		kb := min(kc, k-p0)
		for j0 := 0; j0 < tiled; j0 += addNBlock {
			nb := min(addNBlock, tiled-j0)
			ns := 0
			for s := 0; s < nb; {
				w := 2 * lanes
				if nb-s < w {
					w = lanes
				}
				strips[ns] = [2]int{s, w}
				ns++
				s += w
			}
			for p := range kb {
				row := b[(p0+p)*ldb+j0 : (p0+p)*ldb+j0+nb]
				at := 0
				for _, st := range strips[:ns] {
					s, w := st[0], st[1]
					copy(bp[at+p*w:at+(p+1)*w], row[s:s+w])
					at += kb * w
				}
			}
			load := accumulate || p0 > 0
			for i0 := 0; i0 < m; i0 += maxRows {
				r := min(maxRows, m-i0)
				at := 0
				for _, st := range strips[:ns] {
					s, w := st[0], st[1]
					d, ai := &dst[i0*ldd+j0+s], &a[i0*lda+p0]
					if avx512 {
						matmulAddTileAVX512(r, w == lanes, d, ldd, ai, lda, &bp[at], w, kb, load)
					} else {
						matmulAddTileAVX2(r, w == lanes, d, ldd, ai, lda, &bp[at], w, kb, load)
					}
					at += kb * w
				}
			}
		}
	}
	if tiled < n {
		matmulAddGeneric(accumulate, dst[tiled:], ldd, a, lda, b[tiled:], ldb, m, n-tiled, k)
	}
}
