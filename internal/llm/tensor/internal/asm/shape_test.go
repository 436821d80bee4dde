package asm

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

func BenchmarkShapes(b *testing.B) {
	for _, s := range [][2]int{{4096, 768}, {1024, 3072}, {256, 12288}, {288, 32000}, {288, 768}, {1024, 512}} {
		k, n := s[0], s[1]
		r := rand.New(rand.NewPCG(1, 1))
		a, w, dst := randFloats(r, k), randFloats(r, n*k), make([]float32, n)
		b.Run(fmt.Sprintf("k=%d/n=%d", k, n), func(b *testing.B) {
			b.SetBytes(int64(4 * n * k))
			for b.Loop() {
				MatMulT(dst, a, w, 1, n, k)
			}
		})
	}
}
