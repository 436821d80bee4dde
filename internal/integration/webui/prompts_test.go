package webui_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// promptVersions publishes a StringPrompt in two versions as the SDKs
// publish it, then from the project page as a person would: Objects, the
// Prompts tab, the prompt's versions; labels v0 "production" and moves the
// label to v1; opens v0 in the playground, its content the system message,
// and runs it. The versions page passes the accessibility checks.
func promptVersions(t *testing.T, e *env) {
	const project = "alice/app"
	publish := func(content string) string {
		var res struct {
			Digest string `json:"digest"`
		}
		mustJSON(t, e.api(t, e.aliceKey, "/obj/create", map[string]any{"obj": map[string]any{"project_id": project, "object_id": "greeting",
			"val": map[string]any{"_type": "StringPrompt", "_class_name": "StringPrompt", "_bases": []string{"Prompt", "Object", "BaseModel"},
				"name": "greeting", "description": nil, "content": content}}}), &res)
		return res.Digest
	}
	v0, v1 := publish("You greet people by {name}."), publish("You greet people warmly by {name}.")

	tb := newTab(t, e.srv.URL)
	tb.signIn("", e.aliceKey)
	tb.open("/")
	tb.follow(`#projects a[href="/ui/p/alice/app/"]`, "#traces")
	tb.follow(`nav a[data-nav="objects"]`, "#objects")
	tb.follow(`.kind-tabs a[href*="kind=prompts"]`, `#objects a.history-link[aria-label="2 versions of greeting"]`)
	tb.follow(`#objects a.history-link[aria-label="2 versions of greeting"]`, "#alias-form")
	// label submits the form, which goes back to the same page: the page
	// is marked first, so that the wait ends on the page that answered.
	label := func(digest string) {
		t.Helper()
		tb.run(chromedp.SetValue(chromedp.CSS(`#alias-form select[name="digest"]`), digest),
			chromedp.Evaluate[chromedp.Void](`window.__labelled = false; setTimeout(() => document.querySelector('#alias-form button[type="submit"]').click(), 0)`))
		for i := 0; ; i++ {
			back, err := chromedp.Run(tb.ctx, chromedp.Evaluate[bool](`document.readyState === 'complete' && window.__labelled === undefined && !!document.querySelector('#alias-form')`))
			if err == nil && back {
				return
			}
			if i == 300 {
				t.Fatalf("the versions page did not come back after labelling %s", digest)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	label(v0)
	if got := tb.text(`#versions tr[data-version="0"]`); !strings.Contains(got, "production") {
		t.Fatalf("v0 after labelling it: %q", got)
	}
	label(v1)
	tb.poll(`document.querySelector('#versions tr[data-version="1"] [data-alias="production"]') && !document.querySelector('#versions tr[data-version="0"] [data-alias]')`)
	var read struct {
		Obj struct {
			Digest string `json:"digest"`
		} `json:"obj"`
	}
	mustJSON(t, e.api(t, e.aliceKey, "/obj/read", map[string]any{"project_id": project, "object_id": "greeting", "digest": "production"}), &read)
	if read.Obj.Digest != v1 {
		t.Fatalf("production reads %s, want v1 %s", read.Obj.Digest, v1)
	}
	// The accessibility checks in a tab of their own: a tab's life is
	// bounded, and a loaded machine spends much of it on axe.
	axe := axeSource(t)
	history := tb.path()
	checker := newTab(t, e.srv.URL)
	checker.signIn("", e.aliceKey)
	for _, size := range []viewport{laptop, phone} {
		checker.checkPagesAt(size, axe, []a11yPage{{"prompt versions", history, "#alias-form"}})
	}

	tb.follow(`#versions tr[data-version="0"] a.open-playground`, "#pg-prompt")
	tb.poll(`document.getElementById('pg-form').dataset.ready === 'true'`)
	if got := value(tb, chromedp.Value(chromedp.CSS("#pg-message-list textarea"))); got != "You greet people by {name}." {
		t.Fatalf("the playground's first message: %q", got)
	}
	tb.run(chromedp.SetValue(chromedp.CSS("#pg-model"), "test-model"))
	if state := runPlayground(tb); state != "done" || tb.text("#pg-output") != "Hello from the model" {
		t.Fatalf("run of the prompt: %s %q %q", state, tb.text("#pg-output"), tb.text("#pg-error"))
	}

	// bob's view of alice's prompt: refused.
	bob := newTab(t, e.srv.URL)
	bob.signIn("", e.bobKey)
	bob.expect("/ui/p/alice/app/playground", http.StatusForbidden)
	bob.open("/ui/p/alice/app/playground?prompt=greeting&version=" + v0)
	if got := bob.text(".error-page"); !strings.Contains(got, "403") || strings.Contains(eval[string](bob, "document.body.innerText"), "greet people") {
		t.Fatalf("bob's view: %q", got)
	}
}
