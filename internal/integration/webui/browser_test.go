package webui_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/weftlabs/weft/internal/integration/pgcontainer"
)

// One browser serves every test of this binary; each test opens its own tab
// in a browser context of its own (cookies included), so tests that sign in
// as different users run side by side.
var (
	browserCtx context.Context
	// noBrowser says why there is no browser ("" when there is one).
	noBrowser string
)

func TestMain(m *testing.M) {
	pgcontainer.Register()
	os.Exit(runWithBrowser(m))
}

func runWithBrowser(m *testing.M) int {
	path, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") == "true" {
			fmt.Fprintln(os.Stderr, "webui browser tests: chromium is required under CI=true (apt-get install chromium):", err)
			return 1
		}
		noBrowser = "no chromium on PATH (apt-get install chromium)"
		return m.Run()
	}
	profile, err := os.MkdirTemp("", "weft-chromium-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(profile)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(1280, 900),
		chromedp.WSURLReadTimeout(60*time.Second),
	)
	if os.Geteuid() == 0 { // Chromium refuses to start as root with its sandbox
		opts = append(opts, chromedp.NoSandbox)
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(allocCtx)
	defer cancel()
	if err := chromedp.Do(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "webui browser tests: start chromium:", err)
		return 1
	}
	browserCtx = ctx
	return m.Run()
}

// tab is one browser tab of a test. Every JavaScript exception, console
// error, browser log error (a Content-Security-Policy violation among them),
// dialog and failed or refused request on it fails the test, unless the
// test said it expects that response status for that path.
type tab struct {
	t    testing.TB
	ctx  context.Context
	base string

	mu       sync.Mutex
	problems []string
	allowed  map[string]int // path → status the test expects
}

func newTab(t testing.TB, base string) *tab {
	t.Helper()
	if noBrowser != "" {
		t.Skip(noBrowser)
	}
	tb := &tab{t: t, base: base, allowed: map[string]int{}}
	// The tab enables the runtime, log and network domains itself; the
	// listener sees their events from the start.
	ctx, cancelTab := chromedp.NewContext(browserCtx, chromedp.WithNewBrowserContext(), chromedp.WithListener(tb.observe))
	if err := chromedp.Do(ctx); err != nil { // opens the tab
		t.Fatal(err)
	}
	// The whole life of the tab: its longest test (the training pages)
	// takes a minute on an idle two-core machine, three when it is shared.
	ctx, cancelTimeout := context.WithTimeout(ctx, 4*time.Minute)
	tb.ctx = ctx
	t.Cleanup(func() {
		tb.mu.Lock()
		for _, p := range tb.problems {
			t.Errorf("browser: %s", p)
		}
		tb.mu.Unlock()
		if t.Failed() {
			tb.screenshot()
		}
		cancelTimeout()
		cancelTab()
	})
	return tb
}

func (tb *tab) observe(ev any) {
	switch e := ev.(type) {
	case *runtime.EventExceptionThrown:
		d := e.ExceptionDetails
		desc := d.Text
		if d.Exception != nil {
			desc += " " + d.Exception.Description
		}
		tb.problem("JavaScript exception at %s:%d: %s", d.URL, d.LineNumber, desc)
	case *runtime.EventConsoleAPICalled:
		if e.Type == runtime.ConsoleAPICalledTypeError || e.Type == runtime.ConsoleAPICalledTypeAssert {
			var args []string
			for _, a := range e.Args {
				args = append(args, string(a.Value)+a.Description)
			}
			tb.problem("console.%s: %s", e.Type, strings.Join(args, " "))
		}
	case *log.EventEntryAdded:
		if e.Entry.Level == log.EntryLevelError && !tb.expectedStatusLog(e.Entry) {
			tb.problem("browser log (%s): %s %s", e.Entry.Source, e.Entry.Text, e.Entry.URL)
		}
	case *network.EventLoadingFailed:
		if !e.Canceled {
			tb.problem("request failed: %s %s", e.ErrorText, e.BlockedReason)
		}
	case *network.EventResponseReceived:
		if e.Response.Status >= 400 && !tb.expected(e.Response.URL, int(e.Response.Status)) {
			tb.problem("HTTP %d for %s", e.Response.Status, e.Response.URL)
		}
	case *page.EventJavascriptDialogOpening:
		tb.problem("a dialog opened: %q", e.Message)
	}
}

func (tb *tab) problem(format string, args ...any) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	tb.problems = append(tb.problems, fmt.Sprintf(format, args...))
}

// expect declares that loading path (with any query) answers status.
func (tb *tab) expect(path string, status int) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	tb.allowed[path] = status
}

func (tb *tab) expected(rawURL string, status int) bool {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	path := strings.TrimPrefix(rawURL, tb.base)
	path, _, _ = strings.Cut(path, "?")
	want, ok := tb.allowed[path]
	return ok && want == status
}

// expectedStatusLog is the log line Chromium writes for a response the test
// expects ("Failed to load resource: the server responded with a status of
// 403").
func (tb *tab) expectedStatusLog(e *log.Entry) bool {
	m := statusLog.FindStringSubmatch(e.Text)
	if e.Source != log.EntrySourceNetwork || m == nil {
		return false
	}
	var status int
	_, _ = fmt.Sscan(m[1], &status)
	return tb.expected(e.URL, status)
}

var statusLog = regexp.MustCompile(`status of (\d{3})`)

// run runs browser actions and fails the test on an error.
func (tb *tab) run(steps ...chromedp.Action[chromedp.Void]) {
	tb.t.Helper()
	if err := chromedp.Do(tb.ctx, steps...); err != nil {
		tb.t.Fatalf("browser: %v", err)
	}
}

// value runs an action that returns a value and fails the test on an error.
func value[T any](tb *tab, action chromedp.Action[T]) T {
	tb.t.Helper()
	v, err := chromedp.Run(tb.ctx, action)
	if err != nil {
		tb.t.Fatalf("browser: %v", err)
	}
	return v
}

// open navigates to a path of the server.
func (tb *tab) open(path string) {
	tb.t.Helper()
	tb.run(chromedp.Navigate(tb.base + path))
}

// text returns the text of the first element matching a CSS selector.
func (tb *tab) text(selector string) string {
	tb.t.Helper()
	return value(tb, chromedp.Text(chromedp.CSS(selector)))
}

// eval evaluates a JavaScript expression.
func eval[T any](tb *tab, expr string) T {
	tb.t.Helper()
	return value(tb, chromedp.Evaluate[T](expr))
}

// path is the current location's path and query.
func (tb *tab) path() string {
	tb.t.Helper()
	return eval[string](tb, "location.pathname + location.search")
}

// settled waits until htmx has finished every request, swap and settle on
// the page, so that the content it swapped in is live.
func (tb *tab) settled() {
	tb.t.Helper()
	value(tb, chromedp.Poll[bool](`!document.querySelector('.htmx-request, .htmx-swapping, .htmx-settling, .htmx-added')`))
}

// signIn signs in through the form and waits for the projects page.
func (tb *tab) signIn(user, key string) {
	tb.t.Helper()
	tb.open("/ui/signin")
	tb.run(
		chromedp.SendKeys(chromedp.CSS("#user"), user),
		chromedp.SendKeys(chromedp.CSS("#key"), key),
		chromedp.Click(chromedp.CSS(".signin button[type=submit]")),
		chromedp.WaitVisible(chromedp.CSS(".signout")),
	)
}

// capture saves the page as name.png in the directory WEFT_SCREENSHOT_DIR
// names, when it is set: pictures of the pages for people to look at.
func (tb *tab) capture(name string) {
	tb.t.Helper()
	dir := os.Getenv("WEFT_SCREENSHOT_DIR")
	if dir == "" {
		return
	}
	png := value(tb, chromedp.FullScreenshot(100))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		tb.t.Fatal(err)
	}
}

// screenshot saves the page to testdata/failures/<test>.png for a failed test.
func (tb *tab) screenshot() {
	ctx, cancel := context.WithTimeout(tb.ctx, 10*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)) // 100: PNG
	if err != nil {
		tb.t.Logf("no screenshot: %v", err)
		return
	}
	dir := filepath.Join("testdata", "failures")
	_ = os.MkdirAll(dir, 0o755)
	file := filepath.Join(dir, regexp.MustCompile(`[^A-Za-z0-9_.-]+`).ReplaceAllString(tb.t.Name(), "_")+".png")
	if err := os.WriteFile(file, png, 0o644); err != nil {
		tb.t.Logf("no screenshot: %v", err)
		return
	}
	abs, _ := filepath.Abs(file)
	tb.t.Logf("screenshot of the failed page: %s", abs)
}
