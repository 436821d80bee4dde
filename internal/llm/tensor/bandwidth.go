package tensor

import (
	"time"

	"github.com/weftlabs/weft/internal/llm/tensor/internal/asm"
)

// ReadBandwidth measures how fast the pool's threads stream buf from memory,
// in bytes per second: buf is split into one contiguous band per thread,
// read once to bring it in, then passes more times under the clock. A buffer
// the size of a model's weights gives the bound a memory-bound decode step
// is measured against (weight bytes per token ÷ this rate). On a machine
// shared with other work, keep the best of several calls.
func (p *Pool) ReadBandwidth(buf []float32, passes int) float64 {
	passes = max(passes, 1)
	grain := 1 << 14 // 64 KiB bands, whole multiples of the kernel's 64 elements
	// One slot per band start, so threads never share one; stores to it
	// keep the reads from being optimised away.
	sink := make([]float32, len(buf)/grain+1)
	read := func(lo, hi int) {
		sink[lo/grain] += asm.Sum(buf[lo:hi])
	}
	p.Parallel(len(buf), grain, read)
	start := time.Now()
	for range passes {
		p.Parallel(len(buf), grain, read)
	}
	elapsed := time.Since(start)
	return float64(len(buf)) * 4 * float64(passes) / elapsed.Seconds()
}

// PeakFLOPs measures the pool's peak floating-point rate, in operations per
// second: every thread runs rounds rounds of independent multiply-adds on the
// widest vectors the kernels use (asm.Peak), at the same time. Prefill and
// other compute-bound work are measured against it.
func (p *Pool) PeakFLOPs(rounds int) float64 {
	rounds = max(rounds, 1)
	flops := make([]int, p.threads) // one slot per part: parts start at multiples of 1
	start := time.Now()
	p.Parallel(p.threads, 1, func(lo, hi int) {
		for t := lo; t < hi; t++ {
			flops[t] = asm.Peak(rounds)
		}
	})
	elapsed := time.Since(start)
	total := 0
	for _, f := range flops {
		total += f
	}
	return float64(total) / elapsed.Seconds()
}
