package webui_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/weftlabs/weft/internal/testdb"
)

// NUL and invalid UTF-8 in any id, filter or form field of a project page
// are a 400; before the one check they reached the SQL builder (a 500 on
// SQLite for object, file, diff and user-filter pages).
func TestBadTextIsRefused(t *testing.T) {
	s := newServer(t, testdb.SQLite(t))
	b := s.browser(t)
	b.signIn("", s.aliceKey)
	csrf := b.csrf()
	for _, id := range []string{"x%00y", "%ff", "%00"} {
		for _, path := range []string{
			"/ui/p/alice/p/traces/" + id, "/ui/p/alice/p/calls/" + id, "/ui/p/alice/p/calls/" + id + "/children",
			"/ui/p/alice/p/calls/" + id + "/value?part=inputs&path=", "/ui/p/alice/p/traces/" + id + "/next-error",
			"/ui/p/alice/p/objects/" + id + "/versions/" + id, "/ui/p/alice/p/files/" + id,
			"/ui/p/alice/p/diff?left=" + id + "&right=" + id, "/ui/p/alice/p/diff?kind=traces&left=" + id + "&right=" + id,
			"/ui/p/alice/p/traces/a/next-error?after=" + id, "/ui/p/alice/p/?q=" + id, "/ui/p/alice/p/?user=" + id,
			"/ui/p/alice/p/?op=" + id, "/ui/p/alice/p/live?q=" + id, "/ui/p/alice/p/queues/" + id,
		} {
			if p := b.get(path); p.status != http.StatusBadRequest {
				t.Errorf("GET %s: %d, want 400", path, p.status)
			}
		}
		raw, _ := url.QueryUnescape(id)
		if p := b.post("/ui/p/alice/p/calls/c/feedback", url.Values{"csrf": {csrf}, "kind": {"note"}, "note": {raw}}); p.status != http.StatusBadRequest {
			t.Errorf("POST a note %q: %d, want 400", id, p.status)
		}
	}
}

// A browser submits a textarea's line breaks as CRLF; what a form saves
// has LF, as the same text sent through the API would: a queue's
// description, and a spec's description and labels.
func TestFormTextLineFeeds(t *testing.T) {
	s := newServer(t, testdb.SQLite(t))
	b := s.browser(t)
	b.signIn("", s.aliceKey)
	csrf := b.csrf()
	saved := b.post("/ui/p/alice/p/queues", url.Values{"csrf": {csrf}, "name": {"Lines"}, "description": {"First line\r\nsecond line\rthird\r\n"}})
	if saved.status != http.StatusSeeOther {
		t.Fatalf("save a queue: %d %s", saved.status, saved.body)
	}
	queueID := strings.TrimPrefix(saved.header.Get("Location"), "/ui/p/alice/p/queues?saved=")
	if got := s.readQueue(t, queueID)["description"]; got != "First line\nsecond line\nthird" {
		t.Errorf("the queue's description: %q", got)
	}
	spec := b.post("/ui/p/alice/p/specs", url.Values{"csrf": {csrf}, "queue": {queueID}, "id": {"tone"}, "label": {"Tone"},
		"description": {"How it\r\nsounds"}, "kind": {"choice"}, "options": {"calm\r\nrude\r\n"}})
	if spec.status != http.StatusSeeOther {
		t.Fatalf("save a spec: %d %s", spec.status, spec.body)
	}
	obj := s.api(t, s.aliceKey, "/obj/read", map[string]any{"project_id": "alice/p", "object_id": "tone", "digest": "latest"})["obj"].(map[string]any)
	val, _ := json.Marshal(obj["val"])
	if !strings.Contains(string(val), `"description":"How it\nsounds"`) || !strings.Contains(string(val), `"enum":["calm","rude"]`) || strings.Contains(string(val), `\r`) {
		t.Errorf("the spec object: %s", val)
	}
}
