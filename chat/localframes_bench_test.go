package chat

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/llm/llmtest"
)

// Benchmark of the frames a local stream is relayed from against the SSE
// round trip it took before (go test -run '^$' -bench LocalFramesAgainstPipe
// ./chat): the tiny Qwen3 with its real tokenizer and chat template, 8
// concurrent streamed chat completions of 200 greedy tokens, relayed to a
// discarding client and traced. Rounds alternate the frames path (Relay
// reads the engine's chunks as JSON frames) and the pipe path (the same
// frames written as server-sent events into an io.Pipe by a goroutine and
// parsed back line by line, as the answer of a local model was relayed
// before); x_pipe is the median of the rounds' ratios of the two rates.
func BenchmarkLocalFramesAgainstPipe(b *testing.B) {
	const streams, tokens = 8, 200
	dir := llmtest.ModelDir{Dims: llmtest.TinyQwen3, Tokenizer: llmtest.TokenizerQwen3}.Write(b)
	r, err := ParseRouting([]byte(fmt.Sprintf("models: [{name: tiny, upstreams: [{kind: local, path: %q}]}]", dir)),
		func(string) (string, bool) { return "", false })
	if err != nil {
		b.Fatal(err)
	}
	s, err := New(Config{Routing: r, Recorder: &memoryRecorder{}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close(context.Background())
	ctx := weft.WithPrincipal(context.Background(), weft.Principal{UserID: "u1", DefaultEntity: "bench"})

	stream := func(i int, pipe bool) error {
		body := fmt.Sprintf(`{"model":"tiny","messages":[{"role":"user","content":"stream %d"}],"max_tokens":%d,"temperature":0,"ignore_eos":true,"stream":true}`, i, tokens)
		c, err := s.Complete(ctx, "bench/chat", []byte(body))
		if err != nil {
			return err
		}
		if c.frames == nil {
			return errors.New("no frames")
		}
		if pipe {
			frames := c.frames
			pr, pw := io.Pipe()
			go func() {
				defer frames.Close()
				for {
					f, err := frames.Next()
					if err != nil {
						if errors.Is(err, io.EOF) {
							_, err = pw.Write(doneFrame)
						}
						pw.CloseWithError(err)
						return
					}
					event := append(append(append(make([]byte, 0, len(f)+8), "data: "...), f...), '\n', '\n')
					if _, err := pw.Write(event); err != nil {
						return
					}
				}
			}()
			c.frames, c.stream, c.cancel = nil, pr, func() {}
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
	var framed, piped, ratios []float64
	for i := 0; b.Loop(); i++ {
		// Alternate which path goes first, so that neither always runs
		// right after the other's garbage.
		var f, p float64
		if i%2 == 0 {
			f, p = rate(false), rate(true)
		} else {
			p, f = rate(true), rate(false)
		}
		framed, piped, ratios = append(framed, f), append(piped, p), append(ratios, f/p)
	}
	b.ReportMetric(middle(framed), "median_tok/s")
	b.ReportMetric(middle(piped), "pipe_median_tok/s")
	b.ReportMetric(middle(ratios), "x_pipe")
	b.ReportMetric(slices.Min(ratios), "min_x_pipe")
	b.ReportMetric(slices.Max(ratios), "max_x_pipe")
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
