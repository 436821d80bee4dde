package tensor

import (
	"errors"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/weftlabs/weft/internal/llm/tensor/internal/asm"
)

func randFloats(r *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	return x
}

func sameBits(a, b []float32) int {
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return i
		}
	}
	return -1
}

// TestMatMulTRowsIdenticalAcrossBatchAndThreads: the row of a sequence must
// come out the same bits computed alone (m=1) or in a batch of 7, on 1, 2, 3
// or 5 threads, and equal the single-threaded kernel's.
func TestMatMulTRowsIdenticalAcrossBatchAndThreads(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, shape := range [][2]int{{129, 301}, {288, 768}, {13, 4099}} {
		k, n := shape[0], shape[1]
		const m = 7
		a, b := randFloats(r, m*k), randFloats(r, n*k)
		want := make([]float32, m*n)
		asm.MatMulT(want, a, b, m, n, k)
		for _, threads := range []int{1, 2, 3, 5} {
			p := NewPool(threads)
			batch := make([]float32, m*n)
			p.MatMulT(batch, a, b, m, n, k)
			if i := sameBits(batch, want); i >= 0 {
				t.Fatalf("k=%d n=%d threads=%d: batch element %d = %v, single-thread kernel %v", k, n, threads, i, batch[i], want[i])
			}
			for i := 0; i < m; i++ {
				alone := make([]float32, n)
				p.MatMulT(alone, a[i*k:(i+1)*k], b, 1, n, k)
				if j := sameBits(alone, want[i*n:(i+1)*n]); j >= 0 {
					t.Fatalf("k=%d n=%d threads=%d: row %d alone differs at column %d: %v vs %v", k, n, threads, i, j, alone[j], want[i*n+j])
				}
			}
			p.Close()
		}
	}
}

// TestPoolConcurrentCallers: callers from several goroutines share one pool
// (run with -race to check the hand-off).
func TestPoolConcurrentCallers(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const m, n, k = 3, 200, 160
	a, b := randFloats(r, m*k), randFloats(r, n*k)
	want := make([]float32, m*n)
	asm.MatMulT(want, a, b, m, n, k)
	p := NewPool(2)
	defer p.Close()
	var wg sync.WaitGroup
	errs := make(chan int, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				got := make([]float32, m*n)
				p.MatMulT(got, a, b, m, n, k)
				if i := sameBits(got, want); i >= 0 {
					errs <- i
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for i := range errs {
		t.Fatalf("concurrent call differs at element %d", i)
	}
}

func TestParallelCoversRangeOnceAligned(t *testing.T) {
	for _, threads := range []int{1, 2, 3, 7} {
		p := NewPool(threads)
		for _, c := range [][2]int{{0, 1}, {1, 1}, {10, 3}, {100, 24}, {1000, 7}, {5, 0}} {
			n, grain := c[0], c[1]
			seen := make([]int, n)
			var mu sync.Mutex
			var starts []int
			p.Parallel(n, grain, func(lo, hi int) {
				mu.Lock()
				defer mu.Unlock()
				starts = append(starts, lo)
				for i := lo; i < hi; i++ {
					seen[i]++
				}
			})
			for i, s := range seen {
				if s != 1 {
					t.Fatalf("threads=%d n=%d grain=%d: index %d visited %d times", threads, n, grain, i, s)
				}
			}
			if len(starts) > threads {
				t.Fatalf("threads=%d: %d parts", threads, len(starts))
			}
			for _, lo := range starts {
				if grain > 0 && lo%grain != 0 {
					t.Fatalf("threads=%d n=%d grain=%d: part starts at %d", threads, n, grain, lo)
				}
			}
		}
		p.Close()
	}
}

func TestPoolMatMulTPanicsInCaller(t *testing.T) {
	p := NewPool(2)
	defer p.Close()
	defer func() {
		if recover() == nil {
			t.Fatal("short b did not panic")
		}
	}()
	p.MatMulT(make([]float32, 300*300), make([]float32, 300*300), make([]float32, 10), 300, 300, 300)
}

func TestQuantizeQ8(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	const rows, cols, bs = 5, 96, 32
	w := randFloats(r, rows*cols)
	clear(w[32:64]) // an all-zero block
	q, err := QuantizeQ8(w, rows, cols, bs)
	if err != nil {
		t.Fatal(err)
	}
	deq := q.Dequantize()
	for blk, s := range q.Scales {
		block := w[blk*bs : (blk+1)*bs]
		var amax float64
		peak := 0
		for p, v := range block {
			amax = math.Max(amax, math.Abs(float64(v)))
			qv := q.Data[blk*bs+p]
			if qv == -128 {
				t.Fatalf("block %d uses -128", blk)
			}
			if qv == 127 || qv == -127 {
				peak++
			}
			// Rounding to the nearest multiple of the scale: error at most half
			// of it (plus the rounding of the scale and the dequantised product).
			if diff := math.Abs(float64(deq[blk*bs+p]) - float64(v)); diff > float64(s)*(0.5+1e-6) {
				t.Fatalf("block %d element %d: %v dequantises to %v (scale %v)", blk, p, v, deq[blk*bs+p], s)
			}
		}
		switch {
		case amax == 0 && (s != 0 || peak != 0):
			t.Fatalf("zero block %d: scale %v", blk, s)
		case amax != 0 && (peak == 0 || math.Abs(float64(s)-amax/127) > amax*1e-7):
			t.Fatalf("block %d: scale %v for max %v, %d elements at ±127", blk, s, amax, peak)
		}
	}

	// Values on the grid come back exactly.
	grid := make([]float32, 16)
	for i := range grid {
		grid[i] = float32(i-8) * 0.25
	}
	grid[0] = 127 * 0.25
	qg, err := QuantizeQ8(grid, 1, 16, 16)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range qg.Dequantize() {
		if v != grid[i] {
			t.Fatalf("grid element %d: %v back as %v", i, grid[i], v)
		}
	}

	if _, err := QuantizeQ8(w, rows, cols, 12); !errors.Is(err, ErrBlockSize) {
		t.Fatalf("block 12: %v", err)
	}
	if _, err := QuantizeQ8(w, rows, cols, 64); !errors.Is(err, ErrBlockSize) {
		t.Fatalf("block 64 of 96: %v", err)
	}
	if _, err := QuantizeQ8(w[:10], rows, cols, bs); !errors.Is(err, ErrShape) {
		t.Fatalf("short: %v", err)
	}
	bad := append([]float32(nil), w...)
	bad[7] = float32(math.Inf(-1))
	if _, err := QuantizeQ8(bad, rows, cols, bs); !errors.Is(err, ErrNonFinite) {
		t.Fatalf("inf: %v", err)
	}
}

// TestPoolMatMulTQ8EqualsDequantised: the threaded int8 product equals the
// f32 product on the dequantised weights bit for bit, alone and batched.
func TestPoolMatMulTQ8EqualsDequantised(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	const n, k = 301, 256
	w, err := QuantizeQ8(randFloats(r, n*k), n, k, 32)
	if err != nil {
		t.Fatal(err)
	}
	deq := w.Dequantize()
	for _, m := range []int{1, 6} {
		a := randFloats(r, m*k)
		want := make([]float32, m*n)
		asm.MatMulT(want, a, deq, m, n, k)
		for _, threads := range []int{1, 2, 3} {
			p := NewPool(threads)
			got := make([]float32, m*n)
			p.MatMulTQ8(got, a, w, m)
			p.Close()
			if i := sameBits(got, want); i >= 0 {
				t.Fatalf("m=%d threads=%d: element %d = %v, want %v", m, threads, i, got[i], want[i])
			}
		}
	}
}

func TestPeakFLOPsPositive(t *testing.T) {
	p := NewPool(2)
	defer p.Close()
	if f := p.PeakFLOPs(1000); !(f > 0) || math.IsInf(f, 0) {
		t.Fatalf("peak %v", f)
	}
}

func TestReadBandwidthPositive(t *testing.T) {
	p := NewPool(2)
	defer p.Close()
	buf := make([]float32, 1<<16+5)
	if bw := p.ReadBandwidth(buf, 2); !(bw > 0) || math.IsInf(bw, 0) {
		t.Fatalf("bandwidth %v", bw)
	}
}

// TestReexportedKernels: the package's Dot, Axpy and MatMulTStrided are the
// kernels' (an attention head over a strided cache is the use).
func TestReexportedKernels(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	const heads, hd, pos = 3, 16, 21
	cache := randFloats(r, pos*heads*hd) // [pos][heads·hd]
	q := randFloats(r, hd)
	scores := make([]float32, pos)
	MatMulTStrided(scores, pos, q, hd, cache[1*hd:], heads*hd, 1, pos, hd) // head 1
	for p := 0; p < pos; p++ {
		want := Dot(q, cache[p*heads*hd+hd:p*heads*hd+2*hd])
		if math.Float32bits(scores[p]) != math.Float32bits(want) {
			t.Fatalf("position %d: %v, Dot %v", p, scores[p], want)
		}
	}
	y := []float32{1, 2, 3}
	Axpy(2, []float32{1, 1, 1}, y)
	if y[0] != 3 || y[1] != 4 || y[2] != 5 {
		t.Fatalf("Axpy: %v", y)
	}
}

func TestSingleThreadWrappersMatchPool(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	const m, n, k = 5, 301, 128
	a, b := randFloats(r, m*k), randFloats(r, n*k)
	w, err := QuantizeQ8(b, n, k, 32)
	if err != nil {
		t.Fatal(err)
	}
	p := NewPool(2)
	defer p.Close()
	one, pooled := make([]float32, m*n), make([]float32, m*n)
	MatMulT(one, a, b, m, n, k)
	p.MatMulT(pooled, a, b, m, n, k)
	if i := sameBits(one, pooled); i >= 0 {
		t.Fatalf("MatMulT element %d: %v, pool %v", i, one[i], pooled[i])
	}
	MatMulTQ8(one, a, w.Data, w.Scales, m, n, k, w.BlockSize)
	p.MatMulTQ8(pooled, a, w, m)
	if i := sameBits(one, pooled); i >= 0 {
		t.Fatalf("MatMulTQ8 element %d: %v, pool %v", i, one[i], pooled[i])
	}
}
