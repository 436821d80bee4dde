package lora

import (
	"math"
	"slices"
	"testing"
)

// TestDropoutMaskStatistics: a share p of zeros, the rest 1/(1−p), the same
// mask for the same seed, layer and target and another for any other.
func TestDropoutMaskStatistics(t *testing.T) {
	const n, p = 200000, 0.3
	mask := make([]float32, n)
	DropoutMask(mask, p, 7, 2, Up)
	zeros := 0
	for _, v := range mask {
		switch v {
		case 0:
			zeros++
		case float32(1 / (1 - p)):
		default:
			t.Fatalf("mask value %v, want 0 or %v", v, 1/(1-p))
		}
	}
	// 5 standard deviations of a binomial share.
	if share := float64(zeros) / n; math.Abs(share-p) > 5*math.Sqrt(p*(1-p)/n) {
		t.Fatalf("%.4f of the elements dropped, want %.2f", share, p)
	}
	again := make([]float32, n)
	DropoutMask(again, p, 7, 2, Up)
	if !slices.Equal(mask, again) {
		t.Fatal("the same seed, layer and target gave another mask")
	}
	for _, other := range []struct {
		seed  uint64
		layer int
		t     Target
	}{{8, 2, Up}, {7, 3, Up}, {7, 2, Gate}} {
		DropoutMask(again, p, other.seed, other.layer, other.t)
		if slices.Equal(mask, again) {
			t.Fatalf("%+v gave the same mask", other)
		}
	}
}
