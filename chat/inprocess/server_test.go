package inprocess

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
	"github.com/weftlabs/weft/chat"
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
	engine := s.server.models["tiny"].engine
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

// A local model that cannot be opened fails Open with its name.
func TestLocalModelOpenError(t *testing.T) {
	t.Parallel()
	r, err := chat.ParseRouting([]byte(`models: [{name: q, upstreams: [{kind: local, path: /nonexistent/model}]}]`), nil, Kind)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Open(r, Config{Logger: slog.New(slog.DiscardHandler)}); err == nil || !strings.Contains(err.Error(), `model "q"`) {
		t.Fatalf("Open: %v", err)
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
	if err := s.server.models["tiny"].engine.Close(); err != nil {
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
