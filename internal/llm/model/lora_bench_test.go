package model

import (
	"testing"

	"github.com/weftlabs/weft/internal/llm/llmtest"
	"github.com/weftlabs/weft/internal/llm/lora"
)

// BenchmarkLlama15MAdapter measures what rank-8 LoRA adapters on all seven
// projections cost the 15M Llama's decode: each iteration times a base
// step and an adapted step of the same batch shape back to back, so the
// ratio (x_base: adapted tok/s ÷ base tok/s, of the median steps) sees
// the machine's other work alike on both.
//
//	go test -run '^$' -bench Llama15MAdapter ./internal/llm/model
func BenchmarkLlama15MAdapter(b *testing.B) {
	cfg := configOf(b, llmtest.Llama15M)
	m := randomModel(b, cfg, Options{})
	first := llmtest.RandomAdapter(m.LoRAShape(), lora.Config{}, 1, 0.1)
	second := llmtest.RandomAdapter(m.LoRAShape(), lora.Config{}, 2, 0.1)
	for _, c := range []struct {
		name     string
		adapters []*lora.Adapter
	}{
		{"decode", []*lora.Adapter{first}},
		// Eight streams: two adapters and the base model in one batch.
		{"decode8", []*lora.Adapter{first, second, nil, first, second, nil, first, second}},
	} {
		b.Run(c.name, func(b *testing.B) {
			n := len(c.adapters)
			base, adapted := newGreedy(m, n, decodeContext), newGreedy(m, n, decodeContext)
			adapted.adapters = c.adapters
			var baseSteps, adaptedSteps stepTimes
			for b.Loop() {
				baseSteps.time(func() { base.step(b) })
				adaptedSteps.time(func() { adapted.step(b) })
			}
			baseTPS, adaptedTPS := float64(n)/baseSteps.median().Seconds(), float64(n)/adaptedSteps.median().Seconds()
			b.ReportMetric(adaptedTPS, "lora_tok/s")
			b.ReportMetric(baseTPS, "base_tok/s")
			b.ReportMetric(adaptedTPS/baseTPS, "x_base")
		})
	}
	b.Run("prefill512", func(b *testing.B) {
		const n = 512
		prompt := randomTokens(1, n, cfg.VocabSize)
		cache := NewContiguousCache(cfg, n)
		prefill := func(a *lora.Adapter) {
			cache.Free(1)
			if _, err := m.Forward(&Batch{Seqs: []Sequence{{ID: 1, Tokens: prompt, Adapter: a}}}, cache); err != nil {
				b.Fatal(err)
			}
		}
		var baseSteps, adaptedSteps stepTimes
		for b.Loop() {
			baseSteps.time(func() { prefill(nil) })
			adaptedSteps.time(func() { prefill(first) })
		}
		baseTPS, adaptedTPS := n/baseSteps.median().Seconds(), n/adaptedSteps.median().Seconds()
		b.ReportMetric(adaptedTPS, "lora_tok/s")
		b.ReportMetric(baseTPS, "base_tok/s")
		b.ReportMetric(adaptedTPS/baseTPS, "x_base")
	})
}
