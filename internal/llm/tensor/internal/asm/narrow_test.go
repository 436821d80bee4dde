package asm

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

// nearestHalf is the reference for F32ToF16 on finite f: the half whose value
// is nearest (ties to the even pattern), found by search over the ordered
// positive halves; past the largest half, 65536 stands for Inf (IEEE
// rounding with an unbounded exponent, then overflow).
func nearestHalf(f float32) uint16 {
	sign := uint16(0)
	if math.Signbit(float64(f)) {
		sign = 0x8000
	}
	a := math.Abs(float64(f))
	value := func(h int) float64 {
		if h == 0x7c00 {
			return 65536
		}
		bits, _ := f16Reference(uint16(h))
		return float64(math.Float32frombits(bits))
	}
	// Largest h in [0, 0x7c00] with value(h) <= a.
	h := sort.Search(0x7c01, func(h int) bool { return value(h) > a }) - 1
	if h == 0x7c00 {
		return sign | 0x7c00
	}
	lo, hi := value(h), value(h+1)
	switch {
	case a-lo < hi-a:
		return sign | uint16(h)
	case a-lo > hi-a:
		return sign | uint16(h+1)
	case h%2 == 0:
		return sign | uint16(h)
	}
	return sign | uint16(h+1)
}

// halfBoundaries returns every finite half's value, the midpoints between
// neighbours (where ties to even decide) and the float32s either side of
// each midpoint, both signs.
func halfBoundaries() []float32 {
	var xs []float32
	for h := uint16(0); h < 0x7c00; h++ {
		lo, _ := f16Reference(h)
		hi := uint32(0x47800000) // 65536, the overflow side of the largest half
		if h+1 < 0x7c00 {
			hi, _ = f16Reference(h + 1)
		}
		l, u := math.Float32frombits(lo), math.Float32frombits(hi)
		mid := float32((float64(l) + float64(u)) / 2) // exact: halves have 11-bit significands
		xs = append(xs, l, mid, math.Nextafter32(mid, 0), math.Nextafter32(mid, 1e9))
	}
	for _, x := range xs[:len(xs):len(xs)] {
		xs = append(xs, -x)
	}
	return xs
}

func TestF32ToF16RoundsToNearestEven(t *testing.T) {
	xs := halfBoundaries()
	r := rand.New(rand.NewPCG(5, 6))
	for range 1 << 16 {
		xs = append(xs, float32(r.NormFloat64()*math.Exp(r.Float64()*30-20)))
	}
	xs = append(xs, 65519.996, 65520, 1e10, float32(math.Inf(1)), float32(math.Inf(-1)), math.SmallestNonzeroFloat32, 0)
	for name, f := range map[string]func([]uint16, []float32){"dispatch": F32ToF16, "pure Go": f32ToF16Generic} {
		got := make([]uint16, len(xs))
		f(got, xs)
		for i, x := range xs {
			var want uint16
			if math.IsInf(float64(x), 0) {
				want = nearestHalf(float32(math.Copysign(1e9, float64(x))))
			} else {
				want = nearestHalf(x)
			}
			if got[i] != want {
				t.Fatalf("%s: %v (%#08x) narrowed to %#04x, want %#04x", name, x, math.Float32bits(x), got[i], want)
			}
		}
	}
}

// TestF16RoundTripAndNaN: every half widens and narrows back to itself (a
// NaN to its quiet form); float32 NaNs keep sign and top payload bits.
func TestF16RoundTripAndNaN(t *testing.T) {
	halves := allHalves()
	wide := make([]float32, len(halves))
	F16ToF32(wide, halves)
	for name, f := range map[string]func([]uint16, []float32){"dispatch": F32ToF16, "pure Go": f32ToF16Generic} {
		back := make([]uint16, len(halves))
		f(back, wide)
		for i, h := range halves {
			want := h
			if h&0x7c00 == 0x7c00 && h&0x3ff != 0 {
				want |= 0x200
			}
			if back[i] != want {
				t.Fatalf("%s: %#04x came back as %#04x", name, h, back[i])
			}
		}
		nans := []float32{math.Float32frombits(0x7f800001), math.Float32frombits(0xffc12345), math.Float32frombits(0x7fbfe000)}
		out := make([]uint16, len(nans))
		f(out, nans)
		for i, want := range []uint16{0x7e00, 0xfe09, 0x7fff} {
			if out[i] != want {
				t.Fatalf("%s: NaN %#08x narrowed to %#04x, want %#04x", name, math.Float32bits(nans[i]), out[i], want)
			}
		}
	}
}

func TestF32ToBF16RoundsToNearestEven(t *testing.T) {
	var xs []float32
	for h := uint32(0); h < 0x7f80; h++ {
		lo := h << 16
		mid := lo | 0x8000 // exactly halfway to the next bfloat16
		for _, b := range []uint32{lo, mid - 1, mid, mid + 1} {
			xs = append(xs, math.Float32frombits(b), math.Float32frombits(b|0x80000000))
		}
	}
	got := make([]uint16, len(xs))
	F32ToBF16(got, xs)
	for i, x := range xs {
		b := math.Float32bits(x)
		want := uint16(b >> 16)
		low := b & 0xffff
		if low > 0x8000 || (low == 0x8000 && want&1 == 1) {
			want++
		}
		if got[i] != want {
			t.Fatalf("%v (%#08x) narrowed to %#04x, want %#04x", x, b, got[i], want)
		}
	}
	special := []float32{float32(math.Inf(1)), float32(math.Inf(-1)), math.MaxFloat32, math.Float32frombits(0x7f800001), math.Float32frombits(0xffc12345)}
	out := make([]uint16, len(special))
	F32ToBF16(out, special)
	for i, want := range []uint16{0x7f80, 0xff80, 0x7f80, 0x7fc0, 0xffc1} {
		if out[i] != want {
			t.Fatalf("%v (%#08x) narrowed to %#04x, want %#04x", special[i], math.Float32bits(special[i]), out[i], want)
		}
	}
}
