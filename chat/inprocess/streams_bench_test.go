package inprocess_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/chat"
	"github.com/weftlabs/weft/chat/inprocess"
	"github.com/weftlabs/weft/internal/llm/engine"
	"github.com/weftlabs/weft/internal/llm/llmtest"
)

// Benchmark of streamed tokens per second through the gateway for a model
// served in-process (go test -run '^$' -bench LocalStreams ./chat/inprocess): the tiny
// Qwen3 with its real tokenizer and chat template, 8 concurrent streamed
// chat completions of 200 greedy tokens each, every one relayed as SSE to a
// discarding client and traced. Each round also runs the same 8 streams on
// an engine of its own, read directly (no chat template, no wire format, no
// trace), so x_engine, the median of the rounds' ratios of the two rates,
// is the serving layer's cost as a share of the engine's speed.

const localBenchTokens = 200

// discardRecorder traces into nothing: the gateway still builds every call.
type discardRecorder struct{}

func (discardRecorder) RecordCalls(context.Context, []chat.Call) error { return nil }

// discardWriter is a client reading as fast as it is written to.
type discardWriter struct{ h http.Header }

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w *discardWriter) WriteHeader(int)             {}
func (w *discardWriter) Flush()                      {}

func BenchmarkLocalStreams(b *testing.B) {
	dir := llmtest.ModelDir{Dims: llmtest.TinyQwen3, Tokenizer: llmtest.TokenizerQwen3}.Write(b)
	routing, err := chat.ParseRouting([]byte(fmt.Sprintf("models: [{name: tiny, upstreams: [{kind: local, path: %q}]}]", dir)),
		func(string) (string, bool) { return "", false }, inprocess.Kind)
	if err != nil {
		b.Fatal(err)
	}
	server, err := inprocess.Open(routing, inprocess.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	defer server.Close()
	service, err := chat.New(chat.Config{Routing: routing, Recorder: discardRecorder{}, Backends: map[string]chat.Backend{chat.KindLocal: server},
		Registerer: prometheus.NewRegistry(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	defer service.Close(context.Background())
	direct, err := engine.Open(dir, engine.ModelConfig{})
	if err != nil {
		b.Fatal(err)
	}
	defer direct.Close()
	ctx := weft.WithPrincipal(context.Background(), weft.Principal{UserID: "u1", DefaultEntity: "bench"})

	served := func(i int) error {
		body := fmt.Sprintf(`{"model":"tiny","messages":[{"role":"user","content":"stream %d"}],"max_tokens":%d,"temperature":0,"ignore_eos":true,"stream":true}`, i, localBenchTokens)
		c, err := service.Complete(ctx, "bench/chat", []byte(body))
		if err != nil {
			return err
		}
		return c.Relay(&discardWriter{h: http.Header{}})
	}
	zero := 0.0
	raw := func(i int) error {
		prompt := direct.Tokenizer().Encode(fmt.Sprintf("stream %d", i), false)
		g, err := direct.Generate(context.Background(), engine.Request{Prompt: prompt, MaxTokens: localBenchTokens,
			Temperature: &zero, IgnoreEOS: true})
		if err != nil {
			return err
		}
		defer g.Close()
		_, err = g.Wait()
		return err
	}
	rate := func(stream func(int) error) float64 {
		start := time.Now()
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Go(func() {
				if err := stream(i); err != nil {
					b.Error(err)
				}
			})
		}
		wg.Wait()
		return float64(8*localBenchTokens) / time.Since(start).Seconds()
	}
	rate(served) // warm both up
	rate(raw)

	var gateway, engineOnly, ratios []float64
	for b.Loop() {
		e := rate(raw)
		g := rate(served)
		gateway, engineOnly, ratios = append(gateway, g), append(engineOnly, e), append(ratios, g/e)
	}
	b.ReportMetric(medianOf(gateway), "median_tok/s")
	b.ReportMetric(medianOf(engineOnly), "engine_median_tok/s")
	b.ReportMetric(medianOf(ratios), "x_engine")
}

// medianOf is the middle value, steadier than the mean on a shared machine.
func medianOf(xs []float64) float64 {
	sorted := slices.Clone(xs)
	slices.Sort(sorted)
	return sorted[len(sorted)/2]
}
