package tensor

import (
	"fmt"

	"github.com/weftlabs/weft/internal/llm/tensor/internal/asm"
)

// columnGrain aligns the column bands given to threads: every tile width of
// the kernels divides it, so no band ends in a narrow remainder tile.
const columnGrain = 48

// minParallelMACs is the size below which a product runs on the calling
// thread alone: waking a worker costs more than it saves.
const minParallelMACs = 1 << 15

// MatMulT sets dst[m×n] = a[m×k] · bᵀ, b stored n×k row-major ([out, in], as
// checkpoints store linear weights), splitting the n output columns over the
// pool's threads. Each element is computed by one thread in the order of
// package asm, so a row's result is bit-identical whatever m and whatever the
// thread count. It panics if a slice is shorter than its shape.
func (p *Pool) MatMulT(dst, a, b []float32, m, n, k int) {
	asmCheck := m*k <= len(a) && n*k <= len(b) && m*n <= len(dst)
	if !asmCheck || m*n*k < minParallelMACs || p.threads == 1 {
		asm.MatMulT(dst, a, b, m, n, k) // panics on bad shapes, in the caller's goroutine
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.matmul = matmulTask{dst: dst, a: a, b: b, m: m, n: n, k: k}
	p.runLocked(&p.matmul, n, columnGrain, p.threads)
	p.matmul = matmulTask{}
}

type matmulTask struct {
	dst, a, b []float32
	m, n, k   int
}

func (t *matmulTask) run(lo, hi int) {
	asm.MatMulTStrided(t.dst[lo:], t.n, t.a, t.k, t.b[lo*t.k:], t.k, t.m, hi-lo, t.k)
}

// MatMulTQ8 is MatMulT with b an int8 block-quantised matrix: dst[m×w.Rows]
// = a[m×w.Cols] · wᵀ. Its result equals MatMulT on w.Dequantize() bit for bit.
func (p *Pool) MatMulTQ8(dst, a []float32, w *Q8, m int) {
	n, k := w.Rows, w.Cols
	asmCheck := m*k <= len(a) && m*n <= len(dst) && n*k <= len(w.Data) &&
		w.BlockSize > 0 && w.BlockSize%8 == 0 && k%w.BlockSize == 0 && n*(k/w.BlockSize) <= len(w.Scales)
	if !asmCheck || m*n*k < minParallelMACs || p.threads == 1 {
		asm.MatMulTQ8(dst, a, w.Data, w.Scales, m, n, k, w.BlockSize)
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.q8 = matmulQ8Task{dst: dst, a: a, w: w, m: m}
	p.runLocked(&p.q8, n, columnGrain, p.threads)
	p.q8 = matmulQ8Task{}
}

type matmulQ8Task struct {
	dst, a []float32
	w      *Q8
	m      int
}

func (t *matmulQ8Task) run(lo, hi int) {
	w := t.w
	nb := w.Cols / w.BlockSize
	asm.MatMulTQ8Strided(t.dst[lo:], w.Rows, t.a, w.Data[lo*w.Cols:], w.Scales[lo*nb:], t.m, hi-lo, w.Cols, w.BlockSize)
}

// MatMulT is the single-thread kernel behind Pool.MatMulT, with the same
// signature as in package asm (which code outside package tensor cannot
// import): dst[m×n] = a[m×k] · bᵀ, b stored n×k.
func MatMulT(dst, a, b []float32, m, n, k int) { asm.MatMulT(dst, a, b, m, n, k) }

// MatMulTQ8 is the single-thread int8 kernel behind Pool.MatMulTQ8, with the
// signature of package asm: b n×k int8 with scales n×(k/blockSize).
func MatMulTQ8(dst, a []float32, b []int8, scales []float32, m, n, k, blockSize int) {
	asm.MatMulTQ8(dst, a, b, scales, m, n, k, blockSize)
}

// MatMulTQ8Strided is MatMulTQ8 on the calling thread writing row i of the
// result at dst[i*ldd:]: one band of a layer's output columns computed into
// a wider output, as when the projections of one input share a dispatch.
func MatMulTQ8Strided(dst []float32, ldd int, a []float32, b []int8, scales []float32, m, n, k, blockSize int) {
	asm.MatMulTQ8Strided(dst, ldd, a, b, scales, m, n, k, blockSize)
}

// MatMulTQ8Q8Strided sets row i of dst (at dst[i*ldd:]) to row i of x times
// bᵀ on the calling thread, for the x.Rows rows of x (activations from
// QuantizeRows) and the n rows of b (int8, x.Cols each, scales per
// ActivationBlock as in a Q8 of that block size): the int8 weight path of a
// forward pass, which sums 32 byte products at a time in integers (package
// asm describes the order; a row's result does not depend on the other rows
// or on n). Against the float32 product of x's float values and the
// dequantised weights it differs by the activations' quantisation, at most
// Σ_blocks (x's scale/2)·Σ|w| over the block, plus float32 rounding.
func MatMulTQ8Q8Strided(dst []float32, ldd int, x *Q8, b []int8, scales []float32, n int) {
	asm.MatMulTQ8Q8Strided(dst, ldd, x.Data, x.Scales, b, scales, x.Rows, n, x.Cols)
}

// MatMulTStrided is MatMulT on the calling thread over rows that need not be
// packed: row i of a starts at a[i*lda], row j of b at b[j*ldb], row i of the
// result at dst[i*ldd]. It serves products too small to split, such as one
// attention head's scores against the rows of a key cache laid out
// [positions × heads·headDim]; the result is bit-identical to MatMulT on
// packed copies.
func MatMulTStrided(dst []float32, ldd int, a []float32, lda int, b []float32, ldb, m, n, k int) {
	asm.MatMulTStrided(dst, ldd, a, lda, b, ldb, m, n, k)
}

// MatMulTGrowing is MatMulTStrided over sums that grow by one element a
// row: row i of dst is row i of a times b over the first k+i elements, as
// the weighted sums of values of a prompt's consecutive positions are. Each
// row is bit-identical to MatMulTStrided on that row alone with k+i; the
// rows share their reads of b.
func MatMulTGrowing(dst []float32, ldd int, a []float32, lda int, b []float32, ldb, m, n, k int) {
	asm.MatMulTGrowing(dst, ldd, a, lda, b, ldb, m, n, k)
}

// Dot returns Σ a[i]·b[i], bit-identical to the element MatMulT computes for
// the same two rows. It panics if the lengths differ.
func Dot(a, b []float32) float32 { return asm.Dot(a, b) }

// Axpy sets y[i] += alpha·x[i] (fused where the CPU has FMA): an attention
// output's weighted sum of value rows, or a gradient's accumulation. It
// panics if the lengths differ.
func Axpy(alpha float32, x, y []float32) { asm.Axpy(alpha, x, y) }

// Scale sets x[i] *= alpha.
func Scale(alpha float32, x []float32) { asm.Scale(alpha, x) }

// Prefetch asks for x in the per-core second-level cache ahead of its use,
// without waiting: rows a product will read next, fetched while it works
// on others. It changes no value.
func Prefetch(x []float32) { asm.Prefetch(x) }

// MatMulAdd adds a·b to dst: dst[m×n] += a[m×k]·b[k×n], b stored k×n
// row-major — the weight itself for the gradient through it (dx = dy·W,
// k the layer's outputs), or a weight's transpose for a forward product
// over many rows. Every element is summed in the order of k onto its value
// in dst (package asm's outer-product tiles), so the result does not
// depend on the thread count. Wide products (the vocabulary) and short
// ones (a low-rank adapter's r rows) split the columns over the threads,
// in strips of the kernels' tile width; others split the rows. It panics if a slice is shorter than its shape.
func (p *Pool) MatMulAdd(dst, a, b []float32, m, n, k int) { p.matMulAB(true, dst, a, b, m, n, k) }

// MatMul sets dst[m×n] = a[m×k]·b[k×n], b stored k×n row-major, summed as
// MatMulAdd sums onto zero: the logits of many rows against the transpose
// of the output projection.
func (p *Pool) MatMul(dst, a, b []float32, m, n, k int) { p.matMulAB(false, dst, a, b, m, n, k) }

func (p *Pool) matMulAB(accumulate bool, dst, a, b []float32, m, n, k int) {
	if m*k > len(a) || k*n > len(b) || m*n > len(dst) {
		panic(fmt.Sprintf("tensor.MatMulAdd: a %d, b %d, dst %d elements for %d×%d·%d×%d", len(a), len(b), len(dst), m, k, k, n))
	}
	run := asm.MatMul
	if accumulate {
		run = asm.MatMulAdd
	}
	if m*n*k < minParallelMACs || p.threads == 1 {
		run(dst, n, a, k, b, n, m, n, k)
		return
	}
	// Columns for a wide product, or when there are too few rows to share.
	if n >= matMulAddWide*p.threads || (m < 4*matMulAddRows*p.threads && n >= 2*matMulAddStrip*p.threads) {
		p.Parallel(n, matMulAddStrip, func(lo, hi int) {
			run(dst[lo:], n, a, k, b[lo:], n, m, hi-lo, k)
		})
		return
	}
	p.Parallel(m, matMulAddRows, func(lo, hi int) {
		run(dst[lo*n:], n, a[lo*k:], k, b, n, hi-lo, n, k)
	})
}

// MatMulStrided sets dst = a·b on the calling thread, b stored k×n, over
// rows that need not be packed: row i of a at a[i*lda], row p of b at
// b[p*ldb], row i of the result at dst[i*ldd]. It sums as Pool.MatMul.
func MatMulStrided(dst []float32, ldd int, a []float32, lda int, b []float32, ldb, m, n, k int) {
	asm.MatMul(dst, ldd, a, lda, b, ldb, m, n, k)
}

// MatMulAddStrided adds a·b to dst on the calling thread, strided as
// MatMulStrided: Pool.MatMulAdd's sums.
func MatMulAddStrided(dst []float32, ldd int, a []float32, lda int, b []float32, ldb, m, n, k int) {
	asm.MatMulAdd(dst, ldd, a, lda, b, ldb, m, n, k)
}

// PackedB is a right-hand side of MatMul laid out once as the kernels'
// tiles read it (asm.PackedB): a product taken again and again against
// the same matrix skips the copy every call makes otherwise.
type PackedB = asm.PackedB

// PackB packs b [k×n], row p at b[p*ldb], for MatMulPacked.
func PackB(b []float32, ldb, k, n int) *PackedB { return asm.PackB(b, ldb, k, n) }

// Ahead names memory a packed product prefetches while it runs: the
// part-th of parts shares of the next block of a wider product
// (asm.Ahead).
type Ahead = asm.Ahead

// MatMulPackedAhead is MatMulPacked, or MatMulAddPacked with accumulate,
// prefetching ahead's memory a share before each of its tiles — the next
// block of a product too large for the cache, fetched while this one is
// multiplied: the same sums.
func MatMulPackedAhead(accumulate bool, dst []float32, ldd int, a []float32, lda int, b *PackedB, m int, ahead Ahead) {
	asm.MatMulPackedAhead(accumulate, dst, ldd, a, lda, b, m, ahead)
}

// MatMulPacked sets dst = a·b on the calling thread, b packed by PackB,
// rows of a at a[i*lda] and of dst at dst[i*ldd]: the sums of MatMul
// against b itself, bit for bit — a block of a wider product computed in
// place, as a thread's share of a training pass's logits.
func MatMulPacked(dst []float32, ldd int, a []float32, lda int, b *PackedB, m int) {
	asm.MatMulPacked(dst, ldd, a, lda, b, m)
}

// MatMulPacked sets dst[m×n] = a[m×k]·b, b packed by PackB, over the
// threads by bands of rows: Pool.MatMul's sums, bit for bit.
func (p *Pool) MatMulPacked(dst, a []float32, b *PackedB, m int) {
	p.matMulPackedAB(asm.MatMulPacked, dst, a, b, m)
}

// MatMulAddPacked adds a[m×k]·b to dst[m×n], b packed by PackB:
// Pool.MatMulAdd's sums, bit for bit.
func (p *Pool) MatMulAddPacked(dst, a []float32, b *PackedB, m int) {
	p.matMulPackedAB(asm.MatMulAddPacked, dst, a, b, m)
}

func (p *Pool) matMulPackedAB(run func([]float32, int, []float32, int, *PackedB, int), dst, a []float32, b *PackedB, m int) {
	k, n := b.Shape()
	if m*k > len(a) || m*n > len(dst) {
		panic(fmt.Sprintf("tensor.MatMulPacked: a %d, dst %d elements for %d×%d·%d×%d", len(a), len(dst), m, k, k, n))
	}
	if m*n*k < minParallelMACs || p.threads == 1 {
		run(dst, n, a, k, b, m)
		return
	}
	p.Parallel(m, matMulAddRows, func(lo, hi int) {
		run(dst[lo*n:], n, a[lo*k:], k, b, hi-lo)
	})
}

// matMulAddStrip and matMulAddRows are the widest tile of MatMulAdd's
// kernels (32 columns) and a height every tile divides (12 rows with
// AVX-512, 6 with AVX2): bands of whole tiles leave no short remainder. A product splits its columns over the threads only when each
// band is at least matMulAddWide columns: below that, every thread would
// read all of a for a few strips of b, where a split of the rows reads
// each row of a once and shares b's blocks.
const (
	matMulAddStrip = 32
	matMulAddRows  = 12
	matMulAddWide  = 2048
)
