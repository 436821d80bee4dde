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
// addNBlock columns (768 KiB packed, in the per-core L2 cache), and a
// tile of a's rows over the block's steps (12 KiB packed) stays in L1
// while the block's strips of columns stream past it.
const (
	addKBlock = 384
	addNBlock = 512
	addPackA  = 8 // rows of a packed tile: the widest tile's
)

// addPack is the packing space of one running product: a block of b, and
// a's rows over a block of steps, tile by tile.
type addPack struct {
	b [addKBlock * addNBlock]float32
	a []float32
}

// addPacks keeps the packing space between calls, so that a product
// allocates nothing once warm.
var addPacks = sync.Pool{New: func() any { return new(addPack) }}

// matmulAddTiled, with the AVX-512 tiles or the AVX2 ones, takes k in
// blocks of steps; for each, where several blocks of columns will reuse
// them, it packs a's rows over the block tile by tile (each step's rows
// side by side), then takes b's block in blocks of
// columns, packs each strip by strip (the strip's rows contiguous, 2·lanes
// columns wide, then one of lanes) and runs every tile of rows against
// every strip. The first block of steps starts from dst's value
// (accumulate) or from zero, the others add to dst, so an element is summed
// in the order of k either way. Columns past the last strip take the
// pure-Go loop.
func matmulAddTiled(avx512, accumulate bool, dst []float32, ldd int, a []float32, lda int, b []float32, ldb, m, n, k int) {
	lanes, maxRows := 8, 6
	if avx512 {
		lanes, maxRows = 16, 8
	}
	pk := addPacks.Get().(*addPack)
	defer addPacks.Put(pk)
	kBlocks := (k + addKBlock - 1) / addKBlock
	kc := (k + kBlocks - 1) / kBlocks // balanced: no short last block
	tiles := (m + maxRows - 1) / maxRows
	// A tile of a is packed when several blocks of columns reuse it; with
	// one, its rows are read where they are, once.
	packA := n > addNBlock
	if need := tiles * kc * addPackA; packA && cap(pk.a) < need {
		pk.a = make([]float32, need)
	}
	tiled := n / lanes * lanes
	var strips [addNBlock / 8][2]int // column offset in the block, width
	for p0 := 0; p0 < k; p0 += kc {
		kb := min(kc, k-p0)
		if packA {
			ap := pk.a[:tiles*kb*addPackA]
			for i := range m {
				to := ap[(i/maxRows)*kb*addPackA+i%maxRows:]
				for p, v := range a[i*lda+p0 : i*lda+p0+kb] {
					to[p*addPackA] = v
				}
			}
		}
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
					copy(pk.b[at+p*w:at+(p+1)*w], row[s:s+w])
					at += kb * w
				}
			}
			load := accumulate || p0 > 0
			for t := range tiles {
				i0 := t * maxRows
				r := min(maxRows, m-i0)
				at := 0
				for _, st := range strips[:ns] {
					s, w := st[0], st[1]
					d, at0, lda, astep := &dst[i0*ldd+j0+s], &a[i0*lda+p0], lda, 1
					if packA {
						at0, lda, astep = &pk.a[t*kb*addPackA], 1, addPackA
					}
					if avx512 {
						matmulAddTileAVX512(r, w == lanes, d, ldd, at0, lda, astep, &pk.b[at], w, kb, load)
					} else {
						matmulAddTileAVX2(r, w == lanes, d, ldd, at0, lda, astep, &pk.b[at], w, kb, load)
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
