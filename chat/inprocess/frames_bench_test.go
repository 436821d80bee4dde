package inprocess

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/chat"
	"github.com/weftlabs/weft/internal/llm/llmtest"
)

// Benchmark of the frames a local stream is relayed from against the SSE
// round trip it took before (go test -run '^$' -bench LocalFramesAgainstPipe
// ./chat/inprocess): the tiny Qwen3 with its real tokenizer and chat template, 8
// concurrent streamed chat completions of 200 greedy tokens, relayed to a
// discarding client and traced. Rounds alternate the frames path (the
// server pushes the engine's chunks as JSON frames into Relay's sink) and
// the pipe path (the same frames written as server-sent events into an
// io.Pipe by a goroutine and parsed back line by line, as the answer of a
// local model was relayed before); x_pipe is the median of the rounds'
// ratios of the two rates.
func BenchmarkLocalFramesAgainstPipe(b *testing.B) {
	const streams, tokens = 8, 200
	dir := llmtest.ModelDir{Dims: llmtest.TinyQwen3, Tokenizer: llmtest.TokenizerQwen3}.Write(b)
	r, err := chat.ParseRouting([]byte(fmt.Sprintf("models: [{name: tiny, upstreams: [{kind: local, path: %q}]}]", dir)), nil, Kind)
	if err != nil {
		b.Fatal(err)
	}
	logger := slog.New(slog.DiscardHandler)
	server, err := Open(r, Config{Logger: logger})
	if err != nil {
		b.Fatal(err)
	}
	defer server.Close()
	gateway := func(backend chat.Backend) *chat.Gateway {
		g, err := chat.New(chat.Config{Routing: r, Recorder: &memoryRecorder{}, Logger: logger, Backends: map[string]chat.Backend{chat.KindLocal: backend}})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = g.Close(context.Background()) })
		return g
	}
	framed, piped := gateway(server), gateway(pipeBackend{server})
	ctx := weft.WithPrincipal(context.Background(), weft.Principal{UserID: "u1", DefaultEntity: "bench"})

	stream := func(i int, pipe bool) error {
		body := fmt.Sprintf(`{"model":"tiny","messages":[{"role":"user","content":"stream %d"}],"max_tokens":%d,"temperature":0,"ignore_eos":true,"stream":true}`, i, tokens)
		g := framed
		if pipe {
			g = piped
		}
		c, err := g.Complete(ctx, "bench/chat", []byte(body))
		if err != nil {
			return err
		}
		return c.Relay(&discardResponse{h: http.Header{}})
	}
	rate := func(pipe bool) float64 {
		start := time.Now()
		var wg sync.WaitGroup
		for i := range streams {
			wg.Go(func() {
				if err := stream(i, pipe); err != nil {
					b.Error(err)
				}
			})
		}
		wg.Wait()
		return float64(streams*tokens) / time.Since(start).Seconds()
	}
	rate(false) // warm up
	var framedRates, pipedRates, ratios []float64
	for i := 0; b.Loop(); i++ {
		// Alternate which path goes first, so that neither always runs
		// right after the other's garbage.
		var f, p float64
		if i%2 == 0 {
			f, p = rate(false), rate(true)
		} else {
			p, f = rate(true), rate(false)
		}
		framedRates, pipedRates, ratios = append(framedRates, f), append(pipedRates, p), append(ratios, f/p)
	}
	b.ReportMetric(middle(framedRates), "median_tok/s")
	b.ReportMetric(middle(pipedRates), "pipe_median_tok/s")
	b.ReportMetric(middle(ratios), "x_pipe")
	b.ReportMetric(slices.Min(ratios), "min_x_pipe")
	b.ReportMetric(slices.Max(ratios), "max_x_pipe")
}

// pipeBackend answers as the server does, but writes a stream's frames as
// server-sent events into an io.Pipe from a goroutine, which the relay
// parses back line by line: the path a local answer took before frames.
type pipeBackend struct{ *Server }

func (p pipeBackend) Complete(ctx context.Context, t chat.Target, req *chat.CompletionRequest) (*chat.Answer, error) {
	a, err := p.Server.Complete(ctx, t, req)
	if err != nil || a.Frames == nil {
		return a, err
	}
	frames := a.Frames
	pr, pw := io.Pipe()
	go func() {
		defer frames.Close()
		err := frames.Stream(func(f json.RawMessage) error {
			event := append(append(append(make([]byte, 0, len(f)+8), "data: "...), f...), '\n', '\n')
			_, err := pw.Write(event)
			return err
		})
		if err == nil {
			_, err = pw.Write([]byte("data: [DONE]\n\n"))
		}
		pw.CloseWithError(err)
	}()
	a.Frames, a.Events = nil, pr
	return a, nil
}

// discardResponse is a client reading as fast as it is written to.
type discardResponse struct{ h http.Header }

func (w *discardResponse) Header() http.Header         { return w.h }
func (w *discardResponse) Write(b []byte) (int, error) { return len(b), nil }
func (w *discardResponse) WriteHeader(int)             {}
func (w *discardResponse) Flush()                      {}

// middle is the median, steadier than the mean on a shared machine.
func middle(xs []float64) float64 {
	sorted := slices.Clone(xs)
	slices.Sort(sorted)
	return sorted[len(sorted)/2]
}
