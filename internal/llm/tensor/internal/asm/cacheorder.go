package asm

import "sync"

// The 8-row AVX-512 tile reads 8 rows of a and 6 of b at once. Rows a
// multiple of 1 KiB apart (a hidden size of 1024 or 4096 floats) start on
// the same few sets of the first-level cache, so the 14 lines a step loads
// evict one another and the tile waits on the second level. The column-
// blocked order therefore multiplies a copy of a whose rows are one cache
// line further apart (1.2–1.3× in CPU time at k=1024 and 4096, 256
// rows). The copy changes no sum: the kernel reads the
// same values in the same order.
//
// The tile runs over the whole of k in one pass. Blocks of k that kept its
// 8 rows of a in the first-level cache while the columns streamed past
// (the lanes of every output kept in memory between blocks) measured
// 1.08–1.20× on a machine loaded fifteen times over, and 0.92× when it was
// quiet (one thread, 256 rows, k of 1024 and 4096), so they are gone.

// padAliasedRows switches the copy on; BenchmarkMatMulTCacheOrder turns it
// off to measure what it buys.
var padAliasedRows = true

// minPaddedK is the shortest row worth copying: shorter rows of 8-row
// groups fit the first-level cache however they are placed.
const minPaddedK = 128

// aliasedStride reports whether rows ld floats apart start on the same
// first-level cache sets (a multiple of 1 KiB apart).
func aliasedStride(ld int) bool { return ld*4%1024 == 0 }

// paddedStride is the stride rows of k floats are copied at: k rounded up
// to a cache line, plus one line.
func paddedStride(k int) int { return (k+15)/16*16 + 16 }

// padRows copies rows [0, rows) of src (stride ld, k floats each) into dst
// at paddedStride(k) and returns dst.
func padRows(dst, src []float32, ld, rows, k int) []float32 {
	s := paddedStride(k)
	for i := range rows {
		copy(dst[i*s:i*s+k], src[i*ld:i*ld+k])
	}
	return dst
}

// scratchPool is a pool of float32 buffers of one use: one per thread in
// flight, as large as the largest asked for.
type scratchPool struct{ sync.Pool }

// paddedRows holds the padded copies of a (dispatch_amd64.go).
var paddedRows scratchPool

func (p *scratchPool) get(n int) *[]float32 {
	if b, ok := p.Get().(*[]float32); ok && cap(*b) >= n {
		*b = (*b)[:n]
		return b
	}
	b := make([]float32, n)
	return &b
}

func (p *scratchPool) put(b *[]float32) { p.Put(b) }
