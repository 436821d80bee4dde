package webui_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/weftlabs/weft/internal/testdb"
)

// TestWebUISettings drives a project's settings in Chromium on every
// database, reached from the project's navigation: a new API key is shown
// once and works on the API until it is revoked here; a price of a local
// model, typed per million tokens, prices that model's calls in the trace
// list; the page passes the accessibility checks at laptop and phone
// widths; another entity's settings are refused.
func TestWebUISettings(t *testing.T) {
	testdb.EachURL(t, func(t *testing.T, dbURL string) {
		if noBrowser != "" {
			t.Skip(noBrowser)
		}
		e := startEnv(t, dbURL)
		tb := newTab(t, e.srv.URL)
		tb.signIn("", e.aliceKey)
		tb.follow(`#projects a[href="/ui/p/alice/app/"]`, "#traces")
		tb.follow(`nav a[data-nav="settings"]`, "#key-list")

		tb.run(
			chromedp.SendKeys(chromedp.CSS(`#create-key input[name="name"]`), "notebook"),
			chromedp.Click(chromedp.CSS(`#create-key button[type="submit"]`)),
			chromedp.WaitVisible(chromedp.CSS("#new-key")),
		)
		key := tb.text("#new-key")
		if !strings.HasPrefix(key, "wf_") {
			t.Fatalf("the new key: %q", key)
		}
		if got := tb.text(`#key-list tbody tr:first-child .last-used`); got != "never" {
			t.Fatalf("the new key was used %q", got)
		}
		e.api(t, key, "/calls/query_stats", map[string]any{"project_id": "alice/app"})
		// The key's use shows on the page (written at most once a minute).
		tb.open("/ui/p/alice/app/settings")
		if got := tb.text(`#key-list tbody tr:first-child .last-used`); got == "never" || !strings.Contains(tb.text(`#key-list tbody tr:first-child`), "notebook") {
			t.Fatalf("the used key's row: %q", tb.text(`#key-list tbody tr:first-child`))
		}
		tb.capture("settings")
		tb.run(chromedp.Click(chromedp.CSS(`#key-list tr:first-child button`)))
		tb.waitPath(func(p string) bool { return strings.Contains(p, "revoked=") })
		if got := tb.text("#revoked"); !strings.Contains(got, "notebook") {
			t.Fatalf("after revoking: %q", got)
		}
		if status := apiStatus(t, e, key, "/calls/query_stats"); status != http.StatusUnauthorized {
			t.Fatalf("the revoked key answers %d", status)
		}

		tb.run(
			fillIn("#add-price", "model", "tiny-local"),
			fillIn("#add-price", "prompt", "3"),
			fillIn("#add-price", "completion", "15"),
			chromedp.Click(chromedp.CSS(`#add-price button[type="submit"]`)),
			chromedp.WaitVisible(chromedp.CSS(`#price-list tr[data-price="tiny-local"]`)),
		)
		at := time.Now().UTC().Add(time.Second)
		callID := id('5', 0)
		e.start(t, e.aliceKey, "alice/app", callID, id('6', 0), "", "local.chat", at, map[string]any{"q": "hi"})
		e.endWith(t, e.aliceKey, "alice/app", callID, at.Add(time.Second), "hello",
			map[string]any{"usage": map[string]any{"tiny-local": map[string]any{"prompt_tokens": 1000, "completion_tokens": 200}}}, "")
		tb.follow(`nav a[data-nav="project"]`, "#traces")
		if got := tb.text(`#traces tr[data-call="` + callID + `"] td.cost`); got != "$0.006000" {
			t.Fatalf("the local model's call costs %q", got)
		}

		axe := axeSource(t)
		for _, size := range []viewport{laptop, phone} {
			tb.checkPagesAt(size, axe, []a11yPage{{"settings", "/ui/p/alice/app/settings", "#add-price"}})
		}

		bob := newTab(t, e.srv.URL)
		bob.signIn("", e.bobKey)
		bob.expect("/ui/p/alice/app/settings", 403)
		bob.open("/ui/p/alice/app/settings")
		if got := bob.text(".error-page"); strings.Contains(got, "tiny-local") || !strings.Contains(got, "403") {
			t.Fatalf("bob's view of alice's settings: %q", got)
		}
	})
}

// fillIn sets a field of a form by script.
func fillIn(form, name, value string) chromedp.Action[chromedp.Void] {
	return chromedp.Evaluate[chromedp.Void](`document.querySelector(` + jsString(form+` [name="`+name+`"]`) + `).value = ` + jsString(value))
}

func jsString(s string) string {
	return `'` + strings.NewReplacer(`\`, `\\`, `'`, `\'`, "\n", `\n`).Replace(s) + `'`
}

// apiStatus posts a project's call stats query with key and returns the
// answer's status.
func apiStatus(t *testing.T, e *env, key, path string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+path, strings.NewReader(`{"project_id":"alice/app"}`))
	req.SetBasicAuth("api", key)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}
