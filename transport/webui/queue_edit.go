package webui

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/feedback"
	"github.com/weftlabs/weft/objects"
	"github.com/weftlabs/weft/objects/ref"
	"github.com/weftlabs/weft/transport/httpapi"
)

// Annotation queues are made and changed here as the API makes them (POST
// and PUT /annotation_queues): a name, a description and the refs of the
// AnnotationSpec objects whose fields the queue's annotators fill in. A
// spec is written (spec_form.go) as the SDKs publish one, and a spec saved
// from a queue's form is put into that queue at its new version.

// maxQueueForm bounds the body of a queue form.
const maxQueueForm = 96 << 10

// maxFormSpecs bounds the specs a queue form offers.
const maxFormSpecs = 200

// annotationSpecClass is the Weave object class of an annotation spec.
const annotationSpecClass = "AnnotationSpec"

// errBadQueueForm: a queue or spec form field that cannot be read (HTTP 400).
var errBadQueueForm = weft.DefineError(weft.ErrInvalid, "InvalidRequest", "invalid annotation queue form")

// queueForm is the data of the queue form.
type queueForm struct {
	Project string
	// ID is the queue's id; "" for a new queue.
	ID          string
	Name        string
	Description string
	// Specs are the project's annotation specs, the queue's marked.
	Specs []specChoice
	Error string
}

// specChoice is a spec version a queue may list.
type specChoice struct {
	Ref, Name, Label string
	Chosen           bool
	// EditURL opens the spec's form, coming back to this queue.
	EditURL string
}

// editQueuePage serves the queue form: a new queue, or with ?id= that
// queue of the project.
func (h *Handler) editQueuePage(w http.ResponseWriter, r *http.Request, v *viewer, projectID string) {
	if h.cfg.Feedback == nil || h.cfg.Objects == nil {
		h.refuse(w, r, weft.Errorf(errNoFeedback, "This server has no feedback service."))
		return
	}
	form := queueForm{Project: projectID}
	var chosen []string
	if id := r.URL.Query().Get("id"); id != "" {
		q, err := h.cfg.Feedback.ReadQueue(r.Context(), projectID, id)
		if err != nil {
			h.refuse(w, r, err)
			return
		}
		form.ID, form.Name, form.Description, chosen = q.ID, q.Name, q.Description, q.ScorerRefs
	}
	h.renderQueueForm(w, r, v, form, chosen, http.StatusOK)
}

// renderQueueForm draws the queue form with the chosen specs marked.
func (h *Handler) renderQueueForm(w http.ResponseWriter, r *http.Request, v *viewer, form queueForm, chosen []string, status int) {
	specs, err := h.latestSpecs(r.Context(), form.Project)
	if err != nil {
		h.internalError(w, r, err)
		return
	}
	editURL := func(name string) string {
		q := url.Values{}
		if name != "" {
			q.Set("name", name)
		}
		if form.ID != "" {
			q.Set("queue", form.ID)
		}
		return projectPath(form.Project, "edit-spec") + queryString(q)
	}
	for _, s := range specs {
		s.Chosen = slices.ContainsFunc(chosen, func(c string) bool { return specKey(c) == specKey(s.Ref) })
		s.EditURL = editURL(s.Name)
		form.Specs = append(form.Specs, s)
	}
	// A chosen version that is no longer the latest (or no longer there)
	// stays offered, so that saving the form keeps it.
	for _, c := range chosen {
		if slices.ContainsFunc(form.Specs, func(s specChoice) bool { return specKey(s.Ref) == specKey(c) }) {
			continue
		}
		label := c
		if sr, err := ref.Parse(c); err == nil {
			label = sr.Name + ":" + shortID(sr.Version)
		}
		form.Specs = append(form.Specs, specChoice{Ref: c, Name: label, Label: label, Chosen: true})
	}
	title := "New annotation queue"
	if form.ID != "" {
		title = "Edit " + form.Name
	}
	h.render(w, r, status, "queue_form", page{Title: title, Viewer: v, Project: form.Project, Body: struct {
		queueForm
		NewSpecURL string
	}{form, editURL("")}})
}

// latestSpecs lists the newest version of each of the project's annotation
// specs, by name.
func (h *Handler) latestSpecs(ctx context.Context, projectID string) ([]specChoice, error) {
	res, err := h.cfg.Objects.ObjsQuery(ctx, &objects.ObjsQueryReq{ProjectID: projectID,
		Filter: &objects.ObjectVersionFilter{BaseObjectClasses: []string{annotationSpecClass}, LatestOnly: ptr(true)}, Limit: ptr(maxFormSpecs),
		SortBy: []objects.SortBy{{Field: "object_id", Direction: "asc"}}})
	if err != nil {
		return nil, err
	}
	specs := make([]specChoice, 0, len(res.Objs))
	for _, o := range res.Objs {
		s := specChoice{Ref: ref.Object(projectID, o.ObjectID, o.Digest).WithScheme(ref.SchemeWeave).String(), Name: o.ObjectID, Label: o.ObjectID}
		var meta specValue
		if json.Unmarshal(o.Val, &meta) == nil && strings.TrimSpace(meta.Name) != "" && meta.Name != o.ObjectID {
			s.Label = meta.Name + " (" + o.ObjectID + ")"
		}
		specs = append(specs, s)
	}
	return specs, nil
}

// saveQueue answers POST …/queues: a new queue, or with the form's id a
// change of that queue, as the API makes them; the answer goes on to the
// queue list. A form the service refuses is the form again with the reason.
func (h *Handler) saveQueue(w http.ResponseWriter, r *http.Request, v *viewer, projectID string) {
	if !h.queueWriter(w, r, v, projectID, maxQueueForm) {
		return
	}
	f := r.PostForm
	form := queueForm{Project: projectID, ID: f.Get("id"), Name: strings.TrimSpace(f.Get("name")), Description: strings.TrimSpace(f.Get("description"))}
	chosen := f["spec"]
	err := h.checkSpecRefs(r.Context(), projectID, chosen)
	if err == nil && (form.Name == "" || len(form.Name) > feedback.MaxQueueNameLength) {
		err = weft.Errorf(errBadQueueForm, "name: 1 to %d characters", feedback.MaxQueueNameLength)
	}
	if err == nil {
		if form.ID == "" {
			var res feedback.CreateQueueRes
			res, err = h.cfg.Feedback.CreateQueue(r.Context(), feedback.CreateQueueReq{ProjectID: projectID,
				Name: form.Name, Description: form.Description, ScorerRefs: chosen})
			form.ID = res.ID
		} else {
			refs := chosen
			if refs == nil {
				refs = []string{} // none chosen: the queue lists no spec (nil would keep its list)
			}
			_, err = h.cfg.Feedback.UpdateQueue(r.Context(), feedback.UpdateQueueReq{ProjectID: projectID, QueueID: form.ID,
				Name: &form.Name, Description: &form.Description, ScorerRefs: refs})
		}
	}
	if err != nil {
		if status := httpapi.StatusOf(err); status >= 500 || status == http.StatusNotFound && f.Get("id") != "" {
			h.refuse(w, r, err) // a queue that is not there has no form to show again
			return
		}
		form.Error = err.Error()
		h.renderQueueForm(w, r, v, form, chosen, http.StatusBadRequest)
		return
	}
	http.Redirect(w, r, projectPath(projectID, "queues")+"?saved="+url.QueryEscape(form.ID), http.StatusSeeOther)
}

// checkSpecRefs requires each ref to name a live AnnotationSpec version of
// this project: a ref of another project is refused as missing.
func (h *Handler) checkSpecRefs(ctx context.Context, projectID string, refs []string) error {
	if len(refs) > maxFormSpecs {
		return weft.Errorf(errBadQueueForm, "specs: at most %d", maxFormSpecs)
	}
	for _, s := range refs {
		r, err := ref.Parse(s)
		if err != nil || r.Kind != ref.KindObject || r.ProjectID() != projectID || r.Name == "" || len(r.Extra) > 0 {
			return weft.Errorf(errBadQueueForm, "spec %q: no annotation spec of this project", truncate(s, 80))
		}
		res, err := h.cfg.Objects.ObjRead(ctx, &objects.ObjReadReq{ProjectID: projectID, ObjectID: r.Name, Digest: r.Version, MetadataOnly: true})
		if err != nil {
			if httpapi.StatusOf(err) == http.StatusNotFound {
				return weft.Errorf(errBadQueueForm, "spec %q: no annotation spec of this project", truncate(s, 80))
			}
			return err
		}
		if res.Obj.BaseObjectClass == nil || *res.Obj.BaseObjectClass != annotationSpecClass {
			return weft.Errorf(errBadQueueForm, "spec %q: %s is not an annotation spec", truncate(s, 80), truncate(r.Name, 80))
		}
	}
	return nil
}

// queueWriter checks that the viewer may write to the project and reads
// the form, bounded by limit; a refusal is answered and false returned.
func (h *Handler) queueWriter(w http.ResponseWriter, r *http.Request, v *viewer, projectID string, limit int64) bool {
	if h.cfg.Feedback == nil || h.cfg.Objects == nil {
		h.refuse(w, r, weft.Errorf(errNoFeedback, "This server has no feedback service."))
		return false
	}
	if err := h.cfg.Authorizer.Authorize(r.Context(), v.principal, projectID, true); err != nil {
		h.refuse(w, r, err)
		return false
	}
	r.Body = http.MaxBytesReader(w, r.Body, limit)
	if err := r.ParseForm(); err != nil {
		h.refuse(w, r, weft.Errorf(errBadQueueForm, "the form could not be read"))
		return false
	}
	return true
}

// queryString is "?"+q encoded, or "" when q is empty.
func queryString(q url.Values) string {
	if len(q) == 0 {
		return ""
	}
	return "?" + q.Encode()
}
