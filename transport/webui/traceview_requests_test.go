package webui_test

import (
	"encoding/json"
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

// TestTraceViewRequests checks the answers of the trace view's fragments
// and pages beyond the tree on every database: what they return for good
// requests, and a clear 4xx (never a 500) for bad ones.
func TestTraceViewRequests(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		s := newServer(t, db)
		t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
		root, traceID := uuidN('a', 0), uuidN('f', 0)
		many := make([]int, 2500)
		for i := range many {
			many[i] = i
		}
		s.callStart(t, s.aliceKey, "alice/p", root, traceID, "", "agent", t0, map[string]any{"long": strings.Repeat("é", 5000) + "END", "many": many})
		// Children 0–2; child 1 failed, and child 0's own child failed.
		for i := range 3 {
			s.callStart(t, s.aliceKey, "alice/p", uuidN('c', i), traceID, root, "step", t0.Add(time.Duration(i+1)*time.Second), map[string]any{})
			exc := ""
			if i == 1 {
				exc = "boom"
			}
			s.callEnd(t, s.aliceKey, "alice/p", uuidN('c', i), t0.Add(time.Duration(i+1)*time.Second+time.Millisecond), nil, map[string]any{}, exc)
		}
		s.callStart(t, s.aliceKey, "alice/p", uuidN('d', 0), traceID, uuidN('c', 0), "fetch", t0.Add(1500*time.Millisecond), map[string]any{})
		s.callEnd(t, s.aliceKey, "alice/p", uuidN('d', 0), t0.Add(1600*time.Millisecond), nil, map[string]any{}, "fetch failed")
		s.callEnd(t, s.aliceKey, "alice/p", root, t0.Add(5*time.Second), map[string]any{"ok": true}, map[string]any{}, "")

		b := s.browser(t)
		b.signIn("", s.aliceKey)
		base := "/ui/p/alice/p/"

		// Next error walks the failed calls depth first and wraps.
		next := func(after string) (call string, path []string, wrapped bool) {
			p := b.get(base + "traces/" + traceID + "/next-error?after=" + after)
			var a struct {
				Call    string   `json:"call"`
				Path    []string `json:"path"`
				Wrapped bool     `json:"wrapped"`
			}
			if p.status != http.StatusOK || json.Unmarshal([]byte(p.body), &a) != nil {
				t.Fatalf("next error: %d %s", p.status, p.body)
			}
			return a.Call, a.Path, a.Wrapped
		}
		if call, path, wrapped := next(root); call != uuidN('d', 0) || strings.Join(path, ",") != root+","+uuidN('c', 0) || wrapped {
			t.Fatalf("first error: %s %v %v", call, path, wrapped)
		}
		if call, path, _ := next(uuidN('d', 0)); call != uuidN('c', 1) || strings.Join(path, ",") != root {
			t.Fatalf("second error: %s %v", call, path)
		}
		if call, _, wrapped := next(uuidN('c', 1)); call != uuidN('d', 0) || !wrapped {
			t.Fatalf("after the last error: %s wrapped=%v", call, wrapped)
		}
		if call, _, _ := next(""); call != uuidN('d', 0) {
			t.Fatalf("with nothing selected: %s", call)
		}

		// Show all: the whole string, escaped, by JSON pointer.
		p := b.get(base + "calls/" + root + "/value?part=inputs&path=%2Flong")
		p.mustContain(t, `class="json-scalar shown-all"`, "END")
		if strings.Count(p.body, "é") != 5000 {
			t.Fatalf("show all: %d characters", strings.Count(p.body, "é"))
		}

		// The detail pane cuts the long array and offers the rest, which
		// comes as list items from the first member left out.
		detail := b.get(base + "calls/" + root)
		if detail.status != http.StatusSeeOther {
			t.Fatalf("a plain load of a call goes to its trace: %d", detail.status)
		}
		pane := b.get(base + "traces/" + traceID)
		cut := regexp.MustCompile(`hx-get="([^"]*path=%2Fmany&amp;from=(\d+))"`).FindStringSubmatch(pane.body)
		if cut == nil {
			t.Fatalf("no show all for the long array:\n%s", pane.body)
		}
		p = b.get(strings.ReplaceAll(cut[1], "&amp;", "&"))
		from, _ := strconv.Atoi(cut[2])
		if n := strings.Count(p.body, "<li>"); p.status != http.StatusOK || n != 2500-from || !strings.Contains(p.body, `<span class="json-key">2499</span>`) {
			t.Fatalf("the rest of the array from %d: %d items (%d)", from, n, p.status)
		}

		// Feedback from a plain form (no script) goes back to the call.
		token := b.csrf()
		p = b.post(base+"calls/"+uuidN('c', 2)+"/feedback", url.Values{"csrf": {token}, "note": {"checked <b>by hand</b>"}})
		if p.status != http.StatusSeeOther || p.header.Get("Location") != base+"traces/"+traceID+"?call="+uuidN('c', 2) {
			t.Fatalf("note from a form: %d %v %s", p.status, p.header, p.body)
		}
		b.get(base+"traces/"+traceID+"?call="+uuidN('c', 2)).mustContain(t, `<span class="note">checked &lt;b&gt;by hand&lt;/b&gt;</span>`)
		// htmx gets the section back.
		p = b.post(base+"calls/"+uuidN('c', 2)+"/feedback", url.Values{"emoji": {"👍"}}, "X-CSRF-Token", token, "HX-Request", "true")
		if p.status != http.StatusOK || !strings.HasPrefix(strings.TrimSpace(p.body), `<section class="feedback-section"`) {
			t.Fatalf("reaction from htmx: %d %s", p.status, p.body)
		}
		p.mustContain(t, `<span class="reaction">👍</span>`)

		// Diff of two calls: children aligned, structural difference.
		p = b.get(base + "diff?left=" + uuidN('c', 0) + "&right=" + uuidN('c', 1))
		p.mustContain(t, `id="diff-summary"`, `class="left-only"`, `<section class="diff-part" aria-label="Inputs">`, "Identical.")
		p = b.get(base + "diff?kind=traces&left=" + traceID + "&right=" + traceID)
		p.mustContain(t, `class="aligned"`, "±0")
		b.get(base+"diff").mustContain(t, `class="diff-form filters"`)

		// Bad requests: a clear 4xx each.
		for _, bad := range []struct {
			method, path string
			form         url.Values
			status       int
		}{
			{"GET", base + "calls/" + root + "/value?part=secrets", nil, 400},
			{"GET", base + "calls/" + root + "/value?part=inputs&path=long", nil, 400},
			{"GET", base + "calls/" + root + "/value?part=inputs&path=%2Fnope", nil, 404},
			{"GET", base + "calls/" + root + "/value?part=inputs&path=%2Flong%2F0", nil, 404},
			{"GET", base + "calls/" + root + "/value?part=inputs&from=-1", nil, 400},
			{"GET", base + "calls/" + root + "/value?part=inputs&path=%2Flong&from=3", nil, 400},
			{"GET", base + "calls/nope/value?part=inputs", nil, 404},
			{"GET", base + "calls/" + strings.Repeat("x", 200) + "/value?part=inputs", nil, 400},
			{"GET", base + "traces/" + strings.Repeat("x", 200) + "/next-error", nil, 400},
			{"GET", base + "diff?kind=objects&left=a&right=b", nil, 400},
			{"GET", base + "diff?left=" + root + "&right=nope", nil, 404},
			{"GET", base + "diff?kind=traces&left=" + traceID + "&right=nope", nil, 404},
			{"GET", base + "objects/nope/versions/latest", nil, 404},
			{"GET", base + "objects/" + strings.Repeat("x", 300) + "/versions/latest", nil, 400},
			{"GET", base + "files/nope", nil, 404},
			{"POST", base + "calls/" + root + "/feedback", url.Values{"csrf": {token}}, 400},
			{"POST", base + "calls/" + root + "/feedback", url.Values{"csrf": {token}, "emoji": {"👍"}, "note": {"x"}}, 400},
			{"POST", base + "calls/" + root + "/feedback", url.Values{"csrf": {token}, "emoji": {"not an emoji"}}, 400},
			{"POST", base + "calls/" + root + "/feedback", url.Values{"csrf": {token}, "note": {strings.Repeat("n", 1025)}}, 400},
			{"POST", base + "calls/nope/feedback", url.Values{"csrf": {token}, "note": {"x"}}, 404},
			{"POST", base + "calls/" + root + "/feedback", url.Values{"note": {"no token"}}, 403},
			{"POST", "/ui/p/bob/q/calls/" + root + "/feedback", url.Values{"csrf": {token}, "note": {"x"}}, 403},
			{"GET", "/ui/p/bob/q/traces/" + traceID + "/next-error", nil, 403},
			{"GET", "/ui/p/bob/q/diff", nil, 403},
		} {
			var p page
			if bad.method == "POST" {
				p = b.post(bad.path, bad.form)
			} else {
				p = b.get(bad.path)
			}
			if p.status != bad.status {
				t.Errorf("%s %s: %d, want %d\n%.300s", bad.method, bad.path, p.status, bad.status, p.body)
			}
		}
	})
}
