package webui

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/monitor"
	"github.com/weftlabs/weft/objects"
	"github.com/weftlabs/weft/objects/ref"
	"github.com/weftlabs/weft/trace"
	"github.com/weftlabs/weft/transport/httpapi"
)

// Scorers are made and changed here as the SDKs publish them: an
// LLMAsAJudgeScorer (an LLMStructuredCompletionModel naming the judge model
// and a system message, inline or by the ref of a model object of the
// project, the scoring prompt and the verdict's JSON Schema) or one of the
// deterministic scorers. Before it is saved a scorer
// can be previewed on one of the project's newest calls: the judge's
// messages filled from the call, or the deterministic verdict. A judge
// model the viewer may not use is refused on save and on preview.

// previewCalls is how many of the project's newest calls the scorer form
// offers to preview on.
const previewCalls = 20

// scorerClasses are the classes the scorer form makes, in its order.
var scorerClasses = []string{monitor.ClassJudge, monitor.ClassContains, monitor.ClassRegex, monitor.ClassLength, monitor.ClassValidJSON}

// scorerForm is the data of the scorer form.
type scorerForm struct {
	Project  string
	Name     string
	Existing bool
	Class    string
	Classes  []string
	// The judge's members. ModelRef names a model object of the project
	// that holds the judge's model and messages; when it is set, Model and
	// System show that object's and are not saved.
	ModelRef                      string
	Model, System, Prompt, Schema string
	// Models are the models the gateway serves, offered for the judge.
	Models []string
	// The deterministic scorers' members.
	Field, Substring, Pattern, MinLength, MaxLength string
	CaseSensitive                                   bool
	// Call is the call to preview on; Calls the newest ones offered.
	Call    string
	Calls   []previewCall
	Preview *monitor.Preview
	Error   string
}

// previewCall is a call the scorer form offers to preview on.
type previewCall struct {
	ID, Label string
}

// defaultJudgePrompt and defaultVerdictSchema start a new judge.
const (
	defaultJudgePrompt   = "Question: {inputs}\nAnswer: {output}\nIs the answer correct?"
	defaultVerdictSchema = `{"type":"object","properties":{"correct":{"type":"boolean"},"reason":{"type":"string"}},"required":["correct","reason"],"additionalProperties":false}`
)

// editScorerPage serves the scorer form: a new scorer, or with ?name= the
// latest version of that scorer.
func (h *Handler) editScorerPage(w http.ResponseWriter, r *http.Request, v *viewer, projectID string) {
	if h.cfg.Monitors == nil || h.cfg.Objects == nil {
		h.refuse(w, r, weft.Errorf(errNoMonitors, "This server runs no monitors."))
		return
	}
	form := scorerForm{Project: projectID, Class: monitor.ClassJudge, Prompt: defaultJudgePrompt, Schema: defaultVerdictSchema,
		System: "You grade answers. Reply with the verdict only.", Field: "output", CaseSensitive: true}
	if name := r.URL.Query().Get("name"); name != "" {
		members, err := h.objectMembers(r.Context(), projectID, name, "latest")
		if err != nil {
			h.refuse(w, r, err)
			return
		}
		form = scorerFormOf(projectID, name, members)
		if form.ModelRef != "" {
			h.fillFromModelObject(r.Context(), &form)
		}
	}
	h.renderScorerForm(w, r, v, form, http.StatusOK)
}

// scorerFormOf fills the form from a scorer's value.
func scorerFormOf(projectID, name string, members map[string]json.RawMessage) scorerForm {
	form := scorerForm{Project: projectID, Name: name, Existing: true, Field: "output", CaseSensitive: true}
	text := func(k string) string {
		var s string
		json.Unmarshal(members[k], &s)
		return s
	}
	number := func(k string) string {
		var n json.Number
		if json.Unmarshal(members[k], &n) != nil {
			return ""
		}
		return n.String()
	}
	form.Class = text("_class_name")
	if f := text("field"); f != "" {
		form.Field = f
	}
	form.Substring, form.Pattern, form.MinLength, form.MaxLength = text("substring"), text("pattern"), number("min_length"), number("max_length")
	var sensitive bool
	if json.Unmarshal(members["case_sensitive"], &sensitive) == nil {
		form.CaseSensitive = sensitive
	}
	form.Prompt = text("scoring_prompt")
	if s := members["response_schema"]; len(s) > 0 && string(s) != "null" {
		form.Schema = string(s)
	}
	if json.Unmarshal(members["model"], &form.ModelRef) != nil {
		form.ModelRef = ""
		form.setModel(members["model"])
	}
	return form
}

// setModel shows the judge model and system message of an
// LLMStructuredCompletionModel value.
func (form *scorerForm) setModel(val json.RawMessage) {
	var model struct {
		LLMModelID    string `json:"llm_model_id"`
		DefaultParams struct {
			Messages []struct{ Role, Content string } `json:"messages_template"`
		} `json:"default_params"`
	}
	if json.Unmarshal(val, &model) != nil {
		return
	}
	form.Model = model.LLMModelID
	for _, m := range model.DefaultParams.Messages {
		if m.Role == "system" {
			form.System = m.Content
		}
	}
}

// fillFromModelObject shows the judge model and system message of the
// model object form.ModelRef names, when it is an object version of the
// form's project; the form keeps the ref either way.
func (h *Handler) fillFromModelObject(ctx context.Context, form *scorerForm) {
	mr, err := ref.Parse(form.ModelRef)
	if err != nil || mr.Kind != ref.KindObject || mr.ProjectID() != form.Project || mr.Version == "" {
		return
	}
	if res, err := h.cfg.Objects.ObjRead(ctx, &objects.ObjReadReq{ProjectID: form.Project, ObjectID: mr.Name, Digest: mr.Version}); err == nil {
		form.setModel(res.Obj.Val)
	}
}

// renderScorerForm draws the scorer form with the models and calls it
// offers.
func (h *Handler) renderScorerForm(w http.ResponseWriter, r *http.Request, v *viewer, form scorerForm, status int) {
	form.Classes = scorerClasses
	if h.cfg.Chat != nil {
		for _, m := range h.cfg.Chat.Models() {
			form.Models = append(form.Models, m.ID)
		}
	}
	err := h.cfg.Trace.CallsQuery(r.Context(), &trace.CallsQueryReq{ProjectID: form.Project, Filter: trace.CallsFilter{TraceRootsOnly: true},
		SortBy: []trace.SortBy{{Field: "started_at", Direction: "desc"}}, Limit: previewCalls, Columns: []string{"id", "op_name", "display_name", "started_at"}},
		func(c *trace.Call) error {
			name := opShortName(c.OpName)
			if c.DisplayName != nil && *c.DisplayName != "" {
				name = *c.DisplayName
			}
			form.Calls = append(form.Calls, previewCall{ID: c.ID, Label: name + " · " + formatTime(c.StartedAt) + " · " + shortID(c.ID)})
			return nil
		})
	if err != nil {
		h.internalError(w, r, err)
		return
	}
	if form.Call != "" && !slices.ContainsFunc(form.Calls, func(c previewCall) bool { return c.ID == form.Call }) {
		form.Calls = append(form.Calls, previewCall{ID: form.Call, Label: form.Call})
	}
	title := "New scorer"
	if form.Existing {
		title = "Edit scorer " + form.Name
	}
	h.render(w, r, status, "scorer_form", page{Title: title, Viewer: v, Project: form.Project, Body: form})
}

// saveScorer answers POST …/scorers: with action=preview the form again,
// showing what the scorer would do with the chosen call; otherwise the form
// becomes a new version of the scorer object, and the answer goes on to
// the monitor form, where monitors choose their scorers.
func (h *Handler) saveScorer(w http.ResponseWriter, r *http.Request, v *viewer, projectID string) {
	if !h.monitorWriter(w, r, v, projectID) {
		return
	}
	f := r.PostForm
	form := scorerForm{Project: projectID, Name: strings.TrimSpace(f.Get("name")), Existing: f.Get("existing") == "1", Class: f.Get("class"),
		ModelRef: strings.TrimSpace(f.Get("model_ref")), Model: strings.TrimSpace(f.Get("model")), System: f.Get("system"), Prompt: f.Get("prompt"), Schema: strings.TrimSpace(f.Get("schema")),
		Field: strings.TrimSpace(f.Get("field")), Substring: f.Get("substring"), Pattern: f.Get("pattern"),
		MinLength: strings.TrimSpace(f.Get("min_length")), MaxLength: strings.TrimSpace(f.Get("max_length")),
		CaseSensitive: f.Get("case_sensitive") == "1", Call: f.Get("call")}
	ctx := r.Context()
	val, err := h.scorerValue(r, projectID, form)
	switch {
	case err != nil:
	case f.Get("action") == "preview":
		if form.Call == "" {
			err = weft.Errorf(errBadMonitorForm, "call: choose a call to preview on")
			break
		}
		form.Preview, err = h.cfg.Monitors.PreviewScorer(ctx, projectID, form.Name, val, form.Call)
		if err == nil {
			h.renderScorerForm(w, r, v, form, http.StatusOK)
			return
		}
	default:
		if err = h.cfg.Monitors.CheckScorer(ctx, projectID, form.Name, val); err == nil {
			_, err = h.cfg.Objects.ObjCreate(ctx, &objects.ObjCreateReq{Obj: objects.ObjSchemaForInsert{ProjectID: projectID, ObjectID: form.Name, Val: val}})
		}
		if err == nil {
			http.Redirect(w, r, projectPath(projectID, "edit-monitor"), http.StatusSeeOther)
			return
		}
	}
	if httpapi.StatusOf(err) >= 500 {
		h.internalError(w, r, err)
		return
	}
	form.Error = err.Error()
	h.renderScorerForm(w, r, v, form, http.StatusBadRequest)
}

// scorerValue is the value of the scorer the form describes: its latest
// version's value (or a new scorer) with the form's members.
func (h *Handler) scorerValue(r *http.Request, projectID string, form scorerForm) (json.RawMessage, error) {
	if form.Name == "" || len(form.Name) > maxObjectNameLength {
		return nil, weft.Errorf(errBadMonitorForm, "name: a scorer name of 1 to %d characters", maxObjectNameLength)
	}
	if !slices.Contains(scorerClasses, form.Class) {
		return nil, weft.Errorf(errBadMonitorForm, "class: one of %s", strings.Join(scorerClasses, ", "))
	}
	members := newObjectMembers(form.Class, []string{"Scorer", "Object", "BaseModel"}, form.Name)
	if form.Existing {
		latest, err := h.objectMembers(r.Context(), projectID, form.Name, "latest")
		if err != nil {
			return nil, err
		}
		var class string
		if json.Unmarshal(latest["_class_name"], &class); class == form.Class {
			members = latest
		}
	}
	set := func(k string, v any) { members[k], _ = json.Marshal(v) }
	switch form.Class {
	case monitor.ClassJudge:
		if form.ModelRef == "" && form.Model == "" {
			return nil, weft.Errorf(errBadMonitorForm, "model: name the judge model")
		}
		var schema json.RawMessage
		if form.Schema != "" {
			if !json.Valid([]byte(form.Schema)) {
				return nil, weft.Errorf(errBadMonitorForm, "schema: the verdict's JSON Schema must be JSON")
			}
			schema = json.RawMessage(form.Schema)
		}
		params := map[string]any{"temperature": 0, "response_format": monitor.FormatText}
		if schema != nil {
			params["response_format"] = monitor.FormatSchema
		}
		if system := strings.TrimSpace(form.System); system != "" {
			params["messages_template"] = []map[string]string{{"role": "system", "content": system}}
		}
		if form.ModelRef != "" {
			// The model object keeps its model and messages; the monitor
			// checks that it is one of the project's when the scorer is
			// saved or previewed.
			set("model", form.ModelRef)
		} else {
			model := newObjectMembers(monitor.ModelClass, []string{"Model", "Object", "BaseModel"}, form.Model)
			model["llm_model_id"], _ = json.Marshal(form.Model)
			model["default_params"], _ = json.Marshal(params)
			set("model", model)
		}
		set("scoring_prompt", form.Prompt)
		set("response_schema", schema)
	default:
		set("field", form.Field)
	}
	switch form.Class {
	case monitor.ClassContains:
		set("substring", form.Substring)
		set("case_sensitive", form.CaseSensitive)
	case monitor.ClassRegex:
		set("pattern", form.Pattern)
	case monitor.ClassLength:
		for _, bound := range []struct{ key, text string }{{"min_length", form.MinLength}, {"max_length", form.MaxLength}} {
			if bound.text == "" {
				set(bound.key, nil)
				continue
			}
			n, err := strconv.Atoi(bound.text)
			if err != nil || n < 0 {
				return nil, weft.Errorf(errBadMonitorForm, "%s: a whole number of characters", bound.key)
			}
			set(bound.key, n)
		}
	}
	return json.Marshal(members)
}
