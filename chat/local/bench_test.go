package local

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/weftlabs/weft/internal/llm/llmtest"
)

// Benchmark of aggregate decode through the engine (go test -run XXX -bench
// Streams ./chat/local): llama2.c's 15M configuration with random weights
// and the 32,000-token tokenizer, greedy, each stream a one-token prompt
// decoding 200 tokens; 8 concurrent streams are batched into shared passes.
// The 8-stream run reports its ratio to one stream measured in the same run
// (x_single: mean rates; best_x_single: best runs of each).

const benchTokens = 200

// streamsPerSecond runs n concurrent greedy streams to the end and returns
// the generated tokens per second.
func streamsPerSecond(b *testing.B, e *Engine, n int) float64 {
	bos := e.Tokenizer().SpecialTokens().BOS.ID
	start := time.Now()
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			g, err := e.Generate(context.Background(), Request{Prompt: []int{bos, 100 + i}, MaxTokens: benchTokens,
				Temperature: ptr(0.0), IgnoreEOS: true})
			if err != nil {
				b.Error(err)
				return
			}
			if _, err := g.Wait(); err != nil {
				b.Error(err)
			}
		})
	}
	wg.Wait()
	return float64(n*benchTokens) / time.Since(start).Seconds()
}

func BenchmarkLlama15MStreams(b *testing.B) {
	dir := llmtest.ModelDir{Dims: llmtest.Llama15M, Tokenizer: llmtest.TokenizerLlama2}.Write(b)
	e, err := Open(dir, ModelConfig{})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	streamsPerSecond(b, e, 1) // touch every weight once

	b.Run("streams=1", func(b *testing.B) {
		best := 0.0
		for b.Loop() {
			best = max(best, streamsPerSecond(b, e, 1))
		}
		b.ReportMetric(float64(benchTokens*b.N)/b.Elapsed().Seconds(), "tok/s")
		b.ReportMetric(best, "best_tok/s")
	})
	b.Run("streams=8", func(b *testing.B) {
		// The single stream of the same run, for the ratio: its last
		// measure, and its best of three (the least disturbed on a shared
		// machine, to compare with the best 8-stream run).
		b.StopTimer()
		single, bestSingle := 0.0, 0.0
		for range 3 {
			single = streamsPerSecond(b, e, 1)
			bestSingle = max(bestSingle, single)
		}
		b.StartTimer()
		best := 0.0
		for b.Loop() {
			best = max(best, streamsPerSecond(b, e, 8))
		}
		tps := float64(8*benchTokens*b.N) / b.Elapsed().Seconds()
		b.ReportMetric(tps, "tok/s")
		b.ReportMetric(best, "best_tok/s")
		b.ReportMetric(single, "single_tok/s")
		b.ReportMetric(tps/single, "x_single")
		b.ReportMetric(best/bestSingle, "best_x_single")
	})
}
