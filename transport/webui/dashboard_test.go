package webui_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/testdb"
)

// TestDashboard: the dashboard draws the project's traces of the last day
// as bars that link to the trace list filtered to their hour (and, broken
// down by op, to their op); a bad range or grouping is a 400 and another
// entity's user is refused.
func TestDashboard(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		s := newServer(t, db)
		at := time.Now().UTC().Add(-time.Minute)
		s.callStart(t, s.aliceKey, "alice/p", "0000000a-0000-7000-8000-000000000001", "0000000f-0000-7000-8000-000000000001", "", "answer", at, map[string]any{"q": 1})
		b := s.browser(t)
		b.signIn("alice", s.aliceKey)
		page := b.get("/ui/p/alice/p/dashboard")
		hour := at.Truncate(time.Hour).Format("2006-01-02T15:04")
		page.mustContain(t, `id="chart-calls"`, `id="chart-p95"`, `id="chart-cost"`, `href="/ui/p/alice/p/?from=`+strings.ReplaceAll(hour, ":", "%3A"))
		byOp := b.get("/ui/p/alice/p/dashboard?range=30d&group=op_name")
		byOp.mustContain(t, `op=answer`)
		for _, bad := range []string{"?range=1y", "?group=inputs"} {
			if got := b.get("/ui/p/alice/p/dashboard" + bad); got.status != http.StatusBadRequest {
				t.Errorf("%s: %d", bad, got.status)
			}
		}
		bob := s.browser(t)
		bob.signIn("bob", s.bobKey)
		if got := bob.get("/ui/p/alice/p/dashboard"); got.status != http.StatusForbidden {
			t.Errorf("bob: %d", got.status)
		}
	})
}
