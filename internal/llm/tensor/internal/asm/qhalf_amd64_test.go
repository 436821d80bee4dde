//go:build amd64 && !purego && linux

package asm

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/weftlabs/weft/internal/llm/quant"
)

// BenchmarkMatMulTHalf is decode's product (one row of activations) and a
// prefill's (256 rows) with F16 and BF16 weights, the AVX-512 tiles
// against the AVX2 kernels, one thread, rounds alternating, in CPU time
// (x_avx512: the tiles' speed-up; GFLOP/s with them), on the 0.4B Llama's
// FFN (1024·4096ᵀ) and, for decode, weights from memory (64 MiB, twice
// the last-level cache: eight times its FFN's columns, and 4096·8192ᵀ).
func BenchmarkMatMulTHalf(b *testing.B) {
	if !useAVX512 {
		b.Skip("no AVX-512")
	}
	defer func() { halfTiles = true }()
	for _, typ := range []quant.Type{quant.F16, quant.BF16} {
		for _, s := range [][3]int{{1, 1024, 4096}, {256, 1024, 4096}, {1, 1024, 32768}, {1, 4096, 8192}} {
			m, k, n := s[0], s[1], s[2]
			r := rand.New(rand.NewPCG(1, 1))
			a, dst := randFloats(r, m*k), make([]float32, m*n)
			w := make([]byte, 2*n*k)
			for i := range n * k {
				v := float32(r.NormFloat64() * 0.02)
				h := quant.FloatToHalf(v)
				if typ == quant.BF16 {
					h = quant.FloatToBFloat(v)
				}
				w[2*i], w[2*i+1] = byte(h), byte(h>>8)
			}
			b.Run(fmt.Sprintf("%v/m=%d/k=%d/n=%d", typ, m, k, n), func(b *testing.B) {
				reps := max(1, (64<<20)/(m*len(w)))
				for b.Loop() {
					x, t := abRounds(11, func() { halfTiles = false }, func() { halfTiles = true }, func() {
						for range reps {
							MatMulTHalf(typ, dst, n, a, k, w, m, n, k)
						}
					})
					b.ReportMetric(x, "x_avx512")
					b.ReportMetric(2*float64(reps*m*n*k)/t.Seconds()/1e9, "GFLOP/s")
				}
			})
		}
	}
}
