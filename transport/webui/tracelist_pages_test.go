package webui_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/testdb"
)

// rowsOf returns the call ids of a trace list's rows, in order.
var rowCall = regexp.MustCompile(`<tr data-call="([^"]+)"`)

func rowsOf(p page) []string {
	var ids []string
	for _, m := range rowCall.FindAllStringSubmatch(p.body, -1) {
		ids = append(ids, m[1])
	}
	return ids
}

func TestTraceList(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		s := newServer(t, db)
		t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
		// 60 traces a second apart: even ones "chat" and successful, odd ones
		// "tool" and failed; the last one still running.
		for i := range 60 {
			id, op, at := uuidN('a', i), "chat", t0.Add(time.Duration(i)*time.Second)
			if i%2 == 1 {
				op = "tool"
			}
			s.callStart(t, s.aliceKey, "alice/p", id, uuidN('f', i), "", op, at, map[string]any{"i": i})
			if i == 59 {
				continue
			}
			exception := ""
			if i%2 == 1 {
				exception = "boom"
			}
			s.callEnd(t, s.aliceKey, "alice/p", id, at.Add(1500*time.Millisecond), "ok",
				map[string]any{"usage": map[string]any{"m": map[string]any{"prompt_tokens": 1000, "completion_tokens": i}}}, exception)
		}
		// A child call is no trace of its own.
		s.callStart(t, s.aliceKey, "alice/p", uuidN('c', 1), uuidN('f', 0), uuidN('a', 0), "chat", t0.Add(time.Hour), map[string]any{})

		b := s.browser(t)
		b.signIn("", s.aliceKey)

		home := b.get("/")
		home.mustContain(t, `href="/ui/p/alice/p/"`, ">61<", `datetime="2026-05-01T13:00:00Z"`)

		first := b.get("/ui/p/alice/p/")
		first.mustContain(t, "60 traces", "showing 1–50", `rel="next"`, "1,058", "1.50 s", "alice", ">running<", ">error<", ">success<")
		ids := rowsOf(first)
		if len(ids) != 50 || ids[0] != uuidN('a', 59) || ids[49] != uuidN('a', 10) {
			t.Fatalf("first page, newest first: %d rows %v…", len(ids), ids[:min(3, len(ids))])
		}
		// Sorted by start time, the next page is found by cursor.
		next := linkOf(t, first, "next")
		if !strings.Contains(next, "after=2026-05-01T12%3A00%3A10Z_"+uuidN('a', 10)) {
			t.Fatalf("next page link: %s", next)
		}
		second := b.get(next)
		if ids := rowsOf(second); len(ids) != 10 || ids[0] != uuidN('a', 9) || ids[9] != uuidN('a', 0) {
			t.Fatalf("second page: %v", ids)
		}
		second.mustContain(t, `rel="first"`, "showing 10")
		second.mustNotContain(t, `rel="next"`, `rel="prev"`)
		// Other sorts page by offset.
		byOp := b.get("/ui/p/alice/p/?sort=op_name&dir=asc")
		next = linkOf(t, byOp, "next")
		if !strings.Contains(next, "offset=50") {
			t.Fatalf("next page by offset: %s", next)
		}
		lastByOp := b.get(next)
		if ids := rowsOf(lastByOp); len(ids) != 10 {
			t.Fatalf("second page by op: %v", ids)
		}
		lastByOp.mustContain(t, `rel="prev"`, "showing 51–60")
		for _, bad := range []string{"?after=yesterday", "?after=2026-05-01T12:00:10Z_", "?sort=op_name&after=2026-05-01T12:00:10Z_x"} {
			if p := b.get("/ui/p/alice/p/" + bad); p.status != http.StatusBadRequest {
				t.Errorf("%s: %d", bad, p.status)
			}
		}

		for _, tc := range []struct {
			query string
			want  []string
		}{
			{"?status=error&sort=started_at&dir=asc", oddIDs(1, 57)},
			{"?status=running", []string{uuidN('a', 59)}},
			{"?op=chat&from=2026-05-01T12:00:10&to=2026-05-01T12:00:16", []string{uuidN('a', 14), uuidN('a', 12), uuidN('a', 10)}},
			{"?op=tool&status=success", nil},
			{"?from=2026-05-01T12:00:58Z&sort=op_name&dir=asc", []string{uuidN('a', 58), uuidN('a', 59)}},
		} {
			p := b.get("/ui/p/alice/p/" + tc.query)
			if p.status != http.StatusOK {
				t.Fatalf("%s: %d %s", tc.query, p.status, p.body)
			}
			if got := rowsOf(p); strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Errorf("%s:\n got %v\nwant %v", tc.query, got, tc.want)
			}
		}
		// The view is in the URL: sort links and pages keep the filters.
		b.get("/ui/p/alice/p/?status=error").mustContain(t, `href="/ui/p/alice/p/?dir=asc&amp;sort=started_at&amp;status=error"`, `<option value="error" selected>`)
		b.get("/ui/p/alice/p/?to=2026-05-01T13:00").mustContain(t, `&amp;to=2026-05-01T13%3A00" rel="next"`, `value="2026-05-01T13:00"`)
	})
}

// linkOf returns the path of the page's link with rel, unescaped.
func linkOf(t *testing.T, p page, rel string) string {
	t.Helper()
	m := regexp.MustCompile(`href="([^"]+)" rel="` + rel + `"`).FindStringSubmatch(p.body)
	if m == nil {
		t.Fatalf("no %s link:\n%s", rel, p.body)
	}
	return strings.ReplaceAll(m[1], "&amp;", "&")
}

// oddIDs lists uuidN('a', i) for odd i from lo to hi.
func oddIDs(lo, hi int) []string {
	var out []string
	for i := lo; i <= hi; i += 2 {
		out = append(out, uuidN('a', i))
	}
	return out
}

func TestTraceView(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		s := newServer(t, db)
		t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
		root, traceID := uuidN('a', 0), uuidN('f', 0)
		payload := `<script>alert("in")</script>`
		s.callStart(t, s.aliceKey, "alice/p", root, traceID, "", "agent", t0, map[string]any{
			"messages": []map[string]any{{"role": "user", "content": payload}},
			"link":     "javascript:alert(1)",
		})
		// 150 children; the first has a child of its own.
		batch := []map[string]any{}
		for i := range 150 {
			batch = append(batch, map[string]any{"mode": "start", "req": map[string]any{"start": map[string]any{
				"project_id": "alice/p", "id": uuidN('c', i), "trace_id": traceID, "parent_id": root, "op_name": fmt.Sprintf("step_%03d", i),
				"started_at": t0.Add(time.Duration(i+1) * time.Millisecond).Format(time.RFC3339Nano), "inputs": map[string]any{},
			}}})
		}
		s.api(t, s.aliceKey, "/call/upsert_batch", map[string]any{"batch": batch})
		s.callStart(t, s.aliceKey, "alice/p", uuidN('d', 0), traceID, uuidN('c', 0), "grandchild", t0.Add(time.Second), map[string]any{})
		s.callEnd(t, s.aliceKey, "alice/p", root, t0.Add(2*time.Second), map[string]any{
			"choices": []map[string]any{{"message": map[string]any{"role": "assistant", "content": `<img src=x onerror=alert("out")>`}}},
		}, map[string]any{}, "")
		s.api(t, s.aliceKey, "/feedback/create", map[string]any{
			"project_id": "alice/p", "weave_ref": "weave:///alice/p/call/" + root, "feedback_type": "wandb.note.1", "payload": map[string]any{"note": "<b>noted</b>"},
		})
		s.api(t, s.aliceKey, "/feedback/create", map[string]any{
			"project_id": "alice/p", "trace_ref": "trace:///alice/p/call/" + root, "feedback_type": "wandb.reaction.1", "payload": map[string]any{"emoji": "👍"},
		})

		b := s.browser(t)
		b.signIn("", s.aliceKey)
		view := b.get("/ui/p/alice/p/traces/" + traceID)
		if view.status != http.StatusOK {
			t.Fatalf("trace: %d %s", view.status, view.body)
		}
		view.mustContain(t,
			"&lt;script&gt;alert(&#34;in&#34;)&lt;/script&gt;",
			"&lt;img src=x onerror=alert(&#34;out&#34;)&gt;",
			"javascript:alert(1)",                            // as text in the JSON tree
			"&lt;b&gt;noted&lt;/b&gt;", "👍", "alice · <time", // feedback with its author
			"step_000", "step_099", "Load more calls (100 shown)",
			`hx-get="/ui/p/alice/p/calls/`+uuidN('c', 0)+`/children"`,
		)
		view.mustNotContain(t, "step_100", `<script>alert`, `<img src=x`, `href="javascript:`)
		if strings.Count(view.body, `class="toggle"`) != 2 { // the root (open) and the first child
			t.Fatalf("toggles: %d", strings.Count(view.body, `class="toggle"`))
		}

		more := b.get("/ui/p/alice/p/calls/" + root + "/children?offset=100")
		more.mustContain(t, "step_100", "step_149")
		more.mustNotContain(t, "step_099", "Load more")
		b.get("/ui/p/alice/p/calls/"+uuidN('c', 0)+"/children").mustContain(t, "grandchild")

		req, _ := http.NewRequest(http.MethodGet, s.URL+"/ui/p/alice/p/calls/"+uuidN('d', 0), nil)
		req.Header.Set("HX-Request", "true")
		detail := b.do(req)
		detail.mustContain(t, `class="call-detail"`, "grandchild", "No feedback")
		detail.mustNotContain(t, "<html")
		if p := b.get("/ui/p/alice/p/calls/" + uuidN('d', 0)); p.status != http.StatusSeeOther ||
			p.header.Get("Location") != "/ui/p/alice/p/traces/"+traceID+"?call="+uuidN('d', 0) {
			t.Fatalf("a call's own URL leads to its trace: %d %v", p.status, p.header)
		}
		b.get("/ui/p/alice/p/traces/"+traceID+"?call="+uuidN('d', 0)).mustContain(t, `data-call="`+uuidN('d', 0)+`"`)
		if p := b.get("/ui/p/alice/p/traces/" + traceID + "?call=" + uuidN('x', 1)); p.status != http.StatusNotFound {
			t.Fatalf("unknown call: %d", p.status)
		}
	})
}

func TestAssetsAndFallback(t *testing.T) {
	t.Parallel()
	s := newServer(t, testdb.SQLite(t))
	b := s.browser(t)
	signin := b.get("/ui/signin")
	assets := regexp.MustCompile(`(?:src|href)="(/ui/static/[^"]+)"`).FindAllStringSubmatch(signin.body, -1)
	if len(assets) < 3 {
		t.Fatalf("assets linked: %v", assets)
	}
	for _, m := range assets {
		p := b.get(m[1])
		if p.status != http.StatusOK || p.header.Get("Cache-Control") != "public, max-age=31536000, immutable" {
			t.Fatalf("%s: %d %v", m[1], p.status, p.header)
		}
		if !regexp.MustCompile(`\.[0-9a-f]{12}\.(js|css)$`).MatchString(m[1]) {
			t.Fatalf("%s: no content hash in the name", m[1])
		}
		if ct := p.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/javascript") && !strings.HasPrefix(ct, "text/css") {
			t.Fatalf("%s: content type %q", m[1], ct)
		}
		req, _ := http.NewRequest(http.MethodGet, s.URL+m[1], nil)
		req.Header.Set("If-None-Match", p.header.Get("ETag"))
		if again := b.do(req); again.status != http.StatusNotModified {
			t.Fatalf("%s revalidated: %d", m[1], again.status)
		}
	}
	if p := b.get("/ui/static/app.css"); p.status != http.StatusNotFound {
		t.Fatalf("an unhashed name is not served: %d", p.status)
	}
	// Everything outside the UI is the API's.
	if p := b.get("/health"); p.status != http.StatusOK || p.header.Get("Content-Security-Policy") != "" {
		t.Fatalf("/health through the UI handler: %d %v", p.status, p.header)
	}
	if p := b.get("/calls/nothing"); p.status != http.StatusNotFound || !strings.Contains(p.body, `"detail"`) {
		t.Fatalf("API 404: %d %s", p.status, p.body)
	}
}

func TestSecureCookieUnderTLS(t *testing.T) {
	t.Parallel()
	s := newServer(t, testdb.SQLite(t))
	tlsServer := httptest.NewTLSServer(s.Config.Handler)
	defer tlsServer.Close()
	client := tlsServer.Client()
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	res, err := client.PostForm(tlsServer.URL+"/ui/signin", url.Values{"key": {s.aliceKey}})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	cookie := res.Header.Get("Set-Cookie")
	if res.StatusCode != http.StatusSeeOther || !strings.Contains(cookie, "; Secure") || !strings.Contains(cookie, "HttpOnly") {
		t.Fatalf("sign-in over TLS: %d, cookie %q", res.StatusCode, cookie)
	}
}
