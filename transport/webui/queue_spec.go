package webui

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/feedback"
	"github.com/weftlabs/weft/objects"
	"github.com/weftlabs/weft/objects/ref"
	"github.com/weftlabs/weft/transport/httpapi"
)

// An annotation spec's form writes the AnnotationSpec object the SDKs
// publish (name, description, field_schema, unique_among_creators,
// op_scope), its field_schema built from a kind of field: a choice among
// labels, yes or no, a number within bounds, text, or any JSON schema typed
// out. Saving publishes a new version; from a queue's form, the queue then
// lists the new version in place of the old.

// spec field kinds of the form.
const (
	specKindChoice  = "choice"
	specKindBoolean = "boolean"
	specKindNumber  = "number"
	specKindText    = "text"
	specKindSchema  = "schema"
)

// specKinds are the field kinds the form offers, in order.
var specKinds = []struct{ Value, Label string }{
	{specKindChoice, "Choice of labels"}, {specKindBoolean, "Yes or no"}, {specKindNumber, "Number"},
	{specKindText, "Text"}, {specKindSchema, "JSON schema"},
}

// specForm is the data of the annotation spec form.
type specForm struct {
	Project string
	// ID is the spec's object id; Existing when it is published.
	ID          string
	Existing    bool
	Label       string // the spec's name member, for people
	Description string
	Kind        string
	Kinds       []struct{ Value, Label string }
	Options     string // a choice's labels, one a line
	Min, Max    string
	Integer     bool
	MaxLength   string
	Schema      string // any JSON schema, as JSON
	// Queue is the queue whose form this one came from and goes back to.
	Queue string
	Error string
}

// editSpecPage serves the spec form: a new spec, or with ?name= the newest
// version of that spec of the project; ?queue= names the queue form to go
// back to.
func (h *Handler) editSpecPage(w http.ResponseWriter, r *http.Request, v *viewer, projectID string) {
	if h.cfg.Feedback == nil || h.cfg.Objects == nil {
		h.refuse(w, r, weft.Errorf(errNoFeedback, "This server has no feedback service."))
		return
	}
	q := r.URL.Query()
	form := specForm{Project: projectID, Kind: specKindChoice, Queue: q.Get("queue")}
	if form.Queue != "" {
		if _, err := h.cfg.Feedback.ReadQueue(r.Context(), projectID, form.Queue); err != nil {
			h.refuse(w, r, err)
			return
		}
	}
	if name := q.Get("name"); name != "" {
		res, err := h.cfg.Objects.ObjRead(r.Context(), &objects.ObjReadReq{ProjectID: projectID, ObjectID: name, Digest: "latest"})
		if err != nil {
			h.refuse(w, r, err)
			return
		}
		if res.Obj.BaseObjectClass == nil || *res.Obj.BaseObjectClass != annotationSpecClass {
			h.refuse(w, r, weft.Errorf(errNoCall, "This project has no annotation spec %q.", truncate(name, 80)))
			return
		}
		form.ID, form.Existing = name, true
		form.fill(res.Obj.Val)
	}
	h.renderSpecForm(w, r, v, form, http.StatusOK)
}

// fill sets the form's fields from a stored spec value.
func (f *specForm) fill(val json.RawMessage) {
	var meta specValue
	_ = json.Unmarshal(val, &meta)
	f.Label, f.Description = meta.Name, meta.Description
	dec := json.NewDecoder(bytes.NewReader(val))
	dec.UseNumber()
	var doc any
	_ = dec.Decode(&doc)
	schema, ok := feedback.SpecSchema(doc)
	s, isMap := schema.(map[string]any)
	if !ok || !isMap {
		f.Kind, f.Schema = specKindSchema, "{}"
		if ok {
			raw, _ := json.Marshal(schema)
			f.Schema = string(raw)
		}
		return
	}
	raw, _ := json.MarshalIndent(schema, "", "  ")
	f.Schema = string(raw)
	known := func(keys ...string) bool { // the schema holds nothing the simple kind would drop
		for k := range s {
			if !slices.Contains(keys, k) {
				return false
			}
		}
		return true
	}
	switch enum, _ := s["enum"].([]any); {
	case len(enum) > 0 && known("type", "enum") && allStrings(enum):
		f.Kind = specKindChoice
		for _, e := range enum {
			f.Options += e.(string) + "\n"
		}
	case s["type"] == "boolean" && known("type"):
		f.Kind = specKindBoolean
	case (s["type"] == "number" || s["type"] == "integer") && known("type", "minimum", "maximum"):
		f.Kind, f.Integer = specKindNumber, s["type"] == "integer"
		f.Min, f.Max = numberText(s["minimum"]), numberText(s["maximum"])
	case s["type"] == "string" && known("type", "maxLength"):
		f.Kind, f.MaxLength = specKindText, numberText(s["maxLength"])
	default:
		f.Kind = specKindSchema
	}
}

func allStrings(values []any) bool {
	for _, v := range values {
		if _, ok := v.(string); !ok {
			return false
		}
	}
	return true
}

// renderSpecForm draws the spec form.
func (h *Handler) renderSpecForm(w http.ResponseWriter, r *http.Request, v *viewer, form specForm, status int) {
	form.Kinds = specKinds
	title := "New annotation spec"
	if form.Existing {
		title = "Edit annotation spec " + form.ID
	}
	h.render(w, r, status, "spec_form", page{Title: title, Viewer: v, Project: form.Project, Body: form})
}

// saveSpec answers POST …/specs: the form becomes a new version of the
// AnnotationSpec it names. With a queue, that queue lists the new version
// (in place of an earlier one of the spec, else added) and the answer goes
// back to its form; else to a new queue's form.
func (h *Handler) saveSpec(w http.ResponseWriter, r *http.Request, v *viewer, projectID string) {
	if !h.queueWriter(w, r, v, projectID, maxQueueForm) {
		return
	}
	p := r.PostForm
	form := specForm{Project: projectID, ID: strings.TrimSpace(p.Get("id")), Existing: p.Get("existing") == "1",
		Label: strings.TrimSpace(p.Get("label")), Description: strings.TrimSpace(p.Get("description")), Kind: p.Get("kind"),
		Options: p.Get("options"), Min: strings.TrimSpace(p.Get("min")), Max: strings.TrimSpace(p.Get("max")),
		Integer: p.Get("integer") == "1", MaxLength: strings.TrimSpace(p.Get("max_length")), Schema: strings.TrimSpace(p.Get("schema")),
		Queue: p.Get("queue")}
	ctx := r.Context()
	var queue feedback.Queue
	if form.Queue != "" {
		var err error
		if queue, err = h.cfg.Feedback.ReadQueue(ctx, projectID, form.Queue); err != nil {
			h.refuse(w, r, err)
			return
		}
	}
	members, err := h.specMembers(r, projectID, form)
	var digest string
	if err == nil {
		var val []byte
		val, err = json.Marshal(members)
		if err == nil {
			var res *objects.ObjCreateRes
			res, err = h.cfg.Objects.ObjCreate(ctx, &objects.ObjCreateReq{Obj: objects.ObjSchemaForInsert{ProjectID: projectID, ObjectID: form.ID,
				Val: val, BuiltinObjectClass: ptr(annotationSpecClass)}})
			if res != nil {
				digest = res.Digest
			}
		}
	}
	if err != nil {
		if httpapi.StatusOf(err) >= 500 {
			h.internalError(w, r, err)
			return
		}
		form.Error = err.Error()
		h.renderSpecForm(w, r, v, form, http.StatusBadRequest)
		return
	}
	back := projectPath(projectID, "edit-queue")
	if form.Queue != "" {
		newRef := ref.Object(projectID, form.ID, digest).WithScheme(ref.SchemeWeave).String()
		refs := slices.Clone(queue.ScorerRefs)
		replaced := false
		for i, s := range refs {
			if sr, err := ref.Parse(s); err == nil && sr.Kind == ref.KindObject && sr.ProjectID() == projectID && sr.Name == form.ID {
				refs[i], replaced = newRef, true
			}
		}
		if !replaced {
			refs = append(refs, newRef)
		}
		if _, err := h.cfg.Feedback.UpdateQueue(ctx, feedback.UpdateQueueReq{ProjectID: projectID, QueueID: queue.ID, ScorerRefs: refs}); err != nil {
			h.refuse(w, r, err)
			return
		}
		back += "?id=" + url.QueryEscape(queue.ID)
	}
	http.Redirect(w, r, back, http.StatusSeeOther)
}

// specMembers is the value of a new version of the spec the form names:
// the published version's value (members the form does not show kept) or
// a new AnnotationSpec, with the form's members.
func (h *Handler) specMembers(r *http.Request, projectID string, form specForm) (map[string]json.RawMessage, error) {
	if form.ID == "" || len(form.ID) > maxObjectNameLength || strings.ContainsAny(form.ID, "/:") {
		return nil, weft.Errorf(errBadQueueForm, "id: 1 to %d characters, without / or :", maxObjectNameLength)
	}
	schema, err := form.fieldSchema()
	if err != nil {
		return nil, err
	}
	var members map[string]json.RawMessage
	if form.Existing {
		res, err := h.cfg.Objects.ObjRead(r.Context(), &objects.ObjReadReq{ProjectID: projectID, ObjectID: form.ID, Digest: "latest"})
		if err != nil {
			return nil, err
		}
		if json.Unmarshal(res.Obj.Val, &members) != nil || members == nil {
			return nil, weft.Errorf(errBadQueueForm, "%s is not an annotation spec", truncate(form.ID, 80))
		}
	} else {
		members = newObjectMembers(annotationSpecClass, []string{"Object", "BaseModel"}, form.ID)
		members["unique_among_creators"] = json.RawMessage("false")
		members["op_scope"] = json.RawMessage("null")
	}
	label := form.Label
	if label == "" {
		label = form.ID
	}
	members["name"], _ = json.Marshal(label)
	members["description"], _ = json.Marshal(nullIfEmpty(form.Description))
	members["field_schema"] = schema
	delete(members, "json_schema") // an earlier spelling of field_schema
	return members, nil
}

// maxSpecOptions bounds the labels of a choice.
const maxSpecOptions = 50

// fieldSchema is the JSON schema the form's kind of field describes.
func (f *specForm) fieldSchema() (json.RawMessage, error) {
	schema := map[string]any{}
	switch f.Kind {
	case specKindChoice:
		var options []string
		for _, o := range strings.Split(f.Options, "\n") {
			if o = strings.TrimSpace(o); o != "" && !slices.Contains(options, o) {
				options = append(options, o)
			}
		}
		if len(options) < 2 || len(options) > maxSpecOptions {
			return nil, weft.Errorf(errBadQueueForm, "labels: 2 to %d different labels, one a line", maxSpecOptions)
		}
		schema["type"], schema["enum"] = "string", options
	case specKindBoolean:
		schema["type"] = "boolean"
	case specKindNumber:
		schema["type"] = "number"
		if f.Integer {
			schema["type"] = "integer"
		}
		for key, text := range map[string]string{"minimum": f.Min, "maximum": f.Max} {
			if text == "" {
				continue
			}
			n, err := strconv.ParseFloat(text, 64)
			if err != nil || !json.Valid([]byte(text)) {
				return nil, weft.Errorf(errBadQueueForm, "%s: %q is not a number", key, truncate(text, 40))
			}
			schema[key] = json.Number(strconv.FormatFloat(n, 'g', -1, 64))
		}
		if lo, hi := schema["minimum"], schema["maximum"]; lo != nil && hi != nil {
			if l, _ := lo.(json.Number).Float64(); l > mustFloat(hi) {
				return nil, weft.Errorf(errBadQueueForm, "minimum %s is above maximum %s", f.Min, f.Max)
			}
		}
	case specKindText:
		schema["type"] = "string"
		if f.MaxLength != "" {
			n, err := strconv.Atoi(f.MaxLength)
			if err != nil || n < 1 || n > maxAnnotationText {
				return nil, weft.Errorf(errBadQueueForm, "maximum length: a whole number from 1 to %d", maxAnnotationText)
			}
			schema["maxLength"] = n
		}
	case specKindSchema:
		var doc map[string]any
		if json.Unmarshal([]byte(f.Schema), &doc) != nil || doc == nil {
			return nil, weft.Errorf(errBadQueueForm, `schema: a JSON schema object, like {"type": "string"}`)
		}
		if err := feedback.CheckSpecSchema([]byte(f.Schema)); err != nil {
			return nil, weft.Errorf(errBadQueueForm, "schema: %v", err)
		}
		return json.RawMessage(f.Schema), nil
	default:
		return nil, weft.Errorf(errBadQueueForm, "kind: one of choice, boolean, number, text, schema")
	}
	return json.Marshal(schema)
}

func mustFloat(n any) float64 {
	f, _ := n.(json.Number).Float64()
	return f
}
