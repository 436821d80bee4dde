package engine

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/weftlabs/weft/internal/llm/llmtest"
)

// Benchmark of aggregate decode through the engine (go test -run XXX -bench
// Streams ./internal/llm/engine): llama2.c's 15M configuration with random weights
// and the 32,000-token tokenizer, greedy, each stream a one-token prompt
// decoding 200 tokens; 8 concurrent streams are batched into shared passes.
// Rounds alternate one stream and 8 streams; x_single is the median of the
// rounds' ratios of aggregate to single-stream rate.

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

	// Each round runs one stream alone, then 8 together, so that the
	// machine's other work weighs on both alike; the ratio quoted is the
	// median of the rounds' ratios.
	var single, eight, ratios []float64
	for b.Loop() {
		one := streamsPerSecond(b, e, 1)
		all := streamsPerSecond(b, e, 8)
		single, eight, ratios = append(single, one), append(eight, all), append(ratios, all/one)
	}
	b.ReportMetric(median(eight), "median_tok/s")
	b.ReportMetric(median(single), "single_median_tok/s")
	b.ReportMetric(median(ratios), "x_single")
	b.ReportMetric(slices.Min(ratios), "min_x_single")
	b.ReportMetric(slices.Max(ratios), "max_x_single")
}

// median is the middle value: on a shared machine it moves less with other
// work than the mean does.
func median(xs []float64) float64 {
	sorted := slices.Clone(xs)
	slices.Sort(sorted)
	return sorted[len(sorted)/2]
}
