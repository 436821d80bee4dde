// Package otel_test sends OpenTelemetry traces to weft's /otel/v1/traces
// through real SDKs — Go's otlptracehttp exporter here, the JavaScript
// exporters and instrumentations under Node in js_test.go — and checks each
// stored call over the HTTP API, on SQLite, PostgreSQL and Citus.
package otel_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/integration/e2e"
	"github.com/weftlabs/weft/trace"
	"github.com/weftlabs/weft/transport/httpapi"
)

func TestMain(m *testing.M) { e2e.Main(m) }

// server is weft over one test database with two users, alice and bob, each
// owning the entity of their name.
type server struct {
	*httptest.Server
	aliceKey, bobKey string
}

func newServer(t *testing.T, db *weft.DB, mutate func(*httpapi.Config)) *server {
	t.Helper()
	ctx := context.Background()
	identity, err := weft.NewIdentity(weft.IdentityConfig{DB: db})
	if err != nil {
		t.Fatal(err)
	}
	s := &server{}
	for _, name := range []string{"alice", "bob"} {
		if _, err := identity.CreateUser(ctx, name, false); err != nil {
			t.Fatal(err)
		}
	}
	if s.aliceKey, err = identity.CreateAPIKey(ctx, "alice", "test"); err != nil {
		t.Fatal(err)
	}
	if s.bobKey, err = identity.CreateAPIKey(ctx, "bob", "test"); err != nil {
		t.Fatal(err)
	}
	traces, err := trace.New(trace.Config{DB: db})
	if err != nil {
		t.Fatal(err)
	}
	cfg := httpapi.Config{Identity: identity, Trace: traces, Logger: slog.New(slog.DiscardHandler)}
	if mutate != nil {
		mutate(&cfg)
	}
	h, err := httpapi.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s.Server = httptest.NewServer(h)
	t.Cleanup(s.Close)
	return s
}

// call is a call as /calls/stream_query returns it.
type call struct {
	ID          string          `json:"id"`
	ProjectID   string          `json:"project_id"`
	OpName      string          `json:"op_name"`
	DisplayName *string         `json:"display_name"`
	TraceID     string          `json:"trace_id"`
	ParentID    *string         `json:"parent_id"`
	ThreadID    *string         `json:"thread_id"`
	TurnID      *string         `json:"turn_id"`
	StartedAt   string          `json:"started_at"`
	EndedAt     *string         `json:"ended_at"`
	Exception   *string         `json:"exception"`
	Attributes  json.RawMessage `json:"attributes"`
	Inputs      json.RawMessage `json:"inputs"`
	Output      json.RawMessage `json:"output"`
	Summary     json.RawMessage `json:"summary"`
}

// post sends a JSON body with key and returns the status and answer.
func (s *server) post(t *testing.T, key, path string, body any) (int, []byte) {
	t.Helper()
	return e2e.Client{URL: s.URL, Auth: e2e.Basic(key)}.Post(t, path, body)
}

// calls reads every call of project, keyed by id.
func (s *server) calls(t *testing.T, key, project string) map[string]call {
	t.Helper()
	status, b := s.post(t, key, "/calls/stream_query", map[string]any{"project_id": project})
	if status != http.StatusOK {
		t.Fatalf("stream_query %s: %d %s", project, status, b)
	}
	out := map[string]call{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var c call
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("%v: %s", err, sc.Bytes())
		}
		out[c.ID] = c
	}
	return out
}

// usage is /calls/usage of ids: per id, per model, the counters.
func (s *server) usage(t *testing.T, key, project string, ids ...string) map[string]map[string]map[string]any {
	t.Helper()
	status, b := s.post(t, key, "/calls/usage", map[string]any{"project_id": project, "call_ids": ids})
	if status != http.StatusOK {
		t.Fatalf("usage: %d %s", status, b)
	}
	var res struct {
		CallUsage map[string]map[string]map[string]any `json:"call_usage"`
	}
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	return res.CallUsage
}

// rawPost sends body to /otel/v1/traces with the given headers.
func (s *server) rawPost(t *testing.T, headers map[string]string, body []byte) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.URL+"/otel/v1/traces", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, b
}

// jsonPath reads a member of a JSON document by keys and indexes.
func jsonPath(t *testing.T, raw json.RawMessage, path ...any) any {
	t.Helper()
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	for _, p := range path {
		switch p := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				t.Fatalf("%v: not an object at %q in %s", path, p, raw)
			}
			v = m[p]
		case int:
			l, ok := v.([]any)
			if !ok || p >= len(l) {
				t.Fatalf("%v: no index %d in %s", path, p, raw)
			}
			v = l[p]
		}
	}
	return v
}

// canon is v re-encoded with sorted keys, for comparing JSON values.
func canon(t *testing.T, v any) string {
	t.Helper()
	if raw, ok := v.(json.RawMessage); ok {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var x any
		if err := dec.Decode(&x); err != nil {
			t.Fatalf("%v: %s", err, raw)
		}
		v = x
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func mustEqualJSON(t *testing.T, what string, got any, want string) {
	t.Helper()
	if g, w := canon(t, got), canon(t, json.RawMessage(want)); g != w {
		t.Fatalf("%s:\n got %s\nwant %s", what, g, w)
	}
}

func str(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}

var _ = fmt.Sprint
