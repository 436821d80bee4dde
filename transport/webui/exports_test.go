package webui_test

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/testdb"
	"github.com/weftlabs/weft/transport/httpapi"
	"github.com/weftlabs/weft/transport/webui"
)

// readCSV parses an export's CSV body.
func readCSV(t *testing.T, p page) [][]string {
	t.Helper()
	if p.status != http.StatusOK || p.header.Get("Content-Type") != "text/csv; charset=utf-8" {
		t.Fatalf("csv: %d %v %s", p.status, p.header, p.body)
	}
	records, err := csv.NewReader(strings.NewReader(p.body)).ReadAll()
	if err != nil {
		t.Fatalf("csv %q: %v", p.body, err)
	}
	return records
}

// readJSONL parses an export's JSONL body, a value a line, into out's
// element type.
func readJSONL[T any](t *testing.T, p page) []T {
	t.Helper()
	if p.status != http.StatusOK || p.header.Get("Content-Type") != "application/jsonl" {
		t.Fatalf("jsonl: %d %v %s", p.status, p.header, p.body)
	}
	var out []T
	lines := bufio.NewScanner(strings.NewReader(p.body))
	for lines.Scan() {
		var v T
		if err := json.Unmarshal(lines.Bytes(), &v); err != nil {
			t.Fatalf("jsonl line %q: %v", lines.Text(), err)
		}
		out = append(out, v)
	}
	return out
}

// TestTableExport: a table page (a dataset version's rows) links its export
// in its own sort; the export writes every row in that order, CSV with a
// column per member (in the order the names first appear; text made inert,
// other values as JSON) and JSONL of the rows' values; Config.MaxExportRows bounds it and the
// page says so; a bad format, sort or table is refused, and another
// entity's table is a 403.
func TestTableExport(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		s := newServer(t, db, func(_ *httpapi.Config, ui *webui.Config) { ui.MaxExportRows = 3 })
		f := seedEvalFixture(t, s)
		b := s.browser(t)
		b.signIn("", s.aliceKey)
		base := "/ui/p/alice/p/tables/"

		sorted := b.get(base + f.tables[0] + "?sort=expected&dir=desc")
		sorted.mustContain(t, `href="/ui/p/alice/p/tables/`+f.tables[0]+`/export?dir=desc&amp;format=csv&amp;sort=expected"`, `data-export="jsonl"`)
		sorted.mustNotContain(t, "Export the first")
		p := b.get(base + f.tables[0] + "/export?dir=desc&format=csv&sort=expected")
		if got := p.header.Get("Content-Disposition"); got != `attachment; filename="alice-p-table-`+f.tables[0][:12]+`.csv"` {
			t.Errorf("disposition %q", got)
		}
		if got := readCSV(t, p); !slices.EqualFunc(got, [][]string{{"expected", "id"}, {"blue", "q3"}, {"Paris", "q2"}, {"4", "q1"}}, slices.Equal) {
			t.Errorf("the dataset's rows, sorted by expected descending: %q", got)
		}
		type qa struct{ ID, Expected string }
		if got := readJSONL[qa](t, b.get(base+f.tables[1]+"/export?format=jsonl")); !slices.Equal(got, []qa{{"q1", "4"}, {"q2", "Paris, France"}, {"q4", "9"}}) {
			t.Errorf("the second version's rows in table order: %v", got)
		}

		// Members in the order they first appear, values as JSON, text made
		// inert; past MaxExportRows nothing is written, and the page says so.
		mixed := s.api(t, s.aliceKey, "/table/create", map[string]any{"table": map[string]any{"project_id": "alice/p", "rows": []any{
			json.RawMessage(`{"text": "=SUM(A1)", "n": -2}`), json.RawMessage(`{"text": "plain", "extra": {"x": [1]}}`),
			json.RawMessage(`{"n": 1.5}`), json.RawMessage(`{"n": null}`), json.RawMessage(`{"text": "fifth"}`),
		}}})["digest"].(string)
		b.get(base+mixed).mustContain(t, "Export the first 3 as")
		want := [][]string{{"text", "n", "extra"}, {"'=SUM(A1)", "-2", ""}, {"plain", "", `{"x":[1]}`}, {"", "1.5", ""}}
		if got := readCSV(t, b.get(base+mixed+"/export?format=csv")); !slices.EqualFunc(got, want, slices.Equal) {
			t.Errorf("mixed rows: %q, want %q", got, want)
		}

		for path, status := range map[string]int{
			f.tables[0] + "/export":                         http.StatusBadRequest,
			f.tables[0] + "/export?format=xml":              http.StatusBadRequest,
			f.tables[0] + "/export?format=csv&sort=a..b":    http.StatusBadRequest,
			"nothing/export?format=csv":                     http.StatusNotFound,
			f.tables[0] + "/export?format=jsonl&dir=upward": http.StatusBadRequest,
		} {
			if got := b.get(base + path); got.status != status || got.header.Get("Content-Disposition") != "" {
				t.Errorf("%s: %d %v, want %d", path, got.status, got.header, status)
			}
		}
		bob := s.browser(t)
		bob.signIn("", s.bobKey)
		if got := bob.get(base + f.tables[0] + "/export?format=jsonl"); got.status != http.StatusForbidden || strings.Contains(got.body, "Paris") {
			t.Errorf("bob's export of alice's table: %d %s", got.status, got.body)
		}
	})
}

// TestComparisonExport: the comparison page links its export in its view;
// the export writes every example the view shows (all, or the regressions
// only) in the page's order, up to Config.MaxExportRows: CSV with each
// run's call, output and scores under the run's id, and JSONL with the
// example's value, whether it regressed and each run's result (null where
// a run lacks the example); a bad view is refused, another entity's runs a
// 403.
func TestComparisonExport(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		s := newServer(t, db, func(_ *httpapi.Config, ui *webui.Config) { ui.MaxExportRows = 3 })
		f := seedEvalFixture(t, s)
		b := s.browser(t)
		b.signIn("", s.aliceKey)
		base := "/ui/p/alice/p/evaluations/compare"
		view := "?run=" + f.runA + "&run=" + f.runB

		b.get(base+view).mustContain(t, "Export the first 3 as")
		b.get(base+view+"&limit=1&offset=1").mustContain(t,
			`href="/ui/p/alice/p/evaluations/compare/export?baseline=`+f.runA+`&amp;format=csv&amp;run=`+f.runA+`&amp;run=`+f.runB+`"`)
		p := b.get(base + "/export" + view + "&format=csv")
		if got := p.header.Get("Content-Disposition"); got != `attachment; filename="alice-p-evaluation-comparison.csv"` {
			t.Errorf("disposition %q", got)
		}
		records := readCSV(t, p)
		head := records[0]
		wantHead := []string{"row_digest", "example", "regression",
			f.runA + ".call_id", f.runA + ".output", f.runA + ".exact", f.runA + ".sim.latency_s", f.runA + ".sim.score",
			f.runB + ".call_id", f.runB + ".output", f.runB + ".exact", f.runB + ".sim.latency_s", f.runB + ".sim.score"}
		if !slices.Equal(head, wantHead) || len(records) != 4 {
			t.Fatalf("%d records, header %q, want %q", len(records), head, wantHead)
		}
		col := func(record []string, name string) string { return record[slices.Index(head, name)] }
		q1, q2, q3 := records[1], records[2], records[3]
		if col(q1, "row_digest") != f.rowDigests["q1"] || !strings.Contains(col(q1, "example"), `"expected":"4"`) ||
			col(q1, f.runB+".sim.latency_s") != "0.5" || col(q1, f.runA+".sim.latency_s") != "1" || col(q1, "regression") != "false" {
			t.Errorf("q1: %q", q1)
		}
		if col(q2, "regression") != "true" || col(q2, f.runB+".output") != "Lyon" || col(q2, f.runB+".exact") != "0" ||
			col(q2, f.runA+".exact") != "1" || col(q2, f.runB+".call_id") != f.callB["q2"] || col(q2, f.runB+".sim.score") != "0.4" {
			t.Errorf("q2: %q", q2)
		}
		if col(q3, "row_digest") != f.rowDigests["q3"] || col(q3, f.runB+".call_id") != "" || col(q3, f.runB+".exact") != "" {
			t.Errorf("q3, which run B lacks: %q", q3)
		}

		// JSONL of the regressions only: q2, which run B answered wrong.
		type result struct {
			Run    string             `json:"run"`
			CallID string             `json:"call_id"`
			Output string             `json:"output"`
			Scores map[string]float64 `json:"scores"`
		}
		type line struct {
			RowDigest  string            `json:"row_digest"`
			Example    map[string]string `json:"example"`
			Regression bool              `json:"regression"`
			Results    []*result         `json:"results"`
		}
		lines := readJSONL[line](t, b.get(base+"/export"+view+"&format=jsonl&regressions=1"))
		if len(lines) != 1 || lines[0].RowDigest != f.rowDigests["q2"] || !lines[0].Regression || lines[0].Example["expected"] != "Paris" ||
			len(lines[0].Results) != 2 || lines[0].Results[1].Output != "Lyon" || lines[0].Results[1].Scores["exact"] != 0 || lines[0].Results[0].Run != f.runA {
			t.Errorf("the regressions: %+v", lines)
		}
		// All four examples with run B the baseline and a higher limit on
		// the page: the export still stops at MaxExportRows; B's own
		// inline example comes first, A's result for it is null.
		lines = readJSONL[line](t, b.get(base+"/export"+view+"&format=jsonl&baseline="+f.runB+"&limit=100"))
		if len(lines) != 3 || lines[2].Example["id"] != "q9" || lines[2].Results[0] != nil || lines[2].Results[1].Output != "x" {
			t.Errorf("run B's examples first: %+v", lines)
		}

		for path, status := range map[string]int{
			"/export" + view:                         http.StatusBadRequest,
			"/export" + view + "&format=xlsx":        http.StatusBadRequest,
			"/export?format=csv":                     http.StatusBadRequest,
			"/export?format=csv&run=x&run=" + f.runA: http.StatusNotFound,
		} {
			if got := b.get(base + path); got.status != status || got.header.Get("Content-Disposition") != "" {
				t.Errorf("%s: %d %v, want %d", path, got.status, got.header, status)
			}
		}
		bob := s.browser(t)
		bob.signIn("", s.bobKey)
		if got := bob.get(base + "/export" + view + "&format=csv"); got.status != http.StatusForbidden || strings.Contains(got.body, "Lyon") {
			t.Errorf("bob's export of alice's comparison: %d %s", got.status, got.body)
		}
	})
}
