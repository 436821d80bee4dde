package webui_test

import (
	"strings"
	"testing"

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
