package webui_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/testdb"
)

// TestSavedViews: a view of the trace list saved under a label is a
// SavedView object of the project in Weave's shape (view_type, label,
// definition with filter, sort_by and columns) that keeps the whole view;
// the list offers it to the project and marks it when shown; its link opens
// it; a view written by another client without the list's query opens by
// its op, sort and columns; a label naming another kind of object, a bad
// view and another entity's user are refused; deleting it removes it.
func TestSavedViews(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		s := newServer(t, db)
		b := s.browser(t)
		b.signIn("alice", s.aliceKey)
		csrf := b.csrf()
		query := "status=error&q=refund&cols=inputs.question&sort=summary.weave.latency_ms&dir=asc&user=alice&after=x_y"
		saved := b.post("/ui/p/alice/p/views", url.Values{"csrf": {csrf}, "label": {"Slow refund errors"}, "query": {"?" + query}})
		list := "/ui/p/alice/p/?cols=inputs.question&dir=asc&q=refund&sort=summary.weave.latency_ms&status=error&user=alice"
		if saved.status != http.StatusSeeOther || saved.header.Get("Location") != list {
			t.Fatalf("save: %d %q %s", saved.status, saved.header.Get("Location"), saved.body)
		}

		obj := s.api(t, s.aliceKey, "/obj/read", map[string]any{"project_id": "alice/p", "object_id": "slow-refund-errors", "digest": "latest"})["obj"].(map[string]any)
		if obj["base_object_class"] != "SavedView" {
			t.Fatalf("the view's class: %v", obj["base_object_class"])
		}
		val, _ := json.Marshal(obj["val"])
		var view struct {
			ViewType   string `json:"view_type"`
			Label      string `json:"label"`
			Definition struct {
				Filter struct {
					TraceRootsOnly bool     `json:"trace_roots_only"`
					UserIDs        []string `json:"pf_user_ids"`
				} `json:"filter"`
				SortBy   []map[string]string       `json:"sort_by"`
				Columns  []struct{ Path []string } `json:"columns"`
				URLQuery string                    `json:"url_query"`
			} `json:"definition"`
		}
		if err := json.Unmarshal(val, &view); err != nil {
			t.Fatal(err)
		}
		def := view.Definition
		if view.ViewType != "traces" || view.Label != "Slow refund errors" || !def.Filter.TraceRootsOnly || len(def.Filter.UserIDs) != 1 ||
			len(def.SortBy) != 1 || def.SortBy[0]["field"] != "summary.weave.latency_ms" || def.SortBy[0]["direction"] != "asc" ||
			len(def.Columns) != 1 || strings.Join(def.Columns[0].Path, "/") != "inputs/question" || strings.Contains(def.URLQuery, "after") {
			t.Fatalf("the stored view: %s", val)
		}

		// The list offers it, marked while it is the view shown.
		shown := b.get(list)
		shown.mustContain(t, `data-view="slow-refund-errors" aria-current="true">Slow refund errors</a>`, `action="/ui/p/alice/p/views/slow-refund-errors/delete"`)
		b.get("/ui/p/alice/p/").mustNotContain(t, `aria-current="true">Slow refund errors`)
		if open := b.get("/ui/p/alice/p/views/slow-refund-errors"); open.status != http.StatusSeeOther || open.header.Get("Location") != list {
			t.Fatalf("open: %d %q", open.status, open.header.Get("Location"))
		}

		// A view another client wrote, in Weave's shape alone.
		s.api(t, s.aliceKey, "/obj/create", map[string]any{"obj": map[string]any{"project_id": "alice/p", "object_id": "by-sdk",
			"builtin_object_class": "SavedView", "val": map[string]any{"view_type": "traces", "label": "From the SDK", "definition": map[string]any{
				"filter":  map[string]any{"op_names": []string{"weave:///alice/p/op/answer:*"}},
				"sort_by": []any{map[string]any{"field": "started_at", "direction": "asc"}},
				"columns": []any{map[string]any{"path": []string{"output", "text"}}}}}}})
		if open := b.get("/ui/p/alice/p/views/by-sdk"); open.status != http.StatusSeeOther ||
			open.header.Get("Location") != "/ui/p/alice/p/?cols=output.text&dir=asc&ref=weave%3A%2F%2F%2Falice%2Fp%2Fop%2Fanswer%3A%2A" {
			t.Fatalf("open the SDK's view: %d %q", open.status, open.header.Get("Location"))
		}

		// A label naming an object that is not a view, a bad view, no label.
		s.api(t, s.aliceKey, "/obj/create", map[string]any{"obj": map[string]any{"project_id": "alice/p", "object_id": "qa", "val": map[string]any{"rows": 1}}})
		for _, tc := range []struct {
			label, query string
			status       int
		}{
			{"QA", "status=error", http.StatusConflict},
			{"bad", "status=exploded", http.StatusBadRequest},
			{"", "status=error", http.StatusBadRequest},
			{strings.Repeat("x", 129), "", http.StatusBadRequest},
		} {
			if p := b.post("/ui/p/alice/p/views", url.Values{"csrf": {csrf}, "label": {tc.label}, "query": {tc.query}}); p.status != tc.status {
				t.Errorf("save %q %q: %d, want %d", tc.label, tc.query, p.status, tc.status)
			}
		}
		if p := b.get("/ui/p/alice/p/views/qa"); p.status != http.StatusNotFound {
			t.Errorf("a dataset opened as a view: %d", p.status)
		}
		if p := b.post("/ui/p/alice/p/views/qa/delete", url.Values{"csrf": {csrf}}); p.status != http.StatusConflict {
			t.Errorf("a dataset deleted as a view: %d", p.status)
		}

		// Bob, of another entity, neither sees nor changes alice's views.
		bob := s.browser(t)
		bob.signIn("bob", s.bobKey)
		bobCSRF := bob.csrf()
		for _, p := range []page{
			bob.get("/ui/p/alice/p/views/slow-refund-errors"),
			bob.post("/ui/p/alice/p/views", url.Values{"csrf": {bobCSRF}, "label": {"mine"}, "query": {""}}),
			bob.post("/ui/p/alice/p/views/slow-refund-errors/delete", url.Values{"csrf": {bobCSRF}}),
		} {
			if p.status != http.StatusForbidden || strings.Contains(p.body, "Slow refund") {
				t.Errorf("bob: %d %s", p.status, p.body)
			}
		}

		if p := b.post("/ui/p/alice/p/views/slow-refund-errors/delete", url.Values{"csrf": {csrf}}); p.status != http.StatusSeeOther {
			t.Fatalf("delete: %d %s", p.status, p.body)
		}
		if p := b.get("/ui/p/alice/p/views/slow-refund-errors"); p.status != http.StatusNotFound {
			t.Fatalf("a deleted view opens: %d", p.status)
		}
		b.get("/ui/p/alice/p/").mustNotContain(t, "Slow refund errors")
	})
}
