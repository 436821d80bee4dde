package model

import (
	"testing"

	"github.com/weftlabs/weft/internal/llm/llmtest"
)

// BenchmarkEmbeddings15M pools the 15M Llama's states (last token,
// normalised) for inputs of 32 tokens, one at a time and 64 in one batched
// pass; each batch-64 pass alternates with a batch-1 pass so the machine's
// other work weighs on both alike. x_batch1 is batch 64's rate over batch
// 1's (medians).
func BenchmarkEmbeddings15M(b *testing.B) {
	const tokens = 32
	cfg := configOf(b, llmtest.Llama15M)
	m := randomModel(b, cfg, Options{})
	m.Pooling = &Pooling{Mode: LastToken, Normalize: true}
	inputs := make([][]int32, 64)
	for i := range inputs {
		inputs[i] = randomTokens(uint64(i+1), tokens, cfg.VocabSize)
	}
	embed := func(seqs [][]int32) {
		if _, err := m.Embeddings(seqs, 0); err != nil {
			b.Fatal(err)
		}
	}
	var one, many stepTimes
	for b.Loop() {
		one.time(func() { embed(inputs[:1]) })
		many.time(func() { embed(inputs) })
	}
	oneRate, manyRate := 1/one.median().Seconds(), 64/many.median().Seconds()
	b.ReportMetric(oneRate, "batch1_emb/s")
	b.ReportMetric(manyRate, "batch64_emb/s")
	b.ReportMetric(manyRate/oneRate, "x_batch1")
}
