package chat_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/chat"
	"github.com/weftlabs/weft/chat/chatstore"
	"github.com/weftlabs/weft/internal/testdb"
	"github.com/weftlabs/weft/trace"
	"github.com/weftlabs/weft/transport/httpapi"
)

const benchCompletion = `{"id":"chatcmpl-b","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"Hello there, how can I help you today?"},"finish_reason":"stop","logprobs":null}],"usage":{"prompt_tokens":12,"completion_tokens":10,"total_tokens":22}}`

const benchRequest = `{"model":"bench","messages":[{"role":"system","content":"You are a helpful assistant."},{"role":"user","content":"Say hello."}],"temperature":0.7,"max_tokens":64}`

// benchStreamGap separates the first streamed event from the rest.
const benchStreamGap = 2 * time.Millisecond

// benchGateway is weft (HTTP handler, chat gateway, tracing into SQLite)
// in front of a fast mock upstream, both on loopback.
type benchGateway struct {
	upstream, gateway *httptest.Server
	key               string
	registry          *prometheus.Registry
	client            *http.Client
	service           *chat.Gateway
}

func newBenchGateway(b *testing.B) *benchGateway {
	b.Helper()
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if bytes.Contains(body, []byte(`"stream":true`)) {
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`+"\n\n")
			w.(http.Flusher).Flush()
			time.Sleep(benchStreamGap)
			_, _ = io.WriteString(w, `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, benchCompletion)
	}))
	b.Cleanup(upstream.Close)

	db := testdb.SQLite(b)
	identity, err := weft.NewIdentity(weft.IdentityConfig{DB: db})
	if err != nil {
		b.Fatal(err)
	}
	key, err := identity.Bootstrap(context.Background(), "bench")
	if err != nil {
		b.Fatal(err)
	}
	traces, err := trace.New(trace.Config{DB: db})
	if err != nil {
		b.Fatal(err)
	}
	routing, err := chat.ParseRouting([]byte(fmt.Sprintf("models: [{name: bench, upstreams: [{url: %s/v1, model: m}]}]", upstream.URL)), func(string) (string, bool) { return "", false })
	if err != nil {
		b.Fatal(err)
	}
	registry := prometheus.NewRegistry()
	logger := slog.New(slog.DiscardHandler)
	service, err := chat.New(chat.Config{Routing: routing, Recorder: chatstore.Recorder{Trace: traces}, Registerer: registry, Logger: logger})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = service.Close(context.Background()) })
	handler, err := httpapi.New(httpapi.Config{Identity: identity, Chat: service, Logger: logger, Registry: registry})
	if err != nil {
		b.Fatal(err)
	}
	gateway := httptest.NewServer(handler)
	b.Cleanup(gateway.Close)
	return &benchGateway{upstream: upstream, gateway: gateway, key: key, registry: registry, service: service,
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 512, MaxIdleConns: 1024, DisableCompression: true}}}
}

// do sends one completion request to the upstream directly (direct=true) or
// through weft and returns the time to the first body byte and in total.
func (g *benchGateway) do(direct, stream bool) (firstByte, total time.Duration, err error) {
	url, body := g.gateway.URL+"/v1/chat/completions", benchRequest
	if direct {
		url = g.upstream.URL + "/v1/chat/completions"
	}
	if stream {
		body = strings.Replace(benchRequest, `"max_tokens":64`, `"max_tokens":64,"stream":true`, 1)
	}
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+g.key)
	start := time.Now()
	res, err := g.client.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer res.Body.Close()
	one := make([]byte, 1)
	if _, err := io.ReadFull(res.Body, one); err != nil {
		return 0, 0, err
	}
	firstByte = time.Since(start)
	if _, err := io.Copy(io.Discard, res.Body); err != nil {
		return 0, 0, err
	}
	if res.StatusCode != http.StatusOK {
		return 0, 0, fmt.Errorf("status %d", res.StatusCode)
	}
	if stream != strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		return 0, 0, fmt.Errorf("content type %q for stream=%v", res.Header.Get("Content-Type"), stream)
	}
	return firstByte, time.Since(start), nil
}

func percentile(d []time.Duration, p float64) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[int(float64(len(s)-1)*p)]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// roundsOf runs b.N rounds of pairs sequential requests, alternating direct
// and through weft, and reports the median over rounds of each round's p50
// and p99 difference (measure picks first byte or total time).
func roundsOf(b *testing.B, stream bool, pairs int, measure func(firstByte, total time.Duration) time.Duration, unit string) {
	g := newBenchGateway(b)
	for range 200 { // warm connections and caches
		if _, _, err := g.do(false, stream); err != nil {
			b.Fatal(err)
		}
		if _, _, err := g.do(true, stream); err != nil {
			b.Fatal(err)
		}
	}
	var p50s, p99s []time.Duration
	b.ResetTimer()
	for range b.N {
		direct := make([]time.Duration, 0, pairs)
		via := make([]time.Duration, 0, pairs)
		for range pairs {
			fb, total, err := g.do(true, stream)
			if err != nil {
				b.Fatal(err)
			}
			direct = append(direct, measure(fb, total))
			fb, total, err = g.do(false, stream)
			if err != nil {
				b.Fatal(err)
			}
			via = append(via, measure(fb, total))
		}
		p50s = append(p50s, percentile(via, .5)-percentile(direct, .5))
		p99s = append(p99s, percentile(via, .99)-percentile(direct, .99))
	}
	b.StopTimer()
	b.ReportMetric(ms(percentile(p50s, .5)), unit+"-p50-overhead-ms")
	b.ReportMetric(ms(percentile(p99s, .5)), unit+"-p99-overhead-ms")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkOverhead: latency weft adds to a non-streamed completion, tracing
// on; sequential requests, median of round medians. Run with
// go test ./chat -run '^$' -bench Overhead -benchtime 7x
func BenchmarkOverhead(b *testing.B) {
	roundsOf(b, false, 500, func(_, total time.Duration) time.Duration { return total }, "total")
}

// BenchmarkStreamFirstByte: delay weft adds to the first streamed byte.
func BenchmarkStreamFirstByte(b *testing.B) {
	roundsOf(b, true, 300, func(firstByte, _ time.Duration) time.Duration { return firstByte }, "first-byte")
}

// BenchmarkThroughput: non-streamed completions per second through weft with
// tracing on, 64 concurrent clients; reports errors and untraced (dropped)
// calls. Run with go test ./chat -run '^$' -bench Throughput -benchtime 20000x
func BenchmarkThroughput(b *testing.B) {
	g := newBenchGateway(b)
	var errs atomic.Int64
	b.SetParallelism(32)
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, _, err := g.do(false, false); err != nil {
				errs.Add(1)
			}
		}
	})
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "req/s")
	b.ReportMetric(float64(errs.Load()), "errors")
	// Flush the trace queue, then count what was traced, dropped or failed.
	if err := g.service.Close(context.Background()); err != nil {
		b.Fatal(err)
	}
	mfs, _ := g.registry.Gather()
	for _, mf := range mfs {
		switch mf.GetName() {
		case "weft_chat_trace_dropped_total":
			b.ReportMetric(mf.GetMetric()[0].GetCounter().GetValue(), "untraced-dropped")
		case "weft_chat_trace_write_errors_total":
			b.ReportMetric(mf.GetMetric()[0].GetCounter().GetValue(), "untraced-write-errors")
		case "weft_chat_traced_calls_total":
			b.ReportMetric(mf.GetMetric()[0].GetCounter().GetValue(), "traced")
		}
	}
	b.ReportMetric(0, "ns/op")
}
