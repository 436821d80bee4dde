//go:build amd64 && !purego && linux

package asm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"syscall"
	"testing"
	"unsafe"
)

// BenchmarkMatMulTStream is decode's f32 product (one row of activations)
// with the stream kernel (eight sequential streams of columns,
// matmulTStream1) against the one-row tile it replaces (eight neighbouring
// columns a tile, matmulTRows1: the same instructions a column), one
// thread, rounds alternating, in CPU time: x_tile is the stream kernel's
// speed-up, GB/s its rate of weight bytes. The shapes are from memory (64
// MiB, twice the last-level cache): four times the 0.4B Llama's FFN
// columns (1024·16384ᵀ) and four times its down projection's (4096·4096ᵀ).
func BenchmarkMatMulTStream(b *testing.B) {
	if !useAVX2 {
		b.Skip("no AVX2")
	}
	for _, s := range [][2]int{{1024, 16384}, {4096, 4096}} {
		k, n := s[0], s[1]
		r := rand.New(rand.NewPCG(1, 1))
		a, w, dst := randFloats(r, k), randFloats(r, n*k), make([]float32, n)
		b.Run(fmt.Sprintf("k=%d/n=%d", k, n), func(b *testing.B) {
			var run func()
			useTile := func() { run = func() { matmulTRows1(&dst[0], n, &a[0], k, &w[0], k, n, k) } }
			useStream := func() { run = func() { matmulTStream1(&dst[0], &a[0], &w[0], k, n, k) } }
			reps := max(1, (64<<20)/(4*len(w)))
			each := func() {
				for range reps {
					run()
				}
			}
			for b.Loop() {
				xt, t := abRounds(11, useTile, useStream, each)
				b.ReportMetric(xt, "x_tile")
				b.ReportMetric(float64(reps*4*len(w))/t.Seconds()/1e9, "GB/s")
			}
		})
	}
}

// TestMatMulTStreamAtTheEndOfTheMapping runs decode's f32 kernel on
// weights that end where their mapping does (the next page unreadable, as
// past the end of a mapped model file), with strides of k and past it,
// every column count around the eight streams and k around the chunks and
// lines, on values with signed zeros, infinities, NaNs and subnormals: no
// load may pass the last column's end, and every element must have the
// bits of the one-row tile's, through MatMulTStrided as through the kernel.
func TestMatMulTStreamAtTheEndOfTheMapping(t *testing.T) {
	if !useAVX2 {
		t.Skip("no AVX2")
	}
	page := syscall.Getpagesize()
	mem, err := syscall.Mmap(-1, 0, 64*page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(mem)
	if err := syscall.Mprotect(mem[63*page:], syscall.PROT_NONE); err != nil {
		t.Fatal(err)
	}
	floats := unsafe.Slice((*float32)(unsafe.Pointer(&mem[0])), 63*page/4)
	r := rand.New(rand.NewPCG(5, 0))
	odd := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 1e-40, 3e38}
	value := func() float32 {
		if r.IntN(20) == 0 {
			return odd[r.IntN(len(odd))]
		}
		return float32(r.NormFloat64())
	}
	for _, k := range []int{8, 9, 15, 16, 17, 23, 24, 31, 32, 33, 64, 65, 288, 1031} {
		for _, pad := range []int{0, 3} {
			ldb := k + pad
			for n := 1; n <= 27; n++ {
				size := (n-1)*ldb + k
				w := floats[len(floats)-size:]
				for i := range w {
					w[i] = value()
				}
				a := make([]float32, k)
				for i := range a {
					a[i] = value()
				}
				want, got, viaDispatch := make([]float32, n), make([]float32, n), make([]float32, n)
				matmulTRows1(&want[0], n, &a[0], k, &w[0], ldb, n, k)
				matmulTStream1(&got[0], &a[0], &w[0], ldb, n, k)
				MatMulTStrided(viaDispatch, n, a, k, w, ldb, 1, n, k)
				for _, c := range []struct {
					name string
					got  []float32
				}{{"stream", got}, {"MatMulTStrided", viaDispatch}} {
					if i := sameBits(c.got, want); i >= 0 {
						t.Fatalf("k=%d ldb=%d n=%d element %d: %s %v, tile %v", k, ldb, n, i, c.name, c.got[i], want[i])
					}
				}
			}
		}
	}
}
