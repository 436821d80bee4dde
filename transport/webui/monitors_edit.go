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
	"github.com/weftlabs/weft/transport/httpapi"
)

// Monitors are made, changed, paused and resumed here as the SDKs do it:
// each save publishes a new version of the Weave Monitor object (the
// members the form does not show kept from the version that runs), which
// the objects store's monitor hook checks with the viewer's authority (a
// judge model the viewer may not use is refused) and the monitors then run.

// maxMonitorForm bounds the body of a monitor or scorer form.
const maxMonitorForm = 128 << 10

// maxFormScorers bounds the scorers a monitor form offers.
const maxFormScorers = 200

// errBadMonitorForm: a monitor or scorer form field that cannot be read
// (HTTP 400).
var errBadMonitorForm = weft.DefineError(weft.ErrInvalid, "InvalidRequest", "invalid monitor form")

// monitorForm is the data of the monitor form.
type monitorForm struct {
	Project string
	// ID is the monitor's object id; Existing when it is published.
	ID          string
	Existing    bool
	Description string
	Ops         string // one op name or ref per line
	Query       string // the calls query as JSON, or ""
	Sampling    string // percent
	Active      bool
	// Scorers are the project's scorers, the chosen ones marked.
	Scorers []scorerChoice
	Error   string
}

// scorerChoice is a scorer version a monitor may run.
type scorerChoice struct {
	Ref, Name, Class string
	Chosen           bool
}

// editMonitorPage serves the monitor form: a new monitor, or with ?id= the
// monitor of that object id as it runs.
func (h *Handler) editMonitorPage(w http.ResponseWriter, r *http.Request, v *viewer, projectID string) {
	if h.cfg.Monitors == nil || h.cfg.Objects == nil {
		h.refuse(w, r, weft.Errorf(errNoMonitors, "This server runs no monitors."))
		return
	}
	form := monitorForm{Project: projectID, Sampling: "100", Active: true}
	if id := r.URL.Query().Get("id"); id != "" {
		mon, err := h.runningMonitor(r.Context(), projectID, id)
		if err != nil {
			h.refuse(w, r, err)
			return
		}
		form = monitorForm{Project: projectID, ID: mon.ObjectID, Existing: true, Description: mon.Description,
			Ops: strings.Join(mon.OpNames, "\n"), Sampling: strconv.FormatFloat(mon.SamplingRate*100, 'g', 10, 64), Active: mon.Active}
		if mon.Query != nil {
			form.Query = string(mon.Query)
		}
		h.renderMonitorForm(w, r, v, form, mon.Scorers, http.StatusOK)
		return
	}
	h.renderMonitorForm(w, r, v, form, nil, http.StatusOK)
}

// renderMonitorForm draws the monitor form with chosen scorers marked.
func (h *Handler) renderMonitorForm(w http.ResponseWriter, r *http.Request, v *viewer, form monitorForm, chosen []string, status int) {
	res, err := h.cfg.Objects.ObjsQuery(r.Context(), &objects.ObjsQueryReq{ProjectID: form.Project,
		Filter: &objects.ObjectVersionFilter{BaseObjectClasses: []string{"Scorer"}, LatestOnly: ptr(true)}, Limit: ptr(maxFormScorers),
		SortBy: []objects.SortBy{{Field: "object_id", Direction: "asc"}}, MetadataOnly: true})
	if err != nil {
		h.internalError(w, r, err)
		return
	}
	for _, o := range res.Objs {
		choice := scorerChoice{Ref: scorerRef(form.Project, o.ObjectID, o.Digest), Name: o.ObjectID}
		if o.LeafObjectClass != nil {
			choice.Class = *o.LeafObjectClass
		}
		choice.Chosen = slices.Contains(chosen, choice.Ref)
		form.Scorers = append(form.Scorers, choice)
	}
	// A chosen version that is no longer the latest stays offered.
	for _, c := range chosen {
		if !slices.ContainsFunc(form.Scorers, func(s scorerChoice) bool { return s.Ref == c }) {
			if sr, err := ref.Parse(c); err == nil {
				form.Scorers = append(form.Scorers, scorerChoice{Ref: c, Name: sr.Name + ":" + shortID(sr.Version), Chosen: true})
			}
		}
	}
	title := "New monitor"
	if form.Existing {
		title = "Edit monitor " + form.ID
	}
	h.render(w, r, status, "monitor_form", page{Title: title, Viewer: v, Project: form.Project, Body: form})
}

// scorerRef is the weave:/// ref of a scorer version, as monitors name it.
func scorerRef(projectID, name, digest string) string {
	return ref.Object(projectID, name, digest).WithScheme(ref.SchemeWeave).String()
}

// runningMonitor returns the monitor of object id as it runs (the version
// published last).
func (h *Handler) runningMonitor(ctx context.Context, projectID, id string) (*monitor.Listed, error) {
	list, err := h.cfg.Monitors.List(ctx, projectID)
	if err != nil {
		return nil, err
	}
	for i := range list {
		if list[i].ObjectID == id {
			return &list[i], nil
		}
	}
	return nil, weft.Errorf(monitor.ErrMonitorNotFound, "This project has no monitor %q.", truncate(id, 80))
}

// saveMonitor answers POST …/monitors: the form becomes a new version of
// the Monitor object it names; the answer goes on to the monitor's page.
// A monitor the hook refuses (a judge model the viewer may not use, a query
// the calls query refuses) is the form again with the reason.
func (h *Handler) saveMonitor(w http.ResponseWriter, r *http.Request, v *viewer, projectID string) {
	if !h.monitorWriter(w, r, v, projectID) {
		return
	}
	f := r.PostForm
	form := monitorForm{Project: projectID, ID: strings.TrimSpace(f.Get("id")), Existing: f.Get("existing") == "1",
		Description: strings.TrimSpace(f.Get("description")), Ops: f.Get("ops"), Query: strings.TrimSpace(f.Get("query")),
		Sampling: strings.TrimSpace(f.Get("sampling")), Active: f.Get("active") == "1"}
	chosen := f["scorer"]
	members, err := h.monitorMembers(r.Context(), projectID, form, chosen)
	if err == nil {
		err = h.publishMonitor(r.Context(), projectID, form.ID, members)
	}
	if err != nil {
		if httpapi.StatusOf(err) >= 500 {
			h.internalError(w, r, err)
			return
		}
		form.Error = err.Error()
		h.renderMonitorForm(w, r, v, form, chosen, http.StatusBadRequest)
		return
	}
	http.Redirect(w, r, projectPath(projectID, "monitors/", pathSegment(form.ID)), http.StatusSeeOther)
}

// monitorMembers is the value of a new version of the monitor the form
// names: the running version's value (or a new Monitor) with the form's
// members.
func (h *Handler) monitorMembers(ctx context.Context, projectID string, form monitorForm, chosen []string) (map[string]json.RawMessage, error) {
	if form.ID == "" || len(form.ID) > maxObjectNameLength {
		return nil, weft.Errorf(errBadMonitorForm, "name: a monitor name of 1 to %d characters", maxObjectNameLength)
	}
	rate, err := strconv.ParseFloat(form.Sampling, 64)
	if err != nil || rate < 0 || rate > 100 {
		return nil, weft.Errorf(errBadMonitorForm, "sampling: a percentage from 0 to 100")
	}
	var ops []string
	for _, op := range strings.Split(form.Ops, "\n") {
		if op = strings.TrimSpace(op); op != "" {
			ops = append(ops, op)
		}
	}
	var query json.RawMessage = json.RawMessage("null")
	if form.Query != "" {
		if !json.Valid([]byte(form.Query)) {
			return nil, weft.Errorf(errBadMonitorForm, `query: a calls query as JSON, like {"$expr": …}`)
		}
		query = json.RawMessage(form.Query)
	}
	if len(chosen) == 0 {
		return nil, weft.Errorf(errBadMonitorForm, "scorers: choose at least one scorer")
	}
	members := map[string]json.RawMessage{}
	if form.Existing {
		mon, err := h.runningMonitor(ctx, projectID, form.ID)
		if err != nil {
			return nil, err
		}
		if members, err = h.objectMembers(ctx, projectID, mon.ObjectID, mon.Digest); err != nil {
			return nil, err
		}
	} else {
		members = newObjectMembers(monitor.Class, []string{"Object", "BaseModel"}, form.ID)
	}
	set := func(k string, v any) { members[k], _ = json.Marshal(v) }
	set("description", nullIfEmpty(form.Description))
	set("sampling_rate", rate/100)
	set("scorers", chosen)
	set("call_filter", map[string]any{"op_names": ops, "query": query})
	set("active", form.Active)
	delete(members, "op_names") // earlier SDKs' top-level filter, now in call_filter
	delete(members, "query")
	return members, nil
}

// setMonitorActive answers POST …/monitors/{monitorID}/active: the monitor
// as it runs, published again with active set from the form ("1" resumes,
// "0" pauses); the answer goes back to its page.
func (h *Handler) setMonitorActive(w http.ResponseWriter, r *http.Request, v *viewer, projectID string) {
	if !h.monitorWriter(w, r, v, projectID) {
		return
	}
	ctx := r.Context()
	mon, err := h.runningMonitor(ctx, projectID, r.PathValue("monitorID"))
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	members, err := h.objectMembers(ctx, projectID, mon.ObjectID, mon.Digest)
	if err == nil {
		members["active"], _ = json.Marshal(r.PostFormValue("active") == "1")
		err = h.publishMonitor(ctx, projectID, mon.ObjectID, members)
	}
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	http.Redirect(w, r, projectPath(projectID, "monitors/", pathSegment(mon.ObjectID)), http.StatusSeeOther)
}

// monitorWriter checks that the viewer may write to the project and reads
// the form; a refusal is answered and false returned.
func (h *Handler) monitorWriter(w http.ResponseWriter, r *http.Request, v *viewer, projectID string) bool {
	if h.cfg.Monitors == nil || h.cfg.Objects == nil {
		h.refuse(w, r, weft.Errorf(errNoMonitors, "This server runs no monitors."))
		return false
	}
	if err := h.cfg.Authorizer.Authorize(r.Context(), v.principal, projectID, true); err != nil {
		h.refuse(w, r, err)
		return false
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxMonitorForm)
	if err := r.ParseForm(); err != nil {
		h.refuse(w, r, weft.Errorf(errBadMonitorForm, "the form could not be read"))
		return false
	}
	return true
}

// objectMembers reads a version of an object whose value is a JSON object.
func (h *Handler) objectMembers(ctx context.Context, projectID, objectID, digest string) (map[string]json.RawMessage, error) {
	res, err := h.cfg.Objects.ObjRead(ctx, &objects.ObjReadReq{ProjectID: projectID, ObjectID: objectID, Digest: digest})
	if err != nil {
		return nil, err
	}
	var members map[string]json.RawMessage
	if json.Unmarshal(res.Obj.Val, &members) != nil || members == nil {
		return nil, weft.Errorf(errBadMonitorForm, "%s is not an object", truncate(objectID, 80))
	}
	return members, nil
}

// newObjectMembers starts the value of a Weave object of class with bases,
// as the SDKs publish it.
func newObjectMembers(class string, bases []string, name string) map[string]json.RawMessage {
	members := map[string]json.RawMessage{}
	members["_type"], _ = json.Marshal(class)
	members["_class_name"], _ = json.Marshal(class)
	members["_bases"], _ = json.Marshal(bases)
	members["name"], _ = json.Marshal(name)
	return members
}

// publishMonitor publishes members as a version of monitor id, with the
// viewer's authority.
func (h *Handler) publishMonitor(ctx context.Context, projectID, id string, members map[string]json.RawMessage) error {
	val, err := json.Marshal(members)
	if err != nil {
		return err
	}
	_, err = h.cfg.Objects.ObjCreate(ctx, &objects.ObjCreateReq{Obj: objects.ObjSchemaForInsert{ProjectID: projectID, ObjectID: id, Val: val}})
	return err
}

func nullIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func ptr[T any](v T) *T { return &v }
