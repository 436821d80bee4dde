package httpapi

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"

	"github.com/weftlabs/weft/feedback"
	"github.com/weftlabs/weft/internal/testdb"
	"github.com/weftlabs/weft/objects"
	"github.com/weftlabs/weft/trace"
)

// Any bytes sent as the JSON body of any POST route of the trace, feedback and
// objects families are answered with a status below 500.
func FuzzRequestDecoding(f *testing.F) {
	db := testdb.SQLite(f)
	traceStore, err := trace.New(trace.Config{DB: db.DB})
	if err != nil {
		f.Fatal(err)
	}
	feedbackService, err := feedback.New(feedback.Config{DB: db.DB, Calls: feedback.TraceCalls(traceStore)})
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
	handler := fx.handler
	var paths []string
	for path, item := range fx.handler.API().OpenAPI().Paths {
		if item.Post != nil && item.Post.RequestBody != nil && item.Post.RequestBody.Content["application/json"] != nil &&
			!strings.Contains(path, "{") && !strings.HasPrefix(path, "/v1/") && path != "/probe" {
			paths = append(paths, path)
		}
	}
	sort.Strings(paths)
	if len(paths) < 20 {
		f.Fatalf("only %d routes to fuzz: %v", len(paths), paths)
	}
	for i, seed := range []string{
		`{"project_id":"alice/p"}`,
		`{"start":{"project_id":"alice/p","op_name":"x","started_at":"2026-01-01T00:00:00Z","attributes":{},"inputs":{}}}`,
		`{"batch":[{"mode":"start","req":{"start":{"project_id":"alice/p","op_name":"o","started_at":"2026-01-01T00:00:00Z","attributes":{},"inputs":{"a":1}}}}]}`,
		`{"obj":{"project_id":"alice/p","object_id":"o","val":{"a":[1,2.5,"x"]}}}`,
		`{"table":{"project_id":"alice/p","rows":[{"a":1}]}}`,
		`{"project_id":"alice/p","query":{"$expr":{"$eq":[{"$getField":"payload.a"},{"$literal":1}]}}}`,
		`{"project_id":"alice/p","trace_ref":"weave:///alice/p/call/x","feedback_type":"custom","payload":{}}`,
		`{"project_id":"alice/p","call_ids":["a","b"],"limit":-1}`,
		`{"project_id":"alice/p","digests":"abc","include_storage_size":true}`,
		`{"project_id":"alice/p","refs":["weave:///alice/p/object/o:latest/key/a/index/0"]}`,
		`[]`, `{`, `{"project_id":1e999}`, "\xff\xfe",
	} {
		f.Add(uint8(i), []byte(seed))
	}
	f.Fuzz(func(t *testing.T, route uint8, body []byte) {
		path := paths[int(route)%len(paths)]
		req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+fx.aliceKey)
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("POST %s %q: %d %s", path, body, rec.Code, rec.Body.Bytes())
		}
	})
}
