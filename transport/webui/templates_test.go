package webui

import (
	"bytes"
	"encoding/json"
	"maps"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/trace"
)

// xss is stored data that would run as code if a page did not escape it.
const xss = `<script>alert(1)</script><img src=x onerror=alert(2)>javascript:alert(3)`

// fixtureCall is a call whose every stored text is the payload.
func fixtureCall() *trace.Call {
	ended := time.Date(2026, 5, 1, 12, 0, 2, 0, time.UTC)
	name := xss
	exc := "ValueError: " + xss
	user := "u-1"
	inputs, _ := json.Marshal(map[string]any{
		"messages": []map[string]any{{"role": "user", "content": xss}},
		xss:        []any{xss, 1.5e300, nil, true, map[string]any{"href": "javascript:alert(4)"}},
	})
	return &trace.Call{
		ProjectID: "team/p", ID: "00000000-0000-7000-8000-000000000001", TraceID: "00000000-0000-7000-8000-0000000000aa",
		OpName: "weave:///team/p/op/" + "step:abc", DisplayName: &name,
		StartedAt: ended.Add(-2 * time.Second), EndedAt: &ended, Exception: &exc, PfUserID: &user,
		Inputs:     inputs,
		Output:     json.RawMessage(`{"choices":[{"message":{"role":"assistant","content":"<b>bold</b>","tool_calls":[{"function":{"name":"f","arguments":"{\"a\":\"<i>\"}"}}]}}]}`),
		Attributes: json.RawMessage(`{}`),
		Summary:    json.RawMessage(`{"usage":{"gpt-4o":{"requests":1,"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}},"weave":{"status":"error","display_name":"x","latency_ms":2000}}`),
	}
}

// pageFixtures gives every page template the data it is rendered with;
// a template without a fixture fails TestTemplatesRender.
func pageFixtures() map[string]page {
	v := &viewer{session: newSession("token", weft.Session{UserID: "u-1", KeyID: "k"}), principal: weft.Principal{Username: xss}}
	call := viewOf(fixtureCall())
	call.Username = xss
	call.HasChildren = true
	child := viewOf(fixtureCall())
	children := treeChildren{Project: "team/p", Calls: []*callView{child}, MoreURL: projectPath("team/p", "calls/x/children?offset=100"), Shown: 100}
	detail := &callDetail{
		Project: "team/p", Call: call, Inputs: jsonTree(call.call.Inputs), Output: jsonTree(call.call.Output),
		Attributes: jsonTree(call.call.Attributes), ChatIn: chatInputs(call.call.Inputs), ChatOut: chatOutput(call.call.Output),
		Usage:    usageRows(call.call),
		Feedback: []feedbackItem{{Type: "wandb.reaction.1", Emoji: "👍"}, {Type: "wandb.note.1", Note: xss}, {Type: "custom", Payload: jsonTree([]byte(`{"x":"` + "\\u003cscript\\u003e" + `"}`))}},
	}
	traceViewPages := traceViewFixtures(v, detail)
	pages := map[string]page{
		"signin":   {Title: "Sign in", Body: signInForm{User: xss, Next: "/", Error: xss}},
		"error":    {Title: "Forbidden", Viewer: v, Body: errorPage{Status: 403, Heading: "Forbidden", Message: xss}},
		"projects": {Title: "Projects", Viewer: v, Body: projectsView{Projects: []projectRow{{ID: "team/" + xss, Calls: 12345, LastActivity: call.Started}, {ID: "team/empty"}}, More: 3}},
		"traces":   tracesFixture(v, fixtureCall()),
		"trace": {Title: xss, Viewer: v, Project: "team/p", Body: traceView{
			Project: "team/p", TraceID: call.TraceID, Roots: []rootNode{{Call: call, Children: &children}}, Detail: detail,
		}},
	}
	for name, p := range traceViewPages {
		pages[name] = p
	}
	return pages
}

var (
	// Escaped text has no raw "<", so every "<" starts a tag.
	anyTag         = regexp.MustCompile(`<[a-zA-Z][^>]*>`)
	quotedValue    = regexp.MustCompile(`"[^"]*"|'[^']*'`)
	inlineHandler  = regexp.MustCompile(`(?i)\son[a-z]+\s*=`)
	inlineStyle    = regexp.MustCompile(`(?i)\sstyle\s*=`)
	javascriptHref = regexp.MustCompile(`(?i)(href|src|action)\s*=\s*["']?\s*javascript:`)
	// dataBlock is a script element that holds data, never run.
	dataBlock = regexp.MustCompile(`^<script type="application/json"[ >]`)
)

// checkPage fails when rendered HTML carries something the CSP would block
// or stored text that was not escaped.
func checkPage(t *testing.T, name, html string) {
	t.Helper()
	for _, tag := range anyTag.FindAllString(html, -1) {
		names := quotedValue.ReplaceAllString(tag, `""`) // attribute names only
		lower := strings.ToLower(tag)
		if strings.HasPrefix(lower, "<script") && !strings.Contains(names, " src=") && !dataBlock.MatchString(tag) {
			t.Errorf("%s: inline script %s", name, tag)
		}
		if strings.HasPrefix(lower, "<style") {
			t.Errorf("%s: style element", name)
		}
		if m := inlineHandler.FindString(names); m != "" {
			t.Errorf("%s: event-handler attribute in %s", name, tag)
		}
		if m := inlineStyle.FindString(names); m != "" {
			t.Errorf("%s: style attribute in %s", name, tag)
		}
		if m := javascriptHref.FindString(tag); m != "" {
			t.Errorf("%s: javascript: URL in %s", name, tag)
		}
	}
	if strings.Contains(html, "<script>alert") || strings.Contains(html, "<img src=x") || strings.Contains(html, "<b>bold") {
		t.Errorf("%s: stored markup rendered as markup", name)
	}
}

func TestTemplatesRender(t *testing.T) {
	a, err := loadAssets()
	if err != nil {
		t.Fatal(err)
	}
	p, err := loadPages(a)
	if err != nil {
		t.Fatal(err)
	}
	fixtures := pageFixtures()
	maps.Copy(fixtures, queueFixtures(fixtures["trace"].Viewer, fixtures["trace"].Body.(traceView).Detail))
	maps.Copy(fixtures, objectFixtures(fixtures["trace"].Viewer))
	maps.Copy(fixtures, trainingFixtures(fixtures["trace"].Viewer))
	maps.Copy(fixtures, playgroundFixtures(fixtures["trace"].Viewer))
	maps.Copy(fixtures, threadFixtures(fixtures["trace"].Viewer))
	maps.Copy(fixtures, monitorFixtures(fixtures["trace"].Viewer))
	maps.Copy(fixtures, settingsFixtures(fixtures["trace"].Viewer))
	maps.Copy(fixtures, dashboardFixtures(fixtures["trace"].Viewer))
	for name, tmpl := range p.byName {
		fixture, ok := fixtures[name]
		if !ok {
			t.Errorf("page %s has no fixture in pageFixtures", name)
			continue
		}
		var buf bytes.Buffer
		if err := tmpl.ExecuteTemplate(&buf, "layout", fixture); err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		html := buf.String()
		checkPage(t, name, html)
		if !strings.Contains(html, "&lt;script&gt;alert(1)&lt;/script&gt;") && name != "traces" {
			t.Errorf("%s: the payload is not shown as text", name)
		}
	}
	for name := range fixtures {
		if _, ok := p.byName[name]; !ok {
			t.Errorf("fixture %s has no page", name)
		}
	}

	// The fragments htmx swaps in render alone.
	fixture := fixtures["trace"].Body.(traceView)
	for _, fragment := range []struct {
		name string
		data any
	}{
		{"tree_children", fixture.Roots[0].Children},
		{"call_detail", fixture.Detail},
	} {
		var buf bytes.Buffer
		if err := p.byName["trace"].ExecuteTemplate(&buf, fragment.name, fragment.data); err != nil {
			t.Fatalf("%s: %v", fragment.name, err)
		}
		checkPage(t, fragment.name, buf.String())
	}
	var buf bytes.Buffer
	if err := p.byName["error"].ExecuteTemplate(&buf, "error_box", errorPage{Status: 400, Message: xss}); err != nil {
		t.Fatal(err)
	}
	checkPage(t, "error_box", buf.String())
}

func TestJSONTree(t *testing.T) {
	root := jsonTree([]byte(`{"b":1,"a":[true,null,"x"],"n":1.50}`))
	var keys []string
	for _, c := range root.Children {
		keys = append(keys, c.Key+"="+c.Kind+":"+c.Text)
	}
	if got := strings.Join(keys, " "); got != "b=number:1 a=array: n=number:1.50" {
		t.Fatalf("members in order with number text kept: %s", got)
	}
	long := jsonTree([]byte(`"` + strings.Repeat("é", maxStringChars+10) + `"`))
	if long.Omitted != 10 || len([]rune(long.Text)) != maxStringChars {
		t.Fatalf("long string: omitted %d, kept %d", long.Omitted, len([]rune(long.Text)))
	}
	var many bytes.Buffer
	many.WriteString("[")
	for i := range maxJSONNodes + 50 {
		if i > 0 {
			many.WriteString(",")
		}
		many.WriteString("1")
	}
	many.WriteString("]")
	big := jsonTree(many.Bytes())
	last := big.Children[len(big.Children)-1]
	if last.Kind != "more" || len(big.Children) > maxJSONNodes+1 {
		t.Fatalf("a huge array is cut: %d children, last %+v", len(big.Children), last)
	}
	if n := jsonTree([]byte("not json")); n.Kind != "string" || n.Text != "not json" {
		t.Fatalf("text that is not JSON: %+v", n)
	}
}
