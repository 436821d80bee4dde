package tensor

import "fmt"

// transposeTile is the side of the square blocks Transpose copies, small
// enough that a block of source rows and one of destination rows stay in L1.
const transposeTile = 32

// Transpose sets dst (cols×rows) to the transpose of src (rows×cols), both
// row-major: the layout change between a weight as stored ([out, in], what
// MatMulT multiplies by) and the [in, out] matrix a backward pass multiplies
// gradients by. It panics if the lengths do not match.
func Transpose(dst, src []float32, rows, cols int) {
	if rows < 0 || cols < 0 || len(src) != rows*cols || len(dst) != rows*cols {
		panic(fmt.Sprintf("tensor.Transpose: src %d, dst %d elements for %d×%d", len(src), len(dst), rows, cols))
	}
	for i0 := 0; i0 < rows; i0 += transposeTile {
		i1 := min(i0+transposeTile, rows)
		for j0 := 0; j0 < cols; j0 += transposeTile {
			j1 := min(j0+transposeTile, cols)
			for i := i0; i < i1; i++ {
				row := src[i*cols : (i+1)*cols]
				for j := j0; j < j1; j++ {
					dst[j*rows+i] = row[j]
				}
			}
		}
	}
}
