package webui_test

import (
	"net/http"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/testdb"
)

// rowHTML is the markup of one trace list row.
func rowHTML(t *testing.T, p page, callID string) string {
	t.Helper()
	m := regexp.MustCompile(`(?s)<tr data-call="` + callID + `".*?</tr>`).FindString(p.body)
	if m == "" {
		t.Fatalf("no row of %s in %s", callID, p.body)
	}
	return m
}

// TestTraceListAtAGlance: a row previews its input and output and names its
// model; a trace written as OpenTelemetry spans or by the JS SDK (no
// status_counts, no usage on the root) shows "child error" when a child
// raised, is found by that status and not by "success", and shows its
// children's tokens and cost.
func TestTraceListAtAGlance(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		s := newServer(t, db)
		t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
		otelRoot, otelTrace, failing, sibling := uuidN('a', 0), uuidN('f', 0), uuidN('a', 1), uuidN('a', 2)
		s.callStart(t, s.aliceKey, "alice/p", otelRoot, otelTrace, "", "agent", t0, map[string]any{
			"model": "gpt-4o", "messages": []any{
				map[string]any{"role": "system", "content": "Answer briefly."},
				map[string]any{"role": "user", "content": "What is the capital of France?"}}})
		s.callStart(t, s.aliceKey, "alice/p", failing, otelTrace, otelRoot, "openai.chat", t0.Add(time.Second), map[string]any{"n": 1})
		s.callEnd(t, s.aliceKey, "alice/p", failing, t0.Add(2*time.Second), nil,
			map[string]any{"usage": map[string]any{"gpt-4o": map[string]any{"prompt_tokens": 100, "completion_tokens": 20}}}, "RateLimitError: slow down")
		s.callStart(t, s.aliceKey, "alice/p", sibling, otelTrace, otelRoot, "openai.chat", t0.Add(3*time.Second), map[string]any{"n": 2})
		s.callEnd(t, s.aliceKey, "alice/p", sibling, t0.Add(4*time.Second), "ok",
			map[string]any{"usage": map[string]any{"gpt-4o": map[string]any{"prompt_tokens": 5, "completion_tokens": 5}}}, "")
		s.callEnd(t, s.aliceKey, "alice/p", otelRoot, t0.Add(5*time.Second),
			map[string]any{"choices": []any{map[string]any{"message": map[string]any{"role": "assistant", "content": "Paris."}}}}, map[string]any{}, "")

		// A Python-SDK trace: the root carries its roll-ups itself.
		pyRoot := uuidN('a', 3)
		s.callStart(t, s.aliceKey, "alice/p", pyRoot, uuidN('f', 1), "", "summarize", t0.Add(time.Minute), map[string]any{"self": "obj", "text": "a long story"})
		s.callEnd(t, s.aliceKey, "alice/p", pyRoot, t0.Add(time.Minute+time.Second), "a short story", map[string]any{
			"status_counts": map[string]any{"success": 1, "error": 0},
			"usage":         map[string]any{"claude-3-5-sonnet-20240620": map[string]any{"input_tokens": 7, "output_tokens": 3}}}, "")

		b := s.browser(t)
		b.signIn("alice", s.aliceKey)
		list := b.get("/ui/p/alice/p/")
		if list.status != http.StatusOK {
			t.Fatalf("list: %d %s", list.status, list.body)
		}
		row := rowHTML(t, list, otelRoot)
		for _, want := range []string{`data-preview="input" title="What is the capital of France?"`, `>Paris.</td>`,
			`<td class="model">gpt-4o</td>`, "child error", `data-unit="tokens">130</td>`, "$0."} {
			if !regexp.MustCompile(regexp.QuoteMeta(want)).MatchString(row) {
				t.Errorf("the OpenTelemetry-style root's row lacks %q:\n%s", want, row)
			}
		}
		row = rowHTML(t, list, pyRoot)
		for _, want := range []string{`>a long story</td>`, `>a short story</td>`, `claude-3-5-sonnet-20240620`, "success", `data-unit="tokens">10</td>`} {
			if !regexp.MustCompile(regexp.QuoteMeta(want)).MatchString(row) {
				t.Errorf("the Python-SDK root's row lacks %q:\n%s", want, row)
			}
		}
		for query, want := range map[string][]string{
			"?status=descendant_error": {otelRoot},
			"?status=success":          {pyRoot},
			"?status=error":            nil,
		} {
			if got := rowsOf(b.get("/ui/p/alice/p/" + query)); !slices.Equal(got, want) {
				t.Errorf("%s: rows %v, want %v", query, got, want)
			}
		}

		// Another tenant sees none of it.
		other := s.browser(t)
		other.signIn("bob", s.bobKey)
		if p := other.get("/ui/p/alice/p/?status=descendant_error"); p.status != http.StatusForbidden || len(rowsOf(p)) != 0 {
			t.Errorf("bob's list of alice/p: %d, rows %v", p.status, rowsOf(p))
		}
	})
}
