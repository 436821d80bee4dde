package train

import (
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/weftlabs/weft/internal/llm/llmtest"
	"github.com/weftlabs/weft/internal/llm/lora"
	"github.com/weftlabs/weft/internal/llm/model"
)

// benchModel is the 15M Llama with random weights.
func benchModel(b *testing.B, threads int) *model.Model {
	b.Helper()
	cfg, err := model.ParseConfig(llmtest.Llama15M.ConfigJSON())
	if err != nil {
		b.Fatal(err)
	}
	m, err := model.FromWeights(cfg, llmtest.FastRandomWeights(llmtest.Llama15M), model.Options{Threads: threads})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { m.Close() })
	return m
}

// nextTokenBatch is seqs random sequences of n tokens, every position
// trained on its next token (the last on a random one).
func nextTokenBatch(seqs, n, vocab int) []model.TrainSequence {
	out := make([]model.TrainSequence, seqs)
	for i := range out {
		toks := llmtest.RandomTokens(uint64(i+1), n+1, vocab)
		out[i] = model.TrainSequence{Tokens: toks[:n], Targets: toks[1:]}
	}
	return out
}

func BenchmarkTrainStep15M(b *testing.B) {
	threads := runtime.GOMAXPROCS(0)
	m := benchModel(b, threads)
	const seqs, n = 4, 128
	batch := nextTokenBatch(seqs, n, m.Config.VocabSize)
	adapter, err := lora.New(lora.Config{Rank: 8}, m.LoRAShape(), rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		b.Fatal(err)
	}
	tr, err := New(m, adapter, Config{})
	if err != nil {
		b.Fatal(err)
	}
	coef := make([][]float32, seqs)
	for i := range coef {
		coef[i] = make([]float32, n)
		for j := range coef[i] {
			coef[i][j] = -1 / float32(seqs*n)
		}
	}
	step := func() {
		pass, err := tr.Forward(batch)
		if err != nil {
			b.Fatal(err)
		}
		if err := tr.Backward(pass, coef); err != nil {
			b.Fatal(err)
		}
		if _, err := tr.Step(1e-4); err != nil {
			b.Fatal(err)
		}
	}
	prefill := func() {
		bt := &model.Batch{}
		for i, s := range batch {
			bt.Seqs = append(bt.Seqs, model.Sequence{ID: model.SeqID(i), Tokens: s.Tokens})
		}
		if _, err := m.Forward(bt, model.NewContiguousCache(m.Config, n)); err != nil {
			b.Fatal(err)
		}
	}
	step()
	prefill()
	var train, pre time.Duration
	for b.Loop() {
		t0 := time.Now()
		step()
		t1 := time.Now()
		prefill()
		train += t1.Sub(t0)
		pre += time.Since(t1)
	}
	tokens := float64(seqs * n * b.N)
	b.ReportMetric(tokens/train.Seconds(), "train_tok/s")
	b.ReportMetric(tokens/pre.Seconds(), "prefill_tok/s")
	b.ReportMetric(pre.Seconds()/train.Seconds(), "x_prefill")
}
