package webui_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/weftlabs/weft/internal/testdb"
)

// pngPixel is a 1×1 PNG.
const pngPixel = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="

// mdAttack is Markdown whose links, images and raw HTML would run code or
// fetch from elsewhere if rendered as written.
const mdAttack = "**bold** [click](javascript:window.__xss=5) [case](JaVaScRiPt:window.__xss=6) <javascript:window.__xss=7> " +
	"![px](https://tracker.invalid/p.png) <img src=x onerror=\"window.__xss=8\"> [docs](https://docs.invalid/)"

// viewEnv is the data of the trace view tests, in project alice/views.
type viewEnv struct {
	*env
	chatTrace, errTrace, leftTrace, rightTrace string
	promptDigest, fileDigest                   string
	longText                                   string
}

const viewProject = "alice/views"

// apiJSON posts body and decodes the answer into out.
func (e *env) apiJSON(t testing.TB, key, path string, body, out any) {
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
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("POST %s: %v", path, err)
		}
	}
}

// fileCreate stores content as a file of project and returns its digest.
func (e *env) fileCreate(t *testing.T, key, project string, content []byte) string {
	t.Helper()
	var body bytes.Buffer
	form := multipart.NewWriter(&body)
	_ = form.WriteField("project_id", project)
	part, _ := form.CreateFormFile("file", "blob")
	_, _ = part.Write(content)
	_ = form.Close()
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/file/create", &body)
	req.SetBasicAuth("api", key)
	req.Header.Set("Content-Type", form.FormDataContentType())
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out struct {
		Digest string `json:"digest"`
	}
	raw, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK || json.Unmarshal(raw, &out) != nil {
		t.Fatalf("file/create: %d %s", res.StatusCode, raw)
	}
	return out.Digest
}

func (e *env) endWith(t *testing.T, key, project, callID string, at time.Time, output, summary any, exception string) {
	t.Helper()
	end := map[string]any{"project_id": project, "id": callID, "ended_at": at.Format(time.RFC3339Nano), "output": output, "summary": summary}
	if exception != "" {
		end["exception"] = exception
	}
	e.api(t, key, "/call/end", map[string]any{"end": end})
}

func seedViews(t *testing.T, e *env) *viewEnv {
	t.Helper()
	v := &viewEnv{env: e, chatTrace: id('e', 1), errTrace: id('e', 2), leftTrace: id('e', 3), rightTrace: id('e', 4)}
	key := e.aliceKey
	t0 := time.Now().UTC().Add(-2 * time.Hour).Truncate(time.Second)

	var obj struct {
		Digest string `json:"digest"`
	}
	e.apiJSON(t, key, "/obj/create", map[string]any{"obj": map[string]any{
		"project_id": viewProject, "object_id": "my_prompt", "val": map[string]any{"template": "Say hi to {name}", "note": scriptPayload},
	}}, &obj)
	v.promptDigest = obj.Digest
	png, _ := base64.StdEncoding.DecodeString(pngPixel)
	v.fileDigest = e.fileCreate(t, key, viewProject, png)
	v.longText = strings.Repeat("long text ", 600) + "THE END"

	// The chat trace: an OpenAI root with an Anthropic and a Gemini child.
	root := id('1', 0)
	e.start(t, key, viewProject, root, v.chatTrace, "", "openai.chat.completions.create", t0, map[string]any{
		"model": "gpt-4o",
		"messages": []any{
			map[string]any{"role": "system", "content": "You are terse."},
			map[string]any{"role": "user", "content": []any{
				map[string]any{"type": "text", "text": mdAttack},
				map[string]any{"type": "image_url", "image_url": map[string]any{"url": "data:image/png;base64," + pngPixel}},
				map[string]any{"type": "image_url", "image_url": map[string]any{"url": "https://images.invalid/cat.png"}},
			}},
			map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{
				"id": "call_1", "type": "function", "function": map[string]any{"name": "get_weather", "arguments": `{"city":"Paris"}`},
			}}},
			map[string]any{"role": "tool", "tool_call_id": "call_1", "content": "sunny " + scriptPayload},
		},
		"prompt":  "weave:///" + viewProject + "/object/my_prompt:" + obj.Digest,
		"picture": map[string]any{"_type": "CustomWeaveType", "weave_type": map[string]any{"type": "PIL.Image.Image"}, "files": map[string]any{"image.png": v.fileDigest}, "load_op": "NO_LOAD_OP"},
		"context": v.longText,
		"rows":    manyRows(),
	})
	anth, gem := id('1', 1), id('1', 2)
	e.start(t, key, viewProject, anth, v.chatTrace, root, "anthropic.Messages.create", t0.Add(500*time.Millisecond), map[string]any{
		"system": "Be kind.",
		"messages": []any{
			map[string]any{"role": "user", "content": []any{
				map[string]any{"type": "text", "text": "what is in this picture?"},
				map[string]any{"type": "image", "source": map[string]any{"type": "base64", "media_type": "image/png", "data": pngPixel}},
			}},
			map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "tool_use", "id": "toolu_1", "name": "zoom", "input": map[string]any{"factor": 2}}}},
			map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": "toolu_1", "content": "zoom failed", "is_error": true}}},
		},
	})
	e.endWith(t, key, viewProject, anth, t0.Add(1500*time.Millisecond), map[string]any{
		"id": "msg_1", "type": "message", "role": "assistant",
		"content": []any{map[string]any{"type": "thinking", "thinking": "a tiny image"}, map[string]any{"type": "text", "text": "A single **pixel**."}},
	}, map[string]any{"usage": map[string]any{"claude": map[string]any{"input_tokens": 30, "output_tokens": 5}}}, "")
	e.start(t, key, viewProject, gem, v.chatTrace, root, "google.genai.models.generate_content", t0.Add(time.Second), map[string]any{
		"model": "gemini-2.0-flash",
		"contents": []any{map[string]any{"role": "user", "parts": []any{
			map[string]any{"text": "Bonjour " + scriptPayload}, map[string]any{"inline_data": map[string]any{"mime_type": "image/png", "data": pngPixel}},
		}}},
	})
	e.endWith(t, key, viewProject, gem, t0.Add(1900*time.Millisecond), map[string]any{
		"candidates": []any{map[string]any{"content": map[string]any{"role": "model", "parts": []any{
			map[string]any{"function_call": map[string]any{"name": "translate", "args": map[string]any{"to": "fr"}}},
		}}}},
	}, map[string]any{}, "")
	e.endWith(t, key, viewProject, root, t0.Add(2*time.Second), map[string]any{
		"choices": []any{map[string]any{"message": map[string]any{"role": "assistant", "content": "It is *sunny* in Paris."}}},
	}, map[string]any{"usage": map[string]any{"gpt-4o": map[string]any{"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}}}, "")

	// The error trace: 150 children under one root; child 5 has a failed
	// grandchild, child 120 (on the second page of children) failed itself.
	eroot := id('2', 0)
	e.start(t, key, viewProject, eroot, v.errTrace, "", "pipeline", t0.Add(time.Minute), map[string]any{})
	var batch []map[string]any
	for i := range 150 {
		start := map[string]any{
			"project_id": viewProject, "id": id('3', i), "trace_id": v.errTrace, "parent_id": eroot, "op_name": fmt.Sprintf("stage_%03d", i),
			"started_at": t0.Add(time.Minute + time.Duration(i+1)*time.Millisecond).Format(time.RFC3339Nano), "inputs": map[string]any{"i": i},
		}
		end := map[string]any{
			"project_id": viewProject, "id": id('3', i), "ended_at": t0.Add(time.Minute + time.Duration(i+2)*time.Millisecond).Format(time.RFC3339Nano),
			"output": i, "summary": map[string]any{},
		}
		if i == 120 {
			end["exception"] = "RuntimeError: stage 120 failed"
		}
		batch = append(batch, map[string]any{"mode": "start", "req": map[string]any{"start": start}}, map[string]any{"mode": "end", "req": map[string]any{"end": end}})
	}
	e.api(t, key, "/call/upsert_batch", map[string]any{"batch": batch})
	e.start(t, key, viewProject, id('4', 0), v.errTrace, id('3', 5), "fetch", t0.Add(time.Minute+10*time.Millisecond), map[string]any{})
	e.endWith(t, key, viewProject, id('4', 0), t0.Add(time.Minute+20*time.Millisecond), nil, map[string]any{},
		"Traceback (most recent call last):\n  File \"fetch.py\", line 3, in fetch\n    raise IOError(url)\nOSError: "+scriptPayload)
	e.endWith(t, key, viewProject, eroot, t0.Add(time.Minute+time.Second), nil, map[string]any{}, "")

	// Two traces to compare: children [plan, search, answer] and
	// [plan, rewrite, search, answer].
	for n, tr := range []struct {
		trace    string
		ops      []string
		inputs   map[string]any
		duration time.Duration
		tokens   int
	}{
		{v.leftTrace, []string{"plan", "search", "answer"}, map[string]any{"q": "hello", "n": 1}, time.Second, 100},
		{v.rightTrace, []string{"plan", "rewrite", "search", "answer"}, map[string]any{"q": "bye", "n": 1, "extra": true}, 3 * time.Second, 150},
	} {
		at := t0.Add(time.Duration(n+2) * time.Minute)
		r := id('5', n)
		e.start(t, key, viewProject, r, tr.trace, "", "agent", at, tr.inputs)
		for i, op := range tr.ops {
			c := id('6', n*10+i)
			e.start(t, key, viewProject, c, tr.trace, r, op, at.Add(time.Duration(i+1)*time.Millisecond), map[string]any{})
			e.endWith(t, key, viewProject, c, at.Add(time.Duration(i+1)*time.Millisecond+time.Duration(n+1)*100*time.Millisecond), nil, map[string]any{}, "")
		}
		e.endWith(t, key, viewProject, r, at.Add(tr.duration), map[string]any{"answer": tr.ops[len(tr.ops)-1]},
			map[string]any{"usage": map[string]any{"m": map[string]any{"prompt_tokens": tr.tokens, "completion_tokens": 0}}}, "")
	}
	return v
}

// TestTraceView drives the trace view, the detail pane's renderings,
// feedback, next error and the diff page in Chromium on every database.
func TestTraceView(t *testing.T) {
	testdb.EachURL(t, func(t *testing.T, dbURL string) {
		if noBrowser != "" {
			t.Skip(noBrowser)
		}
		v := seedViews(t, startEnv(t, dbURL))
		t.Run("timeline", func(t *testing.T) { timeline(t, v) })
		t.Run("chat messages, markdown and images", func(t *testing.T) { chatRendering(t, v) })
		t.Run("refs and show all", func(t *testing.T) { refsAndShowAll(t, v) })
		t.Run("feedback", func(t *testing.T) { addFeedback(t, v) })
		t.Run("next error", func(t *testing.T) { nextError(t, v) })
		t.Run("diff", func(t *testing.T) { diffPage(t, v) })
	})
}

// loaded waits until the document shown has finished loading. After a click
// that navigates, a WaitVisible proves the new page is there; a large page
// is then still parsed in pieces on a busy machine, and its end (with the
// module that places the timeline bars) may come later.
func (tb *tab) loaded() {
	tb.t.Helper()
	value(tb, chromedp.Poll[bool](`document.readyState === 'complete'`))
}

func traceURL(traceID string) string { return "/ui/p/" + viewProject + "/traces/" + traceID }

// bar returns the left and width of a row's timeline bar, in percent of the
// track.
func bar(tb *tab, callID string) (left, width float64) {
	tb.t.Helper()
	got := eval[[]float64](tb, `(() => {
		const row = [...document.querySelectorAll('li.node')].find(n => n.dataset.call === '`+callID+`').querySelector(':scope > .node-row');
		const track = row.querySelector('.timeline-track').getBoundingClientRect();
		const bar = row.querySelector('.timeline-bar').getBoundingClientRect();
		return [100 * (bar.left - track.left) / track.width, 100 * bar.width / track.width];
	})()`)
	return got[0], got[1]
}

func near(a, b float64) bool { return a > b-1.5 && a < b+1.5 }

func timeline(t *testing.T, v *viewEnv) {
	tb := newTab(t, v.srv.URL)
	tb.signIn("", v.aliceKey)
	tb.open(traceURL(v.chatTrace))
	tb.run(chromedp.WaitVisible(chromedp.CSS(".timeline-bar")))
	// The root spans the whole trace (2 s); the Anthropic child runs from
	// 0.5 s to 1.5 s, the Gemini child from 1 s to 1.9 s.
	for _, c := range []struct {
		id          string
		left, width float64
	}{{id('1', 0), 0, 100}, {id('1', 1), 25, 50}, {id('1', 2), 50, 45}} {
		if l, w := bar(tb, c.id); !near(l, c.left) || !near(w, c.width) {
			t.Errorf("bar of %s: left %.1f%% width %.1f%%, want %.0f%% %.0f%%", c.id, l, w, c.left, c.width)
		}
	}
	if got := tb.text(".timeline-axis"); !strings.Contains(got, "0 ms") || !strings.Contains(got, "2.00 s") {
		t.Errorf("axis: %q", got)
	}
	// Rows of a subtree loaded later get their bars too.
	tb.open(traceURL(v.errTrace))
	child := `li.node[data-call="` + id('3', 5) + `"]`
	tb.run(chromedp.Click(chromedp.CSS(child + " > .node-row > .toggle")))
	value(tb, chromedp.Poll[bool](`!!document.querySelector('`+child+` li.node[data-call="`+id('4', 0)+`"] .node-row[data-timeline-drawn]')`))
	if l, w := bar(tb, id('4', 0)); !near(l, 1) || w <= 0 {
		t.Errorf("bar of a loaded grandchild: left %.2f%% width %.2f%%", l, w)
	}
}

func chatRendering(t *testing.T, v *viewEnv) {
	tb := newTab(t, v.srv.URL)
	tb.signIn("", v.aliceKey)
	tb.open(traceURL(v.chatTrace))
	tb.run(chromedp.WaitVisible(chromedp.CSS("#detail .chat")))
	roles := eval[[]string](tb, `[...document.querySelectorAll('#detail .chat .role')].map(r => r.textContent.trim().split(/\s/)[0])`)
	if strings.Join(roles, ",") != "system,user,assistant,tool,assistant" {
		t.Fatalf("roles: %v", roles)
	}
	detail := eval[string](tb, `[...document.querySelectorAll('#detail .chat')].map(c => c.textContent).join(' ')`)
	for _, want := range []string{"get_weather", "Paris", "answers call_1", "sunny " + scriptPayload, `<img src=x onerror="window.__xss=8">`, "click", "It is sunny in Paris."} {
		want = strings.Join(strings.Fields(want), " ")
		detail = strings.Join(strings.Fields(detail), " ")
		if !strings.Contains(detail, want) {
			t.Errorf("the chat lacks %q:\n%s", want, detail)
		}
	}
	if n := eval[int](tb, `document.querySelectorAll('#detail .markdown strong, #detail .markdown em').length`); n < 2 {
		t.Errorf("Markdown emphasis is not rendered: %d elements", n)
	}
	// Links: only the https one is a link, and it names no opener.
	links := eval[[]string](tb, `[...document.querySelectorAll('#detail .markdown a')].map(a => a.getAttribute('href') + ' ' + a.rel)`)
	if strings.Join(links, "|") != "https://tracker.invalid/p.png nofollow noopener noreferrer|https://docs.invalid/ nofollow noopener noreferrer" {
		t.Errorf("Markdown links: %v", links)
	}
	// Pictures: the inline one and the weave image drawn (loaded from this
	// server through the authorized file route), the remote one only linked.
	value(tb, chromedp.Poll[bool](`[...document.querySelectorAll('#detail img.trace-image')].every(i => i.complete && i.naturalWidth === 1)`))
	srcs := eval[[]string](tb, `[...document.querySelectorAll('#detail img.trace-image')].map(i => i.getAttribute('src').slice(0, 30))`)
	// The message's picture, the same data URL in the (closed) JSON tree,
	// and the weave image.
	if len(srcs) != 3 || !strings.HasPrefix(srcs[0], "data:image/png;base64,") || !strings.HasPrefix(srcs[1], "data:image/png;base64,") ||
		srcs[2] != ("/ui/p/" + viewProject + "/files/" + v.fileDigest)[:30] {
		t.Errorf("images: %v", srcs)
	}
	if got := tb.text("#detail a.external-image"); !strings.Contains(got, "https://images.invalid/cat.png") {
		t.Errorf("the remote image: %q", got)
	}
	// Nothing stored ran or became markup.
	tb.run(chromedp.Evaluate[chromedp.Void](`document.querySelectorAll('details').forEach(d => d.open = true)`))
	if ran := eval[bool](tb, "window.__xss !== undefined"); ran {
		t.Fatal("a stored payload ran")
	}
	if n := eval[int](tb, `document.querySelectorAll('main script, a[href^="javascript:" i], [onerror], [onclick], img:not(.trace-image)').length`); n != 0 {
		t.Fatalf("stored markup became %d elements", n)
	}
	// Usage and latency facts.
	if got := tb.text("#detail .tokens-value"); got != "120" {
		t.Errorf("tokens: %q", got)
	}
	if got := tb.text("#detail .latency-value"); got != "2.00 s" {
		t.Errorf("latency: %q", got)
	}
	// gpt-4o at the built-in prices: 100 × $2.50 and 20 × $10 per million tokens.
	if got := tb.text("#detail .cost-value"); got != "$0.000450" {
		t.Errorf("cost: %q", got)
	}

	// The Anthropic child: its image, tool use, failed tool result and thinking.
	tb.run(chromedp.Click(chromedp.CSS(`li.node[data-call="` + id('1', 1) + `"] .call-link`)))
	value(tb, chromedp.Poll[bool](`document.querySelector('#detail .call-detail').dataset.call === '`+id('1', 1)+`'`))
	tb.settled()
	detail = tb.text("#detail .call-detail")
	for _, want := range []string{"SYSTEM", "Be kind.", "zoom", "TOOL RESULT (ERROR)", "zoom failed", "A single pixel.", "Thinking"} {
		if !strings.Contains(detail, want) {
			t.Errorf("the Anthropic call lacks %q:\n%s", want, detail)
		}
	}
	value(tb, chromedp.Poll[bool](`document.querySelector('#detail .message img.trace-image')?.naturalWidth === 1`))

	// The Gemini child: its parts and function call.
	tb.run(chromedp.Click(chromedp.CSS(`li.node[data-call="` + id('1', 2) + `"] .call-link`)))
	value(tb, chromedp.Poll[bool](`document.querySelector('#detail .call-detail').dataset.call === '`+id('1', 2)+`'`))
	tb.settled()
	detail = tb.text("#detail .call-detail")
	for _, want := range []string{"Bonjour " + scriptPayload, "MODEL", "translate", "fr"} {
		if !strings.Contains(detail, want) {
			t.Errorf("the Gemini call lacks %q:\n%s", want, detail)
		}
	}
	value(tb, chromedp.Poll[bool](`document.querySelector('#detail .message img.trace-image')?.naturalWidth === 1`))
	if ran := eval[bool](tb, "window.__xss !== undefined"); ran {
		t.Fatal("a stored payload ran")
	}
}

// manyRowsN is the length of the chat root's "rows" input: more values than
// the detail pane draws, so the array is cut.
const manyRowsN = 1500

func manyRows() []any {
	rows := make([]any, manyRowsN)
	for i := range rows {
		rows[i] = map[string]any{"row": i}
	}
	return rows
}

func refsAndShowAll(t *testing.T, v *viewEnv) {
	tb := newTab(t, v.srv.URL)
	tb.signIn("", v.aliceKey)
	tb.open(traceURL(v.chatTrace))
	// "Show all" loads the rest of a cut string in place.
	scalar := `[...document.querySelectorAll('#detail [data-part="inputs"] .json-scalar')].find(s => s.querySelector('.json-key')?.textContent === 'context')`
	if got := eval[string](tb, scalar+`.textContent`); strings.Contains(got, "THE END") || !strings.Contains(got, "more characters") {
		t.Fatalf("the long value is not cut: %.80q", got)
	}
	tb.run(chromedp.Evaluate[chromedp.Void](scalar + `.querySelector('.show-all').click()`))
	value(tb, chromedp.Poll[bool](`!!document.querySelector('#detail .shown-all')`))
	if got := tb.text("#detail .shown-all"); !strings.Contains(got, v.longText) {
		t.Fatalf("show all: %d characters", len(got))
	}
	// "Show all" on a cut array puts its remaining members in place of the
	// cut line, in order, each drawn as a value.
	rows := `[...document.querySelectorAll('#detail [data-part="inputs"] details.json-node')].find(d => d.querySelector(':scope > summary .json-key')?.textContent === 'rows').querySelector(':scope > ul')`
	shown := eval[int](tb, rows+`.children.length`)
	if shown >= manyRowsN || !strings.Contains(eval[string](tb, rows+`.lastElementChild.textContent`), "more not shown") {
		t.Fatalf("the long array is not cut: %d of %d members drawn", shown, manyRowsN)
	}
	tb.run(chromedp.Evaluate[chromedp.Void](rows + `.lastElementChild.querySelector('.show-all').click()`))
	value(tb, chromedp.Poll[bool](rows+`.children.length === `+fmt.Sprint(manyRowsN)))
	tb.settled()
	rowsText := eval[[]string](tb, `[...`+rows+`.children].map(li => li.textContent.replace(/\s+/g, ' ').trim())`)
	for i, got := range rowsText {
		if want := fmt.Sprintf("%d: {…} 1 keys row: %d", i, i); got != want {
			t.Fatalf("member %d after show all: %q, want %q", i, got, want)
		}
	}
	// A ref links to its object version, whose page shows the value.
	ref := "weave:///" + viewProject + "/object/my_prompt:" + v.promptDigest
	tb.run(chromedp.Click(chromedp.CSS(`#detail a.ref-link[href$="/objects/my_prompt/versions/` + v.promptDigest + `"]`)))
	tb.run(chromedp.WaitVisible(chromedp.CSS(".object-version")))
	tb.loaded()
	if got := tb.text(".object-version"); !strings.Contains(got, "Say hi to {name}") || !strings.Contains(got, ref) || !strings.Contains(got, scriptPayload) {
		t.Fatalf("object version page: %q", got)
	}
	if ran := eval[bool](tb, "window.__xss !== undefined"); ran {
		t.Fatal("a stored payload ran")
	}
	// An unknown version is a 404 page, another entity's a 403.
	tb.expect("/ui/p/"+viewProject+"/objects/my_prompt/versions/nope", http.StatusNotFound)
	tb.open("/ui/p/" + viewProject + "/objects/my_prompt/versions/nope")
	if got := tb.text(".error-page"); !strings.Contains(got, "404") {
		t.Fatalf("unknown version: %q", got)
	}
	tb.expect("/ui/p/bob/secret/files/"+v.fileDigest, http.StatusForbidden)
	tb.open("/ui/p/bob/secret/files/" + v.fileDigest)
	if got := tb.text(".error-page"); !strings.Contains(got, "403") {
		t.Fatalf("another entity's file: %q", got)
	}
}

func addFeedback(t *testing.T, v *viewEnv) {
	tb := newTab(t, v.srv.URL)
	tb.signIn("", v.aliceKey)
	target := id('1', 2)
	tb.open(traceURL(v.chatTrace) + "?call=" + target)
	tb.run(chromedp.WaitVisible(chromedp.CSS(".feedback-section .reactions")))
	tb.run(chromedp.Click(chromedp.CSS(`.feedback-section button[value="🎉"]`)))
	value(tb, chromedp.Poll[bool](`[...document.querySelectorAll('.feedback-section .reaction')].some(r => r.textContent === '🎉')`))
	tb.settled()
	note := "looks fine " + scriptPayload + " [x](javascript:window.__xss=9)"
	tb.run(
		chromedp.SendKeys(chromedp.CSS(".feedback-section textarea[name=note]"), note),
		chromedp.Click(chromedp.CSS(".feedback-section .note-form button[type=submit]")),
	)
	value(tb, chromedp.Poll[bool](`!!document.querySelector('.feedback-section .note')`))
	if got := tb.text(".feedback-section .note"); got != note {
		t.Fatalf("the note shows %q", got)
	}
	if ran := eval[bool](tb, "window.__xss !== undefined"); ran {
		t.Fatal("a stored payload ran")
	}
	// Both are stored through the feedback service, as the API reads them.
	var res struct {
		Result []map[string]any `json:"result"`
	}
	v.apiJSON(t, v.aliceKey, "/feedback/query", map[string]any{"project_id": viewProject, "query": map[string]any{"$expr": map[string]any{
		"$eq": []any{map[string]any{"$getField": "weave_ref"}, map[string]any{"$literal": "weave:///" + viewProject + "/call/" + target}},
	}}}, &res)
	var kinds []string
	for _, row := range res.Result {
		kinds = append(kinds, fmt.Sprint(row["feedback_type"]))
	}
	if strings.Join(kinds, ",") != "wandb.reaction.1,wandb.note.1" {
		t.Fatalf("stored feedback: %v", res.Result)
	}
	// Reload: the feedback is there for everyone.
	tb.open(traceURL(v.chatTrace) + "?call=" + target)
	if got := tb.text(".feedback-section .feedback"); !strings.Contains(got, "🎉") || !strings.Contains(got, note) {
		t.Fatalf("after a reload: %q", got)
	}

	// A post without the session's CSRF token is refused, and so is bob's
	// post to alice's project, token or not.
	post := "/ui/p/" + viewProject + "/calls/" + target + "/feedback"
	tb.expect(post, http.StatusForbidden)
	status := value(tb, chromedp.Evaluate[int](`fetch('`+post+`', {method: 'POST', headers: {'Content-Type': 'application/x-www-form-urlencoded'}, body: 'emoji=%F0%9F%91%8D'}).then(r => r.status)`, chromedp.EvalAwaitPromise))
	if status != http.StatusForbidden {
		t.Fatalf("a post without the token: %d", status)
	}
	bob := newTab(t, v.srv.URL)
	bob.signIn("", v.bobKey)
	bob.expect(post, http.StatusForbidden)
	status = value(bob, chromedp.Evaluate[int](`fetch('`+post+`', {method: 'POST', headers: {'Content-Type': 'application/x-www-form-urlencoded', 'X-CSRF-Token': JSON.parse(document.body.getAttribute('hx-headers'))['X-CSRF-Token']}, body: 'emoji=%F0%9F%91%8D'}).then(r => r.status)`, chromedp.EvalAwaitPromise))
	if status != http.StatusForbidden {
		t.Fatalf("bob's post to alice's project: %d", status)
	}
	v.apiJSON(t, v.aliceKey, "/feedback/query", map[string]any{"project_id": viewProject}, &res)
	if len(res.Result) != 2 {
		t.Fatalf("refused posts stored feedback: %d rows", len(res.Result))
	}
}

func selected(tb *tab) string {
	return eval[string](tb, `document.querySelector('#detail .call-detail')?.dataset.call || ''`)
}

func nextError(t *testing.T, v *viewEnv) {
	tb := newTab(t, v.srv.URL)
	tb.signIn("", v.aliceKey)
	tb.open(traceURL(v.errTrace))
	tb.run(chromedp.WaitVisible(chromedp.CSS("#next-error")))
	if n := eval[int](tb, `document.querySelectorAll('.tree > li > ul.children > li.node').length`); n != 100 {
		t.Fatalf("first page of children: %d", n)
	}
	// From the root, the first failed call is the grandchild under child 5,
	// whose subtree is not loaded yet.
	for _, want := range []struct {
		call   string
		status string
	}{{id('4', 0), ""}, {id('3', 120), ""}, {id('4', 0), "Back at the first failed call."}} {
		tb.run(chromedp.Click(chromedp.CSS("#next-error")))
		value(tb, chromedp.Poll[bool](`document.querySelector('#detail .call-detail')?.dataset.call === '`+want.call+`' && !document.querySelector('#next-error').disabled`))
		tb.settled()
		if got := tb.text("#tree-status"); got != want.status {
			t.Errorf("status after selecting %s: %q", want.call, got)
		}
		if got := eval[bool](tb, `[...document.querySelectorAll('li.node.selected')].some(n => n.dataset.call === '`+want.call+`')`); !got {
			t.Errorf("%s is not marked selected in the tree", want.call)
		}
	}
	// Child 120 was on the second page of children: next error loaded it.
	if n := eval[int](tb, `document.querySelectorAll('.tree > li > ul.children > li.node').length`); n != 150 {
		t.Fatalf("children after next error: %d", n)
	}
	// The exception of the grandchild, headline and stack.
	if got := tb.text("#detail .exception-headline"); got != "OSError: "+scriptPayload {
		t.Fatalf("exception headline: %q", got)
	}
	if got := tb.text("#detail .exception-stack pre"); !strings.Contains(got, `File "fetch.py", line 3, in fetch`) {
		t.Fatalf("stack: %q", got)
	}
	// A trace without failures says so.
	tb.open(traceURL(v.chatTrace))
	tb.run(chromedp.Click(chromedp.CSS("#next-error")))
	value(tb, chromedp.Poll[bool](`document.querySelector('#tree-status').textContent === 'No call in this trace failed.'`))
}

func diffPage(t *testing.T, v *viewEnv) {
	tb := newTab(t, v.srv.URL)
	tb.signIn("", v.aliceKey)
	// From the trace view's link, fill in the other trace.
	tb.open(traceURL(v.leftTrace))
	tb.run(chromedp.Click(chromedp.CSS(".tree-tools a.compare-link")), chromedp.WaitVisible(chromedp.CSS(".diff-form")))
	tb.loaded()
	tb.run(
		chromedp.SendKeys(chromedp.CSS("#diff-right"), v.rightTrace),
		chromedp.Click(chromedp.CSS(".diff-form button[type=submit]")),
		chromedp.WaitVisible(chromedp.CSS("#diff-summary")),
	)
	tb.loaded()
	if got := tb.text("#diff-summary .diff-latency .delta"); got != "+2.00 s" {
		t.Errorf("latency delta: %q", got)
	}
	if got := tb.text("#diff-summary .diff-tokens .delta"); got != "+50 tokens" {
		t.Errorf("tokens delta: %q", got)
	}
	rows := eval[[]string](tb, `[...document.querySelectorAll('#diff-children tbody tr')].map(r => r.className + ':' + [...r.cells].slice(0, 3).map(c => c.textContent.trim().split(/\s/)[0]).join('/'))`)
	want := "aligned:plan/100/plan|right-only:—//rewrite|aligned:search/100/search|aligned:answer/100/answer"
	if strings.Join(rows, "|") != want {
		t.Errorf("children alignment:\n%v\nwant %s\n%s", strings.Join(rows, "|"), want, tb.text("main"))
	}
	inputs := tb.text(`.diff-part[aria-label="Inputs"]`)
	for _, w := range []string{"1 changed · 1 added · 0 removed", `"hello"`, `"bye"`, "extra"} {
		if !strings.Contains(inputs, w) {
			t.Errorf("inputs diff lacks %q:\n%s", w, inputs)
		}
	}
	if n := eval[int](tb, `document.querySelectorAll('.diff-part[aria-label="Inputs"] li.diff-changed, .diff-part[aria-label="Inputs"] li.diff-added').length`); n != 2 {
		t.Errorf("marked differences: %d", n)
	}
	if got := tb.text(`.diff-part[aria-label="Output"]`); !strings.Contains(got, "Identical.") {
		t.Errorf("output diff: %q", got)
	}
	// An aligned pair opens its own diff.
	tb.run(chromedp.Click(chromedp.CSS("#diff-children tr.aligned a.pair-diff")), chromedp.WaitVisible(chromedp.CSS("#diff-summary")))
	tb.loaded()
	if got := tb.text("#diff-summary"); !strings.Contains(got, "plan") {
		t.Errorf("pair diff: %q", got)
	}
	// An unknown id is a 404 page.
	bad := "/ui/p/" + viewProject + "/diff"
	tb.expect(bad, http.StatusNotFound)
	tb.open(bad + "?left=" + id('5', 0) + "&right=nope")
	if got := tb.text(".error-page"); !strings.Contains(got, "404") {
		t.Errorf("unknown right side: %q", got)
	}
}
