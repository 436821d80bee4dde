package webui_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/weftlabs/weft/internal/testdb"
)

// TestWebUIMonitors drives the monitor pages in Chromium as a person
// reaches them: a monitor published through the API scores a call that
// ends; from the project the Monitors link lists it, and its page shows
// the verdict's count and the verdict linked to its call.
func TestWebUIMonitors(t *testing.T) {
	if noBrowser != "" {
		t.Skip(noBrowser)
	}
	e := startEnv(t, testdb.SQLiteURL(t))
	var scorer struct{ Digest string }
	e.apiJSON(t, e.aliceKey, "/obj/create", map[string]any{"obj": map[string]any{"project_id": "alice/app", "object_id": "says_ok",
		"val": map[string]any{"_type": "ContainsScorer", "_class_name": "ContainsScorer", "_bases": []string{"Scorer", "Object", "BaseModel"}, "substring": "ok"}}}, &scorer)
	e.api(t, e.aliceKey, "/obj/create", map[string]any{"obj": map[string]any{"project_id": "alice/app", "object_id": "watch",
		"val": map[string]any{"_type": "Monitor", "_class_name": "Monitor", "_bases": []string{"Object", "BaseModel"}, "sampling_rate": 1,
			"scorers": []string{"weave:///alice/app/object/says_ok:" + scorer.Digest}, "call_filter": map[string]any{"op_names": []string{"weave:///alice/app/op/watched:*"}},
			"active": true}}})
	at := time.Now().UTC()
	e.start(t, e.aliceKey, "alice/app", id('e', 1), id('e', 2), "", "weave:///alice/app/op/watched:abc", at, map[string]any{"q": "status?"})
	e.end(t, e.aliceKey, "alice/app", id('e', 1), at.Add(time.Second), "all ok", "")
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(e.getText(t, "/v2/alice/app/monitors/watch/stats"), `"done":1`) {
		if time.Now().After(deadline) {
			t.Fatal("the monitor did not score the call")
		}
		time.Sleep(100 * time.Millisecond)
	}

	tb := newTab(t, e.srv.URL)
	tb.signIn("", e.aliceKey)
	tb.follow(`#projects a[href="/ui/p/alice/app/"]`, "#traces")
	tb.follow(`nav a[data-nav="monitors"]`, "#monitors")
	if row := tb.text(`#monitors tr[data-monitor="watch"]`); !strings.Contains(row, "active") || !strings.Contains(row, "100%") {
		t.Errorf("the monitor's row: %q", row)
	}
	tb.follow(`#monitors a[href="/ui/p/alice/app/monitors/watch"]`, "#monitor-stats")
	if stats := tb.text("#monitor-stats"); !strings.Contains(stats, "Done1") && !strings.Contains(stats, "Done 1") && !strings.Contains(stats, "Done\n1") {
		t.Errorf("the monitor's stats: %q", stats)
	}
	if row := tb.text(fmt.Sprintf(`#verdicts tr[data-call="%s"]`, id('e', 1))); !strings.Contains(row, "says_ok") || !strings.Contains(row, `{"contains":true}`) {
		t.Errorf("the verdict's row: %q", row)
	}
	tb.follow(fmt.Sprintf(`#verdicts a[href="/ui/p/alice/app/calls/%s"]`, id('e', 1)), ".call-detail")
}

// getText GETs an API path as alice and returns the body.
func (e *env) getText(t *testing.T, path string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, e.srv.URL+path, nil)
	req.SetBasicAuth("api", e.aliceKey)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return string(b)
}
