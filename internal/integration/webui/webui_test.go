package webui_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/weftlabs/weft/internal/integration/modelserver"
	"github.com/weftlabs/weft/internal/integration/serverproc"
	"github.com/weftlabs/weft/internal/testdb"
)

// env is a running server (the examples/server binary) with two users in
// two entities and data seeded through the API.
type env struct {
	srv                *serverproc.Server
	aliceKey, bobKey   string
	bigTrace, errTrace string // traces of alice/app
	bobTrace           string // the trace of bob/secret
	// upstream is the model server the gateway routes "test-model" to.
	upstream *modelserver.Server
	// localModel is whether the built-in engine serves a model (localModel).
	localModel bool
	// holdFile holds the stand-in trainer's jobs while it exists (holdJobs).
	holdFile string
}

// xssInputs are stored values that would run if a page did not escape them.
const (
	scriptPayload = `<script>window.__xss = 1</script>`
	imgPayload    = `<img src=x onerror="window.__xss = 2">`
	linkPayload   = `javascript:window.__xss = 3`
)

func startEnv(t *testing.T, dbURL string) *env {
	t.Helper()
	return seedEnv(t, dbURL, &env{srv: serverproc.Start(t, serverproc.Options{DatabaseURL: dbURL})})
}

// startServingEnv is startEnv with the server also working training jobs
// (the stand-in trainer) and serving chat models (a test upstream and, when
// its tokenizer is installed, a tiny model on the built-in engine).
func startServingEnv(t *testing.T, dbURL string) *env {
	t.Helper()
	args, trainerEnv, hold := trainerArgs(t)
	upstream := modelserver.New(t)
	chat, local := chatArgs(t, upstream)
	srv := serverproc.Start(t, serverproc.Options{DatabaseURL: dbURL, Args: append(args, chat...), Env: trainerEnv})
	return seedEnv(t, dbURL, &env{srv: srv, upstream: upstream, localModel: local, holdFile: hold})
}

// seedEnv creates alice and bob and seeds their traces through e's server.
func seedEnv(t *testing.T, dbURL string, e *env) *env {
	t.Helper()
	keys := createUsers(t, dbURL, "alice", "bob")
	e.aliceKey, e.bobKey = keys[0], keys[1]

	t0 := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
	e.bigTrace, e.errTrace, e.bobTrace = id('f', 1), id('f', 2), id('f', 3)
	root := id('a', 0)
	e.start(t, e.aliceKey, "alice/app", root, e.bigTrace, "", "agent", t0, map[string]any{
		"messages": []map[string]any{{"role": "user", "content": scriptPayload + imgPayload}},
		"link":     linkPayload,
		xssKey:     imgPayload,
	})
	var batch []map[string]any
	for i := range 120 {
		batch = append(batch, map[string]any{"mode": "start", "req": map[string]any{"start": map[string]any{
			"project_id": "alice/app", "id": id('c', i), "trace_id": e.bigTrace, "parent_id": root, "op_name": fmt.Sprintf("step_%03d", i),
			"started_at": t0.Add(time.Duration(i+1) * time.Millisecond).Format(time.RFC3339Nano), "inputs": map[string]any{"i": i},
		}}})
	}
	e.api(t, e.aliceKey, "/call/upsert_batch", map[string]any{"batch": batch})
	e.start(t, e.aliceKey, "alice/app", id('d', 0), e.bigTrace, id('c', 0), "lookup", t0.Add(time.Second), map[string]any{"q": "weather"})
	e.end(t, e.aliceKey, "alice/app", root, t0.Add(3*time.Second), map[string]any{
		"choices": []map[string]any{{"message": map[string]any{"role": "assistant", "content": imgPayload}}},
	}, "")
	e.api(t, e.aliceKey, "/feedback/create", map[string]any{
		"project_id": "alice/app", "weave_ref": "weave:///alice/app/call/" + root, "feedback_type": "wandb.note.1",
		"payload": map[string]any{"note": scriptPayload},
	})
	e.start(t, e.aliceKey, "alice/app", id('a', 1), e.errTrace, "", "tool", t0.Add(time.Minute), map[string]any{})
	e.end(t, e.aliceKey, "alice/app", id('a', 1), t0.Add(time.Minute+time.Second), nil, "ValueError: boom")
	e.start(t, e.bobKey, "bob/secret", id('b', 0), e.bobTrace, "", "bob_private_op", t0, map[string]any{"secret": "bob-only"})
	return e
}

// xssKey is a member name that is itself markup.
const xssKey = `<b onmouseover="window.__xss = 4">key</b>`

func id(prefix byte, n int) string { return fmt.Sprintf("0000000%c-0000-7000-8000-%012d", prefix, n) }

// api posts body to the API with key and returns the answer's body.
func (e *env) api(t *testing.T, key, path string, body any) []byte {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+path, bytes.NewReader(b))
	req.SetBasicAuth("api", key)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: %d %s", path, res.StatusCode, raw)
	}
	return raw
}

func (e *env) start(t *testing.T, key, project, callID, traceID, parent, op string, at time.Time, inputs any) {
	t.Helper()
	start := map[string]any{"project_id": project, "id": callID, "trace_id": traceID, "op_name": op, "started_at": at.Format(time.RFC3339Nano), "inputs": inputs}
	if parent != "" {
		start["parent_id"] = parent
	}
	e.api(t, key, "/call/start", map[string]any{"start": start})
}

func (e *env) end(t *testing.T, key, project, callID string, at time.Time, output any, exception string) {
	t.Helper()
	end := map[string]any{"project_id": project, "id": callID, "ended_at": at.Format(time.RFC3339Nano), "output": output, "summary": map[string]any{}}
	if exception != "" {
		end["exception"] = exception
	}
	e.api(t, key, "/call/end", map[string]any{"end": end})
}

// TestWebUI drives the UI of the real server in Chromium on every database.
func TestWebUI(t *testing.T) {
	testdb.EachURL(t, func(t *testing.T, dbURL string) {
		if noBrowser != "" {
			t.Skip(noBrowser)
		}
		e := startServingEnv(t, dbURL)
		t.Run("sign in and out", func(t *testing.T) { signInAndOut(t, e) })
		t.Run("sign-in stays on this site", func(t *testing.T) { signInRedirect(t, e) })
		t.Run("another entity is refused", func(t *testing.T) { isolation(t, e) })
		t.Run("stored markup is inert", func(t *testing.T) { inertMarkup(t, e) })
		t.Run("trace list and trace view", func(t *testing.T) { listAndView(t, e) })
		t.Run("models and training", func(t *testing.T) { trainingPages(t, e) })
		t.Run("playground", func(t *testing.T) { playground(t, e) })
		t.Run("prompts: label a version, open it in the playground", func(t *testing.T) { promptVersions(t, e) })
		t.Run("monitor charts and a judge by ref", func(t *testing.T) { monitorPages(t, e) })
	})
}

func signInAndOut(t *testing.T, e *env) {
	tb := newTab(t, e.srv.URL)
	tb.open("/")
	if p := tb.path(); !strings.HasPrefix(p, "/ui/signin") {
		t.Fatalf("signed out, / shows %s", p)
	}
	tb.expect("/ui/signin", http.StatusUnauthorized)
	tb.run(
		chromedp.SendKeys(chromedp.CSS("#key"), "wf_0000_wrong"),
		chromedp.Click(chromedp.CSS(".signin button[type=submit]")),
		chromedp.WaitVisible(chromedp.CSS(".form-error")),
	)
	tb.signIn("alice", e.aliceKey)
	if got := tb.text("#projects"); !strings.Contains(got, "alice/app") || strings.Contains(got, "bob/secret") {
		t.Fatalf("alice's projects: %q", got)
	}
	if got := tb.text(".who"); got != "alice" {
		t.Fatalf("signed in as %q", got)
	}
	tb.run(
		chromedp.Click(chromedp.CSS(".signout button")),
		chromedp.WaitVisible(chromedp.CSS(".signin form")),
	)
	tb.open("/ui/p/alice/app/")
	if p := tb.path(); !strings.HasPrefix(p, "/ui/signin") {
		t.Fatalf("after sign-out the project shows %s", p)
	}
	if cookies := eval[string](tb, "document.cookie"); strings.Contains(cookies, "weft_session") {
		t.Fatalf("the session cookie is readable by scripts: %q", cookies)
	}
}

// signInRedirect: sign-in's "next" never takes the browser to another site.
// Chromium's own URL parser judges every Location the server answers, and
// one hostile next is followed by a signed-in browser.
func signInRedirect(t *testing.T, e *env) {
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	var locations []string
	for _, next := range []string{`/./\evil.example/phish`, `/../\evil.example`, "/\t/evil.example", `\\evil.example`,
		"/%2F/evil.example", "/%5C%5Cevil.example", "//evil.example", "https://evil.example/"} {
		form := url.Values{"key": {e.aliceKey}, "next": {next}}
		req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/ui/signin", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		res, err := noFollow.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		locations = append(locations, res.Header.Get("Location"))
	}
	tb := newTab(t, e.srv.URL)
	tb.expect("/ui/signin", http.StatusUnauthorized)
	tb.open("/ui/signin")
	list, _ := json.Marshal(locations)
	offsite := eval[[]string](tb, `JSON.parse(`+strconv.Quote(string(list))+`).filter(l => new URL(l, location.href).origin !== location.origin)`)
	if len(offsite) > 0 {
		t.Errorf("Locations that leave the site: %q", offsite)
	}
	// A signed-in browser sent to the sign-in page is redirected at once: a
	// link a phisher hands a signed-in user. (The sign-in form's redirect is
	// held to the page's CSP form-action 'self' as well.)
	tb.signIn("", e.aliceKey)
	tb.run(chromedp.Navigate(tb.base + "/ui/signin?next=" + url.QueryEscape(`/./\evil.example/phish`)))
	landed := ""
	for range 300 {
		href, err := chromedp.Run(tb.ctx, chromedp.Evaluate[string](`document.readyState === 'complete' ? location.href : ''`))
		if err == nil && href != "" && !strings.Contains(href, "/ui/signin") {
			landed = href
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !strings.HasPrefix(landed, e.srv.URL+"/") {
		t.Fatalf("sign-in sent the browser to %s", landed)
	}
}

func isolation(t *testing.T, e *env) {
	tb := newTab(t, e.srv.URL)
	tb.signIn("", e.aliceKey)
	for _, path := range []string{"/ui/p/bob/secret/", "/ui/p/bob/secret/traces/" + e.bobTrace} {
		tb.expect(path, http.StatusForbidden)
		tb.open(path)
		if got := tb.text(".error-page"); !strings.Contains(got, "403") || !strings.Contains(got, "not a member of entity") {
			t.Fatalf("%s: %q", path, got)
		}
		if html := eval[string](tb, "document.body.innerText"); strings.Contains(html, "bob-only") || strings.Contains(html, "bob_private_op") {
			t.Fatalf("%s leaks bob's data", path)
		}
	}
}

func inertMarkup(t *testing.T, e *env) {
	tb := newTab(t, e.srv.URL)
	tb.signIn("", e.aliceKey)
	tb.open("/ui/p/alice/app/traces/" + e.bigTrace)
	detail := tb.text(".call-detail")
	for _, payload := range []string{scriptPayload, imgPayload, linkPayload, scriptPayload /* the note */, "key</b>"} {
		if !strings.Contains(detail, payload) {
			t.Fatalf("the detail pane does not show %q as text:\n%s", payload, detail)
		}
	}
	if ran := eval[bool](tb, "window.__xss !== undefined"); ran {
		t.Fatal("a stored payload ran")
	}
	if n := eval[int](tb, `document.querySelectorAll('main script, main img, main b, a[href^="javascript:"]').length`); n != 0 {
		t.Fatalf("stored markup became %d elements", n)
	}
	// Hovering the would-be element and opening every JSON node runs nothing either.
	tb.run(chromedp.Evaluate[chromedp.Void](`document.querySelectorAll('details').forEach(d => d.open = true)`))
	if ran := eval[bool](tb, "window.__xss !== undefined"); ran {
		t.Fatal("a stored payload ran")
	}
}

func listAndView(t *testing.T, e *env) {
	tb := newTab(t, e.srv.URL)
	tb.signIn("", e.aliceKey)
	tb.run(chromedp.Click(chromedp.CSS(`#projects a[href="/ui/p/alice/app/"]`)), chromedp.WaitVisible(chromedp.CSS("#traces")))
	tb.loaded()
	if n := eval[int](tb, "document.querySelectorAll('#traces tbody tr').length"); n != 2 {
		t.Fatalf("trace list: %d rows", n)
	}
	// The filter form swaps the results in place and puts the view in the URL.
	tb.run(
		chromedp.SetValue(chromedp.CSS(`select[name="status"]`), "error"),
		chromedp.Click(chromedp.CSS(`.filters button[type="submit"]`)),
	)
	value(tb, chromedp.Poll[bool](`document.querySelectorAll('#traces tbody tr').length === 1 && location.search.includes('status=error')`))
	tb.settled()
	if got := tb.text("#traces tbody tr"); !strings.Contains(got, "tool") || !strings.Contains(got, "error") {
		t.Fatalf("filtered row: %q", got)
	}
	// The URL alone restores the view.
	tb.open(tb.path())
	if n := eval[int](tb, "document.querySelectorAll('#traces tbody tr').length"); n != 1 {
		t.Fatalf("the view from its URL: %d rows", n)
	}
	tb.open("/ui/p/alice/app/")
	tb.run(chromedp.Click(chromedp.CSS(`a.trace-link[href$="`+e.bigTrace+`"]`)), chromedp.WaitVisible(chromedp.CSS(".tree")))
	tb.loaded()

	children := `document.querySelectorAll('.tree > li > ul.children > li.node').length`
	if n := eval[int](tb, children); n != 100 {
		t.Fatalf("first page of children: %d", n)
	}
	tb.run(chromedp.Click(chromedp.CSS(".load-more")))
	value(tb, chromedp.Poll[bool](children+` === 120 && !document.querySelector('.load-more')`))
	tb.settled()

	// Opening a node loads its children; opening the child shows its detail.
	first := `li.node[data-call="` + id('c', 0) + `"]`
	tb.run(chromedp.Click(chromedp.CSS(first + " > .node-row > .toggle")))
	value(tb, chromedp.Poll[bool](`!!document.querySelector('`+first+` li.node[data-call="`+id('d', 0)+`"]')`))
	tb.settled() // the new link works through htmx only once htmx has processed it
	tb.run(chromedp.Click(chromedp.CSS(first + ` li.node[data-call="` + id('d', 0) + `"] .call-link`)))
	value(tb, chromedp.Poll[bool](`document.querySelector('#detail .call-detail').dataset.call === '`+id('d', 0)+`'`))
	if got := tb.text("#detail h2"); !strings.Contains(got, "lookup") {
		t.Fatalf("detail of the grandchild: %q", got)
	}
	if p := tb.path(); !strings.Contains(p, "call="+id('d', 0)) {
		t.Fatalf("the selection is not in the URL: %s", p)
	}
	// Closing the node hides its children again.
	tb.run(chromedp.Click(chromedp.CSS(first + " > .node-row > .toggle")))
	if open := eval[string](tb, `document.querySelector('`+first+`').getAttribute('aria-expanded')`); open != "false" {
		t.Fatalf("closed node: aria-expanded=%s", open)
	}
}
