//go:build amd64 && !purego && linux

package asm

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"syscall"
	"testing"

	"github.com/weftlabs/weft/internal/llm/quant"
)

// BenchmarkMatMulTQuantStream is decode's product (one row of activations)
// with the VNNI decode kernel against the AVX2 row kernel, one thread,
// rounds alternating, in CPU time: x_avx2 is the decode kernel's speed-up,
// GB/s its rate of weight bytes. For the K-quants the decode kernel is
// the stream kernel (two sequential streams of columns, qdot…Stream), and
// x_tile1 its speed-up over their one-row tile (short streams of
// neighbouring columns: the same instructions, the order decode must not
// take); for Q8_0, Q4_0 and Q5_0 it is the sixteen-column kernel, which reads
// the next columns ahead. The shapes are the 0.4B Llama's FFN
// (1024·4096ᵀ, 4 MiB of Q8_0), four times its columns (17 MiB: from
// memory) and the 15M Llama's (288·768ᵀ, nine blocks a column; not for
// the K-quants, whose super-blocks of 256 do not divide 288).
func BenchmarkMatMulTQuantStream(b *testing.B) {
	if !useVNNI {
		b.Skip("no AVX-512 VNNI")
	}
	for _, typ := range []quant.Type{quant.Q8_0, quant.Q4_0, quant.Q5_0, quant.Q4_K, quant.Q5_K, quant.Q6_K} {
		kind, _ := ActKindOf(typ)
		for _, s := range [][2]int{{1024, 4096}, {1024, 16384}, {288, 768}} {
			k, n := s[0], s[1]
			if k%kind.block() != 0 {
				continue
			}
			r := rand.New(rand.NewPCG(1, 1))
			x := randActs(r, kind, 1, k, 127, func() float32 { return float32(r.NormFloat64() * 0.05) })
			w := randBlocks(r, typ, n, k, func() float32 { return float32(r.NormFloat64() * 0.02) })
			dst := make([]float32, n)
			rowBytes, _ := typ.Bytes(k)
			ks := quantKernelsOf[typ]
			stream, row, tile := ks.stream, ks.row, ks.tile1
			if stream == nil {
				stream, tile = tile, nil
			}
			b.Run(fmt.Sprintf("%v/k=%d/n=%d", typ, k, n), func(b *testing.B) {
				var run func()
				useStream := func() { run = func() { stream(&dst[0], n, x, 0, &w[0], rowBytes, n, nil) } }
				useTile := func() { run = func() { tile(&dst[0], n, x, 0, &w[0], rowBytes, n, nil) } }
				useRow := func() { run = func() { row(&dst[0], n, x, 0, &w[0], rowBytes, n, nil) } }
				reps := max(1, (16<<20)/len(w)) // a few milliseconds a round
				each := func() {
					for range reps {
						run()
					}
				}
				for b.Loop() {
					xRow, t := abRounds(11, useRow, useStream, each)
					if tile != nil {
						xTile, _ := abRounds(11, useTile, useStream, each)
						b.ReportMetric(xTile, "x_tile1")
					}
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
	for _, typ := range []quant.Type{quant.Q8_0, quant.Q4_0, quant.Q5_0, quant.Q4_K, quant.Q5_K, quant.Q6_K} {
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

// TestStreamAtTheEndOfTheMapping runs the decode kernels (one row) and the
// tiles (five rows: the four-row tile and the one-row one) of Q8_0, Q4_0,
// Q5_0, Q4_K, Q5_K and Q6_K on weights that end where their mapping does (the
// next page unreadable, as past the end of a mapped model file): the
// K-quants' decode kernels load 64 bytes at a time and the blocks-of-32
// kernels gather a block's scale with the two bytes after it, so a load
// past the last column would fault. Every count of blocks (odd ones end
// on a lone block), every count of columns past the four streams, one and
// two groups of sixteen with and without a column past them, and
// adversarial blocks: levels and high
// bits all 0 or all 1, zero, subnormal and largest f16 scales, activations
// at ±127 with zero, tiny and huge scales; the same bits as pure Go.
func TestStreamAtTheEndOfTheMapping(t *testing.T) {
	if !useVNNI {
		t.Skip("no AVX-512 VNNI")
	}
	page := syscall.Getpagesize()
	mem, err := syscall.Mmap(-1, 0, 20*page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(mem)
	if err := syscall.Mprotect(mem[19*page:], syscall.PROT_NONE); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(4, 0))
	scales := []uint16{0x0000, 0x8000, 0x0001, 0x03ff, 0x7bff, 0xfbff}
	for _, typ := range []quant.Type{quant.Q8_0, quant.Q4_0, quant.Q5_0, quant.Q4_K, quant.Q5_K, quant.Q6_K} {
		size := typ.BlockBytes()
		kind, _ := ActKindOf(typ)
		for nb := 1; nb <= 9; nb++ {
			k := nb * kind.block()
			rowBytes, _ := typ.Bytes(k)
			for _, n := range []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 16, 17, 32, 33} {
				w := mem[19*page-n*rowBytes : 19*page]
				for b := 0; b < len(w); b += size {
					fill := byte(r.Uint32())
					for i := range size {
						switch fill % 4 {
						case 0:
							w[b+i] = 0x00
						case 1:
							w[b+i] = 0xff
						default:
							w[b+i] = byte(r.Uint32())
						}
					}
					for _, h := range halfOffsets[typ] {
						binary.LittleEndian.PutUint16(w[b+h:], quant.FloatToHalf(float32(r.NormFloat64()*0.02)))
						if r.IntN(3) == 0 {
							binary.LittleEndian.PutUint16(w[b+h:], scales[r.IntN(len(scales))])
						}
					}
				}
				for _, m := range []int{1, 5} {
					x := randActs(r, kind, m, k, 127, func() float32 { return []float32{0, 1e-30, 1e20, 0.05}[r.IntN(4)] })
					for i := range x.Q {
						if r.IntN(4) == 0 {
							x.Q[i] = int8(127 - 254*r.IntN(2))
						}
					}
					setSums(x)
					got, pure := make([]float32, m*n), make([]float32, m*n)
					MatMulTQuant(typ, got, n, x, w, n)
					matmulTQuantGeneric(typ, pure, n, x, w, rowBytes, n)
					if i := sameBits(got, pure); i >= 0 {
						t.Fatalf("%v m=%d nb=%d n=%d element %d: assembly %v, pure Go %v", typ, m, nb, n, i, got[i], pure[i])
					}
				}
			}
		}
	}
}

// BenchmarkQuantizeActs is the quantisation of a decode step's activations
// (one row of the 0.4B Llama's hidden and FFN sizes) and of a prefill's
// (256 rows), for each kind, the assembly against the pure-Go version, one
// thread, rounds alternating, in CPU time (x_purego: the assembly's
// speed-up; GB/s: float32 read with it).
func BenchmarkQuantizeActs(b *testing.B) {
	if !useAVX2 {
		b.Skip("no AVX2")
	}
	defer func() { useAVX2 = true }()
	for _, kind := range []ActKind{Act32, Act256} {
		for _, s := range [][2]int{{1, 1024}, {1, 4096}, {256, 1024}} {
			rows, cols := s[0], s[1]
			r := rand.New(rand.NewPCG(1, 1))
			x := randFloats(r, rows*cols)
			var dst QActs
			b.Run(fmt.Sprintf("kind=%d/rows=%d/cols=%d", kind, rows, cols), func(b *testing.B) {
				reps := max(1, (8<<20)/(4*len(x)))
				for b.Loop() {
					xp, t := abRounds(11, func() { useAVX2 = false }, func() { useAVX2 = true }, func() {
						for range reps {
							QuantizeActs(&dst, kind, x, rows, cols)
						}
					})
					b.ReportMetric(xp, "x_purego")
					b.ReportMetric(float64(reps*4*len(x))/t.Seconds()/1e9, "GB/s")
				}
			})
		}
	}
}
