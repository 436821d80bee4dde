package asm

import "fmt"

// MatMulAdd adds a·b to dst: dst[i*ldd+j] += Σ_p a[i*lda+p]·b[p*ldb+j] for
// i < m, j < n, with b stored k×n row-major — the layout of a weight's
// transpose for a forward product over many rows, or of the weight itself
// for the gradient through it (dx = dy·W). Each element is summed in the
// order p = 0, 1, ..., k−1 onto its value in dst, one fused multiply-add a
// step in the assembly (the pure-Go version rounds the product and the sum
// separately unless the compiler fuses them), so the result does not depend
// on m, n or how a caller splits the rows or the columns. It panics if a
// slice is too short.
//
// The amd64 tiles broadcast one element of a row of a and multiply it into
// vectors of b's row (outer products, no horizontal sums), and the driver
// packs b in blocks that stay in the per-core cache while every tile of
// rows passes over them (matmuladd_tiled_amd64.go).
func MatMulAdd(dst []float32, ldd int, a []float32, lda int, b []float32, ldb, m, n, k int) {
	checkMatMulAdd("MatMulAdd", len(dst), ldd, len(a), lda, len(b), ldb, m, n, k)
	if m == 0 || n == 0 || k == 0 {
		return
	}
	matmulAdd(true, dst, ldd, a, lda, b, ldb, m, n, k)
}

// MatMul sets dst to a·b, summed as MatMulAdd sums onto zero.
func MatMul(dst []float32, ldd int, a []float32, lda int, b []float32, ldb, m, n, k int) {
	checkMatMulAdd("MatMul", len(dst), ldd, len(a), lda, len(b), ldb, m, n, k)
	if m == 0 || n == 0 {
		return
	}
	if k == 0 {
		for i := range m {
			clear(dst[i*ldd : i*ldd+n])
		}
		return
	}
	matmulAdd(false, dst, ldd, a, lda, b, ldb, m, n, k)
}

// checkMatMulAdd panics on a shape the slices do not hold; m, n or k
// may be 0.
func checkMatMulAdd(op string, lenDst, ldd, lenA, lda, lenB, ldb, m, n, k int) {
	switch {
	case m < 0 || n < 0 || k < 0:
		panic(fmt.Sprintf("asm.%s: negative shape m=%d n=%d k=%d", op, m, n, k))
	case ldd < n || lda < k || ldb < n:
		panic(fmt.Sprintf("asm.%s: strides dst %d, a %d, b %d below n=%d, k=%d", op, ldd, lda, ldb, n, k))
	case m > 0 && k > 0 && lenA < (m-1)*lda+k:
		panic(fmt.Sprintf("asm.%s: a has %d elements, want %d", op, lenA, (m-1)*lda+k))
	case k > 0 && n > 0 && lenB < (k-1)*ldb+n:
		panic(fmt.Sprintf("asm.%s: b has %d elements, want %d", op, lenB, (k-1)*ldb+n))
	case m > 0 && n > 0 && lenDst < (m-1)*ldd+n:
		panic(fmt.Sprintf("asm.%s: dst has %d elements, want %d", op, lenDst, (m-1)*ldd+n))
	}
}

// matmulAddGeneric is MatMulAdd (MatMul without accumulate) in pure Go,
// row by row of a: for each step p, a[i][p] times b's row p is added to
// dst's row i.
func matmulAddGeneric(accumulate bool, dst []float32, ldd int, a []float32, lda int, b []float32, ldb, m, n, k int) {
	for i := range m {
		d := dst[i*ldd : i*ldd+n]
		if !accumulate {
			clear(d)
		}
		for p, av := range a[i*lda : i*lda+k] {
			brow := b[p*ldb : p*ldb+n]
			for j := range d {
				d[j] += av * brow[j]
			}
		}
	}
}

// PackedB is the right-hand side b of MatMul (k×n, row-major) laid out
// once as MatMul's tiles read it, so a product that is taken again and
// again against the same b — the output projection of every training
// step — neither copies it into the per-call packing nor reads it with
// its row stride. The columns the tiles do not cover are kept row-major.
type PackedB struct {
	k, n, tiled int
	packed      []float32 // columns [0, tiled), in the order the tiles read them
	rest        []float32 // columns [tiled, n), k × (n − tiled)
}

// PackB packs b [k×n], row p at b[p*ldb]. It panics if b is too short.
func PackB(b []float32, ldb, k, n int) *PackedB {
	checkMatMulAdd("PackB", 0, n, 0, k, len(b), ldb, 0, n, k)
	pb := &PackedB{k: k, n: n}
	pb.packed, pb.tiled = packB(b, ldb, k, n)
	rest := n - pb.tiled
	pb.rest = make([]float32, k*rest)
	for p := range k {
		copy(pb.rest[p*rest:(p+1)*rest], b[p*ldb+pb.tiled:p*ldb+n])
	}
	return pb
}

// Shape is b's steps k and columns n.
func (pb *PackedB) Shape() (k, n int) { return pb.k, pb.n }

// MatMulPacked sets dst to a·b, b packed by PackB: the same sums, bit for
// bit, as MatMul of b itself.
func MatMulPacked(dst []float32, ldd int, a []float32, lda int, pb *PackedB, m int) {
	matmulPackedAB(false, dst, ldd, a, lda, pb, m, nil)
}

// MatMulAddPacked adds a·b to dst, b packed by PackB: MatMulAdd's sums of
// b itself.
func MatMulAddPacked(dst []float32, ldd int, a []float32, lda int, pb *PackedB, m int) {
	matmulPackedAB(true, dst, ldd, a, lda, pb, m, nil)
}

// Ahead is memory a packed product prefetches while it runs (Prefetch),
// a share before each of its tiles: the part-th of parts equal shares of
// Next's packing, the next block of a wider product that is read fresh
// from memory. The zero Ahead prefetches nothing.
type Ahead struct {
	Next        *PackedB
	Part, Parts int
}

// share is a's memory; none for a part outside [0, Parts).
func (a Ahead) share() []float32 {
	if a.Next == nil || a.Part < 0 || a.Part >= a.Parts {
		return nil
	}
	n := len(a.Next.packed)
	return a.Next.packed[n*a.Part/a.Parts : n*(a.Part+1)/a.Parts]
}

// MatMulPackedAhead is MatMulPacked (set, or add with accumulate) that
// prefetches ahead's memory meanwhile: the same sums.
func MatMulPackedAhead(accumulate bool, dst []float32, ldd int, a []float32, lda int, pb *PackedB, m int, ahead Ahead) {
	matmulPackedAB(accumulate, dst, ldd, a, lda, pb, m, ahead.share())
}

func matmulPackedAB(accumulate bool, dst []float32, ldd int, a []float32, lda int, pb *PackedB, m int, ahead []float32) {
	k, n := pb.k, pb.n
	checkMatMulAdd("MatMulPacked", len(dst), ldd, len(a), lda, k*n, n, m, n, k)
	if m == 0 || n == 0 || (k == 0 && accumulate) {
		return
	}
	if k == 0 {
		for i := range m {
			clear(dst[i*ldd : i*ldd+n])
		}
		return
	}
	if pb.tiled > 0 {
		matmulPacked(accumulate, dst, ldd, a, lda, pb.packed, m, pb.tiled, k, ahead)
	}
	if rest := n - pb.tiled; rest > 0 {
		matmulAddGeneric(accumulate, dst[pb.tiled:], ldd, a, lda, pb.rest, rest, m, rest, k)
	}
}
