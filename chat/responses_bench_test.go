package chat_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/chat"
	"github.com/weftlabs/weft/chat/chatstore"
	"github.com/weftlabs/weft/chat/responses"
	"github.com/weftlabs/weft/internal/procstat"
	"github.com/weftlabs/weft/internal/testdb"
	"github.com/weftlabs/weft/trace"
	"github.com/weftlabs/weft/transport/httpapi"
)

// benchTokens is the length of the generation both streams carry.
const benchTokens = 256

// BenchmarkResponsesStreamOverhead: the same generation (256 content
// deltas of a word each, flushed one by one, then usage) streamed through
// weft end to end (HTTP handler, gateway, tracing into SQLite) as a chat
// completion and as a Responses stream, alternating in every iteration.
// chat_tok/s and responses_tok/s are tokens per second of each over the
// whole run; x_chat is chat's rate over the Responses one (the goal
// is ≤ 1.05), and x_chat_median the median of the same ratio taken over
// each iteration's pair of streams, which run back to back: a burst of
// other work on the machine moves it less than it moves the totals.
// x_chat_cpu is the same ratio of the CPU time the process (upstream,
// gateway, client) spent during each kind of stream, which other processes
// on a busy machine do not inflate. Each stream starts once the call of the
// one before is written to the trace (signalledRecorder). "instant" streams the deltas as fast as the upstream can
// write them and stores no response (store false): the translation's
// cost at its most visible; "paced_2ms" spaces the deltas 2 ms apart, as
// a model decoding 500 tokens a second would, and stores the response as
// the API does by default. Run with
// go test ./chat -run '^$' -bench ResponsesStreamOverhead -benchtime 20x
func BenchmarkResponsesStreamOverhead(b *testing.B) {
	for _, c := range []struct {
		name  string
		gap   time.Duration
		store bool
	}{{"instant", 0, false}, {"paced_2ms", 2 * time.Millisecond, true}} {
		b.Run(c.name, func(b *testing.B) {
			g := newStreamBench(b, c.gap)
			responseBody := fmt.Sprintf(`{"model":"bench","input":"Say hello.","stream":true,"store":%v}`, c.store)
			chatBody := `{"model":"bench","messages":[{"role":"user","content":"Say hello."}],"stream":true}`
			var chatTime, respTime, chatCPU, respCPU time.Duration
			var pairs []float64
			for b.Loop() {
				c, cCPU := g.stream(b, "/v1/chat/completions", chatBody, "[DONE]")
				r, rCPU := g.stream(b, "/v1/responses", responseBody, "response.completed")
				chatTime, respTime = chatTime+c, respTime+r
				chatCPU, respCPU = chatCPU+cCPU, respCPU+rCPU
				pairs = append(pairs, r.Seconds()/c.Seconds())
			}
			tokens := float64(benchTokens * b.N)
			b.ReportMetric(tokens/chatTime.Seconds(), "chat_tok/s")
			b.ReportMetric(tokens/respTime.Seconds(), "responses_tok/s")
			b.ReportMetric(respTime.Seconds()/chatTime.Seconds(), "x_chat")
			slices.Sort(pairs)
			b.ReportMetric(pairs[len(pairs)/2], "x_chat_median")
			if chatCPU > 0 {
				b.ReportMetric(respCPU.Seconds()/chatCPU.Seconds(), "x_chat_cpu")
			}
			b.ReportMetric(0, "ns/op")
		})
	}
}

type streamBench struct {
	url, key string
	client   *http.Client
	recorded chan struct{} // a call is written to the trace
}

// signalledRecorder tells when each call is written, so that a stream can
// start once the call of the one before is in the trace: neither's time
// then carries the other's trace write, which for a chat stream (its
// chunks joined into one completion) is the heavier.
type signalledRecorder struct {
	chat.CallRecorder
	recorded chan<- struct{}
}

func (r signalledRecorder) RecordCalls(ctx context.Context, calls []chat.Call) error {
	err := r.CallRecorder.RecordCalls(ctx, calls)
	for range calls {
		r.recorded <- struct{}{}
	}
	return err
}

// newStreamBench is weft with chat and the Responses API in front of an
// upstream streaming benchTokens deltas gap apart.
func newStreamBench(b *testing.B, gap time.Duration) *streamBench {
	b.Helper()
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		flush := w.(http.Flusher).Flush
		_, _ = io.WriteString(w, `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`+"\n\n")
		flush()
		for i := range benchTokens {
			if gap > 0 {
				time.Sleep(gap)
			}
			fmt.Fprintf(w, `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":" word%d"},"finish_reason":null}]}`+"\n\n", i)
			flush()
		}
		_, _ = io.WriteString(w, `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`+"\n\n"+
			`data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":256,"total_tokens":261}}`+"\n\ndata: [DONE]\n\n")
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
	routing, err := chat.ParseRouting([]byte(fmt.Sprintf("models: [{name: bench, upstreams: [{url: %s/v1, model: m}]}]", upstream.URL)), nil)
	if err != nil {
		b.Fatal(err)
	}
	registry := prometheus.NewRegistry()
	logger := slog.New(slog.DiscardHandler)
	recorded := make(chan struct{}, 16)
	service, err := chat.New(chat.Config{Routing: routing, Recorder: signalledRecorder{chatstore.Recorder{Trace: traces}, recorded},
		Registerer: registry, Logger: logger})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = service.Close(context.Background()) })
	handler, err := httpapi.New(httpapi.Config{Identity: identity, Chat: service, Responses: responses.New(responses.Config{Chat: service, DB: db}),
		Logger: logger, Registry: registry})
	if err != nil {
		b.Fatal(err)
	}
	gateway := httptest.NewServer(handler)
	b.Cleanup(gateway.Close)
	return &streamBench{url: gateway.URL, key: key, client: &http.Client{Transport: &http.Transport{DisableCompression: true}}, recorded: recorded}
}

// stream sends one streamed request and reads its events to the end, which
// must hold last; it returns the time that took and the CPU time the
// process spent meanwhile, once the stream's call is written to the trace.
func (g *streamBench) stream(b *testing.B, path, body, last string) (elapsed, cpu time.Duration) {
	req, _ := http.NewRequest(http.MethodPost, g.url+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+g.key)
	cpu, start := procstat.CPUTime(), time.Now()
	res, err := g.client.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	elapsed, cpu = time.Since(start), procstat.CPUTime()-cpu
	if err != nil || res.StatusCode != http.StatusOK || !strings.Contains(string(data), last) {
		b.Fatalf("%s: %d %v %.300s", path, res.StatusCode, err, data)
	}
	<-g.recorded // the stream's one call
	return elapsed, cpu
}
