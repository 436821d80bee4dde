package tensor

import (
	"math/rand/v2"
	"testing"

	"github.com/weftlabs/weft/internal/llm/tensor/internal/asm"
)

func TestTranspose(t *testing.T) {
	for _, s := range [][2]int{{0, 0}, {1, 1}, {1, 7}, {7, 1}, {33, 65}, {64, 64}, {100, 31}} {
		rows, cols := s[0], s[1]
		src := make([]float32, rows*cols)
		for i := range src {
			src[i] = float32(i)
		}
		dst := make([]float32, rows*cols)
		Transpose(dst, src, rows, cols)
		for i := 0; i < rows; i++ {
			for j := 0; j < cols; j++ {
				if dst[j*rows+i] != src[i*cols+j] {
					t.Fatalf("%d×%d: dst[%d][%d] = %v, want %v", rows, cols, j, i, dst[j*rows+i], src[i*cols+j])
				}
			}
		}
	}
}

// TestTransposeGivesTheBackwardProduct: with Wᵀ, MatMulT computes dY·W (the
// input gradient of a linear layer) exactly on integers.
func TestTransposeGivesTheBackwardProduct(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	const m, out, in = 3, 17, 29
	w, dy := make([]float32, out*in), make([]float32, m*out)
	for i := range w {
		w[i] = float32(r.IntN(9) - 4)
	}
	for i := range dy {
		dy[i] = float32(r.IntN(9) - 4)
	}
	wt := make([]float32, in*out)
	Transpose(wt, w, out, in)
	dx := make([]float32, m*in)
	asm.MatMulT(dx, dy, wt, m, in, out)
	for i := 0; i < m; i++ {
		for p := 0; p < in; p++ {
			var want float32
			for o := 0; o < out; o++ {
				want += dy[i*out+o] * w[o*in+p]
			}
			if dx[i*in+p] != want {
				t.Fatalf("dX[%d][%d] = %v, want %v", i, p, dx[i*in+p], want)
			}
		}
	}
}
