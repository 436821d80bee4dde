package llmtest

import (
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/weftlabs/weft/internal/llm/lora"
)

// LoRAShape is the adapter shape of a model of these dimensions.
func (d Dims) LoRAShape() lora.Shape {
	h, q, kv, f := d.HiddenSize, d.Heads*d.HeadDim, d.KVHeads*d.HeadDim, d.IntermediateSize
	return lora.Shape{
		Layers: d.Layers,
		In:     [lora.NumTargets]int{lora.Q: h, lora.K: h, lora.V: h, lora.O: q, lora.Gate: h, lora.Up: h, lora.Down: f},
		Out:    [lora.NumTargets]int{lora.Q: q, lora.K: kv, lora.V: kv, lora.O: h, lora.Gate: f, lora.Up: f, lora.Down: h},
	}
}

// RandomAdapter is an adapter of cfg for a model of the given shape as
// lora.New draws it from seed, with B drawn too (normal, standard deviation
// bStd) so that it changes the model's outputs.
func RandomAdapter(shape lora.Shape, cfg lora.Config, seed uint64, bStd float64) *lora.Adapter {
	rng := rand.New(rand.NewPCG(seed, 0x10a))
	a, err := lora.New(cfg, shape, rng)
	if err != nil {
		panic(err)
	}
	for _, ly := range a.Layers {
		for _, f := range ly {
			if f != nil {
				for i := range f.B {
					f.B[i] = float32(bStd * rng.NormFloat64())
				}
			}
		}
	}
	return a
}

// AdapterDir writes RandomAdapter(d, cfg, seed, bStd) in the standard layout
// under a new temporary directory of tb and returns its path.
func AdapterDir(tb testing.TB, d Dims, cfg lora.Config, seed uint64, bStd float64) string {
	tb.Helper()
	dir := filepath.Join(tb.TempDir(), "adapter")
	if err := lora.Save(dir, RandomAdapter(d.LoRAShape(), cfg, seed, bStd)); err != nil {
		tb.Fatal(err)
	}
	return dir
}
