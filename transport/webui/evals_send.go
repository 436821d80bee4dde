package webui

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/feedback"
	"github.com/weftlabs/weft/objects"
	"github.com/weftlabs/weft/objects/ref"
)

// maxSendForm bounds the body of a send form (row digests of one page and
// the runs).
const maxSendForm = 64 << 10

// sendRows reads a send form: the comparison it came from (its query in
// the form) and the chosen row digests, and loads the chosen examples.
func (h *Handler) sendRows(w http.ResponseWriter, r *http.Request, v *viewer, projectID string) (compareParams, []*compareExample, bool) {
	if err := h.cfg.Authorizer.Authorize(r.Context(), v.principal, projectID, true); err != nil {
		h.refuse(w, r, err)
		return compareParams{}, nil, false
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxSendForm)
	if err := r.ParseForm(); err != nil {
		h.refuse(w, r, weft.Errorf(errBadView, "the form could not be read"))
		return compareParams{}, nil, false
	}
	p, err := parseCompareParams(r.PostForm)
	if err != nil {
		h.refuse(w, r, err)
		return p, nil, false
	}
	chosen := map[string]bool{}
	for _, key := range r.PostForm["row"] {
		chosen[key] = true
	}
	if len(chosen) == 0 || len(chosen) > maxComparePage {
		h.refuse(w, r, weft.Errorf(errBadView, "row: choose from 1 to %d rows", maxComparePage))
		return p, nil, false
	}
	cmp, err := h.compareRuns(r.Context(), projectID, p)
	if err != nil {
		h.refuse(w, r, err)
		return p, nil, false
	}
	var rows []*compareExample
	for _, ex := range cmp.Examples {
		if chosen[ex.Key] {
			rows = append(rows, ex)
		}
	}
	if len(rows) != len(chosen) {
		h.refuse(w, r, weft.Errorf(errBadView, "row: %d of the rows chosen are not examples of these runs", len(chosen)-len(rows)))
		return p, nil, false
	}
	return p, rows, true
}

// sendToQueue answers POST …/evaluations/compare/queue: the calls of the
// chosen examples, of every run, become items of the chosen annotation
// queue; the answer goes on to the queue.
func (h *Handler) sendToQueue(w http.ResponseWriter, r *http.Request, v *viewer, projectID string) {
	if h.cfg.Feedback == nil {
		h.renderError(w, r, http.StatusNotFound, "This server keeps no annotation queues.")
		return
	}
	_, rows, ok := h.sendRows(w, r, v, projectID)
	if !ok {
		return
	}
	queueID, ok := h.chosenQueue(w, r)
	if !ok {
		return
	}
	var callIDs []string
	for _, ex := range rows {
		for _, res := range ex.Results {
			if res != nil {
				callIDs = append(callIDs, res.CallID)
			}
		}
	}
	ctx := r.Context()
	if _, err := h.cfg.Feedback.AddQueueItems(ctx, feedback.AddQueueItemsReq{ProjectID: projectID, QueueID: queueID, CallIDs: callIDs}); err != nil {
		h.refuse(w, r, err)
		return
	}
	http.Redirect(w, r, projectPath(projectID, "queues/", pathSegment(queueID)), http.StatusSeeOther)
}

// sendToDataset answers POST …/evaluations/compare/dataset: the chosen
// examples become the rows of a new version of the named dataset (its
// other members kept from its latest version, or a new dataset); the answer
// goes on to the version made.
func (h *Handler) sendToDataset(w http.ResponseWriter, r *http.Request, v *viewer, projectID string) {
	if h.cfg.Objects == nil {
		h.renderError(w, r, http.StatusNotFound, "This server keeps no datasets.")
		return
	}
	_, rows, ok := h.sendRows(w, r, v, projectID)
	if !ok {
		return
	}
	name := strings.TrimSpace(r.PostFormValue("dataset"))
	if name == "" || len(name) > maxObjectNameLength {
		h.refuse(w, r, weft.Errorf(errBadView, "dataset: a dataset name of at most %d characters", maxObjectNameLength))
		return
	}
	ctx := r.Context()
	values, err := h.exampleValues(ctx, projectID, rows)
	if err != nil {
		h.internalError(w, r, err)
		return
	}
	for _, val := range values {
		if len(val) == 0 || string(val) == "null" {
			h.refuse(w, r, weft.Errorf(errBadView, "row: an example of these rows can no longer be read"))
			return
		}
	}
	table, err := h.cfg.Objects.TableCreate(ctx, &objects.TableCreateReq{Table: objects.TableSchemaForInsert{ProjectID: projectID, Rows: values}})
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	rowsRef := ref.Table(projectID, table.Digest)
	rowsRef.Scheme = ref.SchemeWeave
	val, err := h.datasetVersion(ctx, projectID, name, rowsRef.String())
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	res, err := h.cfg.Objects.ObjCreate(ctx, &objects.ObjCreateReq{Obj: objects.ObjSchemaForInsert{ProjectID: projectID, ObjectID: name, Val: val}})
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	http.Redirect(w, r, objectVersionPath(projectID, name, res.Digest), http.StatusSeeOther)
}

// datasetVersion is the value of a new version of dataset name whose rows
// are rowsRef: its latest version with the rows replaced, or a new Dataset
// as the SDKs write one.
func (h *Handler) datasetVersion(ctx context.Context, projectID, name, rowsRef string) (json.RawMessage, error) {
	latest, err := h.cfg.Objects.ObjRead(ctx, &objects.ObjReadReq{ProjectID: projectID, ObjectID: name, Digest: "latest"})
	var members map[string]json.RawMessage
	switch {
	case err == nil:
		if json.Unmarshal(latest.Obj.Val, &members) != nil || members == nil {
			return nil, weft.Errorf(errBadView, "dataset: %s is not a dataset", truncate(name, 80))
		}
	case errors.Is(err, weft.ErrNotFound):
		members = map[string]json.RawMessage{
			"_type": json.RawMessage(`"Dataset"`), "_class_name": json.RawMessage(`"Dataset"`),
			"_bases": json.RawMessage(`["Object","BaseModel"]`),
		}
		members["name"], _ = json.Marshal(name)
	default:
		return nil, err
	}
	members["rows"], _ = json.Marshal(rowsRef)
	return json.Marshal(members)
}

// exampleDataset is the name of the dataset the examples' row refs point
// into, offered as the name of the new version ("" when they name none).
func (h *Handler) exampleDataset(rows []*compareExample) string {
	for _, ex := range rows {
		var s string
		if json.Unmarshal(ex.Example, &s) == nil && ref.IsRef(s) {
			if r, err := ref.Parse(s); err == nil && r.Kind == ref.KindObject {
				return r.Name
			}
		}
	}
	return ""
}

// chosenQueue reads the annotation queue a form sends calls to; a missing
// or overlong id is refused.
func (h *Handler) chosenQueue(w http.ResponseWriter, r *http.Request) (string, bool) {
	queueID := r.PostFormValue("queue")
	if queueID == "" || len(queueID) > maxIDLength {
		h.refuse(w, r, weft.Errorf(errBadView, "queue: choose an annotation queue"))
		return "", false
	}
	return queueID, true
}
