package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/danielgtaylor/huma/v2"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/chat"
	"github.com/weftlabs/weft/internal/testdb"
	"github.com/weftlabs/weft/trace"
)

// Invalid UTF-8 and lone surrogate escapes anywhere in a JSON body are refused
// with 422 (400 in the OpenAI envelope on chat routes) after authentication and
// before anything is stored — including in the free-form members that are kept
// as the raw bytes sent and reached PostgreSQL as such (SQLSTATE 22021).
func TestJSONTextRefused(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		store, err := trace.New(trace.Config{DB: db})
		if err != nil {
			t.Fatal(err)
		}
		gateway, err := chat.New(chat.Config{Routing: &chat.Routing{}, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		f := newFixture(t, db, 1<<20, func(cfg *Config) { cfg.Trace = store; cfg.Chat = gateway })
		// A route that decodes its raw body itself, as the training routes do.
		huma.Register(f.handler.API(), *f.handler.operation(styleWeave, huma.Operation{
			OperationID: "probe-raw", Method: http.MethodPost, Path: "/probe-raw",
		}), func(ctx context.Context, in *struct{ RawBody []byte }) (*struct{}, error) {
			return &struct{}{}, nil
		})
		alice := basic("api", f.aliceKey)

		completed := func(value string) string {
			return fmt.Sprintf(`{"batch":[{"project_id":"alice/p","id":%q,"trace_id":%q,"op_name":"f","started_at":"2026-05-01T12:00:00Z","ended_at":"2026-05-01T12:00:01Z","inputs":{"x":%s},"attributes":{},"summary":{},"output":%s}]}`,
				newUUID(), newUUID(), value, value)
		}
		started := func(value string) string {
			return fmt.Sprintf(`{"batch":[{"mode":"start","req":{"start":{"project_id":"alice/p","id":%q,"trace_id":%q,"op_name":"f","started_at":"2026-05-01T12:00:00Z","attributes":{"a":[%s]},"inputs":{%s:1}}}}]}`,
				newUUID(), newUUID(), value, value)
		}
		bad := map[string]string{
			"invalid utf-8":       "\"\xff\xfe\"",
			"truncated utf-8":     "\"\xe2\x82\"",
			"utf-8 surrogate":     "\"\xed\xa0\x80\"",
			"lone high surrogate": `"\ud800"`,
			"lone low surrogate":  `"x\udfff"`,
			"reversed pair":       `"\udc00\ud800"`,
		}
		for name, value := range bad {
			for _, tc := range []struct{ path, body string }{
				{"/v2/alice/p/calls/complete", completed(value)},
				{"/call/upsert_batch", started(value)},
				{"/probe", `{"project_id":"alice/p","nested":{"name":` + value + `}}`},
				{"/probe-raw", `{"any":[` + value + `]}`},
			} {
				if status, body := post(t, f, "", tc.path, tc.body); status != 401 {
					t.Errorf("%s %s without credentials: %d %s, want 401 first", name, tc.path, status, body)
				}
				status, body := post(t, f, alice, tc.path, tc.body)
				var detail struct {
					Detail []validationItem `json:"detail"`
				}
				if status != 422 || json.Unmarshal(body, &detail) != nil || len(detail.Detail) != 1 ||
					detail.Detail[0].Loc[0] != "body" || !strings.Contains(detail.Detail[0].Msg, "UTF-8") {
					t.Errorf("%s %s: %d %s, want 422 with a FastAPI detail", name, tc.path, status, body)
				}
			}
			status, body := post(t, f, alice, "/v1/chat/completions",
				`{"model":"m","messages":[{"role":"user","content":`+value+`}]}`)
			var envelope OpenAIErrorBody
			if status != 400 || json.Unmarshal(body, &envelope) != nil || envelope.Error.Code != 400 ||
				!strings.Contains(envelope.Error.Message, "UTF-8") {
				t.Errorf("%s chat: %d %s, want 400 in the OpenAI envelope", name, status, body)
			}
		}

		// Nothing was stored, and text that only looks alike is accepted.
		status, body := post(t, f, alice, "/calls/query_stats", `{"project_id":"alice/p"}`)
		if status != 200 || !strings.Contains(string(body), `"count":0`) {
			t.Fatalf("query_stats after refusals: %d %s", status, body)
		}
		for _, value := range []string{`"\ud83e\uddea"`, `"\\ud800"`, `"\u0000"`, `"ünï 🧪"`, `"\ufffd"`} {
			for _, path := range []string{"/v2/alice/p/calls/complete"} {
				if status, body := post(t, f, alice, path, completed(value)); status != 200 {
					t.Errorf("%s with %s: %d %s", path, value, status, body)
				}
			}
			if status, body := post(t, f, alice, "/call/upsert_batch", started(value)); status != 200 || strings.Contains(string(body), "error") {
				t.Errorf("upsert_batch with %s: %d %s", value, status, body)
			}
		}
		status, body = post(t, f, alice, "/calls/query_stats", `{"project_id":"alice/p"}`)
		if status != 200 || !strings.Contains(string(body), `"count":10`) {
			t.Fatalf("query_stats after accepted calls: %d %s", status, body)
		}
	})
}
