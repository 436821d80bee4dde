package asm

import (
	"fmt"
	"math"
)

// Q8Block is the number of consecutive elements along k that share a scale
// in MatMulTQ8Q8, on both operands.
const Q8Block = 32

// q8q8Tiles switches the VNNI tile of MatMulTQ8Q8 on;
// BenchmarkMatMulTQ8Q8Tile turns it off to measure what it buys.
var q8q8Tiles = true

// QuantizeBlock quantises src symmetrically to int8 in dst: the scale is
// max|src|/127 and each element rounds to the nearest multiple of it (halves
// away from zero), so it is off by at most half the scale. It returns the
// scale, 0 for a block of zeros (dst all 0). ok is false when an element is
// NaN or infinite: the scale is then NaN, so that a product using the block
// is NaN, as the float product would be. It panics if dst is shorter than
// src.
func QuantizeBlock(dst []int8, src []float32) (scale float32, ok bool) {
	dst = dst[:len(src)]
	var amax float32
	for _, v := range src {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			clear(dst)
			return float32(math.NaN()), false
		}
		amax = max(amax, float32(math.Abs(float64(v))))
	}
	if amax == 0 {
		clear(dst)
		return 0, true
	}
	scale = amax / 127
	for p, v := range src {
		dst[p] = int8(max(-127, min(127, math.Round(float64(v)/float64(scale)))))
	}
	return scale, true
}

// MatMulTQ8Q8Strided sets dst[i*ldd+j] = Σ_p a[i*k+p]·as[…]·b[j*k+p]·bs[…]
// for i < m, j < n: the product of a[m×k] and bᵀ (b stored n×k) with both
// quantised to int8 in blocks of Q8Block along k, element p of row i of a
// standing for a[i*k+p]·as[i*(k/Q8Block)+p/Q8Block] and likewise for b.
//
// Each block's 32 products are summed exactly in integers, in eight lanes
// of four consecutive elements (lane l takes elements 4l … 4l+3 of the
// block); lane l's sum, as float32, times the block's scale (as·bs, rounded
// once) is rounded once more and added to lane l's float32 accumulator; the
// lanes are folded as MatMulT's are. The assembly and the pure-Go version
// give the same bits, whatever m, n and the row strides. k must be a multiple
// of Q8Block, and every quantised value within ±127.
func MatMulTQ8Q8Strided(dst []float32, ldd int, a []int8, as []float32, b []int8, bs []float32, m, n, k int) {
	if k%Q8Block != 0 {
		panic(fmt.Sprintf("asm.MatMulTQ8Q8: k=%d is not a multiple of %d", k, Q8Block))
	}
	checkMatMul("MatMulTQ8Q8", len(dst), ldd, len(a), k, len(b), k, m, n, k)
	nb := k / Q8Block
	if len(as) < m*nb || len(bs) < n*nb {
		panic(fmt.Sprintf("asm.MatMulTQ8Q8: %d and %d scales, want %d and %d", len(as), len(bs), m*nb, n*nb))
	}
	if m == 0 || n == 0 {
		return
	}
	if k == 0 {
		for i := 0; i < m; i++ {
			clear(dst[i*ldd : i*ldd+n])
		}
		return
	}
	matmulTQ8Q8(dst, ldd, a, as, b, bs, m, n, k)
}

func matmulTQ8Q8Generic(dst []float32, ldd int, a []int8, as []float32, b []int8, bs []float32, m, n, k int) {
	nb := k / Q8Block
	for i := 0; i < m; i++ {
		ar, sa := a[i*k:(i+1)*k], as[i*nb:(i+1)*nb]
		for j := 0; j < n; j++ {
			br, sb := b[j*k:(j+1)*k], bs[j*nb:(j+1)*nb]
			var acc [8]float32
			for blk, s := range sa {
				scale := s * sb[blk]
				x, w := ar[blk*Q8Block:(blk+1)*Q8Block], br[blk*Q8Block:(blk+1)*Q8Block]
				for l := range acc {
					p := 4 * l
					sum := int32(x[p])*int32(w[p]) + int32(x[p+1])*int32(w[p+1]) +
						int32(x[p+2])*int32(w[p+2]) + int32(x[p+3])*int32(w[p+3])
					// The conversion rounds the product, so that it is not
					// fused with the sum (the assembly rounds both).
					acc[l] += float32(float32(sum) * scale)
				}
			}
			dst[i*ldd+j] = reduceLanes(&acc)
		}
	}
}
