package tensor

import (
	"fmt"
	"math"
)

// RoPE holds the cos/sin tables of rotary position embeddings for positions
// [0, MaxPositions), in the rotate-half ("neox") layout of the Hugging Face
// Llama, Qwen2 and Qwen3 code: dimension i of a head's first half rotates
// with dimension i + half by the angle pos · invFreq[i].
type RoPE struct {
	cos, sin     []float32 // [pos][half]
	half         int
	MaxPositions int
}

// NewRoPE builds the tables from the inverse frequencies (one per rotated
// pair; the model computes them with whatever rope_scaling it names) and the
// attention scaling factor its scaling scheme applies to cos and sin (1 for
// none). Angles are float32(pos)·invFreq rounded to float32 and the factor is
// applied in float32, as the reference implementation does.
func NewRoPE(invFreq []float32, maxPositions int, attentionScaling float32) *RoPE {
	half := len(invFreq)
	r := &RoPE{
		cos:          make([]float32, maxPositions*half),
		sin:          make([]float32, maxPositions*half),
		half:         half,
		MaxPositions: maxPositions,
	}
	for pos := 0; pos < maxPositions; pos++ {
		for i, f := range invFreq {
			angle := float64(float32(pos) * f)
			r.cos[pos*half+i] = float32(math.Cos(angle)) * attentionScaling
			r.sin[pos*half+i] = float32(math.Sin(angle)) * attentionScaling
		}
	}
	return r
}

// Apply rotates every head of x (consecutive heads of headDim elements) in
// place for position pos: the first 2·len(invFreq) dimensions of each head
// rotate, the rest (partial rotary) stay. For i < half:
//
//	x[i]      = x[i]·cos − x[i+half]·sin
//	x[i+half] = x[i+half]·cos + x[i]·sin
//
// with each product rounded before the sum, as q·cos + rotate_half(q)·sin
// does in float32. It panics if pos is outside the table or the shapes do
// not fit.
func (r *RoPE) Apply(x []float32, headDim, pos int) {
	half := r.half
	cos, sin := r.angles("Apply", x, headDim, pos)
	for h := 0; h < len(x); h += headDim {
		x1, x2 := x[h:h+half], x[h+half:h+2*half]
		for i, c := range cos {
			s := sin[i]
			a, b := x1[i], x2[i]
			// The conversions round each product, so no fused multiply-add
			// changes the result on any architecture.
			x1[i] = float32(a*c) - float32(b*s)
			x2[i] = float32(b*c) + float32(a*s)
		}
	}
}

// ApplyTranspose multiplies every head of x in place by the transpose of the
// rotation Apply performs at pos (a rotation by the negative angle, scaled
// alike): the gradient with respect to a head before RoPE from the gradient
// after it. For i < half:
//
//	x[i]      = x[i]·cos + x[i+half]·sin
//	x[i+half] = x[i+half]·cos − x[i]·sin
func (r *RoPE) ApplyTranspose(x []float32, headDim, pos int) {
	half := r.half
	cos, sin := r.angles("ApplyTranspose", x, headDim, pos)
	for h := 0; h < len(x); h += headDim {
		x1, x2 := x[h:h+half], x[h+half:h+2*half]
		for i, c := range cos {
			s := sin[i]
			a, b := x1[i], x2[i]
			x1[i] = a*c + b*s
			x2[i] = b*c - a*s
		}
	}
}

// angles returns the cosines and sines of position pos, after checking that
// x is whole heads of headDim elements with room for the rotated pairs; op
// names the caller in the panic.
func (r *RoPE) angles(op string, x []float32, headDim, pos int) (cos, sin []float32) {
	half := r.half
	if pos < 0 || pos >= r.MaxPositions || headDim < 2*half || headDim == 0 || len(x)%headDim != 0 {
		panic(fmt.Sprintf("tensor.RoPE.%s: %d elements, head dim %d, %d rotated pairs, position %d of %d",
			op, len(x), headDim, half, pos, r.MaxPositions))
	}
	return r.cos[pos*half : (pos+1)*half], r.sin[pos*half : (pos+1)*half]
}
