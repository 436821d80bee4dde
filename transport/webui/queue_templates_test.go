package webui

import (
	"bytes"
	"encoding/json"
	"html/template"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/feedback"
)

const specBase = "weave:///team/p/object/"

// fixtureSpecs are specs of every field kind, their names and texts the XSS
// payload where a person reads them.
func fixtureFields() []*annotationField {
	specs := []struct{ ref, val string }{
		{specBase + "label:d1", `{"name":` + quoteJSON(xss) + `,"description":` + quoteJSON(xss) + `,"field_schema":{"type":"string","enum":["good","bad",` + quoteJSON(xss) + `,"4","5","6","7","8","9","ten"]}}`},
		{specBase + "ok:d2", `{"name":"Correct","field_schema":{"type":"boolean"}}`},
		{specBase + "score:d3", `{"name":"Score","description":"How good","field_schema":{"type":"integer","minimum":1,"maximum":5}}`},
		{specBase + "ratio:d4", `{"field_schema":{"type":"number","minimum":0}}`},
		{specBase + "comment:d5", `{"name":"Comment","field_schema":{"type":"string","maxLength":200}}`},
		{specBase + "any:d6", `{"name":"Anything"}`},
		{specBase + "gone:d7", ``},
		{"weave:///team/p/op/scorer:d8", `{}`},
	}
	var fields []*annotationField
	for i, s := range specs {
		var val json.RawMessage
		if s.val != "" {
			val = json.RawMessage(s.val)
		}
		f := fieldOfSpec(s.ref, val)
		f.ID = "field-" + string(rune('1'+i))
		f.SaveURL = itemPath("team/p", "q1", "it1", "/annotation")
		fields = append(fields, f)
	}
	fields[0].showSaved(json.RawMessage(quoteJSON(xss)))
	fields[2].showSaved(json.RawMessage(`4`))
	fields[4].showSaved(json.RawMessage(quoteJSON(xss)))
	return fields
}

func quoteJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// queueFixtures are the queue pages' fixtures for TestTemplatesRender.
func queueFixtures(v *viewer, detail *callDetail) map[string]page {
	created := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	q := feedback.Queue{ID: "q1", ProjectID: "team/p", Name: xss, Description: xss, ScorerRefs: []string{specBase + "label:d1"}, CreatedAt: created}
	pos := int64(3)
	item := &feedback.QueueItem{ID: "it1", QueueID: "q1", CallID: detail.Call.ID, PositionInQueue: &pos}
	return map[string]page{
		"queue_list": {Title: "Annotation queues", Viewer: v, Project: "team/p", Body: queuesView{Project: "team/p", Queues: []queueRow{
			{Queue: q, Done: 2, Total: 5, Fields: 1},
			{Queue: feedback.Queue{ID: "q2", Name: "empty", CreatedAt: created}},
		}}},
		"queue_item": {Title: xss, Viewer: v, Project: "team/p", Body: &queueItemView{
			Project: "team/p", Queue: q, Done: 2, Total: 5, Item: item, Position: 3,
			PrevURL: itemPath("team/p", "q1", "it0"), NextURL: itemPath("team/p", "q1", "it2"),
			Fields: fixtureFields(), ProgressURL: itemPath("team/p", "q1", "it1", "/progress"),
			Detail: template.HTML(`<article class="call-detail" data-call="c1"><h2>call</h2></article>`),
		}},
		"queue_form": {Title: xss, Viewer: v, Project: "team/p", Body: struct {
			queueForm
			NewSpecURL string
		}{queueForm{Project: "team/p", ID: xss, Name: xss, Description: xss, Error: xss, Specs: []specChoice{
			{Ref: xss, Name: xss, Label: xss, Chosen: true, EditURL: "/ui/p/team/p/edit-spec?name=" + xss}, {Ref: "r", Name: "n", Label: "n"},
		}}, "/ui/p/team/p/edit-spec?queue=" + xss}},
		"spec_form": {Title: xss, Viewer: v, Project: "team/p", Body: specForm{Project: "team/p", ID: xss, Existing: true, Label: xss,
			Description: xss, Kind: specKindNumber, Kinds: specKinds, Options: xss, Min: "1", Max: "5", Integer: true, MaxLength: "9",
			Schema: xss, Queue: xss, Error: xss}},
	}
}

var (
	labelFor   = regexp.MustCompile(`<label[^>]* for="([^"]+)"`)
	controlID  = regexp.MustCompile(`<(?:input|textarea|select)[^>]* id="([^"]+)"`)
	hiddenOnly = regexp.MustCompile(`<input type="hidden"`)
)

// TestQueueTemplates renders the queue pages in each state and checks what
// people and assistive technology rely on: every control has a label, each
// spec kind gets its control, saved values show, and the payload stays text.
func TestQueueTemplates(t *testing.T) {
	a, err := loadAssets()
	if err != nil {
		t.Fatal(err)
	}
	p, err := loadPages(a)
	if err != nil {
		t.Fatal(err)
	}
	v := &viewer{session: newSession("token", weft.Session{UserID: "u-1", KeyID: "k"})}
	detail := &callDetail{Call: viewOf(fixtureCall())}
	fixture := queueFixtures(v, detail)["queue_item"]
	var buf bytes.Buffer
	if err := p.byName["queue_item"].ExecuteTemplate(&buf, "layout", fixture); err != nil {
		t.Fatal(err)
	}
	html := buf.String()
	checkPage(t, "queue_item", html)

	labelled := map[string]bool{}
	for _, m := range labelFor.FindAllStringSubmatch(html, -1) {
		labelled[m[1]] = true
	}
	for _, m := range controlID.FindAllStringSubmatch(html, -1) {
		if !labelled[m[1]] {
			t.Errorf("control #%s has no label", m[1])
		}
	}
	if n := len(controlID.FindAllString(html, -1)); n < 10+2+3 {
		t.Errorf("%d labelled controls, want the 12 radios and 3 typed fields at least", n)
	}
	for _, want := range []string{
		`<legend class="field-label">&lt;script&gt;alert(1)&lt;/script&gt;`, // the spec's name is the legend
		`<kbd aria-hidden="true">9</kbd> 9</label>`,                         // nine keyed choices…
		`value="9"> ten</label>`,                                            // …and a tenth without a key
		`value="2" checked><kbd aria-hidden="true">3</kbd> &lt;script&gt;`,  // the saved choice
		`> Yes</label>`, `> No</label>`,
		`type="number" name="value" value="4" step="1" min="1" max="5"`,
		`(from 1 to 5)`, `(at least 0)`, `step="any" min="0"`,
		`maxlength="200"`, `>&lt;script&gt;alert(1)&lt;/script&gt;`, // the saved comment, escaped in the textarea
		`Type a JSON value.`,
		`The annotation spec is missing or has been deleted.`,
		`This is not a ref of an annotation spec object.`,
		`data-action="next-item"`, `name="state" value="skipped"`, `rel="prev"`, `rel="next"`,
		`Item 3 of 5 · 2 of 5 done`, `<article class="call-detail" data-call="c1">`,
		`hx-post="/ui/p/team/p/queues/q1/items/it1/annotation"`,
		`<dialog id="keys-help"`, `data-action="keys-help"`,
	} {
		if !strings.Contains(html, want) {
			t.Errorf("queue item page lacks %s", want)
		}
	}
	if hiddenOnly.FindAllString(html, -1) == nil {
		t.Error("no hidden spec and CSRF fields")
	}

	// A queue with everything done, and one with no items.
	for _, tc := range []struct {
		done, total int
		want        string
	}{{5, 5, "Every item of this queue is done."}, {0, 0, "This queue has no items yet."}} {
		body := &queueItemView{Project: "team/p", Queue: feedback.Queue{ID: "q1", Name: "n"}, Done: tc.done, Total: tc.total}
		buf.Reset()
		if err := p.byName["queue_item"].ExecuteTemplate(&buf, "layout", page{Title: "n", Viewer: v, Project: "team/p", Body: body}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(buf.String(), tc.want) || strings.Contains(buf.String(), "annotate-layout") {
			t.Errorf("%d of %d done: page lacks %q", tc.done, tc.total, tc.want)
		}
	}

	// The autosave's answers.
	for _, tc := range []struct {
		status saveStatus
		want   string
	}{
		{saveStatus{Saved: true}, `data-saved="saved">Saved`},
		{saveStatus{Cleared: true}, `data-saved="cleared">Cleared`},
		{saveStatus{Error: xss}, `data-saved="error">Not saved: &lt;script&gt;`},
	} {
		buf.Reset()
		if err := p.byName["queue_item"].ExecuteTemplate(&buf, "save_status", tc.status); err != nil {
			t.Fatal(err)
		}
		if got := strings.TrimSpace(buf.String()); !strings.Contains(got, tc.want) {
			t.Errorf("save status %+v: %s", tc.status, got)
		}
		checkPage(t, "save_status", buf.String())
	}
}

func TestAnnotationValues(t *testing.T) {
	fields := fixtureFields()
	label, ok, score, ratio, comment, anything, gone := fields[0], fields[1], fields[2], fields[3], fields[4], fields[5], fields[6]
	for _, tc := range []struct {
		field        *annotationField
		choice, text string
		want         string // JSON, "" for a cleared value
		bad          bool
	}{
		{label, "0", "", `"good"`, false},
		{label, "9", "", `"ten"`, false},
		{label, "10", "", "", true},
		{label, "-1", "", "", true},
		{label, "x", "", "", true},
		{label, "", "", "", false},
		{ok, "0", "", `true`, false},
		{ok, "1", "", `false`, false},
		{score, "", " 4 ", `4`, false},
		{score, "", "4.5", "", true},
		{score, "", "NaN", "", true},
		{score, "", "+1", "", true},
		{score, "", "", "", false},
		{ratio, "", "0.25", `0.25`, false},
		{ratio, "", "1e3", `1e3`, false},
		{ratio, "", "Infinity", "", true},
		{comment, "", "a <b>", `"a \u003cb\u003e"`, false},
		{comment, "", "", "", false},
		{anything, "", `{"k": [1, 2]}`, `{"k": [1, 2]}`, false},
		{anything, "", `{"k":`, "", true},
	} {
		got, err := tc.field.valueOf(tc.choice, tc.text)
		if (err != nil) != tc.bad {
			t.Errorf("%s (%q, %q): error %v, want bad=%v", tc.field.Name, tc.choice, tc.text, err, tc.bad)
			continue
		}
		if string(got) != tc.want {
			t.Errorf("%s (%q, %q): %s, want %s", tc.field.Name, tc.choice, tc.text, got, tc.want)
		}
	}
	if label.Kind != annotationChoice || ok.Kind != annotationChoice || score.Kind != annotationNumber || ratio.Kind != annotationNumber ||
		comment.Kind != annotationText || anything.Kind != annotationJSON || gone.Problem == "" || fields[7].Problem == "" {
		t.Fatalf("kinds: %s %s %s %s %s %s, problems %q %q", label.Kind, ok.Kind, score.Kind, ratio.Kind, comment.Kind, anything.Kind, gone.Problem, fields[7].Problem)
	}
	if label.Name != "label" || label.Label != xss || comment.MaxLength != 200 || score.Min != "1" || score.Max != "5" || !score.integer {
		t.Fatalf("spec details: %+v %+v %+v", label, comment, score)
	}
	// A saved value of another spelling still checks its option.
	ok.showSaved(json.RawMessage(` false `))
	if ok.Options[0].Checked || !ok.Options[1].Checked {
		t.Fatalf("saved false: %+v", ok.Options)
	}
	// The spec's schema may also sit under json_schema, or be a bare enum.
	if f := fieldOfSpec(specBase+"x:1", json.RawMessage(`{"json_schema":{"type":"boolean"}}`)); f.Kind != annotationChoice {
		t.Fatalf("json_schema: %s", f.Kind)
	}
	if f := fieldOfSpec(specBase+"x:1", json.RawMessage(`{"enum":[1,2,3]}`)); f.Kind != annotationChoice || f.Options[2].Label != "3" {
		t.Fatalf("bare enum: %+v", f)
	}
}
