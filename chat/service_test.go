package chat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/weftlabs/weft"
)

// memoryRecorder keeps recorded calls.
type memoryRecorder struct {
	mu    sync.Mutex
	calls []Call
}

func (m *memoryRecorder) RecordCalls(_ context.Context, calls []Call) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls = append(m.calls, calls...)
	return nil
}

// upstream is a test model server that records the bodies it receives
// and their X-Request-Id headers.
type upstream struct {
	*httptest.Server
	hits       atomic.Int64
	bodies     chan map[string]any
	requestIDs chan string
}

func newUpstream(t *testing.T, handle func(w http.ResponseWriter, body map[string]any)) *upstream {
	t.Helper()
	u := &upstream{bodies: make(chan map[string]any, 16), requestIDs: make(chan string, 16)}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.hits.Add(1)
		select {
		case u.requestIDs <- r.Header.Get(RequestIDHeader):
		default:
		}
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		select {
		case u.bodies <- body:
		default:
		}
		handle(w, body)
	}))
	t.Cleanup(u.Close)
	return u
}

const completionJSON = `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"up","choices":[{"index":0,"message":{"role":"assistant","content":"hello"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}`

func answer(w http.ResponseWriter, _ map[string]any) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, completionJSON)
}

func newTestService(t *testing.T, routing string, rec CallRecorder) *Gateway {
	t.Helper()
	r, err := ParseRouting([]byte(routing), func(name string) (string, bool) { return "key-" + name, true })
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Routing: r, Recorder: rec, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	return s
}

func complete(t *testing.T, s *Gateway, body string) (*httptest.ResponseRecorder, error) {
	t.Helper()
	ctx := weft.WithPrincipal(context.Background(), weft.Principal{UserID: "u1", DefaultEntity: "alice"})
	c, err := s.Complete(ctx, "alice/chat", []byte(body))
	if err != nil {
		return nil, err
	}
	rec := httptest.NewRecorder()
	_ = c.Relay(rec)
	return rec, nil
}

// A failing upstream (500) is retried on the route's fallback; the client
// sees the fallback's answer and the upstream gets the request with unknown
// fields intact and the model renamed.
func TestFallbackOnServerError(t *testing.T) {
	t.Parallel()
	broken := newUpstream(t, func(w http.ResponseWriter, _ map[string]any) { http.Error(w, `{"error":"boom"}`, 500) })
	good := newUpstream(t, answer)
	s := newTestService(t, fmt.Sprintf(`
models:
  - name: primary
    retries: 1
    retry_backoff: 1ms
    upstreams: [{url: %s/v1, model: up-primary}]
    fallbacks: [backup]
  - name: backup
    upstreams: [{url: %s/v1, model: up-backup, api_key_env: K}]
`, broken.URL, good.URL), nil)
	rec, err := complete(t, s, `{"model":"primary","messages":[{"role":"user","content":"hi"}],"chat_template_kwargs":{"enable_thinking":false},"my_extension":[1,2]}`)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Code != 200 || rec.Body.String() != completionJSON {
		t.Fatalf("got %d %s", rec.Code, rec.Body)
	}
	if broken.hits.Load() != 2 {
		t.Errorf("primary attempts = %d, want 2 (1 + 1 retry)", broken.hits.Load())
	}
	got := <-good.bodies
	if got["model"] != "up-backup" || got["my_extension"] == nil || got["chat_template_kwargs"] == nil {
		t.Errorf("forwarded body = %v", got)
	}
}

// The client's X-Request-Id reaches the upstream, which names the
// completion by it; an id that is not a safe header value is dropped.
func TestRequestIDForwarded(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, answer)
	s := newTestService(t, fmt.Sprintf("models:\n  - name: m\n    upstreams: [{url: %s/v1}]\n", up.URL), nil)
	base := weft.WithPrincipal(context.Background(), weft.Principal{UserID: "u1", DefaultEntity: "alice"})
	for id, want := range map[string]string{"req-42": "req-42", "": "", "two words": "", strings.Repeat("x", 129): ""} {
		c, err := s.Complete(WithRequestID(base, id), "alice/chat", []byte(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		_ = c.Relay(httptest.NewRecorder())
		if got := <-up.requestIDs; got != want {
			t.Errorf("X-Request-Id %q reached the upstream as %q, want %q", id, got, want)
		}
	}
}

// When every upstream fails, the last upstream error is relayed as it came.
func TestAllUpstreamsFail(t *testing.T) {
	t.Parallel()
	limited := newUpstream(t, func(w http.ResponseWriter, _ map[string]any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(429)
		_, _ = io.WriteString(w, `{"error":{"message":"slow down","type":"RateLimitError","param":null,"code":429}}`)
	})
	s := newTestService(t, fmt.Sprintf("models: [{name: m, upstreams: [{url: %s/v1}]}]", limited.URL), nil)
	rec, err := complete(t, s, `{"model":"m","messages":[]}`)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Code != 429 || !strings.Contains(rec.Body.String(), "slow down") {
		t.Fatalf("got %d %s", rec.Code, rec.Body)
	}

	// Nothing listening: a 502 error.
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	s = newTestService(t, fmt.Sprintf("models: [{name: m, upstreams: [{url: %s/v1}]}]", dead.URL), nil)
	if _, err := complete(t, s, `{"model":"m","messages":[]}`); !errors.Is(err, ErrUpstreamUnavailable) || !errors.Is(err, weft.ErrUpstream) {
		t.Fatalf("want ErrUpstreamUnavailable, got %v", err)
	}
}

// An unknown model is a 404 naming param "model"; an empty one means the
// first route.
func TestModelResolution(t *testing.T) {
	t.Parallel()
	good := newUpstream(t, answer)
	s := newTestService(t, fmt.Sprintf("models: [{name: m, upstreams: [{url: %s/v1}]}]", good.URL), nil)
	_, err := complete(t, s, `{"model":"nope","messages":[]}`)
	if !errors.Is(err, ErrModelNotFound) || err.Error() != "The model `nope` does not exist." || weft.ErrorFields(err)["param"] != "model" {
		t.Fatalf("got %v", err)
	}
	if rec, err := complete(t, s, `{"messages":[]}`); err != nil || rec.Code != 200 {
		t.Fatalf("empty model: %v", err)
	}
}

// OpenAI upstreams get structured_outputs.json as response_format
// json_schema and defaults of vLLM-only fields dropped; a vLLM-only field
// without a translation is a 400.
func TestOpenAITranslation(t *testing.T) {
	t.Parallel()
	good := newUpstream(t, answer)
	s := newTestService(t, fmt.Sprintf("models: [{name: gpt, upstreams: [{url: %s/v1, kind: openai, model: gpt-4o}]}]", good.URL), nil)
	if _, err := complete(t, s, `{"model":"gpt","messages":[],"structured_outputs":{"json":{"type":"object"}},"skip_special_tokens":true,"seed":1}`); err != nil {
		t.Fatal(err)
	}
	got := <-good.bodies
	rf, _ := got["response_format"].(map[string]any)
	schema, _ := rf["json_schema"].(map[string]any)
	if rf["type"] != "json_schema" || schema["schema"] == nil || got["structured_outputs"] != nil || got["skip_special_tokens"] != nil || got["seed"] == nil {
		t.Fatalf("forwarded %v", got)
	}
	_, err := complete(t, s, `{"model":"gpt","messages":[],"structured_outputs":{"regex":"a+"}}`)
	if !errors.Is(err, ErrUnsupportedField) || weft.ErrorFields(err)["param"] != "structured_outputs.regex" {
		t.Fatalf("regex: %v", err)
	}
	_, err = complete(t, s, `{"model":"gpt","messages":[],"top_k":5}`)
	if !errors.Is(err, ErrUnsupportedField) || weft.ErrorFields(err)["param"] != "top_k" {
		t.Fatalf("top_k: %v", err)
	}
	// A vLLM upstream receives engine_xargs as vllm_xargs.
	vllm := newUpstream(t, answer)
	s = newTestService(t, fmt.Sprintf("models: [{name: v, upstreams: [{url: %s/v1}]}]", vllm.URL), nil)
	if _, err := complete(t, s, `{"model":"v","messages":[],"engine_xargs":{"a":1}}`); err != nil {
		t.Fatal(err)
	}
	if got := <-vllm.bodies; got["vllm_xargs"] == nil || got["engine_xargs"] != nil {
		t.Fatalf("xargs forwarded as %v", got)
	}
}

// Weights spread requests over a route's upstreams.
func TestWeights(t *testing.T) {
	t.Parallel()
	heavy, light := newUpstream(t, answer), newUpstream(t, answer)
	s := newTestService(t, fmt.Sprintf("models: [{name: m, upstreams: [{url: %s/v1, weight: 9}, {url: %s/v1, weight: 1}]}]", heavy.URL, light.URL), nil)
	for range 200 {
		if _, err := complete(t, s, `{"model":"m","messages":[]}`); err != nil {
			t.Fatal(err)
		}
	}
	if h, l := heavy.hits.Load(), light.hits.Load(); h < 3*l || l == 0 {
		t.Fatalf("heavy %d, light %d", h, l)
	}
}

const streamBody = "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"up\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"logprobs\":null,\"finish_reason\":null}]}\n\n" +
	"data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"up\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"},\"finish_reason\":null}]}\n\n" +
	"data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"up\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"lo\"},\"finish_reason\":\"stop\"}]}\n\n" +
	"data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"up\",\"choices\":[],\"usage\":{\"prompt_tokens\":4,\"completion_tokens\":2,\"total_tokens\":6}}\n\n"

// Streams are relayed byte for byte, end in [DONE] even when the upstream
// forgets it or breaks off, and are traced assembled, with the upstream's
// usage only.
func TestStreamRelayAndTrace(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, upstream, wantTail, exception string
		usage                               bool
	}{
		{"complete", streamBody + "data: [DONE]\n\n", "data: [DONE]\n\n", "", true},
		{"no done", streamBody, "data: [DONE]\n\n", "upstream stream ended without [DONE]", true},
		{"no usage", streamBody[:strings.LastIndex(streamBody, "data:")] + "data: [DONE]\n\n", "data: [DONE]\n\n", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			up := newUpstream(t, func(w http.ResponseWriter, _ map[string]any) {
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = io.WriteString(w, tc.upstream)
			})
			rec := &memoryRecorder{}
			s := newTestService(t, fmt.Sprintf("models: [{name: m, upstreams: [{url: %s/v1}]}]", up.URL), rec)
			res, err := complete(t, s, `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`)
			if err != nil {
				t.Fatal(err)
			}
			body := res.Body.String()
			if res.Header().Get("Content-Type") != "text/event-stream" || !strings.HasPrefix(body, streamBody[:100]) || !strings.HasSuffix(body, tc.wantTail) || strings.Count(body, "[DONE]") != 1 {
				t.Fatalf("relayed:\n%s", body)
			}
			if err := s.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
			if len(rec.calls) != 1 {
				t.Fatalf("%d calls recorded", len(rec.calls))
			}
			call := rec.calls[0]
			if call.OpName != OpChatCompletion || call.ProjectID != "alice/chat" || call.UserID != "u1" || call.Exception != tc.exception {
				t.Errorf("call = %+v", call)
			}
			var out struct {
				Choices []struct {
					Message      struct{ Role, Content string }
					FinishReason string `json:"finish_reason"`
				}
			}
			_ = json.Unmarshal(call.Output, &out)
			if len(out.Choices) != 1 || out.Choices[0].Message.Content != "Hello" || out.Choices[0].FinishReason != "stop" {
				t.Errorf("assembled output %s", call.Output)
			}
			wantSummary := `{"usage":{"m":{"completion_tokens":2,"prompt_tokens":4,"requests":1,"total_tokens":6}}}`
			if !tc.usage {
				wantSummary = `{}`
			}
			if string(call.Summary) != wantSummary {
				t.Errorf("summary %s, want %s", call.Summary, wantSummary)
			}
		})
	}
}

// A client that goes away mid-stream cancels the upstream request.
func TestStreamClientDisconnect(t *testing.T) {
	t.Parallel()
	cancelled := make(chan struct{})
	up := newUpstream(t, func(w http.ResponseWriter, _ map[string]any) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, streamBody[:strings.Index(streamBody, "\n\n")+2])
		w.(http.Flusher).Flush()
		select {
		case <-w.(interface{ Context() context.Context }).Context().Done():
		case <-time.After(10 * time.Second):
		}
	})
	// httptest's ResponseWriter has no request context: use the request's.
	up.Config.Handler = wrapContext(up.Config.Handler, cancelled)
	s := newTestService(t, fmt.Sprintf("models: [{name: m, upstreams: [{url: %s/v1}]}]", up.URL), nil)
	ctx, cancel := context.WithCancel(context.Background())
	c, err := s.Complete(ctx, "alice/chat", []byte(`{"model":"m","stream":true,"messages":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	go func() { done <- c.Relay(httptest.NewRecorder()) }()
	cancel()
	select {
	case <-cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("upstream request not cancelled")
	}
	if err := <-done; err == nil {
		t.Fatal("relay reported a complete stream")
	}
}

// wrapContext gives the handler a writer exposing the request context and
// closes cancelled when that context ends.
func wrapContext(next http.Handler, cancelled chan struct{}) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(contextWriter{w, r.Context()}, r)
		<-r.Context().Done()
		close(cancelled)
	})
}

type contextWriter struct {
	http.ResponseWriter
	ctx context.Context
}

func (c contextWriter) Context() context.Context { return c.ctx }
func (c contextWriter) Flush()                   { c.ResponseWriter.(http.Flusher).Flush() }

// A trained-model name is resolved to a LoRA adapter, loaded once into the
// LoRA upstream and then addressed by the adapter's name. A model with no
// weights yet is served as its base model, unless that base names a trained
// model (which the upstream would serve, to whoever registered the model).
func TestLoRAAdapters(t *testing.T) {
	t.Parallel()
	var loads atomic.Int64
	lora := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		switch r.URL.Path {
		case "/v1/load_lora_adapter":
			loads.Add(1)
			if body["lora_name"] != "run-1" || body["lora_path"] != "/adapters/run-1" {
				http.Error(w, "bad load", 400)
			}
		case "/v1/chat/completions":
			if body["model"] != "run-1" && body["model"] != "base" {
				http.Error(w, "bad model", 400)
				return
			}
			answer(w, body)
		}
	}))
	t.Cleanup(lora.Close)
	r, err := ParseRouting([]byte(fmt.Sprintf("models: []\nlora: {url: %s/v1}", lora.URL)), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	metrics := prometheus.NewRegistry()
	s, err := New(Config{Routing: r, Registerer: metrics, Adapters: resolverFunc(func(_ context.Context, model string) (LoRAAdapter, bool, error) {
		switch model {
		case "alice/proj/run-1:step3":
			return LoRAAdapter{Name: "run-1", Path: "/adapters/run-1", BaseModel: "base"}, true, nil
		case "bob/proj/fresh":
			return LoRAAdapter{Name: "bob/proj/fresh:step0", BaseModel: "base"}, true, nil
		case "bob/proj/over-alice":
			return LoRAAdapter{Name: "bob/proj/over-alice:step0", BaseModel: "alice/proj/run-1:step3"}, true, nil
		}
		return LoRAAdapter{}, false, nil
	})})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		rec, err := complete(t, s, `{"model":"alice/proj/run-1:step3","messages":[]}`)
		if err != nil || rec.Code != 200 {
			t.Fatalf("%v %v", err, rec)
		}
	}
	if loads.Load() != 1 {
		t.Fatalf("adapter loaded %d times", loads.Load())
	}
	if _, err := complete(t, s, `{"model":"alice/proj/other","messages":[]}`); !errors.Is(err, ErrModelNotFound) {
		t.Fatalf("unknown adapter: %v", err)
	}
	if rec, err := complete(t, s, `{"model":"bob/proj/fresh","messages":[]}`); err != nil || rec.Code != 200 {
		t.Fatalf("untrained model: %v %v", err, rec)
	}
	if _, err := complete(t, s, `{"model":"bob/proj/over-alice","messages":[]}`); !errors.Is(err, ErrModelNotFound) {
		t.Fatalf("an untrained model over a trained one: %v", err)
	}
	// Metrics, which anyone may read, count them under the LoRA upstream.
	families, err := metrics.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "model" && l.GetValue() != loraMetricsLabel {
					t.Errorf("%s counts %s", f.GetName(), l.GetValue())
				}
			}
		}
	}
}

type resolverFunc func(context.Context, string) (LoRAAdapter, bool, error)

func (f resolverFunc) ResolveAdapter(ctx context.Context, model string) (LoRAAdapter, bool, error) {
	return f(ctx, model)
}

// Bad routing files are refused with a reason.
func TestParseRoutingErrors(t *testing.T) {
	t.Parallel()
	env := func(name string) (string, bool) { return "", name == "SET" }
	for _, tc := range []struct{ text, want string }{
		{`models: [{name: a, upstreams: [{url: "ftp://x"}]}]`, "must be an http(s) URL"},
		{`models: [{name: a, upstreams: []}]`, "at least one upstream"},
		{`models: [{name: a, upstreams: [{url: "http://x", api_key_env: UNSET}]}]`, "api_key_env UNSET is not set"},
		{`models: [{name: a, fallbacks: [b], upstreams: [{url: "http://x"}]}]`, `fallback "b"`},
		{`models: [{name: a, upstreams: [{url: "http://x", kind: grpc}]}]`, "kind"},
		{`models: [{name: a, colour: red, upstreams: [{url: "http://x"}]}]`, "colour"},
		{`{"models": [{"name": "a", "timeout": "5s", "upstreams": [{"url": "http://x", "api_key_env": "SET"}]}]}`, ""},
	} {
		r, err := ParseRouting([]byte(tc.text), env)
		if tc.want == "" {
			if err != nil || r.Models[0].Timeout != 5*time.Second || r.Models[0].Upstreams[0].Weight != 1 {
				t.Errorf("%s: %v %+v", tc.text, err, r)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.text, err, tc.want)
		}
	}
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, io.ErrUnexpectedEOF }

// An upstream that breaks off mid-stream yields one error event, then [DONE].
func TestRelayStreamUpstreamBreaks(t *testing.T) {
	t.Parallel()
	first := streamBody[:strings.Index(streamBody, "\n\n")+2]
	var out strings.Builder
	frames, failure := relayStream(&out, func() error { return nil }, io.MultiReader(strings.NewReader(first+"data: {\"partial"), failingReader{}), true)
	if len(frames) != 2 || !strings.Contains(failure, "unexpected EOF") {
		t.Fatalf("frames %d, failure %q", len(frames), failure)
	}
	rest := strings.TrimPrefix(out.String(), first+"data: {\"partial\n\n")
	var event struct {
		Error struct {
			Message string
			Code    int
		}
	}
	line, tail, _ := strings.Cut(rest, "\n\n")
	if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &event); err != nil || event.Error.Code != 500 || tail != "data: [DONE]\n\n" {
		t.Fatalf("relayed %q", out.String())
	}
}

// A slow upstream times out and the route's fallback answers; the failed
// attempt never reaches the client.
func TestTimeoutFallsBack(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	slow := newUpstream(t, func(w http.ResponseWriter, body map[string]any) {
		<-release
	})
	t.Cleanup(func() { close(release) }) // runs before the server's Close
	good := newUpstream(t, answer)
	s := newTestService(t, fmt.Sprintf(`
models:
  - {name: slow, timeout: 50ms, fallbacks: [good], upstreams: [{url: %s/v1}]}
  - {name: good, upstreams: [{url: %s/v1}]}
`, slow.URL, good.URL), nil)
	rec, err := complete(t, s, `{"model":"slow","messages":[]}`)
	if err != nil || rec.Code != 200 || good.hits.Load() != 1 {
		t.Fatalf("%v %v, fallback hits %d", err, rec, good.hits.Load())
	}
}

// Failed completions are traced with the failure as exception; the caller's
// project is the OpenAI-Project header or the default project.
func TestFailureTracedAndProject(t *testing.T) {
	t.Parallel()
	broken := newUpstream(t, func(w http.ResponseWriter, _ map[string]any) { http.Error(w, `{"error":"boom"}`, 503) })
	rec := &memoryRecorder{}
	s := newTestService(t, fmt.Sprintf("models: [{name: m, upstreams: [{url: %s/v1}]}]", broken.URL), rec)
	res, err := complete(t, s, `{"model":"m","messages":[]}`)
	if err != nil || res.Code != 503 {
		t.Fatalf("%v %v", err, res)
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(rec.calls) != 1 || !strings.Contains(rec.calls[0].Exception, "upstream answered 503") || string(rec.calls[0].Summary) != "{}" {
		t.Fatalf("calls %+v", rec.calls)
	}
	p := weft.Principal{DefaultEntity: "alice"}
	for header, want := range map[string]string{"": "alice/chat", "team/proj": "team/proj", "proj": "alice/proj"} {
		if got := s.ProjectFor(p, header); got != want {
			t.Errorf("ProjectFor(%q) = %q, want %q", header, got, want)
		}
	}
}

// heldRecorder is a memoryRecorder whose writes wait until its gate opens,
// so that a test acts before the trace writer does: a copy the writer made
// on its own would be too late, as it is for a request whose buffer was
// reused.
type heldRecorder struct {
	gate chan struct{}
	memoryRecorder
}

func (h *heldRecorder) RecordCalls(ctx context.Context, calls []Call) error {
	<-h.gate
	return h.memoryRecorder.RecordCalls(ctx, calls)
}

// A call's inputs are the request's even when the caller's buffer holds
// another by the time the call is written: the HTTP layer reuses a body's
// buffer once its handler returns, and the trace writer runs later.
func TestTracedInputsOutliveTheRequestBuffer(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, answer)
	const request = `{"model":"m","messages":[{"role":"user","content":"hi"}]}`
	const asked = `{"model":"m","input":"hi"}`
	for _, how := range []string{"chat", "responses"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			rec := &heldRecorder{gate: make(chan struct{})}
			s := newTestService(t, fmt.Sprintf("models: [{name: m, upstreams: [{url: %s/v1}]}]", up.URL), rec)
			raw, inputs := []byte(request), []byte(asked)
			var c *Completion
			var err error
			if how == "chat" {
				inputs = raw
				c, err = s.Complete(context.Background(), "e/p", raw)
			} else {
				c, err = s.CompleteAs(context.Background(), "e/p", raw, TraceAs{Endpoint: EndpointResponses, OpName: "responses.create", Inputs: inputs})
			}
			if err != nil {
				t.Fatal(err)
			}
			_ = c.Relay(httptest.NewRecorder())
			c.EndTrace(nil, "")
			want := string(inputs)
			copy(raw, strings.Repeat("x", len(raw)))
			copy(inputs, strings.Repeat("y", len(inputs)))
			close(rec.gate)
			if err := s.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
			if len(rec.calls) != 1 {
				t.Fatalf("%d calls recorded", len(rec.calls))
			}
			if got := string(rec.calls[0].Inputs); got != want {
				t.Fatalf("the call's inputs are %s, want %s", got, want)
			}
		})
	}
}
