package tensor

import (
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"
	"time"
)

// TestPoolRunsEachPartOnce hands a pool many small operations in a row, of
// a varying number of parts (workers left out of one take part in the
// next), polling and parking at once, with the caller running the parts no
// worker has started and without, and checks every unit ran exactly once
// and had ended when Parallel returned.
func TestPoolRunsEachPartOnce(t *testing.T) {
	for _, threads := range []int{2, 3, 5} {
		for _, c := range []struct {
			spin  time.Duration
			steal bool
		}{{0, false}, {0, true}, {defaultSpin, false}, {defaultSpin, true}} {
			spin := c.spin
			p := newPool(threads, spin, c.steal)
			for op := range 10000 {
				n := 1 + op%7
				var ran [8]atomic.Int32
				p.Parallel(n, 1, func(lo, hi int) {
					for j := lo; j < hi; j++ {
						ran[j].Add(1)
					}
				})
				for j := range n {
					if got := ran[j].Load(); got != 1 {
						t.Fatalf("threads %d spin %v steal %v, operation %d of %d units: unit %d ran %d times", threads, spin, c.steal, op, n, j, got)
					}
				}
			}
			p.Close()
		}
	}
}

// TestIdlePoolParks: once the operations stop, every worker stops polling
// and sleeps until the next one, which it still runs.
func TestIdlePoolParks(t *testing.T) {
	p := NewPool(2)
	defer p.Close()
	if p.spin == 0 {
		t.Fatalf("a pool of 2 threads on %d processors does not poll", 2)
	}
	for range 100 {
		p.Parallel(2, 1, func(lo, hi int) {})
	}
	for deadline := time.Now().Add(10 * time.Second); !p.workers[1].parked.Load(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the worker still polls 10 s after the last operation")
		}
	}
	var ran atomic.Int32
	p.Parallel(2, 1, func(lo, hi int) { ran.Add(1) })
	if ran.Load() != 2 {
		t.Fatalf("%d of 2 parts ran after the worker parked", ran.Load())
	}
}

// BenchmarkPoolWakeups runs the matrix products of one 15M Llama decode
// step as the model dispatches them (q, k and v in one, gate and up in
// one: 25 operations, 60.8 MB of f32) on a pool as NewPool makes it
// (threads polling before they park, the caller running the parts no
// worker has started) and on one whose threads park at once and wait for
// each other, rounds alternating, and reports both median steps' rates and
// their ratio (x_built). Wall time: the wake-ups are what differs.
func BenchmarkPoolWakeups(b *testing.B) {
	var shapes [][2]int // n, k
	for range 6 {
		shapes = append(shapes, [2]int{3 * 288, 288}, [2]int{288, 288}, [2]int{2 * 768, 288}, [2]int{288, 768})
	}
	shapes = append(shapes, [2]int{32000, 288})
	r := rand.New(rand.NewPCG(5, 5))
	weights := make([][]float32, len(shapes))
	for i, s := range shapes {
		weights[i] = randFloats(r, s[0]*s[1])
	}
	x, y := randFloats(r, 768), make([]float32, 32000)
	built, parking := NewPool(2), newPool(2, 0, false)
	defer built.Close()
	defer parking.Close()
	step := func(p *Pool) float64 {
		start := time.Now()
		for i, s := range shapes {
			p.MatMulT(y, x, weights[i], 1, s[0], s[1])
		}
		return time.Since(start).Seconds()
	}
	var asBuilt, parked []float64
	for b.Loop() {
		asBuilt = append(asBuilt, step(built))
		parked = append(parked, step(parking))
	}
	med := func(xs []float64) float64 { xs = slices.Clone(xs); slices.Sort(xs); return xs[len(xs)/2] }
	b.ReportMetric(1/med(asBuilt), "built_tok/s")
	b.ReportMetric(1/med(parked), "park_tok/s")
	b.ReportMetric(med(parked)/med(asBuilt), "x_built")
}
