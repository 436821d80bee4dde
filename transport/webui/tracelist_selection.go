package webui

import (
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/datasets"
	"github.com/weftlabs/weft/feedback"
	"github.com/weftlabs/weft/trace"
)

// The trace list's selection: a checkbox per row (name "call", value the
// call id) belongs to the form #selection above the results, whose buttons
// post the chosen calls to an action of the project. An action is a POST
// route of the project that reads the calls with selectedCalls; a button of
// another page part joins the form with form="selection" and names its
// route with formaction.

// maxSelectionForm bounds the body of a selection form: the call ids of one
// page and the action's own fields.
const maxSelectionForm = 64 << 10

// selectionQueues bounds the annotation queues the list offers to add to,
// newest first.
const selectionQueues = 100

// selectedCalls reads a selection form after checking that the viewer may
// write to the project: the chosen call ids, 1 to a page of them. A bad
// form is answered and ok is false.
func (h *Handler) selectedCalls(w http.ResponseWriter, r *http.Request, v *viewer, projectID string) (ids []string, ok bool) {
	if err := h.cfg.Authorizer.Authorize(r.Context(), v.principal, projectID, true); err != nil {
		h.refuse(w, r, err)
		return nil, false
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxSelectionForm)
	if err := r.ParseForm(); err != nil {
		h.refuse(w, r, weft.Errorf(errBadView, "the form could not be read"))
		return nil, false
	}
	seen := map[string]bool{}
	for _, id := range r.PostForm["call"] {
		if id == "" || len(id) > maxIDLength || !utf8.ValidString(id) || strings.ContainsRune(id, 0) {
			h.refuse(w, r, weft.Errorf(errBadView, "call: a call id of 1 to %d characters", maxIDLength))
			return nil, false
		}
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 || len(ids) > tracesPageSize {
		h.refuse(w, r, weft.Errorf(errBadView, "call: select from 1 to %d calls", tracesPageSize))
		return nil, false
	}
	return ids, true
}

// selectionToQueue answers POST …/selection/queue: the chosen calls of the
// project become items of the chosen queue (calls it holds already, and ids
// that are no calls of the project, are passed over); the answer goes on
// to the queue.
func (h *Handler) selectionToQueue(w http.ResponseWriter, r *http.Request, v *viewer, projectID string) {
	if h.cfg.Feedback == nil {
		h.refuse(w, r, weft.Errorf(errNoFeedback, "This server has no feedback service."))
		return
	}
	ids, ok := h.selectedCalls(w, r, v, projectID)
	if !ok {
		return
	}
	queueID, ok := h.chosenQueue(w, r)
	if !ok {
		return
	}
	if _, err := h.cfg.Feedback.AddQueueItems(r.Context(), feedback.AddQueueItemsReq{ProjectID: projectID, QueueID: queueID, CallIDs: ids}); err != nil {
		h.refuse(w, r, err)
		return
	}
	http.Redirect(w, r, queuePath(projectID, queueID), http.StatusSeeOther)
}

// selectionToDataset answers POST …/selection/dataset: the chosen calls
// become the rows of a new version of the named dataset, as POST
// /v2/{entity}/{project}/datasets/from_calls makes it (one row per call:
// its inputs' members and its output); the answer goes on to that version.
func (h *Handler) selectionToDataset(w http.ResponseWriter, r *http.Request, v *viewer, projectID string) {
	if h.datasets == nil {
		h.renderError(w, r, http.StatusNotFound, "This server keeps no datasets.")
		return
	}
	ids, ok := h.selectedCalls(w, r, v, projectID)
	if !ok {
		return
	}
	name := strings.TrimSpace(r.PostFormValue("dataset"))
	if name == "" || len(name) > maxDatasetName {
		h.refuse(w, r, weft.Errorf(errBadView, "dataset: a dataset name of 1 to %d characters", maxDatasetName))
		return
	}
	res, err := h.datasets.FromCalls(r.Context(), datasets.FromCallsReq{ProjectID: projectID, Name: name,
		Filter: trace.CallsFilter{CallIDs: ids}, SortBy: []trace.SortBy{{Field: "started_at", Direction: "asc"}}})
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	http.Redirect(w, r, objectVersionPath(projectID, res.ObjectID, res.Digest), http.StatusSeeOther)
}

// maxDatasetName is the longest dataset name the from_calls route takes.
const maxDatasetName = 128

// selectionOffer is what the trace list's selection form offers the viewer:
// nothing to a reader, the queues and a dataset name to a writer of a
// server that keeps them.
type selectionOffer struct {
	Queues   []feedback.Queue
	HasQueue bool // the server keeps annotation queues
	Datasets bool // the server keeps datasets
}

// Any reports whether the form has an action to offer.
func (o *selectionOffer) Any() bool { return o != nil && (o.HasQueue || o.Datasets) }

// selectionOf is the selection form of the list for a viewer who may write
// to the project.
func (h *Handler) selectionOf(r *http.Request, projectID string) (*selectionOffer, error) {
	offer := &selectionOffer{Datasets: h.datasets != nil, HasQueue: h.cfg.Feedback != nil}
	if h.cfg.Feedback != nil {
		limit := selectionQueues
		res, err := h.cfg.Feedback.QueryQueues(r.Context(), feedback.QueryQueuesReq{ProjectID: projectID, Limit: &limit})
		if err != nil {
			return nil, err
		}
		offer.Queues = res.Queues
	}
	return offer, nil
}
