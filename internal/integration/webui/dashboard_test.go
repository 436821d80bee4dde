package webui_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/weftlabs/weft/internal/testdb"
)

// TestWebUIDashboard follows the Dashboard link in Chromium on every
// database to the project's last day of traces, clicks the bar of their hour
// and lands on the trace list filtered to that hour; the page passes the
// accessibility checks at laptop and phone widths.
func TestWebUIDashboard(t *testing.T) {
	testdb.EachURL(t, func(t *testing.T, dbURL string) {
		if noBrowser != "" {
			t.Skip(noBrowser)
		}
		e := startEnv(t, dbURL)
		tb := newTab(t, e.srv.URL)
		tb.signIn("", e.aliceKey)
		tb.follow(`#projects a[href="/ui/p/alice/app/"]`, "#traces")
		tb.follow(`nav a[data-nav="dashboard"]`, "#chart-calls")
		tb.poll(`document.querySelectorAll('#chart-calls a').length > 0`)
		tb.capture("dashboard")
		tb.run(chromedp.Evaluate[chromedp.Void](`document.querySelector('#chart-calls a').dispatchEvent(new MouseEvent('click', {bubbles: true, cancelable: true}))`))
		tb.waitPath(func(p string) bool { return strings.Contains(p, "from=") && strings.Contains(p, "to=") })
		tb.poll(`document.querySelectorAll('#traces tbody tr').length >= 2`)

		axe := axeSource(t)
		for _, size := range []viewport{laptop, phone} {
			tb.checkPagesAt(size, axe, []a11yPage{{"dashboard", "/ui/p/alice/app/dashboard?group=op_name", "#chart-calls"}})
		}
	})
}

// TestWebUIDashboardBreakdowns clicks, in Chromium on every database, the
// dashboard's bars broken down by status, by model and by a scorer's verdict,
// and lands each time on the trace list filtered to that bar's status, model
// or verdict, listing the one trace of it.
func TestWebUIDashboardBreakdowns(t *testing.T) {
	testdb.EachURL(t, func(t *testing.T, dbURL string) {
		if noBrowser != "" {
			t.Skip(noBrowser)
		}
		e := startEnv(t, dbURL)
		// A chat trace of a model, and verdicts of the scorer "graded" on it
		// and on the seeded agent (correct) and tool (not) traces.
		at := time.Now().UTC().Add(-time.Hour).Truncate(time.Second).Add(2 * time.Minute)
		chat := id('a', 7)
		e.start(t, e.aliceKey, "alice/app", chat, id('f', 7), "", "chat", at, map[string]any{"q": "hi"})
		e.endWith(t, e.aliceKey, "alice/app", chat, at.Add(time.Second), "hello",
			map[string]any{"usage": map[string]any{"gpt-4o-mini": map[string]any{"prompt_tokens": 12, "completion_tokens": 3}}}, "")
		for call, correct := range map[string]bool{id('a', 0): true, id('a', 1): false, chat: true} {
			e.api(t, e.aliceKey, "/feedback/create", map[string]any{"project_id": "alice/app", "weave_ref": "weave:///alice/app/call/" + call,
				"feedback_type": "wandb.runnable.graded", "runnable_ref": "weave:///alice/app/object/graded:abc",
				"payload": map[string]any{"output": map[string]any{"correct": correct}}})
		}
		tb := newTab(t, e.srv.URL)
		tb.signIn("", e.aliceKey)
		for _, bar := range []struct {
			dashboard, series, filter, op string
		}{
			{"?group=status", "error", "status=error", "tool"},
			{"?group=model", "gpt-4o-mini", "model=gpt-4o-mini", "chat"},
			{"?group=verdict&verdict=graded&verdict_path=correct", "false", "verdict_value=false", "tool"},
		} {
			tb.open("/ui/p/alice/app/dashboard" + bar.dashboard)
			tb.poll(`document.querySelector('#chart-calls a[aria-label^="` + bar.series + `, "]') !== null`)
			tb.run(chromedp.Evaluate[chromedp.Void](`document.querySelector('#chart-calls a[aria-label^="` + bar.series + `, "]').dispatchEvent(new MouseEvent('click', {bubbles: true, cancelable: true}))`))
			tb.waitPath(func(p string) bool { return strings.Contains(p, bar.filter) && strings.Contains(p, "from=") })
			tb.poll(`document.querySelectorAll('#traces tbody tr').length === 1 && document.querySelector('#traces tbody').textContent.includes('` + bar.op + `')`)
		}
	})
}
