package webui_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/weftlabs/weft/internal/testdb"
)

// TestWebUITraceActions drives the actions on calls chosen in the trace
// list in Chromium on every database, from the project page: two traces
// ticked (one of them before a live update redraws the rows) go to an
// annotation queue, whose page then annotates them; one ticked with "select
// all" and unticked again is left out; a ticked trace saved as a dataset
// opens the dataset's new version.
func TestWebUITraceActions(t *testing.T) {
	testdb.EachURL(t, func(t *testing.T, dbURL string) {
		if noBrowser != "" {
			t.Skip(noBrowser)
		}
		e := startEnv(t, dbURL)
		var q struct {
			ID string `json:"id"`
		}
		mustJSON(t, e.api(t, e.aliceKey, "/annotation_queues", map[string]any{"project_id": "alice/app", "name": "Review these"}), &q)

		tb := newTab(t, e.srv.URL)
		tb.signIn("", e.aliceKey)
		tb.follow(`#projects a[href="/ui/p/alice/app/"]`, "#traces")
		root, failed := id('a', 0), id('a', 1)
		box := func(callID string) string { return `#traces input[name="call"][value="` + callID + `"]` }

		tb.run(chromedp.Click(chromedp.CSS(`#traces [data-select-all]`)))
		if got := tb.text("[data-selection-count]"); got != "2 selected" {
			t.Fatalf("after selecting the page: %q", got)
		}
		tb.run(chromedp.Click(chromedp.CSS(box(failed))))
		if got := tb.text("[data-selection-count]"); got != "1 selected" {
			t.Fatalf("after unticking one: %q", got)
		}
		// A filter change draws the rows afresh: the ticked one stays ticked.
		tb.run(chromedp.Click(chromedp.CSS(`.filters button[type="submit"]`)))
		tb.poll(`document.querySelector(` + jsString(box(root)) + `)?.checked === true && location.search !== ''`)
		tb.run(chromedp.Click(chromedp.CSS(box(failed))))
		if got := tb.text("[data-selection-count]"); got != "2 selected" {
			t.Fatalf("after ticking the second: %q", got)
		}
		tb.run(chromedp.Click(chromedp.CSS(`#selection [data-selection-action="queue"]`)))
		tb.waitPath(func(p string) bool { return strings.Contains(p, "/queues/"+q.ID+"/items/") })
		tb.poll(`!!document.querySelector('.annotate-layout')`)
		if got := tb.text(".progress-text"); !strings.Contains(got, "of 2") {
			t.Fatalf("the queue after adding two traces: %q", got)
		}

		tb.follow(`nav a[data-nav="project"]`, "#traces")
		tb.run(
			chromedp.Click(chromedp.CSS(box(root))),
			chromedp.SendKeys(chromedp.CSS(`#selection input[name="dataset"]`), "agent-runs"),
			chromedp.Click(chromedp.CSS(`#selection [data-selection-action="dataset"]`)),
		)
		tb.waitPath(func(p string) bool { return strings.Contains(p, "/objects/agent-runs/versions/") })
		tb.poll(`!!document.querySelector('.object-version .table-link')`)
		tb.follow(`.object-version .table-link`, "#rows")
		if got := tb.text("#table-count"); !strings.HasPrefix(got, "1 row") {
			t.Fatalf("the dataset's rows: %q", got)
		}
	})
}
