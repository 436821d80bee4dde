package chat

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/llm/llmtest"
)

// failingWriter is a client that goes away after its first event.
type failingWriter struct {
	*httptest.ResponseRecorder
	writes int
}

func (w *failingWriter) Write(b []byte) (int, error) {
	w.writes++
	if w.writes > 1 {
		return 0, errors.New("connection reset by peer")
	}
	return w.ResponseRecorder.Write(b)
}

// A client that disconnects mid-stream stops its generation: the engine
// frees the sequence, and the call is traced with the reason.
func TestLocalClientDisconnectStopsGeneration(t *testing.T) {
	t.Parallel()
	// A context long enough that generating all of max_tokens would take
	// far longer than the wait below.
	dims := llmtest.TinyQwen3
	dims.MaxPositions = 32768
	dir := llmtest.ModelDir{Dims: dims, Tokenizer: llmtest.TokenizerQwen3}.Write(t)
	rec := &memoryRecorder{}
	s := newTestService(t, fmt.Sprintf("models: [{name: tiny, upstreams: [{kind: local, path: %q, threads: 1, kv_cache_bytes: 64MiB}]}]", dir), rec)
	ctx := weft.WithPrincipal(context.Background(), weft.Principal{UserID: "u1", DefaultEntity: "alice"})
	c, err := s.Complete(ctx, "alice/chat", []byte(`{"model":"tiny","messages":[{"role":"user","content":"hi"}],"max_tokens":32000,"ignore_eos":true,"stream":true}`))
	if err != nil {
		t.Fatal(err)
	}
	w := &failingWriter{ResponseRecorder: httptest.NewRecorder()}
	if err := c.Relay(w); err == nil || !strings.Contains(err.Error(), "client disconnected") {
		t.Fatalf("relay: %v", err)
	}
	engine := s.local.models["tiny"].engine
	deadline := time.Now().Add(10 * time.Second)
	for stats := engine.Stats(); stats.Running+stats.Waiting > 0; stats = engine.Stats() {
		if time.Now().After(deadline) {
			t.Fatalf("the generation still runs: %+v", stats)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(rec.calls) != 1 || !strings.Contains(rec.calls[0].Exception, "client disconnected") {
		t.Fatalf("traced %+v", rec.calls)
	}
	if w.Code != http.StatusOK {
		t.Errorf("status %d", w.Code)
	}
}

// The local knobs of a routing file, their checks and sizes with units.
func TestParseLocalRouting(t *testing.T) {
	t.Parallel()
	r, err := ParseRouting([]byte(`models:
  - name: q
    max_model_len: 2048
    fallbacks: [r]
    upstreams: [{kind: local, path: /models/q, threads: 2, max_sequences: 8, kv_cache_bytes: 1.5GiB, max_queue_wait: 2s, weight_type: int8,
      reasoning_parser: none, structured_outputs: {max_masks: 1024, max_whitespace: -1, max_string_length: 64,
      max_states: 100000, max_compile_time: 2s, max_compiles: 1}}]
  - name: r
    upstreams: [{kind: local, path: /models/r, kv_cache_bytes: 1000000}]
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	q := r.Models[0].Upstreams[0]
	if q.KVCacheBytes != 3<<29 || q.WeightType != "int8" || q.Threads != 2 || q.MaxSequences != 8 || q.MaxQueueWait != 2*time.Second || q.Model != "q" ||
		r.Models[1].Upstreams[0].KVCacheBytes != 1000000 || r.Models[1].Upstreams[0].WeightType != "auto" ||
		q.ReasoningParser != "none" || q.StructuredOutputs != (StructuredOptions{MaxMasks: 1024, MaxWhitespace: -1, MaxStringLength: 64,
		MaxStates: 100000, MaxCompileTime: 2 * time.Second, MaxCompiles: 1}) ||
		r.Models[1].Upstreams[0].ReasoningParser != "auto" {
		t.Fatalf("%+v %+v", q, r.Models[1].Upstreams[0])
	}
	for _, tc := range []struct{ text, want string }{
		{`models: [{name: q, upstreams: [{kind: local}]}]`, "path (the model directory) is required"},
		{`models: [{name: q, upstreams: [{kind: local, path: /m, url: "http://x/v1"}]}]`, "takes a path, not url"},
		{`models: [{name: q, upstreams: [{kind: local, path: /m}, {url: "http://x/v1"}]}]`, "must be the only upstream"},
		{`models: [{name: q, upstreams: [{kind: local, path: /m, weight_type: f8}]}]`, `weight_type "f8" must be one of`},
		{`models: [{name: q, upstreams: [{kind: local, path: /m, kv_cache_bytes: lots}]}]`, `"lots" is not a size`},
		{`models: [{name: q, upstreams: [{url: "http://x/v1", threads: 2}]}]`, "for kind local only"},
		{`models: [{name: q, upstreams: [{kind: local, path: /m, reasoning_parser: qwen}]}]`, `reasoning_parser "qwen" must be auto or none`},
		{`models: [{name: q, upstreams: [{kind: local, path: /m, structured_outputs: {max_whitespace: -2}}]}]`, "max_whitespace not below -1"},
		{`models: [{name: q, upstreams: [{kind: local, path: /m, structured_outputs: {max_compiles: -1}}]}]`, "max_compiles must not be negative"},
	} {
		if _, err := ParseRouting([]byte(tc.text), nil); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.text, err, tc.want)
		}
	}
	if err := r.AddLocalModels("/models/q"); err == nil || !strings.Contains(err.Error(), "already routed") {
		t.Errorf("a second q: %v", err)
	}
	if err := r.AddLocalModels("/srv/models/Qwen3-0.6B/"); err != nil || r.Models[2].Name != "Qwen3-0.6B" || r.Models[2].Upstreams[0].Path != "/srv/models/Qwen3-0.6B/" {
		t.Errorf("AddLocalModels: %v %+v", err, r.Models)
	}
}

// A local model that cannot be opened fails New with its name.
func TestLocalModelOpenError(t *testing.T) {
	t.Parallel()
	r, err := ParseRouting([]byte(`models: [{name: q, upstreams: [{kind: local, path: /nonexistent/model}]}]`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(Config{Routing: r, Logger: slog.New(slog.DiscardHandler)}); err == nil || !strings.Contains(err.Error(), `model "q"`) {
		t.Fatalf("New: %v", err)
	}
}

// An engine that stops mid-stream (here: closed) ends the stream as vLLM
// does: one error event, then [DONE].
func TestLocalStreamEngineFailure(t *testing.T) {
	t.Parallel()
	dims := llmtest.TinyQwen3
	dims.MaxPositions = 32768
	dir := llmtest.ModelDir{Dims: dims, Tokenizer: llmtest.TokenizerQwen3}.Write(t)
	s := newTestService(t, fmt.Sprintf("models: [{name: tiny, upstreams: [{kind: local, path: %q, threads: 1, kv_cache_bytes: 64MiB}]}]", dir), nil)
	ctx := weft.WithPrincipal(context.Background(), weft.Principal{UserID: "u1", DefaultEntity: "alice"})
	c, err := s.Complete(ctx, "alice/chat", []byte(`{"model":"tiny","messages":[{"role":"user","content":"hi"}],"max_tokens":32000,"ignore_eos":true,"stream":true}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.local.models["tiny"].engine.Close(); err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	if err := c.Relay(rec); err != nil {
		t.Fatal(err)
	}
	body := rec.Body.String()
	events := strings.Split(strings.TrimSuffix(body, "\n\n"), "\n\n")
	last, errorEvent := events[len(events)-1], events[len(events)-2]
	if last != "data: [DONE]" || !strings.HasPrefix(errorEvent, `data: {"error":{`) || !strings.Contains(errorEvent, `"code":500`) || strings.Count(body, `"error"`) != 1 {
		t.Fatalf("stream:\n%s", body)
	}
}
