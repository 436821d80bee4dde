package tensor

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// defaultSpin is how long a worker polls for the next operation, and the
// caller for the workers' end, before parking. A decode step hands the
// workers a few dozen operations a few microseconds apart, and a prompt's
// lanes meet once a layer, the first to arrive waiting up to a tenth of
// the layer for the other: a thread that parks between them is woken
// through the scheduler and the kernel each time, which on a virtual
// machine whose idle processor has halted costs as much as the work
// itself, and the caller, finding the part not started, runs it alone. At
// 30 µs the 15M Llama's decode ran at 1,250–1,830 tokens/s from round to
// round and its 200-token prefill at 11,300–13,200; at 300 µs at
// 1,950–2,160 and 13,100–14,200 (2 threads, quiet machine). A step's
// operations follow each other within the bound; an idle pool parks after
// it and burns nothing. A polling thread gives its core away between
// polls (yieldThread), and the caller runs the parts no worker has started
// by the time its own is done (Pool.claim), so on a machine busier than
// its cores neither waits for a thread the machine does not run.
const defaultSpin = 300 * time.Microsecond

// Pool runs the parallel parts of the kernels on a fixed set of goroutines
// started once, so a forward pass does not start goroutines per operation.
// The calling goroutine always takes the first part itself.
//
// A Pool serves one parallel operation at a time; concurrent callers queue.
// Results never depend on the number of threads: work is split over output
// elements, each computed in full by one thread in the order of package asm.
type Pool struct {
	threads int
	spin    time.Duration // polling before a thread parks; 0 parks at once
	steal   bool          // the caller runs the parts no worker has started

	mu sync.Mutex // one operation at a time
	// posted is the last operation handed out: its number (upper 48 bits,
	// from 1, growing) and how many parts it has (lower 15 bits; stopPool
	// when closing). Part w > 0 of task over bounds, which are written
	// before posted and stay until every part has ended, is run by worker
	// w or, when the caller claims it first, by the caller.
	posted  atomic.Uint64
	pending atomic.Int32  // parts past the first of the posted operation still running
	waiting atomic.Uint64 // the operation the caller sleeps on wake for, or 0
	wake    chan struct{} // the caller's
	workers []poolWorker
	task    rangeTask
	bounds  []int // part p covers [bounds[p], bounds[p+1])

	matmul matmulTask // reused by MatMulT so a call allocates nothing
	q8     matmulQ8Task
	fn     funcTask
}

// stopPool in posted's lower bits tells the workers to end; partsMask
// keeps the count of parts.
const (
	stopPool  = 1 << 15
	partsMask = stopPool - 1
)

// poolWorker is a worker's parking place: whoever finds it parked (and
// clears parked) owes it one token on wake. The padding keeps each
// worker's flag on a cache line of its own.
type poolWorker struct {
	parked  atomic.Bool
	wake    chan struct{}
	claimed atomic.Uint64 // the last operation whose part of this worker's was taken
	_       [40]byte
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
	// A thread polling for work holds a processor: with fewer processors
	// than threads it would keep the thread it waits for off them.
	spin := time.Duration(0)
	if threads <= runtime.GOMAXPROCS(0) {
		spin = defaultSpin
	}
	return newPool(threads, spin, true)
}

// newPool is NewPool with its polling and whether the caller runs the
// parts no worker has started (steal) chosen.
func newPool(threads int, spin time.Duration, steal bool) *Pool {
	threads = min(threads, partsMask)
	p := &Pool{threads: threads, spin: spin, steal: steal, workers: make([]poolWorker, threads), bounds: make([]int, threads+1), wake: make(chan struct{}, 1)}
	for w := 1; w < threads; w++ {
		p.workers[w].wake = make(chan struct{}, 1)
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
	p.post(stopPool)
	for w := 1; w < p.threads; w++ {
		close(p.workers[w].wake)
	}
}

// post hands out the next operation, of parts parts, and returns it.
func (p *Pool) post(parts int) uint64 {
	op := (p.posted.Load()>>16+1)<<16 | uint64(parts)
	p.posted.Store(op)
	return op
}

func (p *Pool) worker(w int) {
	s := &p.workers[w]
	var seen uint64
	for {
		op, ok := p.next(s, seen)
		if !ok || op&stopPool != 0 {
			return
		}
		seen = op
		if w >= int(op&partsMask) || !p.claim(w, op) {
			continue // not a part of this one, or the caller ran it
		}
		p.task.run(p.bounds[w], p.bounds[w+1])
		// The caller may have left this operation's wait already (it saw
		// pending reach 0) and sleep on the next one: only the sleeper on
		// this very operation is woken.
		if p.pending.Add(-1) == 0 && p.waiting.CompareAndSwap(op, 0) {
			p.wake <- struct{}{}
		}
	}
}

// next waits for an operation other than seen: polling for up to p.spin,
// then parked until the caller wakes it. ok is false once the pool is
// closed.
func (p *Pool) next(s *poolWorker, seen uint64) (op uint64, ok bool) {
	if p.poll(func() bool { return p.posted.Load() != seen }) {
		return p.posted.Load(), true
	}
	s.parked.Store(true)
	if op = p.posted.Load(); op != seen && s.parked.CompareAndSwap(true, false) {
		return op, true
	}
	// Parked: the caller clears parked for an operation that has a part
	// for this worker and sends a token, which is taken here even when
	// the operation was seen just above.
	_, ok = <-s.wake
	return p.posted.Load(), ok
}

// poll calls done until it is true or p.spin has passed, and says which.
// Every few calls it gives the thread's core to any other thread waiting
// for it (yieldThread): on a machine busier than its cores a polling
// thread would otherwise hold a core the thread it waits for needs.
func (p *Pool) poll(done func() bool) bool {
	if p.spin <= 0 {
		return false
	}
	start := time.Now()
	for i := 1; ; i++ {
		if done() {
			return true
		}
		if i%8 == 0 {
			if time.Since(start) > p.spin {
				return false
			}
			yieldThread()
		}
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
	p.pending.Store(int32(parts - 1))
	op := p.post(parts)
	for w := 1; w < parts; w++ {
		if s := &p.workers[w]; s.parked.CompareAndSwap(true, false) {
			s.wake <- struct{}{}
		}
	}
	t.run(p.bounds[0], p.bounds[1])
	// The parts no worker has started yet are the caller's: a worker the
	// machine has not run by now (parked, or its core busy with other
	// work) would cost more than the part.
	for w := 1; p.steal && w < parts; w++ {
		if p.claim(w, op) {
			t.run(p.bounds[w], p.bounds[w+1])
			p.pending.Add(-1)
		}
	}
	p.join(op)
	p.task = nil
}

// claim takes part w of operation op for the calling thread and says
// whether it did: false when another thread took it. A part is run once,
// by whoever claims it; an operation ends when all its parts have been
// claimed and run, so a worker that sees it late finds its part claimed
// for it or for a later operation (operations' numbers grow).
func (p *Pool) claim(w int, op uint64) bool {
	c := &p.workers[w].claimed
	v := c.Load()
	return v>>16 < op>>16 && c.CompareAndSwap(v, op)
}

// join waits for the workers' parts of operation op to end: polling for up
// to p.spin, then asleep until the last of them wakes it.
func (p *Pool) join(op uint64) {
	if p.poll(func() bool { return p.pending.Load() == 0 }) {
		return
	}
	p.waiting.Store(op)
	if p.pending.Load() == 0 && p.waiting.CompareAndSwap(op, 0) {
		return
	}
	<-p.wake
}
