package webui_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/testdb"
)

// evalFixture is a project with an op and a dataset in two versions each
// and two evaluation runs over the dataset's first version: run A right on
// every example; run B wrong on q2, without q3, with an inline example of
// its own, and faster on q1 (the scorer "sim" reports a latency too).
type evalFixture struct {
	tables       [2]string // the dataset's two tables
	rowDigests   map[string]string
	runA, runB   string
	callB        map[string]string // run B's call per example id
	predictOpRef string
}

func seedEvalFixture(t *testing.T, s *server) evalFixture {
	t.Helper()
	const p = "alice/p"
	k := s.aliceKey
	f := evalFixture{rowDigests: map[string]string{}, callB: map[string]string{}}
	s.api(t, k, "/v2/alice/p/ops", map[string]any{"name": "my_op", "source_code": "def f():\n    return 1\n"})
	s.api(t, k, "/v2/alice/p/ops", map[string]any{"name": "my_op", "source_code": "def f():\n    x = 2\n    return x\n"})
	rows := [2][]map[string]any{
		{{"id": "q1", "expected": "4"}, {"id": "q2", "expected": "Paris"}, {"id": "q3", "expected": "blue"}},
		{{"id": "q1", "expected": "4"}, {"id": "q2", "expected": "Paris, France"}, {"id": "q4", "expected": "9"}},
	}
	var datasets [2]string
	for i := range rows {
		f.tables[i] = s.api(t, k, "/table/create", map[string]any{"table": map[string]any{"project_id": p, "rows": rows[i]}})["digest"].(string)
		datasets[i] = s.api(t, k, "/obj/create", map[string]any{"obj": map[string]any{"project_id": p, "object_id": "qa", "val": map[string]any{
			"_type": "Dataset", "_class_name": "Dataset", "_bases": []string{"Object", "BaseModel"}, "name": "qa",
			"rows": "weave:///alice/p/table/" + f.tables[i],
		}}})["digest"].(string)
	}
	for _, r := range s.api(t, k, "/table/query", map[string]any{"project_id": p, "digest": f.tables[0]})["rows"].([]any) {
		row := r.(map[string]any)
		f.rowDigests[row["val"].(map[string]any)["id"].(string)] = row["digest"].(string)
	}
	opRef := func(name string) string {
		d := s.api(t, k, "/obj/create", map[string]any{"obj": map[string]any{"project_id": p, "object_id": name,
			"val": map[string]any{"_type": "CustomWeaveType", "weave_type": map[string]any{"type": "Op"}}}})["digest"].(string)
		return "weave:///alice/p/op/" + name + ":" + d
	}
	evaluate, predict := opRef("Evaluation.evaluate"), opRef("Evaluation.predict_and_score")
	f.predictOpRef = predict
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	example := func(id string) any {
		if id == "q9" {
			return map[string]any{"id": "q9", "expected": "x"}
		}
		return "weave:///alice/p/object/qa:" + datasets[0] + "/attr/rows/id/" + f.rowDigests[id]
	}
	for r, run := range []struct {
		name    string
		answers map[string]string
	}{
		{"A", map[string]string{"q1": "4", "q2": "Paris", "q3": "blue"}},
		{"B", map[string]string{"q1": "4", "q2": "Lyon", "q9": "x"}},
	} {
		root, traceID := uuidN('e', r), uuidN('f', r)
		at := t0.Add(time.Duration(r) * time.Minute)
		s.callStart(t, k, p, root, traceID, "", evaluate, at, map[string]any{"self": "weave:///alice/p/object/qa-eval:v0", "model": "model-" + run.name})
		for i, id := range []string{"q1", "q2", "q3", "q9"} {
			answer, ok := run.answers[id]
			if !ok {
				continue
			}
			expected := map[string]string{"q1": "4", "q2": "Paris", "q3": "blue", "q9": "x"}[id]
			call := uuidN(byte('a'+r), i)
			s.callStart(t, k, p, call, traceID, root, predict, at.Add(time.Duration(i+1)*time.Second), map[string]any{"example": example(id), "model": "model-" + run.name})
			latency := 1.0
			if run.name == "B" && id == "q1" {
				latency = 0.5
			}
			s.callEnd(t, k, p, call, at.Add(time.Duration(i+2)*time.Second), map[string]any{
				"output": answer, "scores": map[string]any{"exact": answer == expected, "sim": map[string]any{"score": float64(len(answer)) / 10, "latency_s": latency}},
			}, map[string]any{}, "")
			if run.name == "B" {
				f.callB[id] = call
			}
		}
		s.callEnd(t, k, p, root, at.Add(10*time.Second), map[string]any{"exact": map[string]any{"true_fraction": 1 - float64(r)/2}}, map[string]any{}, "")
		if r == 0 {
			f.runA = root
		} else {
			f.runB = root
		}
	}
	return f
}

var dataRow = regexp.MustCompile(`<tr data-row="([^"]+)"`)

// rowOrder lists the data-row attributes of a page, in order.
func rowOrder(body string) []string {
	var out []string
	for _, m := range dataRow.FindAllStringSubmatch(body, -1) {
		out = append(out, m[1])
	}
	return out
}

func TestObjectPages(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		s := newServer(t, db)
		f := seedEvalFixture(t, s)
		b := s.browser(t)
		b.signIn("", s.aliceKey)
		base := "/ui/p/alice/p/"

		all := b.get(base + "objects")
		all.mustContain(t, `data-object="my_op"`, `data-object="qa"`, `aria-label="2 versions of qa"`, `href="/ui/p/alice/p/objects/qa/versions"`)
		datasets := b.get(base + "objects?kind=datasets")
		datasets.mustContain(t, `data-object="qa"`)
		datasets.mustNotContain(t, `data-object="my_op"`)
		b.get(base+"objects?kind=ops").mustNotContain(t, `data-object="qa"`)

		history := b.get(base + "objects/qa/versions")
		history.mustContain(t, `data-version="1"`, `data-version="0"`, `href="/ui/p/alice/p/objects/qa/diff?a=v0&amp;b=v1"`,
			`href="/ui/p/alice/p/?ref=weave%3A%2F%2F%2Falice%2Fp%2Fobject%2Fqa%3A`)

		code := b.get(base + "objects/my_op/diff?a=v0&b=v1")
		code.mustContain(t, `2 lines added · 1 removed`, `<tr class="line-removed">`, `return 1`, `x = 2`)
		if !regexp.MustCompile(`<tr class="line-added">.*x = 2`).MatchString(code.body) {
			t.Fatalf("the added line is not marked added:\n%s", code.body)
		}
		rowsDiff := b.get(base + "objects/qa/diff?a=v0&b=v1")
		rowsDiff.mustContain(t, "2 rows added · 2 removed · 1 kept", `class="row-removed" data-row="`+f.rowDigests["q3"]+`"`)
		same := b.get(base + "objects/qa/diff?a=v1&b=latest")
		same.mustContain(t, "0 rows added · 0 removed · 3 kept", `<section class="diff-part object-value-diff" aria-label="Value">`, "Identical.")

		version := b.get(base + "objects/qa/versions/v0")
		version.mustContain(t, `href="/ui/p/alice/p/tables/`+f.tables[0]+`"`, `href="/ui/p/alice/p/objects/qa/versions"`)

		sorted := b.get(base + "tables/" + f.tables[0] + "?sort=expected&dir=desc")
		if got, want := strings.Join(rowOrder(sorted.body), " "), strings.Join([]string{f.rowDigests["q3"], f.rowDigests["q2"], f.rowDigests["q1"]}, " "); got != want {
			t.Fatalf("rows sorted by expected, descending: %s, want %s", got, want)
		}
		sorted.mustContain(t, `aria-sort="descending"`, "3 rows")

		for path, status := range map[string]int{
			"objects?kind=bogus":                                                    http.StatusBadRequest,
			"objects?offset=-1":                                                     http.StatusBadRequest,
			"objects/nothing/versions":                                              http.StatusNotFound,
			"objects/qa/diff?a=v0&b=v9":                                             http.StatusNotFound,
			"tables/" + f.tables[0] + "?sort=a..b":                                  http.StatusBadRequest,
			"tables/" + f.tables[0] + "?dir=up":                                     http.StatusBadRequest,
			"tables/" + f.tables[0] + "?sort=" + url.QueryEscape(`a"b`):             http.StatusBadRequest,
			"tables/nothing":                                                        http.StatusNotFound,
			"?ref=" + url.QueryEscape("weave:///alice"):                             http.StatusBadRequest,
			"evaluations/compare":                                                   http.StatusBadRequest,
			"evaluations/compare?run=1&run=2&run=3&run=4&run=5&run=6":               http.StatusBadRequest,
			"evaluations/compare?run=x&run=" + f.runA:                               http.StatusNotFound,
			"evaluations/compare?run=" + f.runA + "&run=" + f.runB + "&baseline=zz": http.StatusBadRequest,
		} {
			if got := b.get(base + path); got.status != status {
				t.Errorf("%s: %d, want %d", path, got.status, status)
			}
		}

		// Calls that used the per-example op: six calls, none of them a root.
		used := b.get(base + "?ref=" + url.QueryEscape(f.predictOpRef))
		used.mustContain(t, "6 calls", `?call=`+f.callB["q2"])

		bob := s.browser(t)
		bob.signIn("", s.bobKey)
		for _, path := range []string{"objects", "objects/qa/versions", "tables/" + f.tables[0], "evaluations"} {
			if got := bob.get(base + path); got.status != http.StatusForbidden {
				t.Errorf("bob sees %s: %d", path, got.status)
			}
		}
	})
}

func TestEvaluationPages(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		s := newServer(t, db)
		f := seedEvalFixture(t, s)
		b := s.browser(t)
		b.signIn("", s.aliceKey)
		base := "/ui/p/alice/p/"

		list := b.get(base + "evaluations")
		list.mustContain(t, `data-run="`+f.runA+`"`, `data-run="`+f.runB+`"`, `data-score="exact.true_fraction">0.5<`)

		// One run's results, from its link in the list: its examples and
		// their scores, no deltas.
		results := regexp.MustCompile(`data-run="` + f.runA + `"[\s\S]*?class="results-link" href="([^"]+)"`).FindStringSubmatch(list.body)
		if results == nil {
			t.Fatalf("run A has no results link:\n%s", list.body)
		}
		one := b.get(strings.ReplaceAll(results[1], "&amp;", "&"))
		if got := rowOrder(one.body); one.status != http.StatusOK || len(got) != 3 || got[0] != f.rowDigests["q1"] || got[2] != f.rowDigests["q3"] {
			t.Fatalf("run A's results: %d, rows %v", one.status, got)
		}
		one.mustContain(t, "Results of an evaluation run", "3 examples", `data-score="sim.score">0.5<`, `data-score="exact">1<`)
		one.mustNotContain(t, "delta", "Regressions only", "(baseline)", "<strong>baseline")

		compare := base + "evaluations/compare?run=" + f.runA + "&run=" + f.runB
		all := b.get(compare)
		// Baseline order, then the example only run B has (keyed by its JSON).
		order := rowOrder(all.body)
		if len(order) != 4 || order[0] != f.rowDigests["q1"] || order[1] != f.rowDigests["q2"] || order[2] != f.rowDigests["q3"] {
			t.Fatalf("examples aligned by row digest: %v (rows %v)", order, f.rowDigests)
		}
		all.mustContain(t, "All examples (4)", "not in this run", `class="delta delta-down">−1<`, `data-score="sim.score">0.4`,
			`href="/ui/p/alice/p/traces/`+uuidN('f', 1)+`?call=`+f.callB["q2"]+`"`, `name="csrf"`)
		// One row a page: the pages inside the baseline's examples are found
		// from the baseline's calls alone, the last ones by aligning every
		// example; together they are the whole comparison, in order.
		var paged []string
		for offset := range 5 {
			pg := b.get(compare + "&limit=1&offset=" + strconv.Itoa(offset))
			paged = append(paged, rowOrder(pg.body)...)
			if offset < 2 {
				pg.mustContain(t, "3 examples in the baseline")
			}
			if offset == 1 {
				pg.mustContain(t, `class="regression"`, `class="delta delta-down">−1<`)
			}
			if strings.Contains(pg.body, `rel="next"`) != (offset < 3) {
				t.Fatalf("page %d: next link %v", offset, !(offset < 3))
			}
		}
		if strings.Join(paged, " ") != strings.Join(order, " ") {
			t.Fatalf("paged one by one: %v, all at once: %v", paged, order)
		}
		regressions := b.get(compare + "&regressions=1")
		if got := rowOrder(regressions.body); len(got) != 1 || got[0] != f.rowDigests["q2"] {
			t.Fatalf("regressions only: %v", got)
		}
		regressions.mustContain(t, `class="regression"`, "1 example scored worse")
		// Directions: a latency is lower-is-better unless the view says
		// otherwise, every other score (booleans too) higher-is-better; B's
		// faster q1 is better, and its latency delta says so.
		all.mustContain(t, `data-metric="sim.latency_s" data-better="lower"`, `data-metric="exact" data-better="higher"`,
			`data-metric="sim.score" data-better="higher"`, `data-score="sim.latency_s">0.5 <span class="delta delta-up">−0.5<`)
		// The view's link that turns the latency around is a view where B's
		// q1 regresses.
		flip := regexp.MustCompile(`data-metric="sim.latency_s"[^>]*>[^<]*<a class="flip-direction" href="([^"]+)"`).FindStringSubmatch(all.body)
		if flip == nil {
			t.Fatalf("no link turns sim.latency_s around:\n%s", all.body)
		}
		flipped := b.get(strings.ReplaceAll(flip[1], "&amp;", "&") + "&regressions=1")
		flipped.mustContain(t, `data-metric="sim.latency_s" data-better="higher"`, `class="delta delta-down">−0.5<`)
		if got := rowOrder(flipped.body); len(got) != 2 || got[0] != f.rowDigests["q1"] || got[1] != f.rowDigests["q2"] {
			t.Fatalf("regressions with higher latencies better: %v", got)
		}
		// With lower exact and sim scores better, B's q2 is no regression.
		b.get(compare+"&lower=exact&lower=sim.score&regressions=1").mustContain(t, "0 examples", `data-metric="exact" data-better="lower"`)
		// Against B, A regresses on q1 (slower) alone; with lower sim scores
		// better, on q2 as well.
		if got := rowOrder(b.get(compare + "&baseline=" + f.runB + "&regressions=1").body); len(got) != 1 || got[0] != f.rowDigests["q1"] {
			t.Fatalf("A against B: %v", got)
		}
		if got := rowOrder(b.get(compare + "&baseline=" + f.runB + "&lower=sim.score&regressions=1").body); len(got) != 2 || got[0] != f.rowDigests["q1"] || got[1] != f.rowDigests["q2"] {
			t.Fatalf("A against B, lower sim scores better: %v", got)
		}
		if got := b.get(compare + "&lower=exact&higher=exact"); got.status != http.StatusBadRequest {
			t.Fatalf("a metric both ways: %d", got.status)
		}

		// Sending rows: to a queue (both runs' calls of q2), then to a new
		// version of the dataset; a form without the CSRF token is refused.
		queue := s.api(t, s.aliceKey, "/annotation_queues", map[string]any{"project_id": "alice/p", "name": "review"})["id"].(string)
		form := url.Values{"run": {f.runA, f.runB}, "baseline": {f.runA}, "row": {f.rowDigests["q2"]}, "queue": {queue}}
		if got := b.post(base+"evaluations/compare/queue", form); got.status != http.StatusForbidden {
			t.Fatalf("without CSRF: %d", got.status)
		}
		form.Set("csrf", b.csrf())
		sent := b.post(base+"evaluations/compare/queue", form)
		if sent.status != http.StatusSeeOther || sent.header.Get("Location") != base+"queues/"+queue {
			t.Fatalf("send to queue: %d %s %s", sent.status, sent.header.Get("Location"), sent.body)
		}
		items := s.api(t, s.aliceKey, "/annotation_queues/"+queue+"/items/query", map[string]any{"project_id": "alice/p"})["items"].([]any)
		if len(items) != 2 {
			t.Fatalf("queue items: %v", items)
		}
		form.Set("dataset", "qa")
		form["row"] = []string{f.rowDigests["q2"], f.rowDigests["q1"]}
		made := b.post(base+"evaluations/compare/dataset", form)
		if made.status != http.StatusSeeOther || !strings.HasPrefix(made.header.Get("Location"), base+"objects/qa/versions/") {
			t.Fatalf("send to dataset: %d %s %s", made.status, made.header.Get("Location"), made.body)
		}
		v2 := b.get(made.header.Get("Location"))
		v2.mustContain(t, "v2", "latest")
		table := regexp.MustCompile(`href="(/ui/p/alice/p/tables/[0-9a-f]+)"`).FindStringSubmatch(v2.body)
		if table == nil {
			t.Fatalf("the new version links no table:\n%s", v2.body)
		}
		if got := rowOrder(b.get(table[1]).body); len(got) != 2 || got[0] != f.rowDigests["q1"] || got[1] != f.rowDigests["q2"] {
			t.Fatalf("the new version's rows: %v", got)
		}
		form["row"] = []string{"not-a-row"}
		if got := b.post(base+"evaluations/compare/dataset", form); got.status != http.StatusBadRequest {
			t.Fatalf("an unknown row: %d", got.status)
		}
	})
}
