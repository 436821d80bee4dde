package webui

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/trace"
)

// tracesFixture is the trace list page with every column filled: a chosen
// field column, reactions, a cost, suggestions, live updates and all pagers,
// each from the stored text xss.
func tracesFixture(v *viewer, c *trace.Call) page {
	view, err := parseListView(map[string][]string{"op": {xss}, "status": {"error"}, "from": {"2026-05-01T12:00"},
		"q": {xss}, "user": {xss}, "feedback": {"1"}, "cols": {"inputs.messages,output.choices"}, "sort": {"inputs.messages"}})
	if err != nil {
		panic(err)
	}
	c.Summary = json.RawMessage(`{"weave":{"costs":{"gpt-4o":{"prompt_tokens_total_cost":0.25,"completion_tokens_total_cost":0}}}}`)
	row := rowOf(c, view.Cols, true)
	row.Username = xss
	row.Reactions = []reactionCount{{Emoji: "👍", Count: 3}, {Emoji: xss, Count: 1}}
	data := tracesView{Project: "team/p", View: view, Rows: []*listRow{row}, Count: 10_001,
		Prev: "/ui/p/team/p/?offset=0", Next: "/ui/p/team/p/?offset=100", FirstPage: "/ui/p/team/p/", First: 51,
		Statuses: []string{trace.StatusSuccess, trace.StatusError}, SortLinks: map[string]string{}, Live: "/ui/p/team/p/live"}
	(&Handler{}).fillColumns(&data)
	data.Suggestions = suggestions(data.Rows, view, "team/p")
	data.Export, data.ExportLimit = map[string]string{"csv": "/ui/p/team/p/export?format=csv", "jsonl": "/ui/p/team/p/export?format=jsonl"}, 10_000
	data.HasViews, data.CanSave, data.SaveQuery = true, true, view.values().Encode()
	data.SavedViews = []savedView{{ID: "v", Label: xss, Href: "/ui/p/team/p/views/v", Delete: "/ui/p/team/p/views/v/delete", Current: true}}
	return page{Title: "team/p", Viewer: v, Project: "team/p", Body: data}
}

func TestTraceListRender(t *testing.T) {
	a, err := loadAssets()
	if err != nil {
		t.Fatal(err)
	}
	p, err := loadPages(a)
	if err != nil {
		t.Fatal(err)
	}
	fixture := tracesFixture(&viewer{session: newSession("token", weft.Session{UserID: "u-1", KeyID: "k"})}, fixtureCall())
	var b strings.Builder
	if err := p.byName["traces"].ExecuteTemplate(&b, "layout", fixture); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	checkPage(t, "traces", html)
	for _, want := range []string{
		"10,000&#43; traces",
		`sse-connect="/ui/p/team/p/live"`, `sse-swap="results"`,
		`<th scope="col" class="field-col" data-field="inputs.messages" aria-sort="descending">`,
		`data-field="output.choices"`,
		`👍<span class="reaction-count">3</span>`,
		"$0.2500",
		`<tr data-call="00000000-0000-7000-8000-000000000001" id="row-00000000-0000-7000-8000-000000000001" class="fresh">`,
		`name="cols" value="inputs.messages,output.choices"`,
		`<input type="checkbox" name="feedback" value="1" checked>`,
		`data-key-search`,
		`rel="next"`, `rel="prev"`, `rel="first"`,
		// The chosen input column shows the member's value as JSON text.
		`<td class="field" data-label="inputs.messages">[{&#34;content&#34;:&#34;\u003cscript\u003ealert(1)`,
	} {
		if !strings.Contains(html, want) {
			t.Errorf("the list lacks %s", want)
		}
	}
	// The results fragment alone (what a live update sends) renders too.
	b.Reset()
	if err := p.byName["traces"].ExecuteTemplate(&b, "results_body", fixture.Body); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `<table class="grid" id="traces">`) || strings.Contains(b.String(), "<form") {
		t.Errorf("results fragment: %s", b.String())
	}
}
