package asm

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// threadCPU is the CPU time the calling OS thread has run: on a machine
// shared with other work, a kernel's own time, which wall time is not.
func threadCPU() time.Duration {
	const clockThreadCPUTime = 3
	var ts syscall.Timespec
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTime, uintptr(unsafe.Pointer(&ts)), 0)
	return time.Duration(ts.Nano())
}

// abRounds times variant A and variant B alternately on one locked thread,
// in CPU time, and returns the ratio of their medians (A's time over B's:
// B's speed-up) and B's median.
func abRounds(rounds int, setA, setB func(), run func()) (float64, time.Duration) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var ta, tb []time.Duration
	for range rounds {
		for _, v := range []struct {
			set func()
			ts  *[]time.Duration
		}{{setA, &ta}, {setB, &tb}} {
			v.set()
			start := threadCPU()
			run()
			*v.ts = append(*v.ts, threadCPU()-start)
		}
	}
	slices.Sort(ta)
	slices.Sort(tb)
	return float64(ta[rounds/2]) / float64(tb[rounds/2]), tb[rounds/2]
}

// BenchmarkMatMulTCacheOrder measures the cache measure of the 8-row
// AVX-512 tile, one thread, rounds alternating, in CPU time: x_padded is
// the padded copy of a's rows 1 KiB apart (cacheorder.go) against none.
// GFLOP/s is the rate with it.
func BenchmarkMatMulTCacheOrder(b *testing.B) {
	for _, s := range [][3]int{{256, 1024, 4096}, {256, 4096, 1024}, {256, 1024, 1024}} {
		m, k, n := s[0], s[1], s[2]
		r := rand.New(rand.NewPCG(1, 1))
		a, w, dst := randFloats(r, m*k), randFloats(r, n*k), make([]float32, m*n)
		b.Run(fmt.Sprintf("m=%d/k=%d/n=%d", m, k, n), func(b *testing.B) {
			defer func() { padAliasedRows = true }()
			run := func() { MatMulT(dst, a, w, m, n, k) }
			for b.Loop() {
				xPad, t := abRounds(11, func() { padAliasedRows = false }, func() { padAliasedRows = true }, run)
				b.ReportMetric(xPad, "x_padded")
				b.ReportMetric(2*float64(m*n*k)/t.Seconds()/1e9, "GFLOP/s")
			}
		})
	}
}

// BenchmarkMatMulTQ8Q8Tile is MatMulTQ8Q8 with the VNNI four-row tiles
// against the AVX2 row kernel, one thread, rounds alternating, in CPU
// time (x_tile: the tiles' speed-up; GFLOP/s with them), on the 0.4B
// Llama's FFN shapes at 256 rows.
func BenchmarkMatMulTQ8Q8Tile(b *testing.B) {
	for _, s := range [][3]int{{256, 1024, 4096}, {256, 4096, 1024}} {
		m, k, n := s[0], s[1], s[2]
		r := rand.New(rand.NewPCG(1, 1))
		a, as := randQ8(r, m, k, Q8Block, false)
		q, sc := randQ8(r, n, k, Q8Block, false)
		dst := make([]float32, m*n)
		b.Run(fmt.Sprintf("m=%d/k=%d/n=%d", m, k, n), func(b *testing.B) {
			defer func() { q8q8Tiles = true }()
			for b.Loop() {
				x, t := abRounds(11, func() { q8q8Tiles = false }, func() { q8q8Tiles = true }, func() { MatMulTQ8Q8Strided(dst, n, a, as, q, sc, m, n, k) })
				b.ReportMetric(x, "x_tile")
				b.ReportMetric(2*float64(m*n*k)/t.Seconds()/1e9, "GFLOP/s")
			}
		})
	}
}
