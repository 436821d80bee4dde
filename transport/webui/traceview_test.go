package webui

import (
	"bytes"
	"encoding/json"
	"html/template"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/weftlabs/weft/internal/jsondiff"
	"github.com/weftlabs/weft/trace"
)

// pixel is a 1×1 PNG.
const pixel = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="

// mdPayload is Markdown whose links, images and raw HTML would run code or
// fetch from elsewhere if rendered as written.
const mdPayload = "**bold** [click](javascript:alert(5)) [case](JaVaScRiPt:alert(6)) [tab](java\tscript:alert(7)) " +
	"<javascript:alert(8)> ![px](https://tracker.example/p.png) ![svg](data:image/svg+xml;base64,PHN2Zz4=) " +
	"<script>alert(9)</script><img src=x onerror=alert(10)> [ok](https://example.com/docs)"

// Chat fixtures in each provider's shape, every text carrying a payload.
var (
	openAIInputs = `{"model":"gpt-4o","messages":[
		{"role":"system","content":"You are terse. ` + xssJSON + `"},
		{"role":"user","content":[{"type":"text","text":"` + mdJSON + `"},{"type":"image_url","image_url":{"url":"data:image/png;base64,` + pixel + `"}},{"type":"image_url","image_url":{"url":"https://img.example/cat.png"}}]},
		{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"` + xssJSON + `\"}"}}]},
		{"role":"tool","tool_call_id":"call_1","content":"sunny ` + xssJSON + `"}]}`
	openAIOutput = `{"id":"chatcmpl-1","choices":[{"index":0,"message":{"role":"assistant","content":"It is *sunny*.","refusal":null}}],"usage":{"prompt_tokens":10}}`

	anthropicInputs = `{"model":"claude","system":"Be kind ` + xssJSON + `","messages":[
		{"role":"user","content":[{"type":"text","text":"what is this?"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"` + pixel + `"}}]},
		{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"lookup","input":{"q":"` + xssJSON + `"}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"not found ` + xssJSON + `"}],"is_error":true}]}]}`
	anthropicOutput = `{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"thinking","thinking":"hmm ` + xssJSON + `"},{"type":"text","text":"A pixel."},{"type":"tool_use","id":"toolu_2","name":"describe","input":{}}]}`

	geminiInputs = `{"model":"gemini-2.0-flash","contents":[
		{"role":"user","parts":[{"text":"hello ` + xssJSON + `"},{"inline_data":{"mime_type":"image/png","data":"` + pixel + `"}}]},
		{"role":"model","parts":[{"function_call":{"name":"search","args":{"q":"` + xssJSON + `"}}}]},
		{"role":"user","parts":[{"functionResponse":{"name":"search","response":{"result":"` + xssJSON + `"}}}]}],
		"config":{"system_instruction":{"parts":[{"text":"Answer in French."}]}}}`
	geminiOutput = `{"candidates":[{"content":{"role":"model","parts":[{"text":"Bonjour ` + xssJSON + `"}]},"finish_reason":"STOP"}]}`
)

// xssJSON and mdJSON are the payloads as JSON string contents.
var (
	xssJSON = jsonInner(xss)
	mdJSON  = jsonInner(mdPayload)
)

func jsonInner(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

// fixtureChatCall is fixtureCall with other inputs and output.
func fixtureChatCall(inputs, output string) *callDetail {
	c := fixtureCall()
	c.Inputs, c.Output = json.RawMessage(inputs), json.RawMessage(output)
	v := viewOf(c)
	d := &callDetail{
		Project: "team/p", Call: v, Inputs: jsonTree(c.Inputs), Output: jsonTree(c.Output), Attributes: jsonTree(c.Attributes),
		ChatIn: chatInputs(c.Inputs), ChatOut: chatOutput(c.Output), Exception: exceptionOf(v.Exception), CanWrite: true, CSRF: "tok",
	}
	for part, node := range map[string]*jsonNode{"inputs": d.Inputs, "output": d.Output} {
		decorate(node, "", valueLinks{ShowAllBase: callValueBase("team/p", c.ID, part), Project: "team/p"})
	}
	return d
}

// traceViewFixtures are the pages of this part of the UI, for
// TestTemplatesRender.
func traceViewFixtures(v *viewer, detail *callDetail) map[string]page {
	detail.CanWrite, detail.CSRF = true, "tok"
	detail.Costs, detail.CostTotal, detail.HasCost = []costRow{{Model: xss, Prompt: 0.001, Completion: 0.002, Total: 0.003}}, 0.003, true
	left, right := viewOf(fixtureCall()), viewOf(fixtureCall())
	inputs, _ := jsondiff.Diff([]byte(`{"q":"`+xssJSON+`","n":1,"gone":true}`), []byte(`{"q":"other","n":1,"new":[1]}`))
	value := jsonTree([]byte(`{"name":"` + xssJSON + `","prompt":"weave:///team/p/object/prompt:abc","image":{"_type":"CustomWeaveType","weave_type":{"type":"PIL.Image.Image"},"files":{"image.png":"dgst"}}}`))
	decorate(value, "", valueLinks{Project: "team/p"})
	return map[string]page{
		"object": {Title: xss, Viewer: v, Project: "team/p", Body: objectVersionView{
			Project: "team/p", Name: xss, Digest: "abc", Kind: "object", Class: "Prompt", VersionIndex: 2, IsLatest: true,
			Created: time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC), Value: value, Ref: "weave:///team/p/object/x:abc",
			Code: xss, CodeNote: xss,
		}},
		"diff": {Title: "Compare", Viewer: v, Project: "team/p", Body: diffView{
			Project: "team/p", Kind: "calls", LeftID: xss, RightID: "b",
			Left: &diffSide{Call: left, Cost: 0.5, HasCost: true, Href: "/l"}, Right: &diffSide{Call: right, Href: "/r"},
			Latency: delta{"+1.00 s", "more"}, Tokens: delta{"±0", "same"}, Cost: delta{"−$0.5000", "less"},
			Children: []childPair{{Left: left, Right: right, DiffURL: "/d", Latency: delta{"±0", "same"}}, {Left: left}, {Right: right}},
			Inputs:   diffPart{Root: inputs, Counts: inputs.Counts()},
			Output:   diffPart{Note: "These values are too large to compare here."},
		}},
	}
}

func loadTestPages(t *testing.T) *pages {
	t.Helper()
	a, err := loadAssets()
	if err != nil {
		t.Fatal(err)
	}
	p, err := loadPages(a)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func renderFragment(t *testing.T, p *pages, page, fragment string, data any) string {
	t.Helper()
	var buf bytes.Buffer
	if err := p.byName[page].ExecuteTemplate(&buf, fragment, data); err != nil {
		t.Fatalf("%s/%s: %v", page, fragment, err)
	}
	html := buf.String()
	checkPage(t, fragment, html)
	return html
}

// TestDetailPaneShapes renders the detail pane of a chat call in each
// provider's shape and checks what a person sees: every role, the text as
// Markdown, the pictures drawn inline, tool calls and results, and no
// payload turned into markup.
func TestDetailPaneShapes(t *testing.T) {
	p := loadTestPages(t)
	for _, tc := range []struct {
		name           string
		inputs, output string
		want           []string
	}{
		{"OpenAI", openAIInputs, openAIOutput, []string{
			`<div class="role">system`, `<div class="role">user`, `<div class="role">assistant`, `<div class="role">tool`,
			`answers call_1`, `<span class="mono tool-name">get_weather</span>`, `<em>sunny</em>`, `<strong>bold</strong>`,
			`<img class="trace-image" src="data:image/png;base64,` + pixel[:20],
			`<a class="external-image" href="https://img.example/cat.png"`,
			`<a href="https://example.com/docs" rel="nofollow noopener noreferrer">ok</a>`,
			`<a href="https://tracker.example/p.png" rel="nofollow noopener noreferrer">px</a>`,
		}},
		{"Anthropic", anthropicInputs, anthropicOutput, []string{
			`<div class="role">system`, `Be kind`, `<span class="mono tool-name">lookup</span>`, `Tool result (error)`, `toolu_1`,
			`<details class="thinking">`, `<p>A pixel.</p>`, `<span class="mono tool-name">describe</span>`,
			`<img class="trace-image" src="data:image/png;base64,` + pixel[:20],
		}},
		{"Gemini", geminiInputs, geminiOutput, []string{
			`<div class="role">system`, `Answer in French.`, `<div class="role">model`, `<span class="mono tool-name">search</span>`,
			`Tool result`, `<p>Bonjour`, `<img class="trace-image" src="data:image/png;base64,` + pixel[:20],
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := fixtureChatCall(tc.inputs, tc.output)
			if d.ChatIn == nil || d.ChatOut == nil {
				t.Fatalf("not read as a chat: in %v, out %v", d.ChatIn != nil, d.ChatOut != nil)
			}
			html := renderFragment(t, p, "trace", "call_detail", d)
			for _, w := range tc.want {
				if !strings.Contains(html, w) {
					t.Errorf("the pane lacks %q", w)
				}
			}
			if !strings.Contains(html, "&lt;script&gt;alert(1)&lt;/script&gt;") {
				t.Error("the payload is not shown as text")
			}
		})
	}
}

func TestChatShapes(t *testing.T) {
	in := chatInputs(json.RawMessage(openAIInputs))
	if len(in) != 4 || in[1].Parts[0].Kind != "text" || in[1].Parts[1].Image == nil || in[1].Parts[1].Image.Src == "" ||
		in[1].Parts[2].Image.External != "https://img.example/cat.png" || in[2].Parts[0].ToolName != "get_weather" ||
		in[3].ToolCallID != "call_1" {
		t.Fatalf("OpenAI inputs: %+v", in)
	}
	out := chatOutput(json.RawMessage(anthropicOutput))
	if len(out) != 1 || len(out[0].Parts) != 3 || out[0].Parts[0].Kind != "thinking" || out[0].Parts[1].Text != "A pixel." ||
		out[0].Parts[2].Kind != "tool_call" || out[0].Parts[2].ToolID != "toolu_2" {
		t.Fatalf("Anthropic output: %+v", out)
	}
	anth := chatInputs(json.RawMessage(anthropicInputs))
	if len(anth) != 4 || anth[0].Role != "system" || anth[3].Parts[0].Kind != "tool_result" || !anth[3].Parts[0].IsError ||
		len(anth[3].Parts[0].Result) != 1 {
		t.Fatalf("Anthropic inputs: %+v", anth)
	}
	gem := chatInputs(json.RawMessage(geminiInputs))
	if len(gem) != 4 || gem[0].Role != "system" || gem[2].Parts[0].Kind != "tool_call" || gem[3].Parts[0].Kind != "tool_result" ||
		gem[1].Parts[1].Image == nil || gem[1].Parts[1].Image.Src == "" {
		t.Fatalf("Gemini inputs: %+v", gem)
	}
	if g := chatOutput(json.RawMessage(geminiOutput)); len(g) != 1 || g[0].Role != "model" {
		t.Fatalf("Gemini output: %+v", g)
	}
	resp := chatOutput(json.RawMessage(`{"output":[{"type":"reasoning"},{"type":"message","role":"assistant","content":[{"type":"output_text","text":"done"}]},{"type":"function_call","name":"f","arguments":"{}","call_id":"c1"}]}`))
	if len(resp) != 2 || resp[0].Parts[0].Text != "done" || resp[1].Parts[0].ToolName != "f" {
		t.Fatalf("Responses output: %+v", resp)
	}
	if gi := chatInputs(json.RawMessage(`{"contents":"just text"}`)); len(gi) != 1 || gi[0].Parts[0].Text != "just text" {
		t.Fatalf("Gemini text contents: %+v", gi)
	}
	// An SVG or otherwise unknown data URL is never drawn.
	svg := chatInputs(json.RawMessage(`{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/svg+xml;base64,PHN2Zz4="}}]}]}`))
	if img := svg[0].Parts[0].Image; img.Src != "" || img.Note == "" {
		t.Fatalf("an SVG data URL: %+v", img)
	}
	for _, notChat := range []string{`{"messages":[{"content":"no role"}]}`, `{"messages":"x"}`, `{"q":1}`, `[1]`} {
		if chatInputs(json.RawMessage(notChat)) != nil {
			t.Errorf("%s read as a chat", notChat)
		}
	}
	for _, notChat := range []string{`"text"`, `{"choices":[{}]}`, `{"role":"assistant","content":"plain"}`} {
		if chatOutput(json.RawMessage(notChat)) != nil {
			t.Errorf("%s read as a chat reply", notChat)
		}
	}
}

var anyHref = regexp.MustCompile(`(?i)(href|src)="([^"]*)"`)

func TestMarkdownIsSafe(t *testing.T) {
	md := newMarkdownRenderer()
	html := string(md.html(mdPayload))
	for _, m := range anyHref.FindAllStringSubmatch(html, -1) {
		target := m[2]
		if !strings.HasPrefix(target, "https://") && !strings.HasPrefix(target, "mailto:") {
			t.Errorf("a %s of %q survived", m[1], target)
		}
		if m[1] == "src" {
			t.Errorf("an image that fetches from elsewhere: %q", target)
		}
	}
	checkPage(t, "markdown", html) // no handler, no javascript: URL, no stored markup as markup
	for _, bad := range []string{"<script", "<img", "<svg"} {
		if strings.Contains(strings.ToLower(html), bad) {
			t.Errorf("rendered Markdown carries %q:\n%s", bad, html)
		}
	}
	for _, kept := range []string{"<strong>bold</strong> click case", ">px</a>", "javascript:alert(8)", "&lt;script&gt;alert(9)&lt;/script&gt;&lt;img src=x onerror=alert(10)&gt;"} {
		if !strings.Contains(html, kept) {
			t.Errorf("the text %q is lost:\n%s", kept, html)
		}
	}
	if got := string(md.html("![p](data:image/png;base64," + pixel + ")")); !strings.Contains(got, `<img src="data:image/png;base64,`) {
		t.Errorf("an inline raster image is drawn: %s", got)
	}
	if got := string(md.html("write to <a@b.example>")); !strings.Contains(got, `href="mailto:a@b.example"`) {
		t.Errorf("an e-mail autolink: %s", got)
	}
	if got := string(md.html("<div onclick=\"alert(11)\">\nblock\n</div>")); !strings.Contains(got, `<pre class="raw-html">&lt;div onclick=&quot;alert(11)&quot;&gt;`) {
		t.Errorf("an HTML block is shown as text: %s", got)
	}
	long := strings.Repeat("<b>x</b> ", maxMarkdownBytes/8)
	if got := string(md.html(long)); !strings.HasPrefix(got, `<pre class="message-text">&lt;b&gt;`) {
		t.Errorf("text past the Markdown limit is shown as escaped text: %.80s", got)
	}
	for target, want := range map[string]bool{
		"https://a.example/x": true, "http://a.example": true, "mailto:x@y.example": true, "HTTPS://A.EXAMPLE": true,
		"javascript:alert(1)": false, " javascript:alert(1)": false, "java\nscript:alert(1)": false, "/ui/signout": false,
		"vbscript:x": false, "data:text/html,x": false, "https:no-host": false, "//evil.example": false,
	} {
		if linkAllowed(target) != want {
			t.Errorf("linkAllowed(%q) = %v", target, !want)
		}
	}
}

func TestValueDecoration(t *testing.T) {
	raw := `{"prompt":"weave:///team/p/object/my_prompt:v3","op":"weave:///other/q/op/score:abc","call":"trace:///team/p/call/c-1",` +
		`"a/b":{"~k":"` + strings.Repeat("x", maxStringChars+5) + `"},"img":{"_type":"CustomWeaveType","weave_type":{"type":"PIL.Image.Image"},"files":{"image.png":"D1g"},"load_op":"NO_LOAD_OP"},` +
		`"inline":"data:image/png;base64,` + pixel + `","not_ref":"weave:/// broken"}`
	n := jsonTree([]byte(raw))
	decorate(n, "", valueLinks{ShowAllBase: "/base?part=inputs", Project: "team/p"})
	byKey := map[string]*jsonNode{}
	for _, c := range n.Children {
		byKey[c.Key] = c
	}
	for key, want := range map[string]string{
		"prompt": "/ui/p/team/p/objects/my_prompt/versions/v3", "op": "/ui/p/other/q/objects/score/versions/abc",
		"call": "/ui/p/team/p/calls/c-1", "not_ref": "",
	} {
		if got := byKey[key].Href; got != want {
			t.Errorf("%s links to %q, want %q", key, got, want)
		}
	}
	long := byKey["a/b"].Children[0]
	if long.Path != "/a~1b/~0k" || long.ShowAll != "/base?part=inputs&path=%2Fa~1b%2F~0k" {
		t.Errorf("show all of a cut string: path %q, url %q", long.Path, long.ShowAll)
	}
	if img := byKey["img"].Image; img == nil || img.Src != template.URL("/ui/p/team/p/files/D1g") {
		t.Errorf("weave image: %+v", byKey["img"].Image)
	}
	content := jsonTree([]byte(`{"_type":"CustomWeaveType","weave_type":{"type":"weave.type_wrappers.Content.content.Content"},"files":{"content":"C1","metadata.json":"M1"}}`))
	decorate(content, "", valueLinks{Project: "team/p"})
	if img := content.Image; img == nil || img.Src != "" || img.File != "/ui/p/team/p/files/C1" {
		t.Errorf("weave content: %+v", content.Image)
	}
	if img := byKey["inline"].Image; img == nil || !strings.HasPrefix(string(img.Src), "data:image/png;base64,") {
		t.Errorf("inline image: %+v", byKey["inline"].Image)
	}
	// The pointer finds the member, exactly as stored.
	got, err := jsonPointer(json.RawMessage(raw), "/a~1b/~0k")
	if err != nil || len(got) != maxStringChars+7 {
		t.Fatalf("pointer: %d bytes, %v", len(got), err)
	}
	if got, err := jsonPointer(json.RawMessage(`{"a":[1,{"b":2.50}],"a":[0,{"b":"last"}]}`), "/a/1/b"); err != nil || string(got) != `"last"` {
		t.Fatalf("a repeated name resolves to the last: %s %v", got, err)
	}
	for _, bad := range []string{"a", "/nope", "/a/9", "/a/x"} {
		if _, err := jsonPointer(json.RawMessage(`{"a":[1]}`), bad); err == nil {
			t.Errorf("pointer %q found something", bad)
		}
	}
	// The rest of a cut container draws from its first left-out member on.
	var many bytes.Buffer
	many.WriteString("[")
	for i := range maxJSONNodes + 10 {
		if i > 0 {
			many.WriteString(",")
		}
		many.WriteString(`"v`)
		many.WriteString(strings.Repeat("x", i%3))
		many.WriteString(`"`)
	}
	many.WriteString("]")
	big := jsonTree(many.Bytes())
	decorate(big, "", valueLinks{ShowAllBase: "/base?part=output"})
	more := big.Children[len(big.Children)-1]
	if more.Kind != "more" || !strings.HasSuffix(more.ShowAll, "&from="+itoa(more.From)) || more.From != len(big.Children)-1 {
		t.Fatalf("more node: %+v", more)
	}
	rest := jsonTreeFrom(many.Bytes(), more.From)
	if len(rest.Children) != maxJSONNodes+10-more.From || rest.Children[0].Key != itoa(more.From) {
		t.Fatalf("the rest: %d members, first %q", len(rest.Children), rest.Children[0].Key)
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

func TestFragmentsRender(t *testing.T) {
	p := loadTestPages(t)
	d := fixtureChatCall(openAIInputs, openAIOutput)
	d.Feedback = []feedbackItem{
		{Type: "wandb.reaction.1", Emoji: "👍"}, {Type: "wandb.note.1", Note: xss},
		{Type: "wandb.annotation.quality", Annotation: "quality", Value: jsonTree([]byte(`"` + xssJSON + `"`))},
	}
	html := renderFragment(t, p, "trace", "feedback_section", d)
	for _, w := range []string{`name="emoji" value="👍"`, `name="note"`, `name="csrf" value="tok"`, `hx-post="/ui/p/team/p/calls/`, `<span class="label">quality</span>`} {
		if !strings.Contains(html, w) {
			t.Errorf("feedback section lacks %q", w)
		}
	}
	d.CanWrite = false
	if html := renderFragment(t, p, "trace", "feedback_section", d); strings.Contains(html, "<form") {
		t.Error("a reader who may not write is offered the forms")
	}
	renderFragment(t, p, "trace", "value_member", valueMember{IsString: true, Key: xss, Text: xss})
	node := jsonTree([]byte(`[1,"` + xssJSON + `"]`))
	renderFragment(t, p, "trace", "value_member", valueMember{Node: node, Members: true})
	renderFragment(t, p, "trace", "value_member", valueMember{Node: node})
	exc := fixtureChatCall(`{}`, `null`)
	exc.Exception = exceptionOf("Traceback (most recent call last):\n  File \"a.py\", line 1\nValueError: " + xss)
	html = renderFragment(t, p, "trace", "call_detail", exc)
	if !strings.Contains(html, `<p class="exception-headline">ValueError: &lt;script&gt;`) || !strings.Contains(html, `File &#34;a.py&#34;, line 1`) {
		t.Errorf("exception headline and stack:\n%s", html)
	}
}

func TestTimelineSpan(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	end := t0.Add(2 * time.Second)
	running := &callView{Started: t0.Add(time.Second)}
	span := timelineOf([]*callView{{Started: t0, Ended: &end}, running}, t0.Add(4*time.Second))
	if !span.Start.Equal(t0) || !span.End.Equal(t0.Add(4*time.Second)) {
		t.Fatalf("span %v – %v: a running root reaches now", span.Start, span.End)
	}
	if strings.Join(span.Ticks, " ") != "0 ms 1.00 s 2.00 s 3.00 s 4.00 s" {
		t.Fatalf("ticks %v", span.Ticks)
	}
	if s := timelineOf([]*callView{{Started: t0, Ended: &t0}}, t0); !s.End.After(s.Start) {
		t.Fatal("an instant trace still has a span")
	}
}

func TestTreeOrder(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	parent := func(id string) *string { return &id }
	calls := map[string]*trace.Call{
		"root": {ID: "root", StartedAt: at(0)},
		"a":    {ID: "a", ParentID: parent("root"), StartedAt: at(1)},
		"a1":   {ID: "a1", ParentID: parent("a"), StartedAt: at(5)},
		"b":    {ID: "b", ParentID: parent("root"), StartedAt: at(2)},
		"c":    {ID: "c", ParentID: parent("root"), StartedAt: at(2)}, // same start as b: id decides
		"loop": {ID: "loop", ParentID: parent("loop"), StartedAt: at(3)},
	}
	var got []string
	var positions []treePos
	for id := range calls {
		if p, ok := positionOf(calls, id); ok {
			positions = append(positions, p)
		}
	}
	sortPositions(positions)
	for _, p := range positions {
		got = append(got, p.id+"("+strings.Join(p.path, ">")+")")
	}
	if strings.Join(got, " ") != "root() a(root) a1(root>a) b(root) c(root)" {
		t.Fatalf("depth-first order: %v", got)
	}
}
