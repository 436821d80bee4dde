package webui_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/integration/serverproc"
	"github.com/weftlabs/weft/internal/testdb"
)

// sdkProject is the project the Weave TypeScript SDK seeds, as the server's
// bootstrap admin.
const sdkProject = "admin/uitest"

// sdkSeed is what js/webui-seed.mjs made.
type sdkSeed struct {
	OK          bool     `json:"ok"`
	Agents      []string `json:"agents"`
	Traces      []string `json:"traces"`
	Children    []string `json:"children"` // lookup, flakyTool, summarize under Agents[0]
	Grandchild  string   `json:"grandchild"`
	FailedChild string   `json:"failedChild"`
	Explode     string   `json:"explode"`
	Specs       []string `json:"specs"`    // quality, score, comment
	Datasets    []string `json:"datasets"` // qa v0 and v1, in evalProject
	EvalRuns    []string `json:"evalRuns"` // the oracle's and the guesser's run
}

// sdkEnv is a server seeded by the official SDK, with a queue over its calls
// (made through the API, which the SDK has no call for) and a user of another
// entity with a queue of its own.
type sdkEnv struct {
	*env
	seed              sdkSeed
	adminKey          string
	queueID, bobQueue string
}

func startSDKEnv(t *testing.T, dbURL string) *sdkEnv {
	t.Helper()
	js, err := filepath.Abs("../js")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(js, "node_modules", "weave")); err != nil {
		t.Fatalf("run `npm ci` in internal/integration/js first (scripts/test does): %v", err)
	}
	srv := serverproc.Start(t, serverproc.Options{DatabaseURL: dbURL})
	e := &sdkEnv{env: &env{srv: srv}, adminKey: srv.Key}
	e.seed = runSeed(t, js, srv)

	var q struct {
		ID string `json:"id"`
	}
	mustJSON(t, e.api(t, e.adminKey, "/annotation_queues", map[string]any{
		"project_id": sdkProject, "name": "Answers to review", "description": "agent answers", "scorer_refs": e.seed.Specs,
	}), &q)
	e.queueID = q.ID
	e.api(t, e.adminKey, "/annotation_queues/"+e.queueID+"/items", map[string]any{"project_id": sdkProject, "call_ids": e.seed.Agents})

	// bob, of another entity, with a queue of his own.
	e.bobKey = createUser(t, dbURL, "bob")
	e.start(t, e.bobKey, "bob/secret", id('b', 1), id('f', 9), "", "bob_private_op", time.Now().UTC(), map[string]any{"secret": "bob-only"})
	mustJSON(t, e.api(t, e.bobKey, "/annotation_queues", map[string]any{"project_id": "bob/secret", "name": "bob's private queue"}), &q)
	e.bobQueue = q.ID
	return e
}

// runSeed runs webui-seed.mjs against the server, in an empty working
// directory and home (the SDK writes weaveErrors.log and ~/.netrc there).
func runSeed(t *testing.T, js string, srv *serverproc.Server) sdkSeed {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ".netrc"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", filepath.Join(js, "webui-seed.mjs"))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+dir, "WF_TRACE_SERVER_URL="+srv.URL, "WANDB_API_KEY="+srv.Key,
		"WEAVE_PRINT_CALL_LINK=false", "WEFT_PROJECT="+sdkProject, "WEFT_EVAL_PROJECT="+evalProject)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node webui-seed.mjs: %v\nstdout:\n%s\nstderr:\n%s\nserver:\n%s", err, stdout.String(), stderr.String(), srv.Output())
	}
	if log, err := os.ReadFile(filepath.Join(dir, "weaveErrors.log")); err == nil {
		t.Fatalf("the SDK logged failed batches:\n%s", log)
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	var seed sdkSeed
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &seed); err != nil || !seed.OK || len(seed.Specs) != 3 || seed.Grandchild == "" || len(seed.EvalRuns) != 2 {
		t.Fatalf("seed result %q: %v\nstderr:\n%s", lines[len(lines)-1], err, stderr.String())
	}
	return seed
}

// createUser makes a user with an entity of its name and returns its key, as
// the admin commands do.
func createUser(t *testing.T, dbURL, name string) string {
	t.Helper()
	ctx := context.Background()
	db, err := weft.Open(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	identity, err := weft.NewIdentity(weft.IdentityConfig{DB: db})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := identity.CreateUser(ctx, name, false); err != nil {
		t.Fatal(err)
	}
	key, err := identity.CreateAPIKey(ctx, name, "browser test")
	if err != nil {
		t.Fatal(err)
	}
	return key
}

func mustJSON(t *testing.T, raw []byte, into any) {
	t.Helper()
	if err := json.Unmarshal(raw, into); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
}

// TestQueuesKeyboardAccessibility drives the annotation queue, every keyboard
// path and an accessibility check in Chromium, on data the official SDK wrote.
func TestQueuesKeyboardAccessibility(t *testing.T) {
	testdb.EachURL(t, func(t *testing.T, dbURL string) {
		if noBrowser != "" {
			t.Skip(noBrowser)
		}
		e := startSDKEnv(t, dbURL)
		t.Run("queue: annotate, autosave, resume", func(t *testing.T) { annotateQueue(t, e) })
		t.Run("keys in the call tree", func(t *testing.T) { treeKeys(t, e) })
		t.Run("keys in lists, search and help", func(t *testing.T) { listKeys(t, e) })
		t.Run("another entity's queue is refused", func(t *testing.T) { foreignQueue(t, e) })
		t.Run("queue and spec forms", func(t *testing.T) { queueForms(t, e) })
		t.Run("accessibility at laptop and phone widths", func(t *testing.T) { accessibility(t, e) })
		t.Run("objects and tables", func(t *testing.T) { objectPages(t, e) })
		t.Run("evaluations", func(t *testing.T) { evaluationPages(t, e) })
		t.Run("accessibility of the object and evaluation pages", func(t *testing.T) { objectAccessibility(t, e) })
	})
}

// key presses keys on the page as a keyboard does: the key-down event
// carries the character, so a handler that cancels it also cancels the
// typing (chromedp.KeyEvent sends the character as an event of its own,
// which no key-down handler can cancel).
func (tb *tab) key(keys string) {
	tb.t.Helper()
	tb.run(chromedp.Func(func(ctx context.Context, target *chromedp.Target) error {
		for _, r := range keys {
			var down, up *input.DispatchKeyEventParams
			text := ""
			for _, ev := range kb.Encode(r) {
				switch ev.Type {
				case kb.KeyDown:
					down = ev
				case kb.KeyUp:
					up = ev
				case kb.KeyChar:
					text = ev.Text
				}
			}
			down.Text, down.UnmodifiedText = text, text
			for _, ev := range []*input.DispatchKeyEventParams{down, up} {
				if _, err := cdp.Call(ctx, target, input.DispatchKeyEvent, *ev); err != nil {
					return err
				}
			}
		}
		return nil
	}))
}

// waitPath waits until the page's path and query satisfy ok, across
// navigations (an evaluation during one fails and is retried).
func (tb *tab) waitPath(ok func(string) bool) string {
	tb.t.Helper()
	for range 300 {
		p, err := chromedp.Run(tb.ctx, chromedp.Evaluate[string]("document.readyState === 'complete' ? location.pathname + location.search : ''"))
		if err == nil && p != "" && ok(p) {
			return p
		}
		time.Sleep(100 * time.Millisecond)
	}
	tb.t.Fatalf("the page stays at %s", tb.path())
	return ""
}

// poll waits until a JavaScript expression is true.
func (tb *tab) poll(expr string) {
	tb.t.Helper()
	for retries := 0; ; retries++ {
		_, err := chromedp.Run(tb.ctx, chromedp.Poll[bool](expr))
		// A navigation that replaces the page's JavaScript context while an
		// evaluation is on its way fails that evaluation; the poll goes on
		// in the new page, which is what it waits for.
		if err != nil && retries < 5 && tb.ctx.Err() == nil && strings.Contains(err.Error(), "Cannot find context with specified id") {
			continue
		}
		if err != nil {
			tb.t.Fatalf("browser: %v", err)
		}
		return
	}
}

// focusedCall is the call id of the tree node or row holding the focus.
func (tb *tab) focusedCall() string {
	tb.t.Helper()
	return eval[string](tb, `(document.activeElement.closest('[data-call]') || {dataset: {}}).dataset.call || ''`)
}

func annotateQueue(t *testing.T, e *sdkEnv) {
	tb := newTab(t, e.srv.URL)
	tb.signIn("", e.adminKey)
	queues := projectPath(sdkProject, "queues")
	tb.open(queues)
	if got := tb.text("#queues tbody tr"); !strings.Contains(got, "Answers to review") || !strings.Contains(got, "0 of 3 done") {
		t.Fatalf("queue list: %q", got)
	}
	// j focuses the first row's link, Enter opens the queue at its first item.
	tb.key("j")
	if got := eval[string](tb, `document.activeElement.className`); got != "queue-link" {
		t.Fatalf("j focused %q", got)
	}
	tb.key("\r")
	tb.waitPath(func(p string) bool { return strings.Contains(p, "/items/") })
	tb.run(chromedp.WaitVisible(chromedp.CSS(".annotate-layout")))
	first := eval[string](tb, `document.querySelector('.annotate-layout').dataset.item`)
	firstCall := eval[string](tb, `document.querySelector('#detail .call-detail').dataset.call`)
	if !slices.Contains(e.seed.Agents, firstCall) || !strings.Contains(tb.text(".queue-status"), "Item 1 of 3") {
		t.Fatalf("first item %s shows call %s (%q)", first, firstCall, tb.text(".queue-status"))
	}
	if got := tb.text("#detail h2"); !strings.Contains(got, "agent: ") {
		t.Fatalf("the item's call: %q", got)
	}
	savePath := itemPathOf(e.queueID, first) + "/annotation"
	saved := func(field int, state string) {
		t.Helper()
		tb.poll(`(document.querySelectorAll('.annotation-field')[` + itoa(field) + `].querySelector('[data-saved]') || {}).dataset?.saved === '` + state + `'`)
		tb.settled()
	}
	// 1–9 choose a label of the first choice field; each choice saves itself
	// and the call's feedback pane beside the form shows it.
	pane := `(document.querySelector('#detail .feedback-section [data-type="wandb.annotation.quality"]') || {innerText: ''}).innerText`
	tb.key("1")
	saved(0, "saved")
	tb.poll(pane + `.includes('good')`)
	// Quick changes are saved in order: the last choice is what stays.
	tb.key("23")
	tb.poll(`document.querySelector('.annotation-field input[type=radio][value="2"]').checked`)
	saved(0, "saved")
	tb.poll(`!document.querySelector('.annotation-field.htmx-request')`)
	tb.poll(pane + `.includes('bad') && document.querySelectorAll('#detail .feedback-section [data-type="wandb.annotation.quality"]').length === 1`)
	// A score the spec refuses says so and is not stored; a good one is.
	tb.expect(savePath, http.StatusUnprocessableEntity)
	tb.run(chromedp.Click(chromedp.CSS(`.annotation-field input[type=number]`)), chromedp.SendKeys(chromedp.CSS(`.annotation-field input[type=number]`), "9"))
	saved(1, "error")
	if got := eval[string](tb, `document.querySelectorAll('.annotation-field')[1].querySelector('.save-status').innerText`); !strings.Contains(got, "Not saved") || !strings.Contains(got, "maximum") {
		t.Fatalf("refused score: %q", got)
	}
	tb.run(chromedp.Evaluate[chromedp.Void](`document.querySelector('.annotation-field input[type=number]').value = ''`),
		chromedp.SendKeys(chromedp.CSS(`.annotation-field input[type=number]`), "4"))
	saved(1, "saved")
	// Keys typed into a field stay there: "n" is a letter of the comment.
	tb.run(chromedp.SendKeys(chromedp.CSS(`.annotation-field textarea`), "fine answer"))
	saved(2, "saved")
	if got := value(tb, chromedp.Value(chromedp.CSS(`.annotation-field textarea`))); got != "fine answer" {
		t.Fatalf("comment typed: %q", got)
	}
	// Esc leaves the field; n finishes the item and opens the next one.
	tb.key(kbEscape)
	tb.key("n")
	next := tb.waitPath(func(p string) bool { return strings.Contains(p, "/items/") && !strings.HasSuffix(p, "/"+first) })
	tb.run(chromedp.WaitVisible(chromedp.CSS(".annotate-layout")))
	second := eval[string](tb, `document.querySelector('.annotate-layout').dataset.item`)
	if !strings.HasSuffix(next, "/"+second) {
		t.Fatalf("next item page %s shows item %s", next, second)
	}
	if !strings.Contains(tb.text(".queue-status"), "1 of 3 done") {
		t.Fatalf("after n: %q", tb.text(".queue-status"))
	}

	// The values are feedback as the API stores annotations.
	var rows struct {
		Result []struct {
			FeedbackType  string          `json:"feedback_type"`
			WeaveRef      string          `json:"weave_ref"`
			AnnotationRef string          `json:"annotation_ref"`
			QueueID       string          `json:"queue_id"`
			Payload       json.RawMessage `json:"payload"`
		} `json:"result"`
	}
	mustJSON(t, e.api(t, e.adminKey, "/feedback/query", map[string]any{"project_id": sdkProject,
		"query": map[string]any{"$expr": map[string]any{"$eq": []any{map[string]any{"$getField": "queue_id"}, map[string]any{"$literal": e.queueID}}}}}), &rows)
	got := map[string]string{}
	for _, r := range rows.Result {
		if r.WeaveRef != "weave:///"+sdkProject+"/call/"+firstCall || r.QueueID != e.queueID {
			t.Errorf("annotation on %s in queue %s", r.WeaveRef, r.QueueID)
		}
		got[r.FeedbackType+" "+r.AnnotationRef] = string(r.Payload)
	}
	want := map[string]string{
		"wandb.annotation.quality " + e.seed.Specs[0]: `{"value":"bad"}`,
		"wandb.annotation.score " + e.seed.Specs[1]:   `{"value":4}`,
		"wandb.annotation.comment " + e.seed.Specs[2]: `{"value":"fine answer"}`,
	}
	if len(got) != len(want) || len(rows.Result) != len(want) {
		t.Fatalf("annotations %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %s, want %s", k, got[k], v)
		}
	}

	// A reload of the queue resumes at the first unfinished item; the done
	// item keeps its values.
	tb.open(queuePathOf(e.queueID))
	tb.run(chromedp.WaitVisible(chromedp.CSS(".annotate-layout")))
	if resumed := eval[string](tb, `document.querySelector('.annotate-layout').dataset.item`); resumed != second {
		t.Fatalf("resumed at %s, want %s", resumed, second)
	}
	tb.open(itemPathOf(e.queueID, first))
	if !eval[bool](tb, `document.querySelector('.annotation-field input[type=radio][value="2"]').checked && document.querySelector('.annotation-field input[type=number]').value === '4'`) {
		t.Fatal("the done item does not show its saved values")
	}
	tb.open(queues)
	if got := tb.text("#queues tbody tr"); !strings.Contains(got, "1 of 3 done") {
		t.Fatalf("queue list after one item: %q", got)
	}
}

func treeKeys(t *testing.T, e *sdkEnv) {
	tb := newTab(t, e.srv.URL)
	tb.signIn("", e.adminKey)
	tb.open(projectPath(sdkProject, "traces/", e.seed.Traces[0]))
	tb.run(chromedp.WaitVisible(chromedp.CSS("[role=tree]")))
	root, lookup, flaky, summarize := e.seed.Agents[0], e.seed.Children[0], e.seed.Children[1], e.seed.Children[2]
	step := func(keys, want string) {
		t.Helper()
		tb.key(keys)
		if got := tb.focusedCall(); got != want {
			t.Fatalf("after %q the focus is on %q, want %q", keys, got, want)
		}
	}
	step("j", root)
	if outline := eval[string](tb, `getComputedStyle(document.activeElement).outlineStyle`); outline == "none" {
		t.Fatal("the focused node shows no focus ring")
	}
	step("j", lookup)
	step("j", flaky)
	step("k", lookup)
	step("]", flaky)
	step("]", summarize)
	step("]", summarize) // the last sibling stays
	step("[", flaky)
	step("[", lookup)
	// e finds the next call with an error (the trace view may ask the
	// server, so the focus arrives when it has answered).
	step("k", root)
	tb.key("e")
	tb.poll(`(document.activeElement.closest('[data-call]') || {dataset: {}}).dataset.call === '` + flaky + `'`)
	tb.settled()
	// Enter opens the focused call in the detail pane.
	tb.key("\r")
	tb.poll(`document.querySelector('#detail .call-detail').dataset.call === '` + flaky + `'`)
	tb.settled()
	if got := tb.text("#detail .exception"); !strings.Contains(got, "tool failed on weather in Paris") {
		t.Fatalf("the failed call's exception: %q", got)
	}
	// l expands a node, loading its children, then enters them; h leaves
	// and collapses.
	step("]", summarize)
	node := `document.querySelector('li.node[data-call="` + summarize + `"]')`
	if got := eval[string](tb, node+`.getAttribute('aria-expanded')`); got != "false" {
		t.Fatalf("summarize starts collapsed: %s", got)
	}
	tb.key("l")
	tb.poll(node + `.getAttribute('aria-expanded') === 'true' && !!` + node + `.querySelector('li.node[data-call="` + e.seed.Grandchild + `"]')`)
	tb.settled()
	step("l", e.seed.Grandchild)
	step("h", summarize)
	tb.key("h")
	if got := eval[string](tb, node+`.getAttribute('aria-expanded')`); got != "false" || tb.focusedCall() != summarize {
		t.Fatalf("h collapses: aria-expanded=%s, focus %s", got, tb.focusedCall())
	}
	step("j", summarize) // the last visible node: j stays
}

func listKeys(t *testing.T, e *sdkEnv) {
	tb := newTab(t, e.srv.URL)
	tb.signIn("", e.adminKey)
	tb.open(projectPath(sdkProject))
	tb.run(chromedp.WaitVisible(chromedp.CSS("#traces")))
	rows := eval[int](tb, `document.querySelectorAll('#traces tbody tr').length`)
	if rows != len(e.seed.Agents)+1 {
		t.Fatalf("trace list: %d rows", rows)
	}
	tb.key("j")
	tb.key("j")
	if got := eval[int](tb, `[...document.querySelectorAll('#traces tbody tr')].indexOf(document.activeElement.closest('tr'))`); got != 1 {
		t.Fatalf("j j focuses row %d", got)
	}
	tb.key("k")
	if got := eval[int](tb, `[...document.querySelectorAll('#traces tbody tr')].indexOf(document.activeElement.closest('tr'))`); got != 0 {
		t.Fatalf("k focuses row %d", got)
	}
	// e jumps to the failed trace's row.
	tb.key("e")
	if got := tb.focusedCall(); got != e.seed.Explode {
		t.Fatalf("e focused %q, want the failed root %q", got, e.seed.Explode)
	}
	// "/" focuses the search; keys typed there are text, Esc leaves it.
	tb.key("/")
	if !eval[bool](tb, `document.activeElement.matches('input')`) {
		t.Fatal("/ did not focus a search field")
	}
	tb.key("jk?")
	if got := eval[string](tb, `document.activeElement.value`); got != "jk?" {
		t.Fatalf("typed into the search: %q", got)
	}
	if eval[bool](tb, `document.getElementById('keys-help').open`) {
		t.Fatal("? typed into a field opened the help")
	}
	tb.run(chromedp.Evaluate[chromedp.Void](`document.activeElement.value = ''`))
	tb.key(kbEscape)
	// ? lists the keys in a modal dialog that Esc closes; so does its button.
	tb.key("?")
	if !eval[bool](tb, `document.getElementById('keys-help').open`) {
		t.Fatal("? did not open the help")
	}
	if got := tb.text("#keys-help"); !strings.Contains(got, "Next call with an error") || !strings.Contains(got, "Choose a label") {
		t.Fatalf("help: %q", got)
	}
	tb.key("j") // keys do nothing behind the dialog
	tb.key(kbEscape)
	if eval[bool](tb, `document.getElementById('keys-help').open`) {
		t.Fatal("Esc did not close the help")
	}
	tb.run(chromedp.Click(chromedp.CSS(`[data-action=keys-help]`)))
	tb.poll(`document.getElementById('keys-help').open`)
	tb.run(chromedp.Click(chromedp.CSS(`#keys-help button`)))
	tb.poll(`!document.getElementById('keys-help').open`)
	// Enter on a focused row opens its trace.
	tb.key("j")
	tb.key("\r")
	tb.run(chromedp.WaitVisible(chromedp.CSS("[role=tree]")))
	if p := tb.path(); !strings.Contains(p, "/traces/") {
		t.Fatalf("Enter opened %s", p)
	}
}

// foreignQueue: bob, of another entity, opens the admin's queue pages.
func foreignQueue(t *testing.T, e *sdkEnv) {
	tb := newTab(t, e.srv.URL)
	tb.signIn("", e.bobKey)
	for _, path := range []string{projectPath(sdkProject, "queues"), queuePathOf(e.queueID), itemPathOf(e.queueID, "any")} {
		tb.expect(path, http.StatusForbidden)
		tb.open(path)
		if got := tb.text(".error-page"); !strings.Contains(got, "403") || !strings.Contains(got, "not a member of entity") {
			t.Fatalf("%s: %q", path, got)
		}
		if body := eval[string](tb, "document.body.innerText"); strings.Contains(body, "Answers to review") || strings.Contains(body, "agent") {
			t.Fatalf("%s leaks the admin's queue", path)
		}
	}
}

func itoa(n int) string { return string(rune('0' + n)) }

func projectPath(projectID string, rest ...string) string {
	return "/ui/p/" + projectID + "/" + strings.Join(rest, "")
}

func queuePathOf(queueID string) string { return projectPath(sdkProject, "queues/", queueID) }

func itemPathOf(queueID, itemID string) string { return queuePathOf(queueID) + "/items/" + itemID }

const kbEscape = "\u001b"
