package webui_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// queueForms makes a queue from the project page as a person would: the
// queue list's "New queue", one of the SDK's specs chosen; then from the
// queue's edit form a new field (an AnnotationSpec), which the queue lists
// on coming back. The new pages pass the accessibility checks at laptop and
// phone widths.
func queueForms(t *testing.T, e *sdkEnv) {
	tb := newTab(t, e.srv.URL)
	tb.signIn("", e.adminKey)
	tb.open("/")
	tb.follow(`#projects a[href="`+projectPath(sdkProject)+`"]`, "#traces")
	tb.follow(`nav a[data-nav="queues"]`, "#queues")
	tb.follow("#new-queue", "#queue-form")
	tb.run(
		chromedp.SendKeys(chromedp.CSS(`#queue-form input[name="name"]`), "Triage"),
		chromedp.Click(chromedp.CSS(`.spec-choice[data-spec="quality"] input[type=checkbox]`)),
	)
	tb.follow(`#queue-form button[type="submit"]`, "#queues")
	if got := tb.text("#queues"); !strings.Contains(got, "Triage") {
		t.Fatalf("the queue list after saving: %q", got)
	}

	tb.follow(`a.queue-edit[aria-label="Edit the queue Triage"]`, "#queue-form")
	tb.follow("#new-spec", "#spec-form")
	tb.run(
		chromedp.SendKeys(chromedp.CSS(`#spec-form input[name="id"]`), "urgency"),
		chromedp.SendKeys(chromedp.CSS(`#spec-form input[name="label"]`), "Urgency"),
		chromedp.SetValue(chromedp.CSS(`#spec-form select[name="kind"]`), "number"),
		chromedp.SendKeys(chromedp.CSS(`#spec-form input[name="min"]`), "1"),
		chromedp.SendKeys(chromedp.CSS(`#spec-form input[name="max"]`), "3"),
		chromedp.Click(chromedp.CSS(`#spec-form input[name="integer"]`)),
	)
	tb.follow(`#spec-form button[type="submit"]`, "#queue-form")
	if !eval[bool](tb, `document.querySelector('.spec-choice[data-spec="urgency"] input').checked && document.querySelector('.spec-choice[data-spec="quality"] input').checked`) {
		t.Fatalf("the queue form after the new field: %q", tb.text("#queue-specs"))
	}
	axe := axeSource(t)
	formPath, specPath := tb.path(), projectPath(sdkProject, "edit-spec?name=urgency")
	for _, size := range []viewport{laptop, phone} {
		tb.checkPagesAt(size, axe, []a11yPage{{"queue form", formPath, "#queue-form"}, {"spec form", specPath, "#spec-form"}})
	}
	tb.run(chromedp.EmulateViewport(laptop.width, laptop.height))
	tb.open(formPath)
	tb.follow(`#queue-form button[type="submit"]`, "#queues")

	var res struct {
		Queues []struct {
			Name       string   `json:"name"`
			ScorerRefs []string `json:"scorer_refs"`
		} `json:"queues"`
	}
	mustJSON(t, e.api(t, e.adminKey, "/annotation_queues/query", map[string]any{"project_id": sdkProject, "name": "Triage"}), &res)
	if len(res.Queues) != 1 || len(res.Queues[0].ScorerRefs) != 2 || res.Queues[0].ScorerRefs[0] != e.seed.Specs[0] ||
		!strings.HasPrefix(res.Queues[0].ScorerRefs[1], "weave:///"+sdkProject+"/object/urgency:") {
		t.Fatalf("the queue made in the UI: %+v", res.Queues)
	}
}
