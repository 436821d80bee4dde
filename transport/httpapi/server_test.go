package httpapi

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/testdb"
)

// probeInput is a weave-style request used to exercise the shared machinery
// (auth, authorization, limits, error bodies) before any domain is mounted.
type probeInput struct {
	Body struct {
		ProjectID string `json:"project_id"`
		Count     int    `json:"count,omitempty" minimum:"0"`
		Nested    struct {
			_    struct{} `additionalProperties:"true"`
			Name string   `json:"name,omitempty"`
		} `json:"nested,omitempty"`
	}
}

type probeOutput struct {
	Body struct {
		UserID string `json:"user_id"`
		Count  int    `json:"count"`
	}
}

type fixture struct {
	server   *httptest.Server
	handler  *Handler
	adminKey string
	aliceKey string
}

// newFixture serves a handler with the probe route, an admin and a user alice;
// configure adds services to the handler's Config.
func newFixture(t testing.TB, db *weft.DB, maxBody int64, configure ...func(*Config)) fixture {
	t.Helper()
	identity, adminKey, aliceKey := testIdentity(t, db)
	cfg := Config{Identity: identity, MaxBodyBytes: maxBody, Health: db.PingContext, Logger: slog.New(slog.DiscardHandler)}
	for _, c := range configure {
		c(&cfg)
	}
	h, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	huma.Register(h.API(), *h.operation(styleWeave, huma.Operation{
		OperationID: "probe", Method: http.MethodPost, Path: "/probe",
	}), func(ctx context.Context, in *probeInput) (*probeOutput, error) {
		if err := h.authorize(ctx, in.Body.ProjectID, true); err != nil {
			return nil, err
		}
		if in.Body.Count == 13 {
			return nil, weft.Errorf(weft.DefineError(weft.ErrConflict, "DigestMismatchError", "mismatch"), "digest mismatch for %d", 13)
		}
		out := &probeOutput{}
		out.Body.UserID = weft.UserID(ctx)
		out.Body.Count = in.Body.Count
		return out, nil
	})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return fixture{handler: h, server: srv, adminKey: adminKey, aliceKey: aliceKey}
}

// testIdentity makes the identity every route test starts from: the bootstrap
// admin and a user alice (with her personal entity), and their keys.
func testIdentity(t testing.TB, db *weft.DB) (identity *weft.Identity, adminKey, aliceKey string) {
	t.Helper()
	ctx := context.Background()
	identity, err := weft.NewIdentity(weft.IdentityConfig{DB: db})
	if err != nil {
		t.Fatal(err)
	}
	if adminKey, err = identity.Bootstrap(ctx, "admin"); err != nil {
		t.Fatal(err)
	}
	if _, err := identity.CreateUser(ctx, "alice", false); err != nil {
		t.Fatal(err)
	}
	if aliceKey, err = identity.CreateAPIKey(ctx, "alice", "test"); err != nil {
		t.Fatal(err)
	}
	return identity, adminKey, aliceKey
}

func basic(user, key string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+key))
}

func TestHandlerSharedBehaviour(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		f := newFixture(t, db, 1024)
		good := `{"project_id":"alice/p","count":2}`
		tests := []struct {
			name       string
			method     string
			path       string
			auth       string
			body       string
			wantStatus int
			wantBody   string // a fragment of the body
		}{
			{"basic api user", "POST", "/probe", basic("api", f.aliceKey), good, 200, `"count":2`},
			{"basic own name", "POST", "/probe", basic("alice", f.aliceKey), good, 200, `"count":2`},
			{"bearer", "POST", "/probe", "Bearer " + f.aliceKey, good, 200, `"count":2`},
			{"no credentials", "POST", "/probe", "", good, 401, `"detail":"missing or invalid API key"`},
			{"bad key", "POST", "/probe", "Bearer wf_0000_1111", good, 401, `"error_type":"AuthenticationError"`},
			{"bad basic encoding", "POST", "/probe", "Basic !!!", good, 401, `"detail"`},
			{"foreign project", "POST", "/probe", "Bearer " + f.aliceKey, `{"project_id":"admin/p"}`, 403, `"error_type":"Forbidden"`},
			{"admin may write anywhere", "POST", "/probe", "Bearer " + f.adminKey, good, 200, `"count":2`},
			{"bad project id", "POST", "/probe", "Bearer " + f.aliceKey, `{"project_id":"nope"}`, 400, `"error_type":"InvalidRequest"`},
			{"malformed json", "POST", "/probe", "Bearer " + f.aliceKey, `{"project_id":`, 422, `"type":"json_invalid"`},
			{"wrong type", "POST", "/probe", "Bearer " + f.aliceKey, `{"project_id":"alice/p","count":"x"}`, 422, `"loc":["body","count"]`},
			{"below minimum", "POST", "/probe", "Bearer " + f.aliceKey, `{"project_id":"alice/p","count":-1}`, 422, `"loc":["body","count"]`},
			{"missing field", "POST", "/probe", "Bearer " + f.aliceKey, `{"count":1}`, 422, `"type":"missing"`},
			{"unknown top-level field", "POST", "/probe", "Bearer " + f.aliceKey, `{"project_id":"alice/p","x":1}`, 422, `"type":"extra_forbidden"`},
			{"unknown nested field", "POST", "/probe", "Bearer " + f.aliceKey, `{"project_id":"alice/p","nested":{"x":1}}`, 200, `"count":0`},
			{"domain error", "POST", "/probe", "Bearer " + f.aliceKey, `{"project_id":"alice/p","count":13}`, 409, `"error_type":"DigestMismatchError"`},
			{"oversized body", "POST", "/probe", "Bearer " + f.aliceKey, `{"project_id":"alice/p","nested":{"name":"` + strings.Repeat("x", 2000) + `"}}`, 413, `"reason":"Request too large"`},
			{"doubled slashes", "POST", "//probe", "Bearer " + f.aliceKey, good, 200, `"count":2`},
			{"doubled slashes, GET", "GET", "//health", "", "", 200, `"status":"ok"`},
			{"unknown route", "GET", "/nope", "", "", 404, `{"detail":"Not Found"}`},
			{"wrong method", "GET", "/probe", "Bearer " + f.aliceKey, "", 405, `{"detail":"Method Not Allowed"}`},
			{"health", "GET", "/health", "", "", 200, `"status":"ok"`},
			{"server info", "GET", "/server_info", "", "", 200, `"trace_server_version"`},
			{"openapi", "GET", "/openapi.json", "", "", 200, `"basicAuth"`},
			{"metrics", "GET", "/metrics", "", "", 200, `weft_http_requests_total`},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				req, err := http.NewRequest(tc.method, f.server.URL+tc.path, strings.NewReader(tc.body))
				if err != nil {
					t.Fatal(err)
				}
				if tc.auth != "" {
					req.Header.Set("Authorization", tc.auth)
				}
				req.Header.Set("Content-Type", "application/json")
				res, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer res.Body.Close()
				body, _ := io.ReadAll(res.Body)
				if res.StatusCode != tc.wantStatus || !bytes.Contains(body, []byte(tc.wantBody)) {
					t.Fatalf("%s %s: %d %s; want %d with %s", tc.method, tc.path, res.StatusCode, body, tc.wantStatus, tc.wantBody)
				}
				if res.StatusCode >= 400 && !json.Valid(body) {
					t.Fatalf("error body is not JSON: %s", body)
				}
			})
		}
	})
}

// The acting user comes from the credentials; the body cannot choose it.
func TestPrincipalReachesServices(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testdb.SQLite(t), 0)
	req, _ := http.NewRequest("POST", f.server.URL+"/probe", strings.NewReader(`{"project_id":"alice/p"}`))
	req.Header.Set("Authorization", basic("api", f.aliceKey))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out struct {
		UserID string `json:"user_id"`
	}
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil || out.UserID == "" {
		t.Fatalf("user id = %q (%v)", out.UserID, err)
	}
}

func TestCredentials(t *testing.T) {
	t.Parallel()
	tests := []struct {
		header    string
		user, key string
		ok        bool
	}{
		{"Bearer k1", "", "k1", true},
		{"bearer  k1 ", "", "k1", true},
		{basic("api", "k2"), "api", "k2", true},
		{basic("alice", "k:3"), "alice", "k:3", true},
		{basic("api", ""), "", "", false},
		{"Basic " + base64.StdEncoding.EncodeToString([]byte("nocolon")), "", "", false},
		{"Token x", "", "", false},
		{"", "", "", false},
	}
	for _, tc := range tests {
		user, key, ok := credentials(tc.header)
		if user != tc.user || key != tc.key || ok != tc.ok {
			t.Errorf("credentials(%q) = %q, %q, %v; want %q, %q, %v", tc.header, user, key, ok, tc.user, tc.key, tc.ok)
		}
	}
}

// Over its rate, a key gets 429 with Retry-After; other keys are not affected.
func TestRateLimitPerKey(t *testing.T) {
	t.Parallel()
	db := testdb.SQLite(t)
	ctx := context.Background()
	identity, _ := weft.NewIdentity(weft.IdentityConfig{DB: db})
	key1, _ := identity.Bootstrap(ctx, "admin")
	key2, _ := identity.CreateAPIKey(ctx, "admin", "second")
	h, err := New(Config{Identity: identity, RateLimit: RateLimit{PerSecond: 0.001, Burst: 2}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	huma.Register(h.API(), *h.operation(styleWeave, huma.Operation{OperationID: "ping", Method: http.MethodGet, Path: "/ping"}),
		func(context.Context, *struct{}) (*struct{}, error) { return nil, nil })
	srv := httptest.NewServer(h)
	defer srv.Close()
	statuses := func(key string, n int) (codes []int, retryAfter string) {
		for range n {
			req, _ := http.NewRequest("GET", srv.URL+"/ping", nil)
			req.Header.Set("Authorization", "Bearer "+key)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			codes = append(codes, res.StatusCode)
			if res.StatusCode == http.StatusTooManyRequests {
				retryAfter = res.Header.Get("Retry-After")
				if !bytes.Contains(body, []byte(`"error_type":"RateLimitError"`)) {
					t.Errorf("429 body: %s", body)
				}
			}
		}
		return codes, retryAfter
	}
	codes, retryAfter := statuses(key1, 3)
	if fmt.Sprint(codes) != "[200 200 429]" || retryAfter == "" {
		t.Fatalf("key1: %v, Retry-After %q", codes, retryAfter)
	}
	if codes, _ := statuses(key2, 1); codes[0] != 200 {
		t.Fatalf("key2 limited by key1's traffic: %v", codes)
	}
}

func TestKeyLimiterRefills(t *testing.T) {
	t.Parallel()
	now := time.Unix(0, 0)
	l := newKeyLimiter(RateLimit{PerSecond: 2}, func() time.Time { return now })
	tests := []struct {
		advance time.Duration
		want    bool
	}{
		{0, true}, {0, true}, {0, false}, {250 * time.Millisecond, false}, {250 * time.Millisecond, true}, {0, false}, {time.Hour, true},
	}
	for i, tc := range tests {
		now = now.Add(tc.advance)
		if ok, wait := l.allow("k"); ok != tc.want || (!ok && wait <= 0) {
			t.Fatalf("step %d: allow = %v (wait %v), want %v", i, ok, wait, tc.want)
		}
	}
}
