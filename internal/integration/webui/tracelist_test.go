package webui_test

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/weftlabs/weft/internal/integration/serverproc"
	"github.com/weftlabs/weft/internal/testdb"
)

// Texts of the list's search tests, one trace each in alice/app.
var searchTexts = map[string]string{
	"cjk":    "请用中文回答：今天天气怎么样？",
	"arabic": "ما هو الطقس اليوم في القاهرة؟",
	"emoji":  "ship it 🚀🔥 now",
	"like":   "growth was 100% in Q_3",
}

// manyTraces is the size of the project whose counts are capped.
const manyTraces = 10_050

// seedList adds to alice/app one trace per search text (started a day
// after the others, a minute apart, each with a question and an answer,
// usage, and a reaction on the CJK one), and fills alice/many with
// manyTraces traces through the batch API.
func seedList(t *testing.T, e *env) (ids map[string]string, t0 time.Time) {
	t.Helper()
	t0 = time.Now().UTC().Add(-30 * time.Minute).Truncate(time.Second)
	ids = map[string]string{}
	i := 0
	for _, name := range []string{"cjk", "arabic", "emoji", "like"} {
		callID, traceID := id('e', i), id('9', i)
		ids[name] = callID
		at := t0.Add(time.Duration(i) * time.Minute)
		e.start(t, e.aliceKey, "alice/app", callID, traceID, "", "ask_"+name, at, map[string]any{"question": searchTexts[name], "rank": i})
		e.api(t, e.aliceKey, "/call/end", map[string]any{"end": map[string]any{"project_id": "alice/app", "id": callID,
			"ended_at": at.Add(time.Duration(4-i) * time.Second).Format(time.RFC3339Nano), "output": map[string]any{"answer": "re " + name},
			"summary": map[string]any{"usage": map[string]any{"gpt-4o": map[string]any{"prompt_tokens": 100 * (i + 1), "completion_tokens": 1}}}}})
		i++
	}
	e.api(t, e.aliceKey, "/feedback/create", map[string]any{"project_id": "alice/app", "weave_ref": "weave:///alice/app/call/" + ids["cjk"],
		"feedback_type": "wandb.reaction.1", "payload": map[string]any{"emoji": "👍"}})

	for from := 0; from < manyTraces; from += 1000 {
		var batch []map[string]any
		for n := from; n < min(from+1000, manyTraces); n++ {
			at := t0.Add(-time.Duration(n) * time.Second).Format(time.RFC3339Nano)
			callID := fmt.Sprintf("00000000-0000-7000-9000-%012d", n)
			batch = append(batch,
				map[string]any{"mode": "start", "req": map[string]any{"start": map[string]any{"project_id": "alice/many", "id": callID,
					"trace_id": callID, "op_name": "bulk", "started_at": at, "inputs": map[string]any{"n": n}}}},
				map[string]any{"mode": "end", "req": map[string]any{"end": map[string]any{"project_id": "alice/many", "id": callID,
					"ended_at": at, "output": n, "summary": map[string]any{}}}})
		}
		e.api(t, e.aliceKey, "/call/upsert_batch", map[string]any{"batch": batch})
	}
	return ids, t0
}

// TestWebUITraceList drives the trace list in Chromium on every database:
// columns and the column picker, filters, search in three scripts, sort,
// paging and capped counts, and live updates.
func TestWebUITraceList(t *testing.T) {
	testdb.EachURL(t, func(t *testing.T, dbURL string) {
		if noBrowser != "" {
			t.Skip(noBrowser)
		}
		e := startEnv(t, dbURL)
		ids, t0 := seedList(t, e)
		t.Run("columns", func(t *testing.T) { listColumns(t, e, ids) })
		t.Run("filters and search", func(t *testing.T) { listFilters(t, e, ids) })
		t.Run("sort", func(t *testing.T) { listSort(t, e, ids, t0) })
		t.Run("paging and counts", func(t *testing.T) { listPaging(t, e, t0) })
		t.Run("live", func(t *testing.T) { listLive(t, e) })
		t.Run("at a glance", func(t *testing.T) { listAtAGlance(t, e) })
		if !strings.HasPrefix(dbURL, "sqlite:") { // one process owns a SQLite file
			t.Run("live from another server", func(t *testing.T) { listLiveAcrossServers(t, e, dbURL) })
		}
	})
}

// rowIDs is the expression that lists the call ids of the shown rows.
const rowIDs = `[...document.querySelectorAll('#traces tbody tr')].map(r => r.dataset.call).join(',')`

func listColumns(t *testing.T, e *env, ids map[string]string) {
	tb := newTab(t, e.srv.URL)
	tb.signIn("", e.aliceKey)
	tb.open("/ui/p/alice/app/")
	headers := tb.text("#traces thead")
	for _, want := range []string{"Name", "Status", "Feedback", "Tokens", "Cost", "Latency", "Started", "User"} {
		if !strings.Contains(headers, want) {
			t.Fatalf("no %s column: %q", want, headers)
		}
	}
	row := tb.text(`#traces tr[data-call="` + ids["cjk"] + `"]`)
	for _, want := range []string{"ask_cjk", "success", "👍", "101", "$0.000260", "4.00 s", "alice"} {
		if !strings.Contains(row, want) {
			t.Fatalf("the CJK trace's row lacks %q: %q", want, row)
		}
	}
	// The column picker adds a field of the inputs; the URL keeps it.
	tb.run(
		chromedp.Click(chromedp.CSS(".column-picker summary")),
		chromedp.Click(chromedp.CSS(`a[data-add-column="inputs.question"]`)),
		chromedp.WaitVisible(chromedp.CSS(`th[data-field="inputs.question"]`)),
	)
	if p := tb.path(); !strings.Contains(p, "cols=inputs.question") {
		t.Fatalf("the chosen column is not in the URL: %s", p)
	}
	if got := tb.text(`#traces tr[data-call="` + ids["arabic"] + `"] td.field`); got != searchTexts["arabic"] {
		t.Fatalf("the question cell: %q", got)
	}
	// Removing it gives the list back without it.
	tb.run(chromedp.Click(chromedp.CSS(`th[data-field="inputs.question"] .remove-column`)), chromedp.WaitVisible(chromedp.CSS("#traces")))
	if n := eval[int](tb, `document.querySelectorAll('th[data-field]').length`); n != 0 || strings.Contains(tb.path(), "cols=") {
		t.Fatalf("after removing the column: %d field columns, %s", n, tb.path())
	}
}

// fill sets the value of the filter form's field name. (It is set by script:
// a value set through a DOM node id fails now and then when the node is
// re-read while the page settles.)
func fill(name, value string) chromedp.Action[chromedp.Void] {
	return chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`document.querySelector('form.filters [name=%q]').value = %q`, name, value))
}

// submitFilters types into the filter form and submits it; htmx swaps the
// results and pushes the view into the URL, where param then reads want.
func submitFilters(tb *tab, param, want string, steps ...chromedp.Action[chromedp.Void]) {
	tb.t.Helper()
	tb.run(append(steps, chromedp.Click(chromedp.CSS(`.filters button[type="submit"]`)))...)
	value(tb, chromedp.Poll[bool](fmt.Sprintf(`new URLSearchParams(location.search).get(%q) === %q`, param, want)))
	tb.settled()
}

func listFilters(t *testing.T, e *env, ids map[string]string) {
	tb := newTab(t, e.srv.URL)
	tb.signIn("", e.aliceKey)
	tb.open("/ui/p/alice/app/")
	for _, tc := range []struct{ term, want string }{
		{"今天天气", ids["cjk"]},
		{"天气", ids["cjk"]},
		{"الطقس", ids["arabic"]},
		{"🚀🔥", ids["emoji"]},
		{"100%", ids["like"]},
		{"Q_3", ids["like"]},
		{"re arabic", ids["arabic"]}, // the output
	} {
		submitFilters(tb, "q", tc.term,
			fill("q", tc.term))
		if got := eval[string](tb, rowIDs); got != tc.want {
			t.Fatalf("search %q: rows %q, want %q", tc.term, got, tc.want)
		}
	}
	// The URL alone restores the search.
	tb.open(tb.path())
	if got := eval[string](tb, rowIDs); got != ids["arabic"] {
		t.Fatalf("the search from its URL: %q", got)
	}

	tb.open("/ui/p/alice/app/")
	submitFilters(tb, "feedback", "1", chromedp.Click(chromedp.CSS(`input[name="feedback"]`)))
	// The reaction on the CJK trace and the note on the agent's.
	if got := eval[string](tb, rowIDs); got != ids["cjk"]+","+id('a', 0) {
		t.Fatalf("has feedback: %q", got)
	}
	tb.open("/ui/p/alice/app/")
	submitFilters(tb, "op", "ask_emoji", fill("op", "ask_emoji"))
	if got := eval[string](tb, rowIDs); got != ids["emoji"] {
		t.Fatalf("op: %q", got)
	}
	tb.open("/ui/p/alice/app/")
	submitFilters(tb, "user", "alice", fill("user", "alice"))
	if n := eval[int](tb, `document.querySelectorAll('#traces tbody tr').length`); n != 6 {
		t.Fatalf("alice's traces: %d", n)
	}
	tb.open("/ui/p/alice/app/")
	submitFilters(tb, "user", "bob", fill("user", "bob"))
	if n := eval[int](tb, `document.querySelectorAll('#traces tbody tr').length`); n != 0 {
		t.Fatalf("bob has no traces in alice/app: %d rows", n)
	}
	// The time range keeps the middle two of the four search traces.
	from, to := timeOfRow(tb, e, ids["arabic"]), timeOfRow(tb, e, ids["like"])
	tb.open("/ui/p/alice/app/")
	submitFilters(tb, "to", to,
		fill("from", from),
		fill("to", to))
	if got := eval[string](tb, rowIDs); got != ids["emoji"]+","+ids["arabic"] {
		t.Fatalf("from %s to %s: %q", from, to, got)
	}
}

// timeOfRow is the start of a trace as the time filter is typed (UTC), in
// the normalized form a datetime-local input gives its value back in: the
// seconds left out when they are zero.
func timeOfRow(tb *tab, e *env, callID string) string {
	tb.t.Helper()
	tb.open("/ui/p/alice/app/")
	iso := eval[string](tb, `document.querySelector('#traces tr[data-call="`+callID+`"] time').getAttribute('datetime')`)
	at, err := time.Parse(time.RFC3339Nano, iso)
	if err != nil {
		tb.t.Fatal(err)
	}
	if at.Second() == 0 {
		return at.UTC().Format("2006-01-02T15:04")
	}
	return at.UTC().Format("2006-01-02T15:04:05")
}

func listSort(t *testing.T, e *env, ids map[string]string, t0 time.Time) {
	tb := newTab(t, e.srv.URL)
	tb.signIn("", e.aliceKey)
	// The four search traces: latencies 4, 3, 2 and 1 s, ranks 0 to 3.
	tb.open("/ui/p/alice/app/?cols=inputs.rank&from=" + url.QueryEscape(t0.Format("2006-01-02T15:04:05")))
	latency := `a[data-sort="summary.weave.latency_ms"]`
	tb.run(chromedp.Click(chromedp.CSS(latency)), chromedp.WaitVisible(chromedp.CSS(`th[aria-sort="descending"] > `+latency)))
	want := strings.Join([]string{ids["cjk"], ids["arabic"], ids["emoji"], ids["like"]}, ",")
	if got := eval[string](tb, rowIDs); got != want {
		t.Fatalf("by latency, longest first: %q, want %q first", got, want)
	}
	tb.run(chromedp.Click(chromedp.CSS(latency)), chromedp.WaitVisible(chromedp.CSS(`th[aria-sort="ascending"] > `+latency)))
	want = strings.Join([]string{ids["like"], ids["emoji"], ids["arabic"], ids["cjk"]}, ",")
	if got := eval[string](tb, rowIDs); got != want {
		t.Fatalf("by latency, shortest first: %q, want %q first", got, want)
	}
	// A chosen column sorts by its field.
	rank := `th[data-field="inputs.rank"] a[data-sort]`
	tb.run(chromedp.Click(chromedp.CSS(rank)), chromedp.WaitVisible(chromedp.CSS(`th[aria-sort="descending"][data-field="inputs.rank"]`)))
	want = strings.Join([]string{ids["like"], ids["emoji"], ids["arabic"], ids["cjk"]}, ",")
	if got := eval[string](tb, rowIDs); got != want {
		t.Fatalf("by inputs.rank, highest first: %q, want %q first", got, want)
	}
	if p := tb.path(); !strings.Contains(p, "sort=inputs.rank") {
		t.Fatalf("the sort is not in the URL: %s", p)
	}
}

func listPaging(t *testing.T, e *env, t0 time.Time) {
	tb := newTab(t, e.srv.URL)
	tb.signIn("", e.aliceKey)
	tb.open("/ui/p/alice/many/")
	if got := tb.text(".count"); !strings.Contains(got, "10,000+ traces") || !strings.Contains(got, "showing 1–50") {
		t.Fatalf("count: %q", got)
	}
	first := eval[string](tb, rowIDs)
	if !strings.HasPrefix(first, "00000000-0000-7000-9000-000000000000,") {
		t.Fatalf("the first page starts with %q", first[:min(80, len(first))])
	}
	// Keyset pages: each next page starts where the last one ended.
	for page := 1; page <= 3; page++ {
		tb.run(chromedp.Click(chromedp.CSS(`a[rel="next"]`)), chromedp.WaitVisible(chromedp.CSS(`a[rel="first"]`)))
		if p := tb.path(); !strings.Contains(p, "after=") {
			t.Fatalf("page %d is not found by cursor: %s", page+1, p)
		}
		want := fmt.Sprintf("00000000-0000-7000-9000-%012d", 50*page)
		if got := eval[string](tb, rowIDs); !strings.HasPrefix(got, want+",") || strings.Count(got, ",") != 49 {
			t.Fatalf("page %d starts with %q, want %s", page+1, got[:min(80, len(got))], want)
		}
	}
	tb.run(chromedp.Click(chromedp.CSS(`a[rel="first"]`)), chromedp.WaitVisible(chromedp.CSS(`a[rel="next"]`)))
	if got := eval[string](tb, rowIDs); got != first {
		t.Fatal("the first page link leads elsewhere")
	}
	// A filtered count below the cap is exact: the traces started before
	// the twentieth-oldest.
	tb.open("/ui/p/alice/many/?to=" + url.QueryEscape(t0.Add(-time.Duration(manyTraces-20)*time.Second).Format("2006-01-02T15:04:05")))
	if got := tb.text(".count"); !strings.HasPrefix(got, "19 traces") {
		t.Fatalf("filtered count: %q", got)
	}
}

func listLive(t *testing.T, e *env) {
	tb := newTab(t, e.srv.URL)
	tb.signIn("", e.aliceKey)
	tb.open("/ui/p/alice/app/?op=live_op")
	value(tb, chromedp.Poll[bool](`!!document.querySelector('.empty')`))
	// A marker that a reload would wipe: the rows must arrive without one.
	tb.run(chromedp.Evaluate[chromedp.Void](`window.__noReload = true`))
	callID, traceID := id('7', 1), id('8', 1)
	// The list marks itself live once its event stream is open.
	value(tb, chromedp.Poll[bool](`document.querySelector('#results').dataset.live === 'open'`))
	e.start(t, e.aliceKey, "alice/app", id('7', 2), id('8', 2), "", "other_op", time.Now().UTC(), map[string]any{})
	e.start(t, e.aliceKey, "alice/app", callID, traceID, "", "live_op", time.Now().UTC(), map[string]any{"question": "streamed"})
	row := `#traces tr[data-call="` + callID + `"]`
	value(tb, chromedp.Poll[bool](`!!document.querySelector('`+row+`')`))
	if got := tb.text(row); !strings.Contains(got, "running") {
		t.Fatalf("the new row: %q", got)
	}
	if got := eval[string](tb, rowIDs); got != callID {
		t.Fatalf("the live list ignores its filter: %q", got)
	}
	e.end(t, e.aliceKey, "alice/app", callID, time.Now().UTC(), "done", "")
	value(tb, chromedp.Poll[bool](`document.querySelector('`+row+`').textContent.includes('success')`))
	if !eval[bool](tb, `window.__noReload === true`) {
		t.Fatal("the page reloaded")
	}
}

// listLiveAcrossServers watches a list on a second server process sharing
// the database: calls written through the first one arrive and update live.
func listLiveAcrossServers(t *testing.T, e *env, dbURL string) {
	peer := serverproc.Start(t, serverproc.Options{DatabaseURL: dbURL})
	tb := newTab(t, peer.URL)
	tb.signIn("", e.aliceKey)
	tb.open("/ui/p/alice/app/?op=peer_op")
	value(tb, chromedp.Poll[bool](`!!document.querySelector('.empty')`))
	tb.run(chromedp.Evaluate[chromedp.Void](`window.__noReload = true`))
	value(tb, chromedp.Poll[bool](`document.querySelector('#results').dataset.live === 'open'`))
	callID, traceID := id('7', 3), id('8', 3)
	e.start(t, e.aliceKey, "alice/app", callID, traceID, "", "peer_op", time.Now().UTC(), map[string]any{"question": "from the other server"})
	row := `#traces tr[data-call="` + callID + `"]`
	value(tb, chromedp.Poll[bool](`!!document.querySelector('`+row+`')`))
	if got := tb.text(row); !strings.Contains(got, "running") {
		t.Fatalf("the new row: %q", got)
	}
	e.end(t, e.aliceKey, "alice/app", callID, time.Now().UTC(), "done", "")
	value(tb, chromedp.Poll[bool](`document.querySelector('`+row+`').textContent.includes('success')`))
	if !eval[bool](tb, `window.__noReload === true`) {
		t.Fatal("the page reloaded")
	}
}

// listAtAGlance: reached from the projects page, a row previews its input
// and output and names its model, and a trace written without the Python
// SDK's roll-ups (an OpenTelemetry or JS-SDK trace: no status_counts, no
// usage on the root) says "child error" when a child raised, is what the
// "child error" filter finds, and shows its children's tokens.
func listAtAGlance(t *testing.T, e *env) {
	root, traceID, child := id('c', 0), id('c', 1), id('c', 2)
	at := time.Now().UTC().Add(-time.Hour)
	e.start(t, e.aliceKey, "alice/glance", root, traceID, "", "agent.run", at, map[string]any{"model": "gpt-4o-mini",
		"messages": []any{map[string]any{"role": "user", "content": "Which city hosts the Louvre?"}}})
	e.start(t, e.aliceKey, "alice/glance", child, traceID, root, "openai.chat", at.Add(time.Second), map[string]any{"n": 1})
	e.endWith(t, e.aliceKey, "alice/glance", child, at.Add(2*time.Second), nil,
		map[string]any{"usage": map[string]any{"gpt-4o-mini": map[string]any{"prompt_tokens": 40, "completion_tokens": 2}}}, "RateLimitError: slow down")
	e.endWith(t, e.aliceKey, "alice/glance", root, at.Add(3*time.Second),
		map[string]any{"choices": []any{map[string]any{"message": map[string]any{"role": "assistant", "content": "Paris."}}}}, map[string]any{}, "")

	tb := newTab(t, e.srv.URL)
	tb.signIn("", e.aliceKey)
	tb.run(chromedp.Click(chromedp.CSS(`#projects a[href="/ui/p/alice/glance/"]`)), chromedp.WaitVisible(chromedp.CSS("#traces")))
	row := `#traces tr[data-call="` + root + `"]`
	for selector, want := range map[string]string{
		row + ` td[data-preview="input"]`:  "Which city hosts the Louvre?",
		row + ` td[data-preview="output"]`: "Paris.",
		row + ` td.model`:                  "gpt-4o-mini",
		row + ` .status`:                   "child error",
		row + ` td.tokens`:                 "42",
	} {
		if got := strings.TrimSpace(tb.text(selector)); got != want {
			t.Errorf("%s: %q, want %q", selector, got, want)
		}
	}
	tb.capture("tracelist")
	listOnAPhone(t, tb, root)
	submitFilters(tb, "status", "descendant_error",
		chromedp.SetValue(chromedp.CSS(`form.filters select[name="status"]`), "descendant_error"))
	if got := eval[string](tb, rowIDs); got != root {
		t.Fatalf("child error filter: rows %q", got)
	}
	saveAndOpenView(t, tb, root)
	submitFilters(tb, "status", "success",
		chromedp.SetValue(chromedp.CSS(`form.filters select[name="status"]`), "success"))
	if got := eval[string](tb, rowIDs); got != "" {
		t.Fatalf("success filter: rows %q", got)
	}
}

// listOnAPhone narrows the window to a phone's width: the navigation wraps
// between words, the page does not scroll sideways, and the trace's row
// still shows its name, status, input and output previews, model, tokens
// and latency (the user column gives way), with the sort links above.
func listOnAPhone(t *testing.T, tb *tab, callID string) {
	tb.run(chromedp.EmulateViewport(390, 844))
	defer tb.run(chromedp.EmulateViewport(1280, 900))
	tb.open(tb.path())
	tb.run(chromedp.WaitVisible(chromedp.CSS("#traces")))
	if broken := eval[[]string](tb, `[...document.querySelectorAll('.top nav a:not([data-nav=project])')]
	  .filter(a => a.getClientRects().length !== 1 || a.getBoundingClientRect().right > innerWidth).map(a => a.textContent)`); len(broken) > 0 {
		t.Errorf("navigation links broken across lines or off the screen at 390 px: %q", broken)
	}
	if over := eval[int](tb, `document.documentElement.scrollWidth - innerWidth`); over > 0 {
		t.Errorf("the trace list is %d px wider than a 390 px window", over)
	}
	shown := eval[map[string]bool](tb, `Object.fromEntries(['name', 'state', 'preview', 'model', 'tokens', 'latency', 'started', 'user'].map(cell => {
	  const r = document.querySelector('#traces tr[data-call="`+callID+`"] td.' + cell).getBoundingClientRect();
	  return [cell, r.width > 0 && r.height > 0 && r.left >= 0 && r.right <= innerWidth];
	}))`)
	for _, cell := range []string{"name", "state", "preview", "model", "tokens", "latency", "started"} {
		if !shown[cell] {
			t.Errorf("at 390 px the row does not show its %s cell: %v", cell, shown)
		}
	}
	if shown["user"] {
		t.Errorf("at 390 px the row still shows the user column: %v", shown)
	}
	if got := tb.text(`#traces tr[data-call="` + callID + `"] td.tokens`); got != "42" {
		t.Errorf("the tokens cell reads %q", got)
	}
	if n := eval[int](tb, `[...document.querySelectorAll('#traces thead a[data-sort]')].filter(a => a.getBoundingClientRect().width > 0).length`); n < 5 {
		t.Errorf("at 390 px %d sort links show above the list", n)
	}
	tb.capture("tracelist-phone")
}

// saveAndOpenView saves the view the filters made (pushed into the URL by
// htmx, not drawn with the page) under a name, then opens the project's
// list afresh and the view from its saved views: the filter comes back.
func saveAndOpenView(t *testing.T, tb *tab, root string) {
	tb.run(
		chromedp.Click(chromedp.CSS("#saved-views summary")),
		chromedp.SendKeys(chromedp.CSS(`form.save-view input[name="label"]`), "Child errors"),
		chromedp.Click(chromedp.CSS(`form.save-view button[type="submit"]`)),
		chromedp.WaitReady(chromedp.CSS(`#saved-views a[data-view="child-errors"][aria-current="true"]`)),
	)
	tb.open("/ui/p/alice/glance/")
	tb.run(
		chromedp.Click(chromedp.CSS("#saved-views summary")),
		chromedp.Click(chromedp.CSS(`#saved-views a[data-view="child-errors"]`)),
		chromedp.WaitReady(chromedp.CSS(`#saved-views a[data-view="child-errors"][aria-current="true"]`)),
	)
	if p, got := tb.path(), eval[string](tb, rowIDs); !strings.Contains(p, "status=descendant_error") || got != root {
		t.Fatalf("the saved view opened %s with rows %q", p, got)
	}
}
