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
// as bars, captioned with their scale in the unit's number, that link to the trace list filtered to their hour (and, broken
// down by op, to their op); broken down by model its series are the models
// and its bars link to their model; broken down by a scorer's verdict its
// series are the verdict's values and its bars link to their verdict;
// a chosen range is drawn by the hour and its bars link to their hour; a bad
// range, chosen bounds or grouping is a 400 and another entity's user is
// refused.
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
		page.mustContain(t, `id="chart-calls"`, `id="chart-p95"`, `id="chart-cost"`, `Traces <span class="muted">(up to 1 trace)`, `(up to 0 errors)`, `: 1 trace"`, `href="/ui/p/alice/p/?from=`+strings.ReplaceAll(hour, ":", "%3A"))
		s.callEnd(t, s.aliceKey, "alice/p", "0000000a-0000-7000-8000-000000000001", at.Add(time.Second), "ok",
			map[string]any{"usage": map[string]any{"gpt-4o-mini": map[string]any{"prompt_tokens": 10, "completion_tokens": 2}}}, "")
		byOp := b.get("/ui/p/alice/p/dashboard?range=30d&group=op_name")
		byOp.mustContain(t, `op=answer`)
		byModel := b.get("/ui/p/alice/p/dashboard?group=model")
		byModel.mustContain(t, `aria-label="gpt-4o-mini, `, `model=gpt-4o-mini`)
		s.api(t, s.aliceKey, "/feedback/create", map[string]any{"project_id": "alice/p", "weave_ref": "weave:///alice/p/call/0000000a-0000-7000-8000-000000000001",
			"feedback_type": "wandb.runnable.graded", "runnable_ref": "weave:///alice/p/object/graded:abc",
			"payload": map[string]any{"output": map[string]any{"correct": true}}})
		byVerdict := b.get("/ui/p/alice/p/dashboard?group=verdict&verdict=graded&verdict_path=correct")
		byVerdict.mustContain(t, `aria-label="true, `, `verdict=graded&amp;verdict_path=correct&amp;verdict_value=true`)
		from := at.Add(-2 * time.Hour).Format("2006-01-02T15:04")
		to := at.Add(time.Hour).Format("2006-01-02T15:04")
		chosen := b.get("/ui/p/alice/p/dashboard?range=custom&from=" + from + "&to=" + to)
		chosen.mustContain(t, `value="`+from+`"`, `href="/ui/p/alice/p/?from=`+strings.ReplaceAll(hour, ":", "%3A"))
		for _, bad := range []string{"?range=1y", "?group=inputs", "?group=verdict", "?group=verdict&verdict=a]b", "?range=custom&from=yesterday&to=" + to, "?range=custom&from=" + to + "&to=" + from,
			"?range=custom&from=2020-01-01T00:00&to=2026-01-01T00:00"} {
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
