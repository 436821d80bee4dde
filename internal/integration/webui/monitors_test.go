package webui_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/weftlabs/weft/internal/integration/e2e"
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
	watchSaysOK(t, e, "weave:///alice/app/op/watched:*")
	at := time.Now().UTC()
	e.start(t, e.aliceKey, "alice/app", id('e', 1), id('e', 2), "", "weave:///alice/app/op/watched:abc", at, map[string]any{"q": "status?"})
	e.end(t, e.aliceKey, "alice/app", id('e', 1), at.Add(time.Second), "all ok", "")
	waitVerdicts(t, e, 1)

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

	// The trace list by the scorer's verdict: only the call it scored.
	tb.open("/ui/p/alice/app/monitors/watch")
	tb.follow(`#monitor-scorers a[data-verdict-traces="says_ok"]`, "#traces")
	rows := eval[[]string](tb, `[...document.querySelectorAll('#traces tbody tr[data-call]')].map(r => r.dataset.call)`)
	if len(rows) != 1 || rows[0] != id('e', 1) {
		t.Errorf("the traces by says_ok's verdict: %v", rows)
	}
	if got := tb.text(".verdict-sort"); !strings.Contains(got, "says_ok") {
		t.Errorf("the verdict sort links: %q", got)
	}
}

// watchSaysOK publishes, as alice through the API, the ContainsScorer
// says_ok (whether the output holds "ok") and the active monitor watch
// running it on every call of op.
func watchSaysOK(t *testing.T, e *env, op string) {
	t.Helper()
	var scorer struct{ Digest string }
	e.apiJSON(t, e.aliceKey, "/obj/create", map[string]any{"obj": map[string]any{"project_id": "alice/app", "object_id": "says_ok",
		"val": map[string]any{"_type": "ContainsScorer", "_class_name": "ContainsScorer", "_bases": []string{"Scorer", "Object", "BaseModel"}, "substring": "ok"}}}, &scorer)
	e.api(t, e.aliceKey, "/obj/create", map[string]any{"obj": map[string]any{"project_id": "alice/app", "object_id": "watch",
		"val": map[string]any{"_type": "Monitor", "_class_name": "Monitor", "_bases": []string{"Object", "BaseModel"}, "sampling_rate": 1,
			"scorers": []string{"weave:///alice/app/object/says_ok:" + scorer.Digest}, "call_filter": map[string]any{"op_names": []string{op}},
			"active": true}}})
}

// waitVerdicts waits up to a minute for the monitor watch's n-th verdict.
func waitVerdicts(t *testing.T, e *env, n int) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(e.getText(t, "/v2/alice/app/monitors/watch/stats"), fmt.Sprintf(`"done":%d`, n)) {
		if time.Now().After(deadline) {
			t.Fatalf("the monitor did not give %d verdicts", n)
		}
		time.Sleep(100 * time.Millisecond)
	}
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

// TestWebUIMonitorForms makes a judge and a monitor in Chromium as a
// person does, from the project's Monitors page: the judge's prompt
// template is previewed on a real call of the project (its messages filled
// from the call, the schema named), a judge model the user may not use is
// refused on save, and the monitor saved with the judge is paused and
// resumed from its page. What the forms saved reads back through the API
// as the Weave objects the SDKs publish: an LLMAsAJudgeScorer with its
// LLMStructuredCompletionModel and verdict schema, and a Monitor naming it.
// The forms pass the accessibility checks; bob may not open them.
func TestWebUIMonitorForms(t *testing.T) {
	if noBrowser != "" {
		t.Skip(noBrowser)
	}
	e := startServingEnv(t, testdb.SQLiteURL(t))
	tb := newTab(t, e.srv.URL)
	tb.signIn("", e.aliceKey)
	tb.follow(`#projects a[href="/ui/p/alice/app/"]`, "#traces")
	tb.follow(`nav a[data-nav="monitors"]`, "#new-monitor")
	tb.follow(`.page-actions a[href="/ui/p/alice/app/edit-scorer"]`, "#scorer-form")

	root := id('a', 0)
	tb.run(
		fillIn("#scorer-form", "name", "is_correct"),
		fillIn("#scorer-form", "model", "test-model"),
		fillIn("#scorer-form", "call", root),
	)
	tb.follow(`#preview-fields button`, "#scorer-preview")
	preview := tb.text("#scorer-preview")
	for _, want := range []string{"test-model", "answering under the schema", "system", "Is the answer correct?", `"choices"`, `"messages"`} {
		if !strings.Contains(preview, want) {
			t.Errorf("the preview lacks %q: %q", want, preview)
		}
	}

	tb.expect("/ui/p/alice/app/scorers", http.StatusBadRequest)
	tb.run(fillIn("#scorer-form", "model", "gpt-nobody-serves"), chromedp.Click(chromedp.CSS(`#scorer-form button[value="save"]`)),
		chromedp.WaitVisible(chromedp.CSS("#scorer-error")))
	if got := tb.text("#scorer-error"); !strings.Contains(got, "gpt-nobody-serves") || !strings.Contains(got, "may not use") {
		t.Errorf("a judge model nobody serves, saved: %q", got)
	}
	tb.run(fillIn("#scorer-form", "model", "test-model"))
	tb.follow(`#scorer-form button[value="save"]`, "#monitor-form")

	tb.run(
		fillIn("#monitor-form", "id", "graded"),
		fillIn("#monitor-form", "ops", "agent\ntool"),
		fillIn("#monitor-form", "sampling", "50"),
		chromedp.Click(chromedp.CSS(`#monitor-form input[name="scorer"]`)),
	)
	tb.follow(`#monitor-form button[type="submit"]`, "#monitor-state")
	if got := tb.text("#monitor-state"); !strings.Contains(got, "active") || !strings.Contains(got, "50%") {
		t.Errorf("the saved monitor: %q", got)
	}
	tb.run(chromedp.Click(chromedp.CSS(`#monitor-toggle button`)), chromedp.WaitReady(chromedp.CSS(`#monitor-toggle input[name="active"][value="1"]`)))
	if got := tb.text("#monitor-state"); !strings.Contains(got, "paused") {
		t.Errorf("the monitor after Pause: %q", got)
	}
	tb.run(chromedp.Click(chromedp.CSS(`#monitor-toggle button`)), chromedp.WaitReady(chromedp.CSS(`#monitor-toggle input[name="active"][value="0"]`)))
	if got := tb.text("#monitor-state"); !strings.Contains(got, "active") {
		t.Errorf("the monitor after Resume: %q", got)
	}

	// What the forms saved, read back as the SDKs read it: the version the
	// monitor runs, whose ref its page links.
	digest := eval[string](tb, `document.querySelector('#monitor-state a').getAttribute('href').split('/').pop()`)
	var mon struct {
		Obj struct {
			Val struct {
				ClassName    string   `json:"_class_name"`
				Bases        []string `json:"_bases"`
				SamplingRate float64  `json:"sampling_rate"`
				Scorers      []string
				CallFilter   struct {
					OpNames []string `json:"op_names"`
				} `json:"call_filter"`
				Active bool
			}
		}
	}
	e.apiJSON(t, e.aliceKey, "/obj/read", map[string]any{"project_id": "alice/app", "object_id": "graded", "digest": digest}, &mon)
	m := mon.Obj.Val
	if m.ClassName != "Monitor" || !m.Active || m.SamplingRate != 0.5 || len(m.Scorers) != 1 ||
		!strings.HasPrefix(m.Scorers[0], "weave:///alice/app/object/is_correct:") || strings.Join(m.CallFilter.OpNames, ",") != "agent,tool" {
		t.Errorf("the monitor read back: %+v", m)
	}
	var scorer struct {
		Obj struct {
			Val struct {
				ClassName string `json:"_class_name"`
				Model     struct {
					ClassName  string `json:"_class_name"`
					LLMModelID string `json:"llm_model_id"`
				}
				ScoringPrompt  string          `json:"scoring_prompt"`
				ResponseSchema json.RawMessage `json:"response_schema"`
			}
		}
	}
	scorerDigest := m.Scorers[0][strings.LastIndex(m.Scorers[0], ":")+1:]
	e.apiJSON(t, e.aliceKey, "/obj/read", map[string]any{"project_id": "alice/app", "object_id": "is_correct", "digest": scorerDigest}, &scorer)
	if s := scorer.Obj.Val; s.ClassName != "LLMAsAJudgeScorer" || s.Model.ClassName != "LLMStructuredCompletionModel" || s.Model.LLMModelID != "test-model" ||
		!strings.Contains(s.ScoringPrompt, "{output}") || !strings.Contains(string(s.ResponseSchema), `"correct"`) {
		t.Errorf("the judge read back: %+v", s)
	}

	axe := axeSource(t)
	for _, size := range []viewport{laptop, phone} {
		tb.checkPagesAt(size, axe, []a11yPage{
			{"monitor form", "/ui/p/alice/app/edit-monitor?id=graded", "#monitor-form"},
			{"scorer form", "/ui/p/alice/app/edit-scorer?name=is_correct", "#scorer-form"},
			{"monitor", "/ui/p/alice/app/monitors/graded", "#monitor-toggle"},
		})
	}

	bob := newTab(t, e.srv.URL)
	bob.signIn("", e.bobKey)
	for _, path := range []string{"/ui/p/alice/app/edit-monitor?id=graded", "/ui/p/alice/app/edit-scorer?name=is_correct"} {
		bob.expect(strings.Split(path, "?")[0], http.StatusForbidden)
		bob.open(path)
		if got := bob.text(".error-page"); strings.Contains(got, "is_correct") || !strings.Contains(got, "403") {
			t.Errorf("bob's view of %s: %q", path, got)
		}
	}
}

// TestWebUIVerdictsToQueueDatasetAndSFT closes the loop in Chromium as a
// person does: the calls a monitor's scorer scored low, reached from the
// monitor's page as the trace list by that verdict and filtered to the
// failing value, are selected and sent to an annotation queue, then saved
// as a dataset version, whose page starts an SFT job of one of the
// project's models on it (the stand-in trainer runs it to its end).
func TestWebUIVerdictsToQueueDatasetAndSFT(t *testing.T) {
	if noBrowser != "" {
		t.Skip(noBrowser)
	}
	e := startServingEnv(t, testdb.SQLiteURL(t))
	watchSaysOK(t, e, "answer")
	var q struct {
		ID string `json:"id"`
	}
	mustJSON(t, e.api(t, e.aliceKey, "/annotation_queues", map[string]any{"project_id": "alice/app", "name": "Low scores"}), &q)
	var model struct {
		ID string `json:"id"`
	}
	c := e2e.Client{URL: e.srv.URL, Auth: e2e.Bearer(e.aliceKey)}
	c.Call(t, http.MethodPost, "/v1/preview/models", map[string]any{"entity": "alice", "project": "app", "name": "answerer", "base_model": "test-model"}, &model)

	at := time.Now().UTC()
	for i, answer := range []string{"all ok", "no idea", "ok then", "cannot say"} {
		e.start(t, e.aliceKey, "alice/app", id('e', i), id('9', i), "", "answer", at.Add(time.Duration(i)*time.Second), map[string]any{"messages": []map[string]any{{"role": "user", "content": fmt.Sprint("question ", i)}}})
		e.end(t, e.aliceKey, "alice/app", id('e', i), at.Add(time.Duration(i)*time.Second+time.Millisecond), answer, "")
	}
	waitVerdicts(t, e, 4)

	tb := newTab(t, e.srv.URL)
	tb.signIn("", e.aliceKey)
	tb.follow(`#projects a[href="/ui/p/alice/app/"]`, "#traces")
	tb.follow(`nav a[data-nav="monitors"]`, "#monitors")
	tb.follow(`#monitors a[href="/ui/p/alice/app/monitors/watch"]`, "#monitor-scorers")
	tb.follow(`#monitor-scorers a[data-verdict-traces="says_ok"]`, "#traces")
	tb.run(
		fillIn(".filters", "verdict_path", "contains"),
		fillIn(".filters", "verdict_value", "false"),
		chromedp.Click(chromedp.CSS(`.filters button[type="submit"]`)),
	)
	tb.poll(`location.search.includes('verdict_value=false') && document.querySelectorAll('#traces tbody tr[data-call]').length === 2`)
	rows := eval[[]string](tb, `[...document.querySelectorAll('#traces tbody tr[data-call]')].map(r => r.dataset.call)`)
	if len(rows) != 2 || !slices.Contains(rows, id('e', 1)) || !slices.Contains(rows, id('e', 3)) {
		t.Fatalf("the calls says_ok scored false: %v", rows)
	}

	tb.run(chromedp.Click(chromedp.CSS(`#traces [data-select-all]`)), chromedp.Click(chromedp.CSS(`#selection [data-selection-action="queue"]`)))
	tb.waitPath(func(p string) bool { return strings.Contains(p, "/queues/"+q.ID+"/items/") })
	var items struct {
		Items []any `json:"items"`
	}
	mustJSON(t, e.api(t, e.aliceKey, "/annotation_queues/"+q.ID+"/items/query", map[string]any{"project_id": "alice/app"}), &items)
	if len(items.Items) != 2 {
		t.Errorf("the queue holds %d items, want the 2 low-scored calls", len(items.Items))
	}

	tb.open("/ui/p/alice/app/?verdict=says_ok&verdict_path=contains&verdict_value=false")
	tb.poll(`!!document.querySelector('#traces [data-select-all]')`)
	tb.run(
		chromedp.Click(chromedp.CSS(`#traces [data-select-all]`)),
		chromedp.SendKeys(chromedp.CSS(`#selection input[name="dataset"]`), "low-scores"),
		chromedp.Click(chromedp.CSS(`#selection [data-selection-action="dataset"]`)),
	)
	tb.waitPath(func(p string) bool { return strings.Contains(p, "/objects/low-scores/versions/") })
	tb.poll(`!!document.querySelector('#train-sft select[name="model"]')`)
	tb.run(chromedp.Click(chromedp.CSS(`#train-sft button[type="submit"]`)))
	jobPath := tb.waitPath(func(p string) bool { return strings.Contains(p, "/training-jobs/") })
	jobID := jobPath[strings.LastIndex(jobPath, "/")+1:]
	var job struct {
		ModelID string `json:"model_id"`
		Status  string `json:"status"`
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		c.Call(t, http.MethodGet, "/v1/preview/training-jobs/"+jobID, nil, &job)
		if job.Status == "COMPLETED" || job.Status == "FAILED" || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if job.ModelID != model.ID || job.Status != "COMPLETED" {
		t.Errorf("the SFT job on the dataset: %+v", job)
	}

	axe := axeSource(t)
	tb.checkPagesAt(laptop, axe, []a11yPage{{"dataset with SFT form", "/ui/p/alice/app/objects/low-scores/versions/latest", "#train-sft"}})

	bob := newTab(t, e.srv.URL)
	bob.signIn("", e.bobKey)
	bob.expect("/ui/p/alice/app/objects/low-scores/versions/latest", http.StatusForbidden)
	bob.open("/ui/p/alice/app/objects/low-scores/versions/latest")
	if got := bob.text(".error-page"); strings.Contains(got, "answerer") || !strings.Contains(got, "403") {
		t.Errorf("bob's view of alice's dataset: %q", got)
	}
}

// monitorPages, on every database: a monitor's page charts its verdicts
// over the last day, and the bar of the hour they were given in leads to
// that hour's traces by the scorer's verdict; a judge that names its judge
// model by a model object's ref, opened from a monitor's page and saved
// with a new prompt, still names the model by that ref. The monitor page
// with its charts and the scorer form of a judge by ref pass the
// accessibility checks.
func monitorPages(t *testing.T, e *env) {
	watchSaysOK(t, e, "watched")
	at := time.Now().UTC()
	e.start(t, e.aliceKey, "alice/app", id('d', 71), id('d', 72), "", "watched", at, map[string]any{"q": "status?"})
	e.end(t, e.aliceKey, "alice/app", id('d', 71), at.Add(time.Millisecond), "all ok", "")
	waitVerdicts(t, e, 1)
	var model struct{ Digest string }
	e.apiJSON(t, e.aliceKey, "/obj/create", map[string]any{"obj": map[string]any{"project_id": "alice/app", "object_id": "judge_model",
		"val": map[string]any{"_type": "LLMStructuredCompletionModel", "_class_name": "LLMStructuredCompletionModel", "_bases": []string{"Model", "Object", "BaseModel"},
			"llm_model_id": "test-model", "default_params": map[string]any{"temperature": 0, "response_format": "json_schema",
				"messages_template": []map[string]string{{"role": "system", "content": "You grade answers."}}}}}}, &model)
	modelRef := "weave:///alice/app/object/judge_model:" + model.Digest
	var judge struct{ Digest string }
	e.apiJSON(t, e.aliceKey, "/obj/create", map[string]any{"obj": map[string]any{"project_id": "alice/app", "object_id": "by_ref",
		"val": map[string]any{"_type": "LLMAsAJudgeScorer", "_class_name": "LLMAsAJudgeScorer", "_bases": []string{"Scorer", "Object", "BaseModel"},
			"model": modelRef, "scoring_prompt": "Answer: {output}\nGood?",
			"response_schema": map[string]any{"type": "object", "properties": map[string]any{"good": map[string]any{"type": "boolean"}}, "required": []string{"good"}}}}}, &judge)
	e.api(t, e.aliceKey, "/obj/create", map[string]any{"obj": map[string]any{"project_id": "alice/app", "object_id": "graded",
		"val": map[string]any{"_type": "Monitor", "_class_name": "Monitor", "_bases": []string{"Object", "BaseModel"}, "sampling_rate": 1,
			"scorers": []string{"weave:///alice/app/object/by_ref:" + judge.Digest}, "call_filter": map[string]any{"op_names": []string{"graded_op"}},
			"active": false}}})

	tb := newTab(t, e.srv.URL)
	tb.signIn("", e.aliceKey)
	tb.follow(`#projects a[href="/ui/p/alice/app/"]`, "#traces")
	tb.follow(`nav a[data-nav="monitors"]`, "#new-monitor")
	tb.follow(`a[href="/ui/p/alice/app/monitors/watch"]`, "#chart-verdicts")
	tb.poll(`document.querySelectorAll('#chart-verdicts a').length === 1`)
	if label := eval[string](tb, `document.querySelector('#chart-verdicts a').getAttribute('aria-label')`); !strings.HasPrefix(label, "done, ") || !strings.HasSuffix(label, ": 1 verdict") {
		t.Errorf("the verdicts chart's bar: %q", label)
	}
	tb.run(chromedp.Evaluate[chromedp.Void](`document.querySelector('#chart-verdicts a').dispatchEvent(new MouseEvent('click', {bubbles: true, cancelable: true}))`))
	tb.waitPath(func(p string) bool { return strings.Contains(p, "verdict=says_ok") && strings.Contains(p, "from=") })
	tb.poll(`!!document.querySelector('#traces tbody tr[data-call="` + id('d', 71) + `"]')`)

	tb.follow(`nav a[data-nav="monitors"]`, "#new-monitor")
	tb.follow(`a[href="/ui/p/alice/app/monitors/graded"]`, "#monitor-scorers")
	tb.follow(`#monitor-scorers a[href="/ui/p/alice/app/edit-scorer?name=by_ref"]`, "#scorer-form")
	if got := eval[string](tb, `document.querySelector('#scorer-form [name="model_ref"]').value`); got != modelRef {
		t.Fatalf("the form of a judge by ref shows model object %q, want %q", got, modelRef)
	}
	if got := eval[string](tb, `document.querySelector('#scorer-form [name="model"]').value`); got != "test-model" {
		t.Errorf("the form shows the model object's judge model as %q", got)
	}
	tb.run(fillIn("#scorer-form", "prompt", "Answer: {output}\nIs it good?"))
	tb.follow(`#scorer-form button[value="save"]`, "#monitor-form")
	var saved struct {
		Obj struct {
			Val struct {
				Model         json.RawMessage
				ScoringPrompt string `json:"scoring_prompt"`
			}
		}
	}
	e.apiJSON(t, e.aliceKey, "/obj/read", map[string]any{"project_id": "alice/app", "object_id": "by_ref", "digest": "latest"}, &saved)
	// (A browser sends a textarea's line ends as CRLF; the saved prompt has LF.)
	if v := saved.Obj.Val; string(v.Model) != strconv.Quote(modelRef) || v.ScoringPrompt != "Answer: {output}\nIs it good?" {
		t.Errorf("the judge saved from the form: model %s, prompt %q; want the ref %s kept and the prompt's line ends LF", v.Model, v.ScoringPrompt, modelRef)
	}

	axe := axeSource(t)
	for _, size := range []viewport{laptop, phone} {
		tb.checkPagesAt(size, axe, []a11yPage{
			{"monitor with charts", "/ui/p/alice/app/monitors/watch", "#chart-verdicts"},
			{"scorer form by ref", "/ui/p/alice/app/edit-scorer?name=by_ref", "#scorer-form"},
		})
	}
}
