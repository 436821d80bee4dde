package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/feedback"
	"github.com/weftlabs/weft/internal/testdb"
)

// stubCalls finds every call id that starts with "c".
type stubCalls struct{}

func (stubCalls) LookupCalls(_ context.Context, _ string, ids []string) ([]feedback.CallInfo, error) {
	var out []feedback.CallInfo
	for _, id := range ids {
		if strings.HasPrefix(id, "c") {
			out = append(out, feedback.CallInfo{ID: id, OpName: "op", TraceID: "t-" + id, StartedAt: time.Unix(1700000000, 0)})
		}
	}
	return out, nil
}

func decode(raw string) any {
	var v any
	_ = json.Unmarshal([]byte(raw), &v)
	return v
}

func TestFeedbackRoutes(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		identity, _, key := testIdentity(t, db)
		svc, err := feedback.New(feedback.Config{DB: db, Calls: stubCalls{}})
		if err != nil {
			t.Fatal(err)
		}
		h, err := New(Config{Identity: identity, Feedback: svc, MaxBodyBytes: 64 << 10, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)

		do := func(method, path, auth, body string) (int, map[string]any) {
			t.Helper()
			req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			if auth != "" {
				req.Header.Set("Authorization", auth)
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			raw, _ := io.ReadAll(res.Body)
			var out map[string]any
			if err := json.Unmarshal(raw, &out); err != nil {
				t.Fatalf("%s %s: body is not a JSON object: %s", method, path, raw)
			}
			if res.StatusCode >= 500 {
				t.Fatalf("%s %s: %d %s", method, path, res.StatusCode, raw)
			}
			return res.StatusCode, out
		}
		alice := basic("api", key)
		const ref = `"weave_ref":"weave:///alice/p/call/c1"`

		// Set up a queue with items for the routes that need one.
		status, out := do("POST", "/annotation_queues", alice, `{"project_id":"alice/p","name":"Review","scorer_refs":[],"wb_user_id":null}`)
		if status != 200 {
			t.Fatalf("create queue: %d %v", status, out)
		}
		queue := out["id"].(string)
		status, out = do("POST", "/annotation_queues/"+queue+"/items", alice, `{"project_id":"alice/p","call_ids":["c1","c2","x"],"display_fields":["inputs"]}`)
		if status != 200 || out["added_count"] != 2.0 {
			t.Fatalf("add items: %d %v", status, out)
		}
		status, out = do("POST", "/annotation_queues/"+queue+"/items/query", alice, `{"project_id":"alice/p","include_position":true}`)
		items, _ := out["items"].([]any)
		if status != 200 || len(items) != 2 {
			t.Fatalf("items query: %d %v", status, out)
		}
		item := items[0].(map[string]any)["id"].(string)

		big := `{"project_id":"alice/p",` + ref + `,"feedback_type":"x","payload":{"s":"` + strings.Repeat("x", 70<<10) + `"}}`
		routes := []struct {
			method, path, good string
			wantKey            string // a key of the 200 body
			malformed          string // a 422 body
			invalid            string // a 400 body ("" when the route has none)
		}{
			{"POST", "/feedback/create", `{"project_id":"alice/p",` + ref + `,"feedback_type":"wandb.reaction.1","payload":{"emoji":"🎱"},"wb_user_id":"spoof","creator":null}`, "id",
				`{"project_id":"alice/p",` + ref + `,"feedback_type":"x","payload":{},"bogus":1}`,
				`{"project_id":"alice/p",` + ref + `,"feedback_type":"wandb.reaction.1","payload":{"emoji":"no"}}`},
			{"POST", "/feedback/batch/create", `{"batch":[{"project_id":"alice/p",` + ref + `,"feedback_type":"x","payload":{}}]}`, "res",
				`{"batch":{}}`, `{"batch":[{"project_id":"alice/p",` + ref + `,"feedback_type":"x","payload":{}},{"project_id":"alice/p",` + ref + `,"feedback_type":"wandb.note.1","payload":{}}]}`},
			{"POST", "/feedback/replace", `{"project_id":"alice/p",` + ref + `,"feedback_type":"x","payload":{},"feedback_id":"nope"}`, "id",
				`{"project_id":"alice/p",` + ref + `,"feedback_type":"x","payload":{}}`, `{"project_id":"alice/p",` + ref + `,"feedback_type":"x","payload":{},"feedback_id":"a","scorer_tags":["t"]}`},
			{"POST", "/feedback/query", `{"project_id":"alice/p","query":{"$expr":{"$eq":[{"$getField":"payload.alias"},{"$literal":":pool_8_ball:"}]}},"sort_by":[{"field":"created_at","direction":"desc"}],"limit":5}`, "result",
				`{"project_id":"alice/p","limit":"x"}`, `{"project_id":"alice/p","query":{"$expr":{"$eq":[{"$getField":"inputs.message_id"},{"$literal":"x"}]}}}`},
			{"POST", "/feedback/purge", `{"project_id":"alice/p","query":{"$expr":{"$eq":[{"$getField":"id"},{"$literal":"nope"}]}}}`, "num_deleted",
				`{"project_id":"alice/p"}`, `{"project_id":"alice/p","query":{"$expr":{"$eq":[{"$getField":"feedback_type"},{"$literal":"x"}]}}}`},
			{"POST", "/annotation_queues", `{"project_id":"alice/p","name":"Second"}`, "id", `{"project_id":"alice/p","name":""}`, `{"project_id":"bad","name":"x"}`},
			{"GET", "/annotation_queues/" + queue + "?project_id=alice/p", "", "queue", "", ""},
			{"PUT", "/annotation_queues/" + queue, `{"project_id":"alice/p","description":"new"}`, "queue", `{"project_id":"alice/p","name":5}`, `{"project_id":"bad"}`},
			{"POST", "/annotation_queues/query", `{"project_id":"alice/p","name":"rev"}`, "queues", `{"project_id":"alice/p","sort_by":"x"}`, ""},
			{"POST", "/annotation_queues/" + queue + "/items", `{"project_id":"alice/p","call_ids":["c3"]}`, "added_count", `{"project_id":"alice/p","call_ids":"c3"}`, ""},
			{"POST", "/annotation_queues/" + queue + "/items/query", `{"project_id":"alice/p","filter":{"annotation_states":["unstarted"]},"sort_by":[{"field":"call_started_at","direction":"desc"}]}`, "items",
				`{"project_id":"alice/p","offset":-1}`, ""},
			{"POST", "/annotation_queues/" + queue + "/items/" + item + "/progress", `{"project_id":"alice/p","annotation_state":"in_progress"}`, "item",
				`{"project_id":"alice/p"}`, `{"project_id":"alice/p","annotation_state":"unstarted"}`},
			{"POST", "/annotation_queues/stats", `{"project_id":"alice/p","queue_ids":["` + queue + `"]}`, "stats", `{"project_id":"alice/p","queue_ids":[1]}`, ""},
			{"DELETE", "/annotation_queues/" + queue + "?project_id=alice/p", "", "queue", "", ""},
		}
		for _, r := range routes {
			t.Run(r.method+" "+r.path, func(t *testing.T) {
				if status, out := do(r.method, r.path, alice, r.good); status != 200 || out[r.wantKey] == nil {
					t.Fatalf("good request: %d %v", status, out)
				}
				if status, _ := do(r.method, r.path, "", r.good); status != 401 {
					t.Errorf("no credentials: %d", status)
				}
				foreign := strings.ReplaceAll(strings.ReplaceAll(r.good, "alice/p", "admin/p"), "alice/p", "admin/p")
				foreignPath := strings.ReplaceAll(r.path, "alice/p", "admin/p")
				if status, out := do(r.method, foreignPath, alice, foreign); status != 403 {
					t.Errorf("foreign project: %d %v", status, out)
				}
				if r.malformed != "" {
					if status, out := do(r.method, r.path, alice, r.malformed); status != 422 || out["detail"] == nil {
						t.Errorf("malformed: %d %v", status, out)
					}
					if status, _ := do(r.method, r.path, alice, `{"project_id":`); status != 422 {
						t.Errorf("broken JSON: %d", status)
					}
				}
				if r.invalid != "" {
					if status, out := do(r.method, r.path, alice, r.invalid); status != 400 || out["reason"] == nil {
						t.Errorf("invalid: %d %v", status, out)
					}
				}
				if r.method != "GET" && r.method != "DELETE" {
					if status, out := do(r.method, r.path, alice, big); status != 413 {
						t.Errorf("oversized: %d %v", status, out)
					}
				}
			})
		}

		// Domain answers that matter on the wire.
		status, out = do("POST", "/feedback/create", alice, `{"project_id":"alice/p",`+ref+`,"feedback_type":"x","payload":{},"queue_id":"`+queue+`"}`)
		if status != 400 || !strings.Contains(out["reason"].(string), "not found or has been deleted") {
			t.Errorf("deleted queue id: %d %v", status, out)
		}
		status, out = do("POST", "/feedback/batch/create", alice, `{"batch":[{"project_id":"alice/p",`+ref+`,"feedback_type":"x","payload":{}},{"project_id":"alice/p",`+ref+`,"feedback_type":"wandb.note.1","payload":{}}]}`)
		if status != 400 || !strings.Contains(out["reason"].(string), "batch[1]") {
			t.Errorf("batch error names the index: %d %v", status, out)
		}
		// A bad ref is named by the field the client sent, with the scheme
		// that field's clients write.
		for _, field := range []struct{ name, scheme string }{{"weave_ref", "weave:///"}, {"trace_ref", "trace:///"}} {
			status, out = do("POST", "/feedback/create", alice, `{"project_id":"alice/p","`+field.name+`":"call/123","feedback_type":"x","payload":{}}`)
			if reason, _ := out["reason"].(string); status != 400 || !strings.HasPrefix(reason, field.name+` "call/123" is not a `+field.scheme+"alice/p/") {
				t.Errorf("bad %s: %d %v", field.name, status, out)
			}
			status, out = do("POST", "/feedback/create", alice, `{"project_id":"alice/p","`+field.name+`":"`+field.scheme+`bob/q/call/1","feedback_type":"x","payload":{}}`)
			if reason, _ := out["reason"].(string); status != 400 || !strings.HasPrefix(reason, field.name+` "`+field.scheme+`bob/q/call/1" is not a ref of project alice/p`) {
				t.Errorf("%s of another project: %d %v", field.name, status, out)
			}
		}
		// payload is dict[str, Any] in the reference: anything else is
		// pydantic's 422, before the feedback rules are looked at.
		for _, payload := range []string{`[1]`, `"x"`, `7`, `null`} {
			status, out = do("POST", "/feedback/create", alice, `{"project_id":"alice/p",`+ref+`,"feedback_type":"wandb.note.1","payload":`+payload+`}`)
			want := []any{map[string]any{"loc": []any{"body", "payload"}, "msg": "Input should be a valid dictionary", "type": "dict_type", "input": decode(payload)}}
			if payload == "null" {
				delete(want[0].(map[string]any), "input")
			}
			if status != 422 || !reflect.DeepEqual(out, map[string]any{"detail": want}) {
				t.Errorf("payload %s: %d %v", payload, status, out)
			}
		}
		status, out = do("POST", "/feedback/create", alice, `{"project_id":"alice/p",`+ref+`,"feedback_type":"x","payload":{},"scorer_ratings":[1]}`)
		if status != 422 || !strings.Contains(fmt.Sprint(out), "dict_type") {
			t.Errorf("scorer_ratings not an object: %d %v", status, out)
		}
		status, out = do("GET", "/annotation_queues/"+queue+"?project_id=alice/p", alice, "")
		if status != 404 || out["error_type"] != "NotFoundError" {
			t.Errorf("deleted queue read: %d %v", status, out)
		}
		status, out = do("PUT", "/annotation_queues/0192f3a4-0000-7000-8000-00000000dead", alice, `{"project_id":"alice/p","name":"x"}`)
		if status != 404 {
			t.Errorf("update unknown queue: %d %v", status, out)
		}
		status, out = do("POST", "/feedback/create", alice, `{"project_id":"alice/p","trace_ref":"trace:///alice/p/object/o:1","feedback_type":"x","payload":{"a":1}}`)
		if status != 200 || out["pf_user_id"] == "" || out["pf_user_id"] != out["wb_user_id"] {
			t.Errorf("user from credentials: %d %v", status, out)
		}
	})
}
