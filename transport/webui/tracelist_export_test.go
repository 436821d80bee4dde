package webui_test

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/testdb"
	"github.com/weftlabs/weft/transport/httpapi"
	"github.com/weftlabs/weft/transport/webui"
)

// TestTraceListExport: the list's export writes its view (filters, sort,
// chosen columns) as CSV with the list's columns, completed as the list
// completes them (the roll-up of a root written without one), with cells a
// spreadsheet would run made inert, and as JSONL of the calls as the API
// writes them; Config.MaxExportRows bounds it and the page says so; a bad
// format or view is a 400 and another entity's project a 403.
func TestTraceListExport(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		s := newServer(t, db, func(_ *httpapi.Config, ui *webui.Config) { ui.MaxExportRows = 3 })
		t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
		usage := map[string]any{"usage": map[string]any{"gpt-4o": map[string]any{"prompt_tokens": 1000, "completion_tokens": 100}}}
		for i, question := range []string{"=HYPERLINK(\"http://x\")", "plain, with a comma", "line\nbreak", "-1+1", "fourth"} {
			s.callStart(t, s.aliceKey, "alice/p", uuidN('a', i), uuidN('f', i), "", "answer", t0.Add(time.Duration(i)*time.Minute), map[string]any{"question": question})
			s.callEnd(t, s.aliceKey, "alice/p", uuidN('a', i), t0.Add(time.Duration(i)*time.Minute+1500*time.Millisecond), map[string]any{"text": "ok"}, usage, "")
		}
		// A root without roll-ups whose child used the model.
		s.callStart(t, s.aliceKey, "alice/p", uuidN('b', 0), uuidN('e', 0), "", "agent", t0.Add(-time.Hour), map[string]any{"question": "otel"})
		s.callStart(t, s.aliceKey, "alice/p", uuidN('b', 1), uuidN('e', 0), uuidN('b', 0), "llm", t0.Add(-time.Hour), map[string]any{})
		s.callEnd(t, s.aliceKey, "alice/p", uuidN('b', 1), t0.Add(-time.Hour+time.Second), nil, usage, "")
		s.callEnd(t, s.aliceKey, "alice/p", uuidN('b', 0), t0.Add(-time.Hour+2*time.Second), nil, map[string]any{}, "")

		b := s.browser(t)
		b.signIn("alice", s.aliceKey)
		list := b.get("/ui/p/alice/p/?sort=started_at&dir=asc&cols=inputs.question")
		list.mustContain(t, "Export the first 3 as", `href="/ui/p/alice/p/export?cols=inputs.question&amp;dir=asc&amp;format=csv"`)

		p := b.get("/ui/p/alice/p/export?cols=inputs.question&dir=asc&format=csv&sort=started_at")
		if p.status != http.StatusOK || p.header.Get("Content-Type") != "text/csv; charset=utf-8" ||
			p.header.Get("Content-Disposition") != `attachment; filename="alice-p-traces.csv"` {
			t.Fatalf("csv: %d %v %s", p.status, p.header, p.body)
		}
		records, err := csv.NewReader(strings.NewReader(p.body)).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		head := records[0]
		if len(records) != 4 || head[0] != "id" || head[len(head)-1] != "inputs.question" {
			t.Fatalf("csv: %d records, header %q", len(records), head)
		}
		col := func(record []string, name string) string { return record[slices.Index(head, name)] }
		otel, first, second := records[1], records[2], records[3]
		if col(otel, "id") != uuidN('b', 0) || col(otel, "total_tokens") != "1100" || col(otel, "cost_usd") != "0.003500" {
			t.Errorf("the root without roll-ups: %q", otel)
		}
		if col(first, "inputs.question") != `'=HYPERLINK("http://x")` || col(first, "latency_ms") != "1500" || col(first, "status") != "success" ||
			col(first, "started_at") != "2026-05-01T12:00:00Z" || col(first, "user") != "alice" || col(first, "output") != `{"text":"ok"}` {
			t.Errorf("the first answer: %q", first)
		}
		if col(second, "inputs.question") != "plain, with a comma" {
			t.Errorf("the second answer: %q", second)
		}

		// JSONL: the calls as the API writes them, in the view's order.
		p = b.get("/ui/p/alice/p/export?format=jsonl&op=answer")
		if p.status != http.StatusOK || p.header.Get("Content-Type") != "application/jsonl" {
			t.Fatalf("jsonl: %d %v", p.status, p.header)
		}
		var ids []string
		lines := bufio.NewScanner(strings.NewReader(p.body))
		for lines.Scan() {
			var call struct {
				ID     string         `json:"id"`
				OpName string         `json:"op_name"`
				Inputs map[string]any `json:"inputs"`
			}
			if err := json.Unmarshal(lines.Bytes(), &call); err != nil || call.OpName != "answer" || call.Inputs["question"] == nil {
				t.Fatalf("jsonl line %q: %v", lines.Text(), err)
			}
			ids = append(ids, call.ID)
		}
		if want := []string{uuidN('a', 4), uuidN('a', 3), uuidN('a', 2)}; !slices.Equal(ids, want) {
			t.Errorf("jsonl ids %v, want the newest three %v", ids, want)
		}
		if p := b.get("/ui/p/alice/p/export?format=jsonl&user=nobody"); p.status != http.StatusOK || p.body != "" {
			t.Errorf("an unknown user's export: %d %q", p.status, p.body)
		}

		for path, status := range map[string]int{
			"/ui/p/alice/p/export?format=xml":               http.StatusBadRequest,
			"/ui/p/alice/p/export":                          http.StatusBadRequest,
			"/ui/p/alice/p/export?format=csv&status=broken": http.StatusBadRequest,
		} {
			if p := b.get(path); p.status != status {
				t.Errorf("%s: %d, want %d", path, p.status, status)
			}
		}
		bob := s.browser(t)
		bob.signIn("bob", s.bobKey)
		if p := bob.get("/ui/p/alice/p/export?format=csv"); p.status != http.StatusForbidden || strings.Contains(p.body, "HYPERLINK") {
			t.Errorf("bob's export of alice's project: %d %s", p.status, p.body)
		}
	})
}
