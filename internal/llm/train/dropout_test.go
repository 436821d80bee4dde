package train

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/weftlabs/weft/internal/llm/lora"
	"github.com/weftlabs/weft/internal/llm/model"
)

// weightedLoss is Σ c·logprob of a pass, in float64.
func weightedLoss(p *model.Pass, coefs [][]float32) float64 {
	var l float64
	for i, row := range p.Logprobs {
		for j, lp := range row {
			l += float64(coefs[i][j]) * float64(lp)
		}
	}
	return l
}

// TestDropoutGradientsMatchDifferences: with adapter dropout, the gradients
// of A and B are those of the loss the forward pass computes under the same
// masks, as central differences of it show; serving never drops.
func TestDropoutGradientsMatchDifferences(t *testing.T) {
	const name, seed = "llama3-rope", 42
	g := readTrainGolden(t, name)
	m := loadTiny(t, name)
	adapter := goldenAdapter(t, m, g)
	adapter.Config.Dropout = 0.3
	tr, err := New(m, adapter, Config{})
	if err != nil {
		t.Fatal(err)
	}
	coefs := make([][]float32, len(g.Sequences))
	for i, s := range g.Sequences {
		coefs[i] = s.Coefficients
	}
	loss := func() float64 {
		p, err := m.TrainForward(g.batch(), model.TrainOptions{Adapter: adapter, DropoutSeed: seed})
		if err != nil {
			t.Fatal(err)
		}
		return weightedLoss(p, coefs)
	}
	pass, err := m.TrainForward(g.batch(), model.TrainOptions{Adapter: adapter, DropoutSeed: seed})
	if err != nil {
		t.Fatal(err)
	}
	base := weightedLoss(pass, coefs)
	tr.back.dropoutSeed = pass.DropoutSeed()
	if err := pass.Backward(coefs, tr.back); err != nil {
		t.Fatal(err)
	}

	// The masks change the loss, and only when training.
	adapter.Config.Dropout = 0
	if undropped := loss(); math.Abs(undropped-base) < 1e-3 {
		t.Fatalf("dropout left the loss at %g", base)
	}
	served := func() []float32 {
		out, err := m.Forward(&model.Batch{Seqs: []model.Sequence{{ID: 1, Tokens: g.Sequences[0].Tokens, AllLogits: true, Adapter: adapter}}},
			model.NewContiguousCache(m.Config, 64))
		if err != nil {
			t.Fatal(err)
		}
		return out[0]
	}
	want := served()
	adapter.Config.Dropout = 0.3
	if got := served(); relativeError(got, want) != 0 {
		t.Fatal("serving an adapter with dropout changed its logits")
	}

	r := rand.New(rand.NewPCG(3, 4))
	for range 8 {
		layer, target := r.IntN(len(adapter.Layers)), lora.Target(r.IntN(int(lora.NumTargets)))
		f, gf := adapter.Factors(layer, target), tr.Gradients().Layers[layer][target]
		for _, part := range []struct {
			name        string
			param, grad []float32
		}{{"A", f.A, gf.A}, {"B", f.B, gf.B}} {
			// The element with the largest gradient: its difference
			// stands well above float32 rounding of the loss.
			i, scale := 0, 0.0
			for j, v := range part.grad {
				if a := math.Abs(float64(v)); a > scale {
					i, scale = j, a
				}
			}
			const h = 1e-2
			v := part.param[i]
			part.param[i] = v + h
			up := loss()
			part.param[i] = v - h
			down := loss()
			part.param[i] = v
			numeric := (up - down) / (2 * h)
			if math.Abs(numeric-float64(part.grad[i])) > 2e-2*scale {
				t.Errorf("layer %d %s.%s[%d]: gradient %g, central difference %g", layer, target, part.name, i, part.grad[i], numeric)
			}
		}
	}
}
