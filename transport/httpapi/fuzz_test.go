package httpapi

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/danielgtaylor/huma/v2"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/feedback"
	"github.com/weftlabs/weft/internal/testdb"
	"github.com/weftlabs/weft/objects"
	"github.com/weftlabs/weft/trace"
)

// fuzzLong stands, in a fuzzed body, for a 60,000-character string of LIKE
// metacharacters: fuzzed inputs stay small, and long text is a class of its own.
const fuzzLong = "<LONG>"

// Any bytes sent as the JSON body of any POST or PUT route of the trace,
// feedback and objects families, on SQLite and on PostgreSQL, are answered with
// a status below 500: invalid UTF-8, NUL and lone surrogate escapes in any
// string, SQL and LIKE metacharacters, long strings.
func FuzzRequestDecoding(f *testing.F) {
	var servers []fixture
	var routes []fuzzRoute
	for _, db := range []*weft.DB{testdb.SQLite(f), testdb.Postgres(f)} {
		traceStore, err := trace.New(trace.Config{DB: db})
		if err != nil {
			f.Fatal(err)
		}
		feedbackService, err := feedback.New(feedback.Config{DB: db, Calls: feedback.TraceCalls(traceStore)})
		if err != nil {
			f.Fatal(err)
		}
		objectsService, err := objects.New(objects.Config{DB: db})
		if err != nil {
			f.Fatal(err)
		}
		fx := newFixture(f, db, 1<<20, func(c *Config) {
			c.Trace, c.Feedback, c.Objects = traceStore, feedbackService, objectsService
		})
		servers = append(servers, fx)
		routes = fuzzedRoutes(fx.handler)
		// Rows for filters and searches to compare against: a database skips
		// what it never evaluates (SQLite's LIKE limit with no queue to match).
		for path, body := range map[string]string{
			"/annotation_queues": `{"project_id":"alice/p","name":"100% a_b"}`,
			"/feedback/create":   `{"project_id":"alice/p","weave_ref":"weave:///alice/p/call/x","feedback_type":"custom","payload":{"a":"\u0000","b":1}}`,
			"/table/create":      `{"table":{"project_id":"alice/p","rows":[{"a":1}]}}`,
		} {
			if status, res := post(f, fx, "Bearer "+fx.aliceKey, path, body); status != http.StatusOK {
				f.Fatalf("%s: %d %s", path, status, res)
			}
		}
	}
	if len(routes) < 30 {
		f.Fatalf("only %d routes to fuzz: %v", len(routes), routes)
	}
	for _, seed := range []struct{ path, body string }{
		{"/calls/query_stats", `{"project_id":"alice/p"}`},
		{"/call/start", `{"start":{"project_id":"alice/p","op_name":"x","started_at":"2026-01-01T00:00:00Z","attributes":{},"inputs":{}}}`},
		{"/call/upsert_batch", `{"batch":[{"mode":"start","req":{"start":{"project_id":"alice/p","op_name":"o","started_at":"2026-01-01T00:00:00Z","attributes":{},"inputs":{"a":1}}}}]}`},
		{"/call/upsert_batch", `{"batch":[{"mode":"start","req":{"start":{"project_id":"alice/p","op_name":"o","started_at":"2026-01-01T00:00:00Z","attributes":{},"inputs":{"a":"weave:///alice/p/object/n\u0000:0"}}}}]}`},
		{"/v2/alice/p/calls/complete", "{\"batch\":[{\"id\":\"01936f4e-0000-7000-8000-000000000001\",\"trace_id\":\"01936f4e-0000-7000-8000-000000000002\",\"op_name\":\"f\",\"started_at\":\"2026-01-01T00:00:00Z\",\"ended_at\":\"2026-01-01T00:00:01Z\",\"inputs\":{\"x\":\"\xff\xfe\"},\"output\":\"\\ud800\"}]}"},
		{"/obj/create", `{"obj":{"project_id":"alice/p","object_id":"o","val":{"a":[1,2.5,"x"]}}}`},
		{"/table/create", `{"table":{"project_id":"alice/p","rows":[{"a":1}]}}`},
		{"/feedback/query", `{"project_id":"alice/p","query":{"$expr":{"$eq":[{"$getField":"payload.a"},{"$literal":"\u0000"}]}},"sort_by":[{"field":"payload.b"}]}`},
		{"/feedback/purge", `{"project_id":"alice/p","query":{"$expr":{"$eq":[{"$getField":"id"},{"$literal":"x\u0000"}]}}}`},
		{"/feedback/create", `{"project_id":"alice/p","weave_ref":"weave:///alice/p/call/x","feedback_type":"custom","payload":{"a":"\u0000"}}`},
		{"/annotation_queues/query", `{"project_id":"alice/p","name":"` + fuzzLong + `"}`},
		{"/calls/usage", `{"project_id":"alice/p","call_ids":["a","b"],"limit":-1}`},
		{"/table/query_stats_batch", `{"project_id":"alice/p","digests":["abc\u0000","%_\\"],"include_storage_size":true}`},
		{"/refs/read_batch", `{"project_id":"alice/p","refs":["weave:///alice/p/object/o:latest/key/a/index/0"]}`},
		{"/cost/query", `{"project_id":"alice/p","llm_ids":["'; DROP TABLE calls; --"]}`},
		{"/calls/query_stats", `[]`}, {"/calls/query_stats", `{`}, {"/calls/query_stats", `{"project_id":1e999}`},
		{"/calls/query_stats", "\xff\xfe"},
	} {
		route := slices.Index(routes, fuzzRoute{http.MethodPost, seed.path})
		if route < 0 {
			f.Fatalf("seed route %s is not fuzzed", seed.path)
		}
		f.Add(uint8(route), []byte(seed.body))
	}
	long := []byte(strings.Repeat("%_", 30000))
	f.Fuzz(func(t *testing.T, route uint8, body []byte) {
		r := routes[int(route)%len(routes)]
		body = bytes.ReplaceAll(body, []byte(fuzzLong), long)
		for _, fx := range servers {
			req := httptest.NewRequest(r.method, r.path, bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+fx.aliceKey)
			rec := httptest.NewRecorder()
			fx.handler.ServeHTTP(rec, req)
			if rec.Code >= 500 || rec.Code == http.StatusUnauthorized {
				t.Fatalf("%s %s %q: %d %s", r.method, r.path, body, rec.Code, rec.Body.Bytes())
			}
		}
	})
}

// fuzzID fills the path parameters that name a resource.
const fuzzID = "01936f4e-0000-7000-8000-000000000001"

type fuzzRoute struct{ method, path string }

// fuzzedRoutes lists h's POST and PUT routes that take JSON, with Alice's
// project and fuzzID in their path parameters.
func fuzzedRoutes(h *Handler) []fuzzRoute {
	var routes []fuzzRoute
	for path, item := range h.API().OpenAPI().Paths {
		for method, op := range map[string]*huma.Operation{http.MethodPost: item.Post, http.MethodPut: item.Put} {
			if op == nil || op.RequestBody == nil || op.RequestBody.Content["application/json"] == nil ||
				strings.HasPrefix(path, "/v1/") || path == "/probe" {
				continue
			}
			filled := strings.NewReplacer("{entity}", "alice", "{project}", "p").Replace(path)
			for strings.Contains(filled, "{") {
				open, end := strings.Index(filled, "{"), strings.Index(filled, "}")
				filled = filled[:open] + fuzzID + filled[end+1:]
			}
			routes = append(routes, fuzzRoute{method, filled})
		}
	}
	sort.Slice(routes, func(i, j int) bool { return routes[i].path+routes[i].method < routes[j].path+routes[j].method })
	return routes
}

// scanBatchBodies are upsert_batch bodies with whether trace.ScanBatch
// decodes them itself (true) or leaves them to encoding/json.
func scanBatchBodies() []struct {
	body    string
	scanned bool
} {
	start := `{"mode":"start","req":{"start":{"project_id":"alice/p","id":"0190b0f2-0000-7000-8000-000000000001","trace_id":"0190b0f2-0000-7000-8000-000000000002","op_name":"weave:///alice/p/op/llm:abc","started_at":"2026-05-01T12:00:00.123Z","attributes":{"weave":{"source":"js-sdk"}},"inputs":{"messages":[{"role":"user","content":"lorem"}],"t":0.2}}}}`
	end := `{"mode":"end","req":{"end":{"project_id":"alice/p","id":"0190b0f2-0000-7000-8000-000000000001","ended_at":"2026-05-01T12:00:01Z","output":{"content":"done"},"summary":{"usage":{"m":{"requests":1,"prompt_tokens":10}}}}}}`
	return []struct {
		body    string
		scanned bool
	}{
		{`{"batch":[]}`, true}, {" { \"batch\" :\n[ ] }\t", true},
		{`{"batch":[` + start + `,` + end + `]}`, true},
		{ingestBody("alice/p"), true},
		{`{"batch":[{"mode":"start","req":{"start":{"project_id":"alice/one","id":"a","trace_id":"t","op_name":"op","started_at":"2026-05-01T12:00:00Z","wb_run_id":"r1","inputs":{"x":"\u00e9\u0000","n":12345678901234567890},"extra":true}}}]}`, true},
		{`{"batch":[{"mode":"start","req":{"start":{"project_id":"alice/p","id":"\u0000","op_name":"op\u0000","display_name":"d\"é\ud800","started_at":"2026-05-01T12:00:00+02:00","pf_run_step":3,"wb_run_step":-1,"parent_id":null,"otel_dump":null}}}]}`, true},
		{`{"batch":[{"mode":"end","req":{"end":{"project_id":"alice/p\u0000","id":"b","ended_at":"2026-05-01T12:00:01Z","output":null,"summary":{"usage":{"m":{"requests":1}}},"wb_run_step_end":4,"exception":"boom","display_name":"n\u0000"}}}]}`, true},
		{`{"batch":[{"mode":"end","req":{"start":{},"end":{"id":"x","ended_at":null}}}]}`, true},
		{`{"batch":[{"mode":"start","req":{"start":{"op_name":"` + "\xffé" + `","inputs":{"k":"` + "\xff" + `"}}}}]}`, true},
		{`{"batch":[{"mode":"start","req":{"start":{"op_name":"\x"}}}]}`, false},
		{`{"batch":[{"mode":"end","req":{"end":{"ID":"x"}}}]}`, false},
		{`{"batch":[{"mode":"end","req":{"end":{"id":"x","id":"y"}}}]}`, false},
		{`{"batch":[{"mode":"start","req":{"start":{"inputs":[1,-0.5e+3,true,false,null,{"a":{}},[]],"pf_run_step":1.5}}}]}`, false},
		{`{"batch":[{"req":{"start":{}},"mode":"start"}]}`, false}, {`{"batch":[{"mode":"start","req":null}]}`, false},
		{`{"batch":{}}`, false}, {`{"batch":[],"x":1}`, false}, {`{"batch":[]}x`, false}, {`{"batch":[` + start + `,]}`, false},
	}
}

func TestScanBatch(t *testing.T) {
	t.Parallel()
	for _, tc := range scanBatchBodies() {
		got, ok := trace.ScanBatch([]byte(tc.body))
		if ok != tc.scanned {
			t.Fatalf("ScanBatch ok = %v for %.200s", ok, tc.body)
		}
		if want, _ := decodeBatchOnePass([]byte(tc.body)); ok && !reflect.DeepEqual(got, want) {
			t.Fatalf("ScanBatch decoded %.200s differently:\n got %s\nwant %s", tc.body, describeBatch(got), describeBatch(want))
		}
	}
}

// trace.ScanBatch either declines a body or decodes it exactly as the
// encoding/json path (decodeBatchOnePass) does: the same items, the same
// StartedCall and EndedCall values, hence the same per-item outcome in the
// store. A body the one-pass path refuses must be declined.
func FuzzScanBatch(f *testing.F) {
	for _, seed := range scanBatchBodies() {
		f.Add([]byte(seed.body))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		original := bytes.Clone(body)
		got, ok := trace.ScanBatch(body)
		if !bytes.Equal(body, original) {
			t.Fatal("ScanBatch changed the body")
		}
		if !ok {
			return
		}
		want, wantOK := decodeBatchOnePass(body)
		if !wantOK {
			t.Fatalf("ScanBatch accepted a body encoding/json refuses: %q\n%#v", body, got)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("ScanBatch decoded %q differently:\n got %s\nwant %s", body, describeBatch(got), describeBatch(want))
		}
	})
}

func describeBatch(batch []trace.BatchItem) string {
	var sb strings.Builder
	for _, item := range batch {
		fmt.Fprintf(&sb, "%s start=%+v end=%+v err=%v\n", item.Mode, item.Start, item.End, item.Err)
	}
	return sb.String()
}
