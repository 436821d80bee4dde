package tensor

import (
	"runtime"
	"sync"
)

// Pool runs the parallel parts of the kernels on a fixed set of goroutines
// started once, so a forward pass does not start goroutines per operation.
// The calling goroutine always takes the first part itself.
//
// A Pool serves one parallel operation at a time; concurrent callers queue.
// Results never depend on the number of threads: work is split over output
// elements, each computed in full by one thread in the order of package asm.
type Pool struct {
	threads int

	mu     sync.Mutex // one operation at a time
	wake   []chan struct{}
	wg     sync.WaitGroup
	task   rangeTask
	bounds []int // part p covers [bounds[p], bounds[p+1])

	matmul matmulTask // reused by MatMulT so a call allocates nothing
	q8     matmulQ8Task
	fn     funcTask
}

// rangeTask is one operation split into ranges of its work units.
type rangeTask interface {
	run(lo, hi int)
}

// NewPool starts a pool of threads threads (the caller's and threads-1
// workers). threads <= 0 means runtime.GOMAXPROCS(0). Close stops the
// workers.
func NewPool(threads int) *Pool {
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	p := &Pool{threads: threads, wake: make([]chan struct{}, threads), bounds: make([]int, threads+1)}
	for w := 1; w < threads; w++ {
		p.wake[w] = make(chan struct{}, 1)
		go p.worker(w)
	}
	return p
}

// Threads is the number of threads the pool splits work over.
func (p *Pool) Threads() int { return p.threads }

// Close stops the workers. The pool must not be used afterwards.
func (p *Pool) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for w := 1; w < p.threads; w++ {
		close(p.wake[w])
	}
}

func (p *Pool) worker(w int) {
	for range p.wake[w] {
		p.task.run(p.bounds[w], p.bounds[w+1])
		p.wg.Done()
	}
}

// Parallel calls fn over a split of [0, n) into at most Threads() contiguous
// ranges whose bounds (but the last) are multiples of grain, and returns when
// all calls have returned. grain <= 0 means 1. fn must not panic (a worker's
// panic ends the program) nor call back into the pool (it would wait for
// itself).
func (p *Pool) Parallel(n, grain int, fn func(lo, hi int)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.fn.fn = fn
	p.runLocked(&p.fn, n, grain, p.threads)
	p.fn.fn = nil
}

type funcTask struct{ fn func(lo, hi int) }

func (t *funcTask) run(lo, hi int) { t.fn(lo, hi) }

// runLocked splits [0, n) into up to parts ranges aligned to grain and runs
// them; p.mu is held.
func (p *Pool) runLocked(t rangeTask, n, grain, parts int) {
	if grain <= 0 {
		grain = 1
	}
	units := (n + grain - 1) / grain
	parts = max(1, min(parts, p.threads, units))
	if parts == 1 {
		if n > 0 {
			t.run(0, n)
		}
		return
	}
	for q := 0; q <= parts; q++ {
		p.bounds[q] = min(n, units*q/parts*grain)
	}
	p.task = t
	p.wg.Add(parts - 1)
	for w := 1; w < parts; w++ {
		p.wake[w] <- struct{}{}
	}
	t.run(p.bounds[0], p.bounds[1])
	p.wg.Wait()
	p.task = nil
}
