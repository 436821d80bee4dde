package tensor

import (
	"github.com/weftlabs/weft/internal/llm/tensor/internal/asm"
)

// columnGrain aligns the column bands given to threads: every tile width of
// the kernels divides it, so no band ends in a narrow remainder tile.
const columnGrain = 24

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
	asm.MatMulTStrided(t.dst[lo:], t.n, t.a, t.b[lo*t.k:], t.m, hi-lo, t.k)
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
