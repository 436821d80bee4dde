package webui_test

import (
	"encoding/json"
	"maps"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// evalProject is the project where the SDK seed publishes its dataset,
// prompt and op versions and runs its evaluation.
const evalProject = "admin/evals"

// objectPages follows the links of the object and table pages in Chromium
// over what the official SDK wrote: the lists by kind, a version history and
// its diffs, a dataset's rows sorted and moved through by keyboard.
func objectPages(t *testing.T, e *sdkEnv) {
	axe := axeSource(t)

	tb := newTab(t, e.srv.URL)
	tb.signIn("", e.adminKey)
	tb.open(projectPath(evalProject))
	tb.follow(`[data-nav=objects]`, "#objects")
	for _, name := range []string{"qa", "qa-eval", "greet", "greeting", "exactMatch", "Evaluation.evaluate"} {
		if !eval[bool](tb, `!!document.querySelector('#objects tr[data-object="`+name+`"]')`) {
			t.Fatalf("the object list lacks %s: %s", name, tb.text("#objects"))
		}
	}
	// By keyboard: j j focuses the second object's link, Enter opens it.
	tb.key("jj")
	second := eval[string](tb, `document.activeElement.closest('tr')?.dataset.object ?? ''`)
	if want := eval[string](tb, `document.querySelectorAll('#objects tbody tr')[1].dataset.object`); second != want {
		t.Fatalf("j j focused %q, want the second object %q", second, want)
	}
	tb.key("\r")
	tb.waitPath(func(p string) bool { return strings.Contains(p, "/objects/"+second+"/versions/") })
	tb.open(projectPath(evalProject, "objects"))
	// Kinds: datasets, prompts (StringPrompt is a Prompt).
	tb.follow(`.kind-tabs a[href$="kind=datasets"]`, `#objects tr[data-object="qa"]`)
	if got := eval[int](tb, `document.querySelectorAll('#objects tbody tr').length`); got != 1 {
		t.Fatalf("datasets: %d rows: %s", got, tb.text("#objects"))
	}
	tb.follow(`.kind-tabs a[href$="kind=prompts"]`, `#objects tr[data-object="greeting"]`)
	if got := tb.text(`#objects tr[data-object="greeting"]`); !strings.Contains(got, "StringPrompt") || !strings.Contains(got, "v1") {
		t.Fatalf("the prompt row: %q", got)
	}
	// The dataset's history: its two versions compared, rows as a row diff.
	tb.follow(`.kind-tabs a[href$="kind=datasets"]`, `#objects`)
	tb.follow(`#objects tr[data-object="qa"] .history-link`, "#versions")
	tb.follow(`.version-diff button[type=submit]`, ".table-diff")
	if got := tb.text(".table-diff .diff-counts"); got != "2 rows added · 2 removed · 1 kept" {
		t.Fatalf("the dataset's row diff: %q", got)
	}
	if got := tb.text(".table-diff"); !strings.Contains(got, "Paris, France") || !strings.Contains(got, "colour of the sky") {
		t.Fatalf("the changed rows are not shown: %q", got)
	}
	// The op's two versions: their code as a line diff.
	tb.open(projectPath(evalProject, "objects/greet/versions"))
	tb.follow(`#versions .prev-diff`, "#code-diff")
	if got := tb.text("#code-diff .line-added"); !strings.Contains(got, "polite") {
		t.Fatalf("the op's added line: %q", got)
	}
	if got := tb.text("#code-diff .line-removed"); !strings.Contains(got, "hi ${name}") {
		t.Fatalf("the op's removed line: %q", got)
	}
	// An op version's page shows its code, not only its file's digest.
	tb.open(projectPath(evalProject, "objects/greet/versions"))
	tb.follow(`#versions tr[data-version="1"] a.version-link`, "#op-code")
	if got := tb.text("#op-code"); !strings.Contains(got, "polite") || !strings.Contains(got, "greet") {
		t.Fatalf("the op's code: %q", got)
	}

	// Kinds the TypeScript SDK has no class for, stored as the Python SDK
	// stores them: a Scorer, and a Model in three versions whose first and
	// last are compared (not adjacent) as a structural diff.
	for _, o := range []struct {
		name, class, base string
		extra             map[string]any
	}{
		{"reviewer", "Reviewer", "Scorer", map[string]any{"threshold": 0.5}},
		{"summarizer", "Summarizer", "Model", map[string]any{"temperature": 0.1, "style": "short"}},
		{"summarizer", "Summarizer", "Model", map[string]any{"temperature": 0.5, "style": "short"}},
		{"summarizer", "Summarizer", "Model", map[string]any{"temperature": 0.9, "style": "short", "max_words": 50}},
	} {
		val := map[string]any{"_type": o.class, "_class_name": o.class, "_bases": []string{o.base, "Object", "BaseModel"}, "name": o.name, "description": nil}
		maps.Copy(val, o.extra)
		e.api(t, e.adminKey, "/obj/create", map[string]any{"obj": map[string]any{"project_id": evalProject, "object_id": o.name, "val": val}})
	}
	tb.open(projectPath(evalProject, "objects"))
	for _, kind := range []struct{ tab, has, lacks string }{
		{"ops", "greet", "qa"}, {"scorers", "reviewer", "summarizer"}, {"evaluations", "qa-eval", "qa"}, {"models", "summarizer", "reviewer"},
	} {
		tb.follow(`.kind-tabs a[href$="kind=`+kind.tab+`"]`, `#objects tr[data-object="`+kind.has+`"]`)
		if eval[bool](tb, `!!document.querySelector('#objects tr[data-object="`+kind.lacks+`"]')`) || !strings.HasSuffix(tb.path(), "kind="+kind.tab) {
			t.Fatalf("the %s tab at %s: %s", kind.tab, tb.path(), tb.text("#objects"))
		}
	}
	// The models tab, last, shows the model's class, latest version and count.
	if got := tb.text(`#objects tr[data-object="summarizer"]`); !strings.Contains(got, "Summarizer") || !strings.Contains(got, "v2") || !strings.Contains(got, "3") {
		t.Fatalf("the model's row (class, latest, versions): %q", got)
	}
	tb.follow(`#objects tr[data-object="summarizer"] .history-link`, "#versions")
	tb.run(chromedp.Click(chromedp.CSS(`#versions tr[data-version="0"] input[name=a]`)), chromedp.Click(chromedp.CSS(`#versions tr[data-version="2"] input[name=b]`)))
	tb.follow(`.version-diff button[type=submit]`, ".object-value-diff")
	if p := tb.path(); !strings.Contains(p, "a=v0") || !strings.Contains(p, "b=v2") {
		t.Fatalf("the diff's link: %s", p)
	}
	diff := tb.text(".object-value-diff")
	for _, want := range []string{"1 changed · 1 added · 0 removed", "temperature", "0.1", "0.9", "max_words"} {
		if !strings.Contains(diff, want) {
			t.Fatalf("the v0→v2 diff lacks %q:\n%s", want, diff)
		}
	}
	if strings.Contains(diff, "0.5") {
		t.Fatalf("the v0→v2 diff shows v1's value:\n%s", diff)
	}
	// Structural: the changed member and the added one are marked as such.
	if got := eval[string](tb, `['changed', 'added'].map(op => [...document.querySelectorAll('.object-value-diff li.diff-' + op + ' > .json-key')].map(k => k.textContent).join('+')).join(',')`); got != "temperature,max_words" {
		t.Fatalf("changed and added members: %q", got)
	}

	// The first version's rows, sorted by a column, then by keyboard.
	tb.open(projectPath(evalProject, "objects/qa/versions/v0"))
	tb.follow(`.table-link`, "#rows")
	tb.checkAccessibility("table rows", axe)
	tb.follow(`#rows th a[data-sort=expected]`, `#rows th[aria-sort=ascending]`)
	if p := tb.path(); !strings.Contains(p, "sort=expected") {
		t.Fatalf("sorting kept no link: %s", p)
	}
	if got := eval[string](tb, `[...document.querySelectorAll('#rows tbody tr')].map(r => r.cells[3].innerText.trim()).join(",")`); got != "4,Paris,blue" {
		t.Fatalf("rows sorted by expected: %q", got)
	}
	tb.key("j")
	tb.key("j")
	if got := eval[int](tb, `[...document.querySelectorAll('#rows tbody tr')].indexOf(document.activeElement.closest('tr'))`); got != 1 {
		t.Fatalf("j j in the rows focuses row %d", got)
	}

}

// evaluationPages: the calls that used the evaluation, and a comparison of
// its two runs down to a regression, its trace, and the forms that send it
// to a queue and to a new dataset.
func evaluationPages(t *testing.T, e *sdkEnv) {
	var queue struct {
		ID string `json:"id"`
	}
	mustJSON(t, e.api(t, e.adminKey, "/annotation_queues", map[string]any{"project_id": evalProject, "name": "Regressions"}), &queue)
	tb := newTab(t, e.srv.URL)
	tb.signIn("", e.adminKey)
	// The calls that used the evaluation's version: its two runs and their
	// per-example calls.
	tb.open(projectPath(evalProject, "objects/qa-eval/versions/latest"))
	tb.run(chromedp.Click(chromedp.CSS(`.calls-link`)))
	tb.waitPath(func(p string) bool { return strings.Contains(p, "ref=") })
	tb.poll(`!!document.querySelector('#traces')`)
	if got := tb.text("#results .count"); !strings.HasPrefix(got, "8 calls") {
		t.Fatalf("calls that used the evaluation: %q", got)
	}

	// The runs, compared; the regression alone; its trace.
	tb.follow(`[data-nav=evaluations]`, "#eval-runs")
	for _, run := range e.seed.EvalRuns {
		if got := tb.text(`#eval-runs tr[data-run="` + run + `"]`); !strings.Contains(got, "exactMatch") {
			t.Fatalf("run %s shows no scores: %q", run, got)
		}
	}
	// exactMatch returns {correct: boolean}: the SDK summarises it a level
	// deeper, as a fraction.
	if got := tb.text(`#eval-runs tr[data-run="` + e.seed.EvalRuns[1] + `"] [data-score="exactMatch.correct.true_fraction"]`); got != "0.6667" {
		t.Fatalf("the guesser's exactMatch: %q", got)
	}
	// One run's results: its three examples, each scored.
	tb.follow(`#eval-runs tr[data-run="`+e.seed.EvalRuns[0]+`"] .results-link`, "#compare")
	if got := eval[string](tb, `[...document.querySelectorAll('#compare tbody [data-score="exactMatch.correct"]')].map(d => d.textContent).join(',')`); got != "1,1,1" {
		t.Fatalf("the oracle's results, exactMatch.correct by example: %q", got)
	}
	if got := tb.text(`#compare-runs [data-run="` + e.seed.EvalRuns[0] + `"]`); !strings.Contains(got, "exactMatch.correct.true_fraction") {
		t.Fatalf("the oracle's run in its results: %q", got)
	}
	tb.follow(`[data-nav=evaluations]`, "#eval-runs")
	tb.run(
		chromedp.Click(chromedp.CSS(`#eval-runs tr[data-run="`+e.seed.EvalRuns[0]+`"] input[type=checkbox]`)),
		chromedp.Click(chromedp.CSS(`#eval-runs tr[data-run="`+e.seed.EvalRuns[1]+`"] input[type=checkbox]`)),
	)
	tb.follow(`.eval-runs button[type=submit]`, "#compare")
	if got := eval[int](tb, `document.querySelectorAll('#compare tbody tr').length`); got != 3 {
		t.Fatalf("the comparison has %d rows", got)
	}
	// The list is newest first, so the guesser's run is the baseline; the
	// oracle's becomes it, and the guesser's miss is the regression.
	if got := tb.text(`#compare-runs tr.baseline`); !strings.Contains(got, "guessModel") {
		t.Fatalf("the baseline: %q", got)
	}
	tb.follow(`#compare-runs tr[data-run="`+e.seed.EvalRuns[0]+`"] .use-baseline`, `#compare-runs tr.baseline[data-run="`+e.seed.EvalRuns[0]+`"]`)
	tb.follow(`.regressions-only`, `#compare tr.regression`)
	if got := eval[int](tb, `document.querySelectorAll('#compare tbody tr').length`); got != 1 {
		t.Fatalf("regressions only: %d rows", got)
	}
	row := tb.text("#compare tbody tr")
	if got := tb.text(`#compare tbody td[data-run="` + e.seed.EvalRuns[1] + `"] [data-score="exactMatch.correct"]`); got != "0 −1" {
		t.Fatalf("the guesser's exactMatch.correct on the regression: %q", got)
	}
	for _, want := range []string{"capital of France", "Lyon", "−1", "regression"} {
		if !strings.Contains(row, want) {
			t.Fatalf("the regression row lacks %q: %q", want, row)
		}
	}
	compareURL := tb.path()
	// By keyboard: j past the two runs' rows to the example's, whose opener
	// is its first run's trace link (the guesser's, first in the URL); Enter
	// opens it.
	tb.key("jjj")
	if !eval[bool](tb, `document.activeElement.matches('#compare td[data-run="`+e.seed.EvalRuns[1]+`"] .open-trace')`) {
		t.Fatalf("j j j focused %s", eval[string](tb, `document.activeElement.outerHTML`))
	}
	tb.key("\r")
	tb.waitPath(func(p string) bool { return p != compareURL })
	tb.poll(`!!document.querySelector('[role=tree]')`)
	if p := tb.path(); !strings.Contains(p, "/traces/") || !strings.Contains(p, "call=") {
		t.Fatalf("the row's trace opened %s", p)
	}
	if got := tb.text(".call-detail"); !strings.Contains(got, "Lyon") {
		t.Fatalf("the opened call is not the guesser's: %q", got)
	}

	// Send the regression to the queue, then to a new dataset.
	tb.open(compareURL)
	tb.run(
		chromedp.Click(chromedp.CSS(`#compare tbody input[name=row]`)),
		chromedp.Click(chromedp.CSS(`.send-queue`)),
	)
	tb.waitPath(func(p string) bool { return strings.Contains(p, "/queues/"+queue.ID) })
	var items struct {
		Items []any `json:"items"`
	}
	mustJSON(t, e.api(t, e.adminKey, "/annotation_queues/"+queue.ID+"/items/query", map[string]any{"project_id": evalProject}), &items)
	if len(items.Items) != 2 {
		t.Fatalf("the queue holds %d items, want the two runs' calls of the example", len(items.Items))
	}
	tb.open(compareURL)
	tb.run(
		chromedp.Click(chromedp.CSS(`#compare tbody input[name=row]`)),
		chromedp.Evaluate[chromedp.Void](`document.querySelector('.send-rows input[name=dataset]').value = 'qa-regressions'`),
		chromedp.Click(chromedp.CSS(`.send-dataset`)),
	)
	tb.waitPath(func(p string) bool { return strings.Contains(p, "/objects/qa-regressions/versions/") })
	tb.follow(`.table-link`, "#rows")
	if got := tb.text("#rows tbody"); !strings.Contains(got, "capital of France") || eval[int](tb, `document.querySelectorAll('#rows tbody tr').length`) != 1 {
		t.Fatalf("the new dataset's rows: %q", got)
	}
}

// follow clicks what leads to another page and waits until that page is
// loaded and shows ready: waiting for ready alone could find it on the page
// being left.
func (tb *tab) follow(selector, ready string) {
	tb.t.Helper()
	before := tb.path()
	tb.run(chromedp.Click(chromedp.CSS(selector)))
	tb.waitPath(func(p string) bool { return p != before })
	sel, _ := json.Marshal(ready)
	tb.poll(`!!document.querySelector(` + string(sel) + `)`)
}

// objectAccessibility runs the accessibility checks of part 1 on the object
// and evaluation pages at laptop and phone widths, one tab per width.
func objectAccessibility(t *testing.T, e *sdkEnv) {
	axe := axeSource(t)
	pages := []a11yPage{
		{"objects", projectPath(evalProject, "objects"), "#objects"},
		{"object versions", projectPath(evalProject, "objects/qa/versions"), "#versions"},
		{"object diff", projectPath(evalProject, "objects/qa/diff?a=v0&b=v1"), ".table-diff"},
		{"op code diff", projectPath(evalProject, "objects/greet/diff?a=v0&b=v1"), "#code-diff"},
		{"op version", projectPath(evalProject, "objects/greet/versions/v1"), "#op-code"},
		{"evaluations", projectPath(evalProject, "evaluations"), "#eval-runs"},
		{"evaluation comparison", projectPath(evalProject, "evaluations/compare?run="+e.seed.EvalRuns[0]+"&run="+e.seed.EvalRuns[1]), "#compare"},
		{"evaluation results", projectPath(evalProject, "evaluations/compare?run="+e.seed.EvalRuns[0]), "#compare"},
	}
	for _, size := range []viewport{laptop, phone} {
		tb := newTab(t, e.srv.URL)
		tb.signIn("", e.adminKey)
		tb.checkPagesAt(size, axe, pages)
	}
}
