package webui

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/weftlabs/weft/feedback"
	"github.com/weftlabs/weft/objects"
	"github.com/weftlabs/weft/trace"
)

// objectFixtures gives the object, table and evaluation pages their data,
// built by the pages' own builders from stored values that hold the payload.
func objectFixtures(v *viewer) map[string]page {
	const project = "team/p"
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	xssJSON, _ := json.Marshal(xss)
	row := json.RawMessage(`{"question":` + string(xssJSON) + `,"expected":"4","ref":"weave:///team/p/object/x:v0"}`)
	rows := []objects.TableRow{{Digest: "d1", Val: row, OriginalIndex: 0}, {Digest: "d2", Val: json.RawMessage(`{"question":"q","a.b":1}`), OriginalIndex: 1}}
	table := tableRows(project, "tbl", tableView{Sort: "question", Dir: "desc", Offset: 50}, rows)
	table.Count, table.Prev, table.Next = 120, tablePath(project, "tbl", tableView{}), tablePath(project, "tbl", tableView{Offset: 100})

	run := func(id, model string, exact bool) *trace.Call {
		out, _ := json.Marshal(map[string]any{"exactMatch": map[string]any{"true_fraction": 0.5}, "model_latency": map[string]any{"mean": 0.2}})
		in, _ := json.Marshal(map[string]any{"self": "weave:///team/p/object/ev:v0", "model": "weave:///team/p/op/" + model + ":v0"})
		name := xss
		return &trace.Call{ProjectID: project, ID: id, TraceID: "t-" + id, OpName: "weave:///team/p/op/Evaluation.evaluate:v0", DisplayName: &name,
			StartedAt: at, Inputs: in, Output: out, Summary: json.RawMessage(`{}`), Attributes: json.RawMessage(`{}`)}
	}
	runs := []evalRun{runOf(project, run("r1", "a", true)), runOf(project, run("r2", "b", false))}
	cmp := &comparison{Runs: runs, Metrics: []string{"exactMatch"}}
	ex := &compareExample{Key: "d1", Example: row, Results: []*exampleResult{
		{CallID: "c1", TraceID: "t1", Output: xssJSON, Scores: map[string]float64{"exactMatch": 1}},
		{CallID: "c2", TraceID: "t2", Output: json.RawMessage(`"Lyon"`), Scores: map[string]float64{"exactMatch": 0}},
	}}
	missing := &compareExample{Key: "d2", Example: json.RawMessage(`"weave:///team/p/object/qa:v0/attr/rows/id/d2"`), Results: []*exampleResult{nil, ex.Results[1]}}
	params := compareParams{Runs: []string{"r1", "r2"}, Baseline: "r1", Regressions: true}
	compare := compareView{
		Project: project, Params: params, Runs: runs, Metrics: cmp.Metrics, Total: 2, All: 2, First: 1,
		Directions:    []metricDirectionView{{Name: xss, LowerIsBetter: true, Flip: params.url(project, "higher", xss)}},
		Rows:          []compareRow{compareRowOf(project, cmp, ex, nil, metricDirections{}), compareRowOf(project, cmp, missing, nil, metricDirections{})},
		RegressionsOn: params.url(project, "regressions", "1"), RegressionsOff: params.url(project, "regressions", ""),
		BaselineLinks: []string{params.url(project, "baseline", "r1"), params.url(project, "baseline", "r2")},
		CSRF:          v.CSRF(), CanWrite: true, Queues: []feedback.Queue{{ID: "q1", Name: xss}},
		QueueAction: projectPath(project, "evaluations/compare/queue"), DatasetAction: projectPath(project, "evaluations/compare/dataset"),
		DatasetName: xss, Next: params.url(project, "offset", "50"),
	}
	return map[string]page{
		"objects": {Title: "Objects", Viewer: v, Project: project, Body: objectsView{
			Project: project, Kind: "all", Kinds: []kindTab{{Label: "All", Href: objectsPath(project, "all", 0), Current: true}},
			Rows: []objectRow{{Name: xss, Kind: "object", Class: "Dataset", Latest: 3, Versions: 4, Updated: at, Href: objectVersionPath(project, xss, "v3"), History: objectHistoryPath(project, xss)}},
			Next: objectsPath(project, "datasets", 50),
		}},
		"object_versions": {Title: xss, Viewer: v, Project: project, Body: objectHistoryView{
			Project: project, Name: xss, Kind: "op", A: 0, B: 1, DiffAction: objectDiffPath(project, xss, "", ""),
			Versions: []versionRow{{Index: 1, Digest: "abc", Created: at, IsLatest: true, Href: "/x", PrevDiff: "/d", Calls: callsUsingPath(project, xss),
				Aliases: []string{xss}, Playground: promptPlaygroundPath(project, xss, xss)}, {Index: 0, Digest: "abd", Created: at}},
			AliasURL: "/a", Prompt: true,
		}},
		"object_diff": {Title: xss, Viewer: v, Project: project, Body: objectDiffView{
			Project: project, Name: xss, Versions: []int{1, 0},
			Left: &versionSide{Index: 0, Href: "/a"}, Right: &versionSide{Index: 1, Href: "/b"},
			Value: structuralDiff(json.RawMessage(`{"a":1}`), json.RawMessage(`{"a":`+string(xssJSON)+`}`)),
			Code:  diffLines("def f():\n  return 1\n", "def f():\n  return '"+xss+"'\n"),
			Tables: []tableDiff{{Field: xss, LeftHref: "/l", RightHref: "/r", AddedCount: 1, RemovedCount: 1, Kept: 3,
				Added: []tableDiffRow{{Index: 1, Digest: "d", Value: cellTree(project, row)}}, Removed: []tableDiffRow{{Index: 2, Digest: "e", Value: cellTree(project, json.RawMessage(`1`))}}}},
		}},
		"table": {Title: "Table", Viewer: v, Project: project, Body: table},
		"evals": {Title: "Evaluations", Viewer: v, Project: project, Body: evalsView{
			Project: project, Runs: runs, CompareAction: projectPath(project, "evaluations/compare"), First: 1, Next: evalsPath(project, 50),
		}},
		"eval_compare": {Title: "Compare", Viewer: v, Project: project, Body: compare},
	}
}

func TestDiffLines(t *testing.T) {
	d := diffLines("a\nb\nc\nd\n", "a\nc\nx\nd\ny")
	var got []string
	for _, l := range d.Lines {
		got = append(got, l.Op[:1]+l.Text)
	}
	if want := "ea rb ec ax ed ay"; strings.Join(got, " ") != want {
		t.Fatalf("diff: %q, want %q", strings.Join(got, " "), want)
	}
	if d.Added != 2 || d.Removed != 1 {
		t.Fatalf("counts: +%d −%d", d.Added, d.Removed)
	}
	if d.Lines[3].Right != 3 || d.Lines[3].Left != 0 || d.Lines[4].Left != 4 || d.Lines[4].Right != 4 {
		t.Fatalf("line numbers: %+v", d.Lines)
	}
	if long := diffLines(strings.Repeat("x\n", maxCodeLines+1), "x"); long.Note == "" || long.Lines != nil {
		t.Fatalf("code past the bound is not aligned: %+v", long.Note)
	}
}

func TestRowKeyAndScores(t *testing.T) {
	if got := rowKey(json.RawMessage(`"weave:///e/p/object/qa:abc/attr/rows/id/ROWDIGEST"`)); got != "ROWDIGEST" {
		t.Fatalf("row ref: %q", got)
	}
	// An inline example is keyed by its canonical JSON: member order and
	// spacing do not matter.
	a, b := rowKey(json.RawMessage(`{"x":1,"y":[true]}`)), rowKey(json.RawMessage(`{ "y":[true], "x":1 }`))
	if a == "" || a != b {
		t.Fatalf("inline examples: %q %q", a, b)
	}
	if rowKey(json.RawMessage(`{"x":2}`)) == a {
		t.Fatal("different examples share a key")
	}
	scores := summaryScores(json.RawMessage(`{"model_latency":{"mean":0.5},"acc":{"true_fraction":0.75,"true_count":3},"f1":0.9,"model_output":{"mean":1},"note":"x"}`))
	var names []string
	for _, s := range scores {
		names = append(names, s.Name+"="+s.Text())
	}
	if got := strings.Join(names, " "); got != "acc.true_count=3 acc.true_fraction=0.75 f1=0.9 model_latency.mean=0.5" {
		t.Fatalf("summary scores: %s", got)
	}
	// A scorer that returns {correct: boolean} is summarised a level deeper
	// (the Weave TypeScript SDK's summary, as it writes it).
	scores = summaryScores(json.RawMessage(`{"exactMatch":{"correct":{"true_count":2,"true_fraction":0.6666666666666666}},` +
		`"model_success":{"true_count":3,"true_fraction":1},"model_latency":{"mean":0.25}}`))
	names = nil
	for _, s := range scores {
		names = append(names, s.Name+"="+s.Text())
	}
	if got := strings.Join(names, " "); got != "exactMatch.correct.true_count=2 exactMatch.correct.true_fraction=0.6667 model_latency.mean=0.25 model_success.true_count=3 model_success.true_fraction=1" {
		t.Fatalf("nested summary scores: %s", got)
	}
	// An example's scores, at any depth; anything but numbers and booleans
	// is none.
	var example []string
	for _, s := range flattenScores("judge", json.RawMessage(`{"verdict":{"pass":true,"why":"x","score":{"value":0.5}},"list":[1]}`)) {
		example = append(example, s.Name+"="+s.Text())
	}
	if got := strings.Join(example, " "); got != "judge.verdict.pass=1 judge.verdict.score.value=0.5" {
		t.Fatalf("an example's nested scores: %s", got)
	}
}
