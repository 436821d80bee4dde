package tensor

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

const u32 = 1.0 / (1 << 24) // float32 unit roundoff

func TestRMSNormMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	const rows, dim = 3, 301
	const eps = 1e-5
	x, w := randFloats(r, rows*dim), randFloats(r, dim)
	x[0] = 40 // one outlier
	got := make([]float32, rows*dim)
	RMSNorm(got, x, w, eps)
	for i := 0; i < rows; i++ {
		var ss float64
		for _, v := range x[i*dim : (i+1)*dim] {
			ss += float64(v) * float64(v)
		}
		inv := 1 / math.Sqrt(ss/dim+eps)
		for j := 0; j < dim; j++ {
			want := float64(w[j]) * float64(x[i*dim+j]) * inv
			// Sum of squares within (dim/8+5)u relative, then a square root,
			// a reciprocal and two products each within u: 1e-6 covers it.
			if diff := math.Abs(float64(got[i*dim+j]) - want); diff > 1e-6*math.Abs(want) {
				t.Fatalf("row %d col %d: %v, want %v", i, j, got[i*dim+j], want)
			}
		}
	}
	in := append([]float32(nil), x...)
	RMSNorm(in, in, w, eps)
	if i := sameBits(in, got); i >= 0 {
		t.Fatalf("in-place result differs at %d", i)
	}
}

func TestRMSNormPanicsOnRaggedRows(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	RMSNorm(make([]float32, 10), make([]float32, 10), make([]float32, 3), 1e-6)
}

// llamaInvFreq is the default Llama schedule base^(-2i/d).
func llamaInvFreq(dim int, base float64) []float32 {
	f := make([]float32, dim/2)
	for i := range f {
		f[i] = float32(1 / math.Pow(base, float64(2*i)/float64(dim)))
	}
	return f
}

// TestRoPERotateHalfLayout pins the layout: dimension i pairs with i+half
// (not i+1), rotating by pos·invFreq[i].
func TestRoPERotateHalfLayout(t *testing.T) {
	rope := NewRoPE([]float32{1, 0.5}, 8, 1)
	x := []float32{1, 0, 0, 0, 0, 2, 0, 0} // two heads of 4
	rope.Apply(x, 4, 3)
	want := []float64{math.Cos(3), 0, math.Sin(3), 0, 0, 2 * math.Cos(1.5), 0, 2 * math.Sin(1.5)}
	for i, v := range x {
		if math.Abs(float64(v)-want[i]) > 4*u32*2 {
			t.Fatalf("x = %v, want %v", x, want)
		}
	}
}

func TestRoPEMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 2))
	const headDim, heads = 64, 3
	inv := llamaInvFreq(headDim, 500000)
	const scaling = 1.25
	rope := NewRoPE(inv, 4096, scaling)
	for _, pos := range []int{0, 1, 17, 4095} {
		x := randFloats(r, heads*headDim)
		got := append([]float32(nil), x...)
		rope.Apply(got, headDim, pos)
		for h := 0; h < heads; h++ {
			for i := 0; i < headDim/2; i++ {
				// The angle as the reference rounds it: float32(pos)·invFreq in float32.
				angle := float64(float32(pos) * inv[i])
				c, s := math.Cos(angle)*scaling, math.Sin(angle)*scaling
				a, b := float64(x[h*headDim+i]), float64(x[h*headDim+i+headDim/2])
				want1, want2 := a*c-b*s, b*c+a*s
				// cos/sin and their scaling round twice, each product once, the
				// sum once: within 4u of |a·c|+|b·s| (and of |b·c|+|a·s|).
				tol1 := 4 * u32 * (math.Abs(a*c) + math.Abs(b*s))
				tol2 := 4 * u32 * (math.Abs(b*c) + math.Abs(a*s))
				if math.Abs(float64(got[h*headDim+i])-want1) > tol1 || math.Abs(float64(got[h*headDim+i+headDim/2])-want2) > tol2 {
					t.Fatalf("pos %d head %d pair %d: (%v, %v), want (%v, %v)", pos, h, i, got[h*headDim+i], got[h*headDim+i+headDim/2], want1, want2)
				}
			}
		}
	}
}

func TestRoPEPartialRotaryKeepsTail(t *testing.T) {
	rope := NewRoPE(llamaInvFreq(8, 10000), 16, 1)
	x := []float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12} // head dim 12, 8 rotary
	rope.Apply(x, 12, 5)
	for i := 8; i < 12; i++ {
		if x[i] != float32(i+1) {
			t.Fatalf("dimension %d changed to %v", i, x[i])
		}
	}
	if x[0] == 1 {
		t.Fatal("rotary part unchanged")
	}
}

func TestRoPEPanicsOutsideTable(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	NewRoPE([]float32{1}, 4, 1).Apply(make([]float32, 2), 2, 4)
}

func TestSoftmax(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	x := randFloats(r, 1000)
	for i := range x {
		x[i] *= 10
	}
	x[5] = float32(math.Inf(-1))
	got := append([]float32(nil), x...)
	Softmax(got)
	m32 := float32(math.Inf(-1))
	for _, v := range x {
		m32 = max(m32, v)
	}
	// x − max is rounded to float32 first, as the reference implementation
	// does in float32; the rest is exact here.
	shifted := func(v float32) float64 { return float64(v - m32) }
	var z float64
	for _, v := range x {
		z += math.Exp(shifted(v))
	}
	for i, v := range x {
		want := math.Exp(shifted(v)) / z
		// e^(x−max) within 2 ulps, the float64 sum exact enough, one rounding
		// of the quotient.
		if math.Abs(float64(got[i])-want) > 4*u32*want {
			t.Fatalf("element %d: %v, want %v", i, got[i], want)
		}
	}
	if got[5] != 0 {
		t.Fatalf("masked element %v", got[5])
	}

	ls := append([]float32(nil), x...)
	LogSoftmax(ls)
	for i, v := range x {
		want := shifted(v) - math.Log(z)
		if i == 5 {
			if !math.IsInf(float64(ls[i]), -1) {
				t.Fatalf("masked log-prob %v", ls[i])
			}
			continue
		}
		if math.Abs(float64(ls[i])-want) > 1e-5*math.Max(1, math.Abs(want)) {
			t.Fatalf("log-softmax element %d: %v, want %v", i, ls[i], want)
		}
	}

	huge := []float32{1e30, 1e30, -1e30, 3e38}
	Softmax(huge)
	if huge[3] != 1 || huge[0] != 0 || huge[2] != 0 {
		t.Fatalf("large logits: %v", huge)
	}
	Softmax(nil)
}

func TestSwiGLUAndSiLU(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	g, up := randFloats(r, 601), randFloats(r, 601)
	g[0], g[1], g[2], g[3] = 0, -200, 200, -90
	got := make([]float32, len(g))
	SwiGLU(got, g, up)
	silu := make([]float32, len(g))
	SiLU(silu, g)
	for i := range g {
		x := float64(g[i])
		want := x / (1 + math.Exp(-x))
		if -x > 88.72284 {
			want = 0 // e^-x overflows float32 and the quotient is ±0, as in float32 references
		}
		// e^-x within 2 ulps, then 1+e, the quotient and the product each
		// rounded once: within 5u relative (or an underflow to zero).
		if math.Abs(float64(silu[i])-want) > 5*u32*math.Abs(want)+math.SmallestNonzeroFloat32 {
			t.Fatalf("SiLU(%v) = %v, want %v", g[i], silu[i], want)
		}
		want *= float64(up[i])
		if math.Abs(float64(got[i])-want) > 6*u32*math.Abs(want)+math.SmallestNonzeroFloat32 {
			t.Fatalf("element %d: SwiGLU(%v, %v) = %v, want %v", i, g[i], up[i], got[i], want)
		}
		if got[i] != silu[i]*up[i] {
			t.Fatalf("element %d: SwiGLU %v is not SiLU·up %v", i, got[i], silu[i]*up[i])
		}
	}
	if silu[0] != 0 || silu[1] != 0 || silu[2] != 200 {
		t.Fatalf("SiLU(0, -200, 200) = %v", silu[:3])
	}
	SwiGLU(g, g, up) // in place
	if i := sameBits(g, got); i >= 0 {
		t.Fatalf("in place differs at %d", i)
	}
}

// TestActivationsIndependentOfBatch: a row's SiLU and softmax are the same
// bits computed alone or as part of a longer buffer (a batch of rows).
func TestActivationsIndependentOfBatch(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	const rows, dim = 5, 301
	x := randFloats(r, rows*dim)
	all := make([]float32, len(x))
	SiLU(all, x)
	for i := 0; i < rows; i++ {
		one := make([]float32, dim)
		SiLU(one, x[i*dim:(i+1)*dim])
		if j := sameBits(one, all[i*dim:(i+1)*dim]); j >= 0 {
			t.Fatalf("row %d element %d: alone %v, batched %v", i, j, one[j], all[i*dim+j])
		}
	}
}

func TestAdd(t *testing.T) {
	a, b := []float32{1, 2, 3.5}, []float32{0.5, -2, 1e-8}
	dst := make([]float32, 3)
	Add(dst, a, b)
	if dst[0] != 1.5 || dst[1] != 0 || dst[2] != 3.5+1e-8 {
		t.Fatalf("Add = %v", dst)
	}
	Add(a, a, b)
	if i := sameBits(a, dst); i >= 0 {
		t.Fatalf("in place differs at %d", i)
	}
	// In place into a or into b (the vectorised path) is each sum rounded
	// once, as the element loop computes it, on lengths with a tail.
	r := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{1, 7, 8, 33, 288, 1001} {
		x, y := randFloats(r, n), randFloats(r, n)
		for i := range y {
			y[i] *= 1e-3 // sums that round
		}
		want := make([]float32, n)
		for i := range want {
			want[i] = float32(float64(x[i]) + float64(y[i]))
		}
		intoA, intoB := append([]float32(nil), x...), append([]float32(nil), y...)
		Add(intoA, intoA, y)
		Add(intoB, x, intoB)
		if i := sameBits(intoA, want); i >= 0 {
			t.Fatalf("n=%d: in place into a differs at %d", n, i)
		}
		if i := sameBits(intoB, want); i >= 0 {
			t.Fatalf("n=%d: in place into b differs at %d", n, i)
		}
	}
}

func TestEmbedding(t *testing.T) {
	const dim = 3
	table := []float32{0, 1, 2, 10, 11, 12, 20, 21, 22}
	dst := make([]float32, 2*dim)
	if err := Embedding(dst, table, dim, []int32{2, 0}); err != nil {
		t.Fatal(err)
	}
	if want := []float32{20, 21, 22, 0, 1, 2}; sameBits(dst, want) >= 0 {
		t.Fatalf("Embedding = %v, want %v", dst, want)
	}
	before := append([]float32(nil), dst...)
	for _, ids := range [][]int32{{1, 3}, {-1}} {
		if err := Embedding(dst, table, dim, ids); !errors.Is(err, ErrTokenRange) {
			t.Fatalf("ids %v: %v", ids, err)
		}
	}
	if sameBits(dst, before) >= 0 {
		t.Fatal("a failed lookup wrote to dst")
	}
	if err := Embedding(dst[:2], table, dim, []int32{1}); !errors.Is(err, ErrShape) {
		t.Fatalf("short dst: %v", err)
	}

	// 1.0, -2.0, 0.5 in f16 and bf16.
	f16 := []uint16{0x3c00, 0xc000, 0x3800, 0, 0, 0}
	bf16 := []uint16{0x3f80, 0xc000, 0x3f00, 0, 0, 0}
	for name, err := range map[string]error{
		"f16":  EmbeddingF16(dst[:dim], f16, dim, []int32{0}),
		"bf16": EmbeddingBF16(dst[dim:], bf16, dim, []int32{0}),
	} {
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	if want := []float32{1, -2, 0.5, 1, -2, 0.5}; sameBits(dst, want) >= 0 {
		t.Fatalf("f16/bf16 rows = %v, want %v", dst, want)
	}
}

func TestTensorViews(t *testing.T) {
	x := New(2, 3, 4)
	if x.Len() != 24 || x.Rows() != 6 || x.Cols() != 4 || x.Dim(1) != 3 {
		t.Fatalf("shape %v len %d rows %d cols %d", x.Shape(), x.Len(), x.Rows(), x.Cols())
	}
	s := x.Slice(1, 2)
	s.Row(2)[3] = 7 // element (1, 2, 3)
	if x.Data[1*12+2*4+3] != 7 {
		t.Fatal("slice does not share data")
	}
	y, err := x.Reshape(6, 4)
	if err != nil || y.Row(5)[3] != 7 {
		t.Fatalf("reshape: %v, %v", err, y.Row(5))
	}
	if _, err := x.Reshape(5, 5); !errors.Is(err, ErrShape) {
		t.Fatalf("bad reshape: %v", err)
	}
	if _, err := FromData(make([]float32, 5), 2, 3); !errors.Is(err, ErrShape) {
		t.Fatalf("bad FromData: %v", err)
	}
	sh := x.Shape()
	sh[0] = 9
	if x.Dim(0) != 2 {
		t.Fatal("Shape exposes the tensor's own slice")
	}
}

// TestExpSumMatchesReference checks ExpSum against float64 exponentials of
// the float32 differences: each within 2 ulps, the sum within the rounding
// of 1,024-element float32 chunks, a −Inf element 0, on rows with a tail.
func TestExpSumMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	for _, n := range []int{1, 9, 1024, 3001} {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(r.NormFloat64() * 8)
		}
		x[n/2] = float32(math.Inf(-1))
		if n == 1 {
			x[0] = 2.5
		}
		dst := make([]float32, n)
		mx, sum := ExpSum(dst, x)
		want := math.Inf(-1)
		for _, v := range x {
			want = math.Max(want, float64(v))
		}
		if float64(mx) != want {
			t.Fatalf("n=%d: max %v, want %v", n, mx, want)
		}
		var ref, abs float64
		for i, v := range x {
			e := math.Exp(float64(v - mx))
			ref += e
			abs += e
			if d := math.Abs(float64(dst[i]) - e); d > 2*e*math.Ldexp(1, -23) {
				t.Fatalf("n=%d element %d: e^(%v−%v) = %v, want %v", n, i, v, mx, dst[i], e)
			}
		}
		// Each float32 chunk sum of up to 1,024 terms: γ_1024·Σ|e| at most.
		u := math.Ldexp(1, -24)
		bound := 1024*u/(1-1024*u)*abs + 2*math.Ldexp(1, -23)*abs
		if d := math.Abs(sum - ref); d > bound {
			t.Fatalf("n=%d: sum %v, want %v (error %g above %g)", n, sum, ref, d, bound)
		}
	}
}

// TestGeGLU: GELU's tanh approximation times up, against the definition
// x/2·(1 + tanh(√(2/π)·(x + 0.044715·x³))) in float64, within a few ulps
// (and the float32 rounding of the exponent 2u: a few ulps of it),
// exactly 0 at 0 and x far above. Where 1 + tanh cancels (x below about
// −3) the reference is its equal x/(1 + e^−2u), in float64; PyTorch's
// float32 gives there values below 1e-7·|x|, or 0.
func TestGeGLU(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	g, up := randFloats(r, 601), randFloats(r, 601)
	for i := range g {
		g[i] *= 4
	}
	g[0], g[1], g[2], g[3] = 0, -200, 200, -9
	one := make([]float32, len(g))
	for i := range one {
		one[i] = 1
	}
	gelu := make([]float32, len(g))
	GeGLU(gelu, g, one)
	got := make([]float32, len(g))
	GeGLU(got, g, up)
	for i := range g {
		x := float64(g[i])
		u := math.Sqrt(2/math.Pi) * (x + 0.044715*x*x*x)
		want := x / 2 * (1 + math.Tanh(u))
		if x < -3 {
			want = x / (1 + math.Exp(-2*u))
		}
		if math.Abs(float64(gelu[i])-want) > (8+8*math.Abs(u))*u32*math.Abs(want)+1e-30 {
			t.Fatalf("GELU(%v) = %v, want %v", g[i], gelu[i], want)
		}
		if got[i] != gelu[i]*up[i] {
			t.Fatalf("element %d: GeGLU %v is not GELU·up %v", i, got[i], gelu[i]*up[i])
		}
	}
	if gelu[0] != 0 || gelu[1] != 0 || gelu[2] != 200 {
		t.Fatalf("GELU(0, -200, 200) = %v", gelu[:3])
	}
}

// TestFastSoftmax checks FastSoftmax against the float64 softmax of the
// float32 differences, on rows with a tail and a masked (−Inf) element:
// each within its exponential's 2 ulps, the chunk sum's rounding (γ_n
// relative) and the two roundings of 1/sum and the product.
func TestFastSoftmax(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{1, 7, 200, 1000, 2500} {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(r.NormFloat64() * 6)
		}
		if n > 1 {
			x[n/3] = float32(math.Inf(-1))
		}
		got := append([]float32(nil), x...)
		FastSoftmax(got)
		m32 := float32(math.Inf(-1))
		for _, v := range x {
			m32 = max(m32, v)
		}
		var z float64
		for _, v := range x {
			z += math.Exp(float64(v - m32))
		}
		u := math.Ldexp(1, -24)
		chunk := float64(min(n, expSumChunk))
		rel := 4*u + chunk*u/(1-chunk*u) + 4*u
		var total float64
		for i, v := range x {
			want := math.Exp(float64(v-m32)) / z
			if math.Abs(float64(got[i])-want) > rel*want {
				t.Fatalf("n=%d element %d: %v, want %v", n, i, got[i], want)
			}
			total += float64(got[i])
		}
		if n > 1 && got[n/3] != 0 {
			t.Fatalf("n=%d: masked element %v", n, got[n/3])
		}
		if math.Abs(total-1) > rel {
			t.Fatalf("n=%d: probabilities sum to %v", n, total)
		}
	}
}
