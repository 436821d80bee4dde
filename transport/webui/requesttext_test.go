package webui_test

import (
	"net/http"
	"net/url"
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
