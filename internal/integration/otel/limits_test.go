package otel_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	rpcstatus "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/testdb"
	"github.com/weftlabs/weft/trace/otlp"
	"github.com/weftlabs/weft/transport/httpapi"
)

// oneSpan records one span with the given attributes under alice/limits.
func oneSpan(t *testing.T, attrs ...attribute.KeyValue) []sdktrace.ReadOnlySpan {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithResource(projectResource("alice", "limits")), sdktrace.WithSpanProcessor(rec))
	_, span := tp.Tracer("limits").Start(context.Background(), "big")
	span.SetAttributes(attrs...)
	span.End()
	return rec.Ended()
}

// Request limits: a 2 MiB attribute is stored (cut at the value limit, with
// the marker); a body over the limit as sent, or after gzip, is 413; a bad
// key is 401 and not retried; other media types and encodings are 415; an
// undecodable body (invalid UTF-8 among its faults) is 400 with a
// google.rpc.Status in the request's encoding.
func TestLimitsAndRefusals(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		var requests atomic.Int64
		count := func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				requests.Add(1)
				next.ServeHTTP(w, r)
			})
		}
		s := newServer(t, db, func(cfg *httpapi.Config) {
			cfg.MaxBodyBytes = 4 << 20
			cfg.OTLP.MaxDecompressedBytes = 6 << 20
			cfg.Middleware = append(cfg.Middleware, count)
		})
		ctx := context.Background()
		big := strings.Repeat("é", 1<<20) // 2 MiB of UTF-8
		if err := exporter(t, s, basic(s.aliceKey)).ExportSpans(ctx, oneSpan(t, attribute.String("input.value", big))); err != nil {
			t.Fatalf("2 MiB attribute: %v", err)
		}
		calls := s.calls(t, s.aliceKey, "alice/limits")
		if len(calls) != 1 {
			t.Fatalf("%d calls", len(calls))
		}
		for _, c := range calls {
			stored, _ := jsonPath(t, c.Inputs, "input").(string)
			want := strings.Repeat("é", otlp.DefaultMaxValueBytes/2) + otlp.TruncationMarker + "1048576 bytes]"
			if stored != want {
				t.Fatalf("stored input: %d bytes, ends %q", len(stored), stored[max(0, len(stored)-40):])
			}
		}

		// 5 MiB as sent: over MaxBodyBytes.
		huge := strings.Repeat("x", 5<<20)
		err := exporter(t, s, basic(s.aliceKey)).ExportSpans(ctx, oneSpan(t, attribute.String("input.value", huge)))
		if err == nil || !strings.Contains(err.Error(), "413") {
			t.Fatalf("over the body limit: %v", err)
		}
		// 7 MiB that gzip makes small: over the limit after decompression.
		err = exporter(t, s, basic(s.aliceKey), otlptracehttp.WithCompression(otlptracehttp.GzipCompression)).
			ExportSpans(ctx, oneSpan(t, attribute.String("input.value", strings.Repeat("x", 7<<20))))
		if err == nil || !strings.Contains(err.Error(), "413") || !strings.Contains(err.Error(), "exceeds") {
			t.Fatalf("over the decompressed limit: %v", err)
		}

		// A bad key: 401, one request although retries are on.
		before := requests.Load()
		err = exporter(t, s, basic("wrong-key"), otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: true})).ExportSpans(ctx, oneSpan(t))
		if err == nil || !strings.Contains(err.Error(), "401") || requests.Load()-before != 1 {
			t.Fatalf("bad key: %v after %d requests", err, requests.Load()-before)
		}

		auth := "Basic " + b64("api:"+s.aliceKey)
		for _, tc := range []struct {
			headers map[string]string
			body    []byte
			status  int
			json    bool
		}{
			{map[string]string{"Content-Type": "text/plain"}, []byte("hi"), http.StatusUnsupportedMediaType, false},
			{map[string]string{"Content-Type": "application/x-protobuf", "Content-Encoding": "br"}, []byte("hi"), http.StatusUnsupportedMediaType, false},
			{map[string]string{"Content-Type": "application/x-protobuf"}, []byte{0xff, 0xff, 0xff}, http.StatusBadRequest, false},
			{map[string]string{"Content-Type": "application/json"}, []byte(`{"resourceSpans": [`), http.StatusBadRequest, true},
			// The decoder's message quotes the body: its invalid UTF-8 must not
			// leave the answer empty.
			{map[string]string{"Content-Type": "application/json"}, []byte("{\"resourceSpans\": [\"\xff\xfe\"]}"), http.StatusBadRequest, true},
			{map[string]string{"Content-Type": "application/x-protobuf", "Content-Encoding": "gzip"}, []byte("not gzip"), http.StatusBadRequest, false},
		} {
			tc.headers["Authorization"] = auth
			res, b := s.rawPost(t, tc.headers, tc.body)
			if res.StatusCode != tc.status {
				t.Fatalf("%v: %d %s", tc.headers, res.StatusCode, b)
			}
			var st rpcstatus.Status
			if tc.json {
				err = protojson.Unmarshal(b, &st)
			} else {
				err = proto.Unmarshal(b, &st)
			}
			if err != nil || st.GetMessage() == "" || st.GetCode() != 3 {
				t.Fatalf("%v: status body %q: %v", tc.headers, b, err)
			}
		}
		// An empty request succeeds, answered in its encoding.
		res, b := s.rawPost(t, map[string]string{"Content-Type": "application/json", "Authorization": auth}, []byte(`{}`))
		if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "application/json" || jsonPath(t, b, "partialSuccess", "rejectedSpans") != nil {
			t.Fatalf("empty JSON request: %d %q %s", res.StatusCode, res.Header.Get("Content-Type"), b)
		}
		// deflate (zlib) is read like gzip.
		var zbuf bytes.Buffer
		zw := gzip.NewWriter(&zbuf)
		_, _ = zw.Write([]byte(`{}`))
		_ = zw.Close()
		res, b = s.rawPost(t, map[string]string{"Content-Type": "application/json", "Content-Encoding": "gzip", "Authorization": auth}, zbuf.Bytes())
		if res.StatusCode != http.StatusOK {
			t.Fatalf("gzip JSON: %d %s", res.StatusCode, b)
		}
	})
}

// Under overload the route answers 429 (the key's rate limit, or its exports
// in progress) with Retry-After, which exporters retry. A body still arriving
// holds a place of its own key only, never one of the server's.
func TestOverload(t *testing.T) {
	t.Parallel()
	db := testdb.SQLite(t)
	s := newServer(t, db, func(cfg *httpapi.Config) {
		cfg.RateLimit = httpapi.RateLimit{PerSecond: 0.001, Burst: 1}
	})
	auth := map[string]string{"Content-Type": "application/json", "Authorization": "Basic " + b64("api:"+s.aliceKey)}
	if res, b := s.rawPost(t, auth, []byte(`{}`)); res.StatusCode != http.StatusOK {
		t.Fatalf("first: %d %s", res.StatusCode, b)
	}
	res, b := s.rawPost(t, auth, []byte(`{}`))
	if res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Retry-After") == "" {
		t.Fatalf("rate limited: %d %q %s", res.StatusCode, res.Header.Get("Retry-After"), b)
	}

	s = newServer(t, testdb.SQLite(t), func(cfg *httpapi.Config) { cfg.OTLP.MaxInFlight, cfg.OTLP.MaxInFlightPerKey = 1, 1 })
	auth["Authorization"] = "Basic " + b64("api:"+s.aliceKey)
	// A request whose body never ends holds its key's one place.
	pr, pw := io.Pipe()
	req, _ := http.NewRequest(http.MethodPost, s.URL+"/otel/v1/traces", pr)
	for k, v := range auth {
		req.Header.Set(k, v)
	}
	held := make(chan int, 1)
	go func() {
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			held <- 0
			return
		}
		res.Body.Close()
		held <- res.StatusCode
	}()
	_, _ = pw.Write([]byte(`{`))
	var got *http.Response
	// Until the held request has reached the server, the probes pass: wait
	// for it by time, not by a count of probes, which a fast machine
	// finishes before the held request's goroutine has sent its headers.
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
		res, _ := s.rawPost(t, auth, []byte(`{}`))
		if res.StatusCode != http.StatusOK {
			got = res
			break
		}
	}
	if got == nil || got.StatusCode != http.StatusTooManyRequests || got.Header.Get("Retry-After") != "1" {
		t.Fatalf("while one export is in flight: %+v", got)
	}
	// Another key's export takes the server's one place meanwhile.
	other := map[string]string{"Content-Type": "application/json", "Authorization": "Basic " + b64("api:"+s.bobKey)}
	if res, b := s.rawPost(t, other, []byte(`{}`)); res.StatusCode != http.StatusOK {
		t.Fatalf("another key while alice's body is arriving: %d %s", res.StatusCode, b)
	}
	_, _ = pw.Write([]byte(`}`))
	_ = pw.Close()
	if status := <-held; status != http.StatusOK {
		t.Fatalf("the held request: %d", status)
	}
}

// Isolation: a key writes only where its user may; a refused project fails
// the whole request and stores nothing; reads stay scoped; the key may come
// as Basic, Bearer or wandb-api-key.
func TestIsolation(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		s := newServer(t, db, nil)
		ctx := context.Background()
		spans := func(entity, project string) []sdktrace.ReadOnlySpan {
			rec := tracetest.NewSpanRecorder()
			tp := sdktrace.NewTracerProvider(sdktrace.WithResource(projectResource(entity, project)), sdktrace.WithSpanProcessor(rec))
			_, span := tp.Tracer("iso").Start(ctx, entity+"-span")
			span.End()
			return rec.Ended()
		}
		for _, tc := range []struct {
			name    string
			headers map[string]string
			entity  string
			ok      bool
		}{
			{"alice basic own", basic(s.aliceKey), "alice", true},
			{"alice bearer own", map[string]string{"Authorization": "Bearer " + s.aliceKey}, "alice", true},
			{"alice wandb-api-key own", map[string]string{"wandb-api-key": s.aliceKey}, "alice", true},
			{"bob own", basic(s.bobKey), "bob", true},
			{"alice into bob", basic(s.aliceKey), "bob", false},
			{"bob into alice", map[string]string{"wandb-api-key": s.bobKey}, "alice", false},
		} {
			project := "iso-" + strings.ReplaceAll(tc.name, " ", "-")
			err := exporter(t, s, tc.headers).ExportSpans(ctx, spans(tc.entity, project))
			if tc.ok != (err == nil) || (!tc.ok && !strings.Contains(err.Error(), "403")) {
				t.Fatalf("%s: %v", tc.name, err)
			}
			ownerKey := s.aliceKey
			if tc.entity == "bob" {
				ownerKey = s.bobKey
			}
			calls := s.calls(t, ownerKey, tc.entity+"/"+project)
			if want := map[bool]int{true: 1, false: 0}[tc.ok]; len(calls) != want {
				t.Fatalf("%s: %d calls stored", tc.name, len(calls))
			}
		}
		// A mixed request with one refused project stores nothing at all.
		mixed := append(spans("alice", "mixed"), spans("bob", "mixed")...)
		if err := exporter(t, s, basic(s.aliceKey)).ExportSpans(ctx, mixed); err == nil || !strings.Contains(err.Error(), "403") {
			t.Fatalf("mixed: %v", err)
		}
		if calls := s.calls(t, s.aliceKey, "alice/mixed"); len(calls) != 0 {
			t.Fatalf("mixed request stored %d calls", len(calls))
		}
		// Reads stay scoped: bob cannot read alice's project.
		if status, b := s.post(t, s.bobKey, "/calls/stream_query", map[string]any{"project_id": "alice/iso-alice-basic-own"}); status != http.StatusForbidden {
			t.Fatalf("bob reads alice: %d %s", status, b)
		}
	})
}
