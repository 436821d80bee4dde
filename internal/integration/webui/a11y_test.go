package webui_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// axeSource is axe-core, vendored (pinned and hash-checked) beside the UI's
// served files but kept out of the binary: only these tests load it.
func axeSource(t *testing.T) string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("..", "..", "..", "transport", "webui", "testdata", "vendor", "axe.min.js"))
	if err != nil {
		t.Fatalf("axe-core: %v (run go generate ./transport/webui)", err)
	}
	return string(src)
}

// axeTags are the rule sets checked: WCAG 2.0, 2.1 and 2.2 A and AA (labels,
// contrast, names, ARIA use) and axe's best practices (landmarks, headings).
const axeTags = `['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice']`

// violation is one failed axe rule.
type violation struct {
	ID     string   `json:"id"`
	Impact string   `json:"impact"`
	Help   string   `json:"help"`
	Nodes  []string `json:"nodes"`
}

// checkAccessibility runs axe-core on the page as it is now and fails the
// test for every violation. Evaluating through DevTools is not subject to the
// page's Content-Security-Policy, so the page itself never allows the script.
func (tb *tab) checkAccessibility(what, axe string) {
	tb.t.Helper()
	if !eval[bool](tb, `typeof window.axe === 'object'`) {
		tb.run(chromedp.Evaluate[chromedp.Void](axe + "\n;undefined"))
	}
	out := value(tb, chromedp.Evaluate[string](`axe.run(document, {runOnly: {type: 'tag', values: `+axeTags+`}, resultTypes: ['violations']})
	  .then(r => JSON.stringify(r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
	    nodes: v.nodes.slice(0, 5).map(n => n.target.join(' ') + ': ' + n.failureSummary)}))))`, chromedp.EvalAwaitPromise))
	var violations []violation
	if err := json.Unmarshal([]byte(out), &violations); err != nil {
		tb.t.Fatalf("axe result %q: %v", out, err)
	}
	for _, v := range violations {
		tb.t.Errorf("%s: %s (%s, %s):\n  %s", what, v.Help, v.ID, v.Impact, strings.Join(v.Nodes, "\n  "))
	}
}

func accessibility(t *testing.T, e *sdkEnv) {
	axe := axeSource(t)
	tb := newTab(t, e.srv.URL)
	tb.open("/ui/signin")
	tb.checkAccessibility("sign-in page", axe)
	tb.signIn("", e.adminKey)
	missing := queuePathOf("no-such-queue")
	tb.expect(missing, 404)
	pages := []struct{ name, path, ready string }{
		{"projects", "/", "#projects"},
		{"error page", missing, ".error-page"},
		{"trace list", projectPath(sdkProject), "#traces"},
		{"trace view", projectPath(sdkProject, "traces/", e.seed.Traces[0]), "[role=tree]"},
		{"queue list", projectPath(sdkProject, "queues"), "#queues"},
		{"queue item", queuePathOf(e.queueID), ".annotate-layout"},
	}
	for _, size := range []struct {
		name          string
		width, height int64
	}{{"laptop", 1280, 800}, {"phone", 375, 812}} {
		tb.run(chromedp.EmulateViewport(size.width, size.height))
		for _, p := range pages {
			tb.open(p.path)
			tb.run(chromedp.WaitVisible(chromedp.CSS(p.ready)))
			what := p.name + " at " + size.name + " width"
			tb.checkAccessibility(what, axe)
			// Nothing is wider than the screen: no sideways scrolling.
			if over := eval[int](tb, `document.documentElement.scrollWidth - window.innerWidth`); over > 0 {
				t.Errorf("%s: the page is %d px wider than the window", what, over)
			}
		}
		// The help dialog, open.
		tb.key("?")
		tb.poll(`document.getElementById('keys-help').open`)
		tb.checkAccessibility("keyboard help at "+size.name+" width", axe)
		tb.key(kbEscape)
	}
}

// a11yPage is a page the accessibility checks visit: its path, and what
// shows it is ready.
type a11yPage struct{ name, path, ready string }

// viewport is a window size the pages are checked at.
type viewport struct {
	name          string
	width, height int64
}

var (
	laptop = viewport{"laptop", 1280, 800}
	phone  = viewport{"phone", 375, 812}
)

// checkPagesAt runs the accessibility checks on each page at a window size,
// and fails a page wider than the window (no sideways scrolling).
func (tb *tab) checkPagesAt(size viewport, axe string, pages []a11yPage) {
	tb.t.Helper()
	tb.run(chromedp.EmulateViewport(size.width, size.height))
	for _, p := range pages {
		tb.open(p.path)
		tb.poll(`!!document.querySelector(` + strconv.Quote(p.ready) + `)`)
		what := p.name + " at " + size.name + " width"
		tb.checkAccessibility(what, axe)
		if over := eval[int](tb, `document.documentElement.scrollWidth - window.innerWidth`); over > 0 {
			tb.t.Errorf("%s: the page is %d px wider than the window", what, over)
		}
	}
}
