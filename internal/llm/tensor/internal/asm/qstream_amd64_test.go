//go:build amd64 && !purego && linux

package asm

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/weftlabs/weft/internal/llm/quant"
)

// BenchmarkMatMulTQuantStream is decode's product (one row of activations)
// with the VNNI stream kernels (two sequential streams of columns,
// qdot…Stream) against the four-column VNNI tile (four short streams,
// qdot…Tile1: the same instructions, the order decode must not take) and
// against the AVX2 row kernel, one thread, rounds alternating, in CPU
// time: x_tile1 and x_avx2 are the stream kernel's speed-ups, GB/s its
// rate of weight bytes. The shapes are the 0.4B Llama's FFN (1024·4096ᵀ,
// 4 MiB of Q8_0), four times its columns (17 MiB: from memory) and the
// 15M Llama's (288·768ᵀ, nine blocks a column: the odd block).
func BenchmarkMatMulTQuantStream(b *testing.B) {
	if !useVNNI {
		b.Skip("no AVX-512 VNNI")
	}
	for _, typ := range []quant.Type{quant.Q8_0, quant.Q4_0, quant.Q5_0} {
		for _, s := range [][2]int{{1024, 4096}, {1024, 16384}, {288, 768}} {
			k, n := s[0], s[1]
			r := rand.New(rand.NewPCG(1, 1))
			x := randActs(r, Act32, 1, k, 127, func() float32 { return float32(r.NormFloat64() * 0.05) })
			w := randBlocks(r, typ, n, k, func() float32 { return float32(r.NormFloat64() * 0.02) })
			dst := make([]float32, n)
			rowBytes, _ := typ.Bytes(k)
			ks := quantKernelsOf[typ]
			stream, row, tile := ks.stream, ks.row, ks.tile1
			b.Run(fmt.Sprintf("%v/k=%d/n=%d", typ, k, n), func(b *testing.B) {
				var run func()
				useStream := func() { run = func() { stream(&dst[0], n, x, 0, &w[0], rowBytes, n) } }
				useTile := func() { run = func() { tile(&dst[0], n, x, 0, &w[0], rowBytes, n) } }
				useRow := func() { run = func() { row(&dst[0], n, x, 0, &w[0], rowBytes, n) } }
				reps := max(1, (16<<20)/len(w)) // a few milliseconds a round
				each := func() {
					for range reps {
						run()
					}
				}
				for b.Loop() {
					xTile, t := abRounds(11, useTile, useStream, each)
					xRow, _ := abRounds(11, useRow, useStream, each)
					b.ReportMetric(xTile, "x_tile1")
					b.ReportMetric(xRow, "x_avx2")
					b.ReportMetric(float64(reps*len(w))/t.Seconds()/1e9, "GB/s")
				}
			})
		}
	}
}

// BenchmarkMatMulTQuantBatch is a batch of eight decode steps' product (8
// rows) and a prefill's (256), the VNNI tiles against the AVX2 four-row
// kernels, one thread, rounds alternating, in CPU time (x_vnni: the tiles'
// speed-up; GFLOP/s with them), on the 0.4B Llama's FFN (1024·4096ᵀ) and
// four times its columns (from memory).
func BenchmarkMatMulTQuantBatch(b *testing.B) {
	if !useVNNI {
		b.Skip("no AVX-512 VNNI")
	}
	defer func() { useVNNI = true }()
	for _, typ := range []quant.Type{quant.Q8_0, quant.Q4_0, quant.Q5_0, quant.Q4_K, quant.Q6_K} {
		kind, _ := ActKindOf(typ)
		for _, s := range [][3]int{{8, 1024, 4096}, {8, 1024, 16384}, {256, 1024, 4096}} {
			m, k, n := s[0], s[1], s[2]
			r := rand.New(rand.NewPCG(1, 1))
			x := randActs(r, kind, m, k, 127, func() float32 { return float32(r.NormFloat64() * 0.05) })
			w := randBlocks(r, typ, n, k, func() float32 { return float32(r.NormFloat64() * 0.02) })
			dst := make([]float32, m*n)
			b.Run(fmt.Sprintf("%v/m=%d/k=%d/n=%d", typ, m, k, n), func(b *testing.B) {
				reps := max(1, (64<<20)/(m*len(w)))
				for b.Loop() {
					xv, t := abRounds(11, func() { useVNNI = false }, func() { useVNNI = true }, func() {
						for range reps {
							MatMulTQuant(typ, dst, n, x, w, n)
						}
					})
					b.ReportMetric(xv, "x_vnni")
					b.ReportMetric(2*float64(reps*m*n*k)/t.Seconds()/1e9, "GFLOP/s")
				}
			})
		}
	}
}
