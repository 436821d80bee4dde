package inprocess

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/chat"
)

// memoryRecorder keeps the traced calls.
type memoryRecorder struct {
	mu    sync.Mutex
	calls []chat.Call
}

func (m *memoryRecorder) RecordCalls(_ context.Context, calls []chat.Call) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls = append(m.calls, calls...)
	return nil
}

// served is a gateway over the models of a server, as a program wires
// them.
type served struct {
	*chat.Gateway
	server *Server
}

// newTestService serves the local routes of routing through a gateway
// tracing into rec (nil: no tracing); both are closed when the test ends.
func newTestService(t *testing.T, routing string, rec chat.CallRecorder) *served {
	t.Helper()
	r, err := chat.ParseRouting([]byte(routing), nil, Kind)
	if err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.DiscardHandler)
	server, err := Open(r, Config{Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = server.Close() })
	cfg := chat.Config{Routing: r, Logger: logger, Backends: map[string]chat.Backend{chat.KindLocal: server}}
	if rec != nil {
		cfg.Recorder = rec
	}
	g, err := chat.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.Close(context.Background()) })
	return &served{Gateway: g, server: server}
}

// complete relays one completion of alice's to a recorder.
func complete(t *testing.T, s *served, body string) (*httptest.ResponseRecorder, error) {
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
