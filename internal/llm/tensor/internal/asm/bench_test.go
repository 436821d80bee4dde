package asm

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/weftlabs/weft/internal/llm/quant"
)

// Single-thread kernel throughput. Shapes are m×k·(n×k)ᵀ: decode (m=1) and a
// 512-token prefill on the 15M Llama's FFN (k=288, n=768 and back) and on a
// Qwen3-0.6B-sized FFN (k=1024, n=3072). Each dispatch benchmark also reports
// its speed-up over the pure-Go kernel measured in the same run.

var benchShapes = [][3]int{
	{1, 288, 768}, {1, 768, 288}, {1, 1024, 3072},
	{512, 288, 768}, {512, 1024, 3072},
}

// pureGoNs caches the pure-Go time per shape: the dispatch benchmark body runs
// several times with growing b.N, the comparison is needed once.
var pureGoNs sync.Map

func pureGoTime(key string, f func()) float64 {
	if v, ok := pureGoNs.Load(key); ok {
		return v.(float64)
	}
	// testing.Benchmark cannot nest inside a running benchmark: time it here.
	start, n := time.Now(), 0
	for n == 0 || time.Since(start) < 500*time.Millisecond {
		f()
		n++
	}
	ns := float64(time.Since(start).Nanoseconds()) / float64(n)
	pureGoNs.Store(key, ns)
	return ns
}

func reportGFLOPs(b *testing.B, flops float64) {
	b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

func BenchmarkMatMulT(b *testing.B) {
	for _, s := range benchShapes {
		m, k, n := s[0], s[1], s[2]
		r := rand.New(rand.NewPCG(1, 1))
		a, w, dst := randFloats(r, m*k), randFloats(r, n*k), make([]float32, m*n)
		flops := 2 * float64(m) * float64(n) * float64(k)
		name := fmt.Sprintf("m=%d/k=%d/n=%d", m, k, n)
		b.Run(name+"/"+Path(), func(b *testing.B) {
			for b.Loop() {
				MatMulT(dst, a, w, m, n, k)
			}
			reportGFLOPs(b, flops)
			perOp := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			b.ReportMetric(pureGoTime("f32/"+name, func() { matmulTGeneric(dst, n, a, k, w, k, m, n, k) })/perOp, "x_purego")
		})
		b.Run(name+"/purego", func(b *testing.B) {
			for b.Loop() {
				matmulTGeneric(dst, n, a, k, w, k, m, n, k)
			}
			reportGFLOPs(b, flops)
		})
	}
}

func BenchmarkMatMulTQ8(b *testing.B) {
	for _, s := range benchShapes {
		m, k, n := s[0], s[1], s[2]
		const bs = 32
		r := rand.New(rand.NewPCG(1, 1))
		a, dst := randFloats(r, m*k), make([]float32, m*n)
		q, sc := randQ8(r, n, k, bs, false)
		flops := 2 * float64(m) * float64(n) * float64(k)
		name := fmt.Sprintf("m=%d/k=%d/n=%d", m, k, n)
		b.Run(name+"/"+Path(), func(b *testing.B) {
			for b.Loop() {
				MatMulTQ8(dst, a, q, sc, m, n, k, bs)
			}
			reportGFLOPs(b, flops)
			perOp := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			b.ReportMetric(pureGoTime("q8/"+name, func() { matmulTQ8Generic(dst, n, a, q, sc, m, n, k, bs) })/perOp, "x_purego")
		})
	}
}

// BenchmarkMatMulTQ8Q8 is the int8 × int8 product on the same shapes, the
// activations quantised once outside the loop (as a forward pass does once per
// projection); x_f32 is its speed-up over MatMulT on float32 weights measured
// in the same run.
func BenchmarkMatMulTQ8Q8(b *testing.B) {
	for _, s := range benchShapes {
		m, k, n := s[0], s[1], s[2]
		r := rand.New(rand.NewPCG(1, 1))
		a, as := randQ8(r, m, k, Q8Block, false)
		q, sc := randQ8(r, n, k, Q8Block, false)
		af, wf, dst := randFloats(r, m*k), randFloats(r, n*k), make([]float32, m*n)
		flops := 2 * float64(m) * float64(n) * float64(k)
		name := fmt.Sprintf("m=%d/k=%d/n=%d", m, k, n)
		b.Run(name+"/"+Path(), func(b *testing.B) {
			for b.Loop() {
				MatMulTQ8Q8Strided(dst, n, a, as, q, sc, m, n, k)
			}
			reportGFLOPs(b, flops)
			perOp := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			b.ReportMetric(pureGoTime("f32asm/"+name, func() { MatMulT(dst, af, wf, m, n, k) })/perOp, "x_f32")
			b.ReportMetric(pureGoTime("q8q8/"+name, func() { matmulTQ8Q8Generic(dst, n, a, as, q, sc, m, n, k) })/perOp, "x_purego")
		})
	}
}

func BenchmarkSum(b *testing.B) {
	for _, n := range []int{1 << 12, 1 << 24} {
		x := make([]float32, n)
		for i := range x {
			x[i] = 1 // written pages: untouched ones all map to one zero page
		}
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			b.SetBytes(int64(4 * n))
			for b.Loop() {
				Sum(x)
			}
		})
	}
}

func BenchmarkExp(b *testing.B) {
	const n = 4096
	r := rand.New(rand.NewPCG(1, 1))
	x, dst := randFloats(r, n), make([]float32, n)
	b.Run(Path(), func(b *testing.B) {
		b.SetBytes(4 * n)
		for b.Loop() {
			Exp(dst, x)
		}
		perOp := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
		b.ReportMetric(pureGoTime("exp", func() { expGeneric(dst, x, 0) })/perOp, "x_purego")
	})
}

// BenchmarkMatMulTQuant is the product of quantised activations with GGUF
// block weights on the 0.4B Llama's FFN shapes (k=1024, n=4096 and back),
// one thread: decode (m=1) and prefill (m=256). On each path the CPU has it
// reports the rate; x_avx2 is a path's speed-up over the AVX2 kernels
// measured in the same run.
func BenchmarkMatMulTQuant(b *testing.B) {
	shapes := [][3]int{{1, 1024, 4096}, {256, 1024, 4096}, {256, 4096, 1024}}
	for _, typ := range []quant.Type{quant.Q8_0, quant.Q4_0, quant.Q5_0, quant.Q4_K, quant.Q5_K, quant.Q6_K} {
		kind, _ := ActKindOf(typ)
		for _, s := range shapes {
			m, k, n := s[0], s[1], s[2]
			r := rand.New(rand.NewPCG(1, 1))
			x := randActs(r, kind, m, k, 127, func() float32 { return float32(r.NormFloat64() * 0.05) })
			w := randBlocks(r, typ, n, k, func() float32 { return float32(r.NormFloat64() * 0.02) })
			dst := make([]float32, m*n)
			flops := 2 * float64(m) * float64(n) * float64(k)
			name := fmt.Sprintf("%v/m=%d/k=%d/n=%d", typ, m, k, n)
			forQuantPaths(func(path string) {
				b.Run(name+"/"+path, func(b *testing.B) {
					for b.Loop() {
						MatMulTQuant(typ, dst, n, x, w, n)
					}
					reportGFLOPs(b, flops)
					perOp := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
					if path != "avx2" && path != "purego" {
						b.ReportMetric(avx2Time(name, func() { MatMulTQuant(typ, dst, n, x, w, n) })/perOp, "x_avx2")
					}
				})
			})
		}
	}
}
