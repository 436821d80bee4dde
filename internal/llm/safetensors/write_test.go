package safetensors

import (
	"errors"
	"path/filepath"
	"slices"
	"testing"
)

func TestWriteFileRoundTrips(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w.safetensors")
	vals := []float32{1, -2.5, 0.1, 3e-3, 65504, -0.0}
	err := WriteFile(path, []Entry{
		{Name: "b", DType: F16, Shape: []int{2, 3}, Data: vals},
		{Name: "a", DType: F32, Shape: []int{3, 2}, Data: vals},
		{Name: "c", DType: BF16, Shape: []int{6}, Data: vals},
	}, map[string]string{"format": "pt"})
	if err != nil {
		t.Fatal(err)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if !slices.Equal(f.Names(), []string{"a", "b", "c"}) || f.Metadata["format"] != "pt" {
		t.Fatalf("names %v metadata %v", f.Names(), f.Metadata)
	}
	a, _ := f.Tensor("a")
	if !slices.Equal(a.Float32(), vals) || !slices.Equal(a.Shape, []int{3, 2}) {
		t.Fatalf("f32 %v %v", a.Shape, a.Float32())
	}
	b, _ := f.Tensor("b")
	c, _ := f.Tensor("c")
	for i, v := range vals {
		for _, got := range []float32{b.Float32()[i], c.Float32()[i]} {
			if d := got - v; d > v/128 && d > 1e-6 || -d > v/128 && -d > 1e-6 && v > 0 {
				t.Fatalf("half of %g read back as %g", v, got)
			}
		}
	}
	if b.Float32()[4] != 65504 || c.Float32()[0] != 1 {
		t.Fatalf("exact halves: %g %g", b.Float32()[4], c.Float32()[0])
	}
	for name, e := range map[string]Entry{
		"shape":  {Name: "x", DType: F32, Shape: []int{2}, Data: []float32{1}},
		"dtype":  {Name: "x", DType: "I8", Shape: []int{1}, Data: []float32{1}},
		"noname": {DType: F32, Shape: []int{1}, Data: []float32{1}},
	} {
		if err := WriteFile(path, []Entry{e}, nil); !errors.Is(err, ErrInvalid) && !errors.Is(err, ErrUnsupported) {
			t.Errorf("%s: %v", name, err)
		}
	}
}
