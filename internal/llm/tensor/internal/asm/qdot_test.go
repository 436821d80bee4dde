package asm

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/weftlabs/weft/internal/llm/quant"
)

// quantTypes are the weight formats with a quantised product.
var quantTypes = []quant.Type{quant.Q8_0, quant.Q4_0, quant.Q4_1, quant.Q5_0, quant.Q5_1, quant.Q4_K, quant.Q5_K, quant.Q6_K}

// halfOffsets are the byte offsets of a block's half-precision scales.
var halfOffsets = map[quant.Type][]int{
	quant.Q8_0: {0}, quant.Q4_0: {0}, quant.Q5_0: {0}, quant.Q4_1: {0, 2}, quant.Q5_1: {0, 2},
	quant.Q4_K: {0, 2}, quant.Q5_K: {0, 2}, quant.Q6_K: {208},
}

// randBlocks returns n rows of k weights of type t: random bytes (every
// level and sub-block scale is valid) under half-precision scales drawn by
// scale.
func randBlocks(r *rand.Rand, t quant.Type, n, k int, scale func() float32) []byte {
	rowBytes, err := t.Bytes(k)
	if err != nil {
		panic(err)
	}
	w := make([]byte, n*rowBytes)
	for i := range w {
		w[i] = byte(r.Uint32())
	}
	for b := 0; b < len(w); b += t.BlockBytes() {
		for _, at := range halfOffsets[t] {
			binary.LittleEndian.PutUint16(w[b+at:], quant.FloatToHalf(scale()))
		}
	}
	return w
}

// randActs returns m rows of k activations of kind: levels in ±lim, scales
// drawn by scale, sums to match.
func randActs(r *rand.Rand, kind ActKind, m, k, lim int, scale func() float32) *QActs {
	x := &QActs{Kind: kind, Rows: m, Cols: k, Q: make([]int8, m*k), D: make([]float32, m*k/kind.block())}
	for i := range x.Q {
		x.Q[i] = int8(r.IntN(2*lim+1) - lim)
	}
	for i := range x.D {
		x.D[i] = scale()
	}
	setSums(x)
	return x
}

// setSums sets x's sums per 32 levels (and, Act32, d·Σq per block) from
// its levels and scales, as QuantizeActs leaves them.
func setSums(x *QActs) {
	x.Sums, x.DSums = x.Sums[:0], x.DSums[:0]
	for b := 0; b < len(x.Q)/Q8Block; b++ {
		var s int32
		for _, q := range x.Q[b*Q8Block : (b+1)*Q8Block] {
			s += int32(q)
		}
		x.Sums = append(x.Sums, s)
		if x.Kind == Act32 {
			x.DSums = append(x.DSums, float32(x.D[b]*float32(s)))
		}
	}
}

// quantReference is the product in float64 over the dequantised weights
// (quant.Dequantize, checked against gguf-py) and the activations' values;
// it also returns Σ|terms| per element, the scale of float32 rounding.
func quantReference(t quant.Type, x *QActs, w []byte, n int) (ref, mag []float64) {
	k := x.Cols
	rowBytes, _ := t.Bytes(k)
	wf := make([]float32, k)
	ref, mag = make([]float64, x.Rows*n), make([]float64, x.Rows*n)
	blk := x.Kind.block()
	for j := range n {
		if err := quant.Dequantize(t, wf, w[j*rowBytes:(j+1)*rowBytes]); err != nil {
			panic(err)
		}
		for i := range x.Rows {
			var s, a float64
			for p := range k {
				v := float64(x.Q[i*k+p]) * float64(x.D[(i*k+p)/blk]) * float64(wf[p])
				s += v
				a += math.Abs(v)
			}
			ref[i*n+j], mag[i*n+j] = s, a
		}
	}
	return ref, mag
}

func pow2Scale(r *rand.Rand) func() float32 {
	return func() float32 { return float32(math.Ldexp(1, r.IntN(3)-2)) }
}

// TestMatMulTQuantExactOnPowersOfTwo: with scales that are powers of two
// and activations small enough that every partial sum is an integer
// multiple of a power of two below 2^24, each float32 step is exact, so the
// product must equal the float64 one over the dequantised weights exactly:
// a dropped, repeated or misplaced term, level or scale fails.
func TestMatMulTQuantExactOnPowersOfTwo(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 1))
	for _, typ := range quantTypes {
		kind, _ := ActKindOf(typ)
		k := 2 * kind.block()
		if kind == Act32 {
			k = 5 * Q8Block // an odd number of blocks
		}
		for _, m := range []int{1, 3} {
			for _, n := range []int{1, 5} {
				x := randActs(r, kind, m, k, 7, pow2Scale(r))
				w := randBlocks(r, typ, n, k, pow2Scale(r))
				got := make([]float32, m*n)
				MatMulTQuant(typ, got, n, x, w, n)
				ref, _ := quantReference(typ, x, w, n)
				for i := range got {
					if float64(got[i]) != ref[i] {
						t.Fatalf("%v m=%d n=%d element %d: %v, float64 %v", typ, m, n, i, got[i], ref[i])
					}
				}
			}
		}
	}
}

// TestMatMulTQuantCloseToDequantised: on realistic scales the product is
// the float64 one over the dequantised weights to float32 rounding.
func TestMatMulTQuantCloseToDequantised(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 2))
	for _, typ := range quantTypes {
		kind, _ := ActKindOf(typ)
		for _, k := range []int{kind.block(), 4 * QKBlock} {
			m, n := 3, 7
			x := randActs(r, kind, m, k, 127, func() float32 { return float32(r.Float64() * 0.05) })
			w := randBlocks(r, typ, n, k, func() float32 { return float32(r.Float64() * 0.01) })
			got := make([]float32, m*n)
			MatMulTQuant(typ, got, n, x, w, n)
			ref, mag := quantReference(typ, x, w, n)
			for i := range got {
				if d := math.Abs(float64(got[i]) - ref[i]); d > 1e-6*mag[i]+1e-30 {
					t.Fatalf("%v k=%d element %d: %v, float64 %v (Σ|terms| %v)", typ, k, i, got[i], ref[i], mag[i])
				}
			}
		}
	}
}

// TestQuantizeActs: levels within ±127, each element within half a scale
// of its value, scales max|x|/127, sums of the levels; NaN and infinity
// make their block's scale NaN.
func TestQuantizeActs(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 3))
	for _, kind := range []ActKind{Act32, Act256} {
		blk := kind.block()
		rows, cols := 3, 2*QKBlock
		x := make([]float32, rows*cols)
		for i := range x {
			x[i] = float32(r.NormFloat64() * math.Ldexp(1, r.IntN(20)-10))
		}
		clear(x[blk : 2*blk]) // a block of zeros
		x[3*blk+5] = float32(math.Inf(-1))
		var a QActs
		QuantizeActs(&a, kind, x, rows, cols)
		for b, d := range a.D {
			v, q := x[b*blk:(b+1)*blk], a.Q[b*blk:(b+1)*blk]
			var amax float64
			for _, e := range v {
				amax = max(amax, math.Abs(float64(e)))
			}
			switch {
			case b == 3:
				if !math.IsNaN(float64(d)) {
					t.Fatalf("kind %d: block with -Inf has scale %v, want NaN", kind, d)
				}
				continue
			case b == 1 && d != 0:
				t.Fatalf("kind %d: zero block has scale %v", kind, d)
			case float32(amax/127) != d && b != 1:
				t.Fatalf("kind %d block %d: scale %v, want %v", kind, b, d, float32(amax/127))
			}
			for p := range v {
				if math.Abs(float64(q[p])*float64(d)-float64(v[p])) > float64(d)*0.5001 {
					t.Fatalf("kind %d block %d element %d: level %d·%v for %v", kind, b, p, q[p], d, v[p])
				}
			}
		}
		for s := 0; s < rows*cols/Q8Block; s++ {
			var sum int32
			for _, q := range a.Q[s*Q8Block : (s+1)*Q8Block] {
				sum += int32(q)
			}
			if a.Sums[s] != sum {
				t.Fatalf("sum %d: %d, want %d", s, a.Sums[s], sum)
			}
			if kind == Act32 && s != 3 && a.DSums[s] != float32(a.D[s]*float32(sum)) {
				t.Fatalf("Act32 sum %d: %v, want %v", s, a.DSums[s], a.D[s]*float32(sum))
			}
		}
	}
}

// TestMatMulTQuantAssemblyEqualsPureGo: on random bytes (every level and
// sub-block scale, −128 included) under random scales, the assembly and
// the pure-Go version give the same bits, for every column count (the
// four-column tiles and the rest), several rows (the four-row tiles, from
// 4 or 32 rows by format, and the rest), row strides and a weight matrix wider than one cache block of
// columns, on each path the CPU has.
func TestMatMulTQuantAssemblyEqualsPureGo(t *testing.T) {
	forQuantPaths(func(path string) {
		r := rand.New(rand.NewPCG(31, 6))
		for _, typ := range quantTypes {
			kind, _ := ActKindOf(typ)
			ks := []int{kind.block(), 3 * QKBlock}
			if kind == Act32 {
				ks = append(ks, 9*Q8Block) // an odd count of blocks past the first
			}
			for _, k := range ks {
				for _, m := range []int{1, 2, 5, 8, 33} {
					for _, n := range []int{1, 2, 3, 4, 7, 9, 16, 35} {
						x := randActs(r, kind, m, k, 127, func() float32 { return float32(r.NormFloat64() * 0.05) })
						w := randBlocks(r, typ, n, k, func() float32 { return float32(r.NormFloat64() * 0.02) })
						rowBytes, _ := typ.Bytes(k)
						ldd := n + 3
						got, pure := make([]float32, m*ldd), make([]float32, m*ldd)
						MatMulTQuant(typ, got, ldd, x, w, n)
						matmulTQuantGeneric(typ, pure, ldd, x, w, rowBytes, n)
						if i := sameBits(got, pure); i >= 0 {
							t.Fatalf("%s: %v k=%d m=%d n=%d element %d: assembly %v, pure Go %v", path, typ, k, m, n, i, got[i], pure[i])
						}
					}
				}
			}
			// Many columns and rows: the column blocks of the multi-row
			// order, which every format shares (one format of each kind of
			// activation), and the blocks of columns whose records the
			// formats with a prepare lay out at a time (the K-quants).
			if typ != quant.Q8_0 && typ != quant.Q4_K && typ != quant.Q5_K && typ != quant.Q6_K {
				continue
			}
			k := 4 * QKBlock
			rowBytes, _ := typ.Bytes(k)
			n := (1<<20)/rowBytes + 13 // past the assembly's column block (colBlockBytes)
			x := randActs(r, kind, 33, k, 127, func() float32 { return float32(r.Float64() * 0.05) })
			w := randBlocks(r, typ, n, k, func() float32 { return float32(r.Float64() * 0.02) })
			got, pure := make([]float32, 33*n), make([]float32, 33*n)
			MatMulTQuant(typ, got, n, x, w, n)
			matmulTQuantGeneric(typ, pure, n, x, w, rowBytes, n)
			if i := sameBits(got, pure); i >= 0 {
				t.Fatalf("%s: %v n=%d element %d: assembly %v, pure Go %v", path, typ, n, i, got[i], pure[i])
			}
		}
	})
}

// TestQuantizeActBlockAssemblyEqualsPureGo: the levels, the sums per 32
// and the scale's bits of the dispatched quantisation equal the pure-Go
// version's, on blocks of 32, 64 and 256 with random values, ties (x·127/
// max|x| at k+½), zeros, −0, NaN, ±Inf, subnormals, a max|x| so small that
// 127/max|x| is infinite, and the largest finite floats.
func TestQuantizeActBlockAssemblyEqualsPureGo(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 31))
	special := []float32{0, float32(math.Copysign(0, -1)), float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)),
		math.SmallestNonzeroFloat32, -1e-38, math.MaxFloat32, -math.MaxFloat32, 0.5, 1.5, 2.5, -2.5}
	for _, n := range []int{32, 64, 256} {
		for trial := range 400 {
			v := make([]float32, n)
			switch trial % 5 {
			case 0: // ties: max|x| = 127, so the levels are x rounded
				for i := range v {
					v[i] = float32(r.IntN(254)-127) + 0.5
				}
				v[r.IntN(n)] = 127
			case 1: // tiny: 127/max|x| overflows or nearly
				for i := range v {
					v[i] = float32(r.NormFloat64()) * 1e-38 * float32(r.IntN(40))
				}
			default:
				for i := range v {
					v[i] = float32(r.NormFloat64() * math.Pow(10, float64(r.IntN(20)-10)))
				}
			}
			for range r.IntN(3) {
				v[r.IntN(n)] = special[r.IntN(len(special))]
			}
			q, pq := make([]int8, n), make([]int8, n)
			s, ps := make([]int32, n/Q8Block), make([]int32, n/Q8Block)
			for i := range q { // stale levels and sums: every one is written
				q[i], s[i/Q8Block] = 99, 99
			}
			d := quantizeActBlock(q, v, s)
			pd := quantizeActBlockGeneric(pq, v, ps)
			if math.Float32bits(d) != math.Float32bits(pd) || !slices.Equal(q, pq) || !slices.Equal(s, ps) {
				t.Fatalf("n=%d trial %d: scale %v (%#x) levels %v sums %v, pure Go %v (%#x) %v %v on %v",
					n, trial, d, math.Float32bits(d), q, s, pd, math.Float32bits(pd), pq, ps, v)
			}
		}
	}
}
