package webui

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/feedback"
	"github.com/weftlabs/weft/objects/ref"
)

// maxQueuesListed bounds the queue list page.
const maxQueuesListed = 200

// unfinishedStates are the item states a queue resumes at.
var unfinishedStates = []string{feedback.StateUnstarted, feedback.StateInProgress}

// errNoFeedback: the UI was built without a feedback service (HTTP 503).
var errNoFeedback = weft.DefineError(weft.ErrUnavailable, "ServiceUnavailable", "annotation queues are not served here")

// queueRow is one queue on the list page.
type queueRow struct {
	Queue  feedback.Queue
	Done   int // items with a completed or skipped record
	Total  int
	Fields int // specs the queue annotates
}

// queuesView is the data of the queue list page.
type queuesView struct {
	Project string
	Queues  []queueRow
}

// queueItemView is the data of the page that annotates one queue item; with
// Item nil it is the page of a queue with nothing left to do.
type queueItemView struct {
	Project  string
	Queue    feedback.Queue
	Done     int
	Total    int
	Item     *feedback.QueueItem
	Position int64
	// PrevURL and NextURL link the neighbouring items in queue order.
	PrevURL, NextURL string
	Fields           []*annotationField
	// Detail is the call's detail pane, rendered by the trace page's
	// call_detail template: the same rendering as the trace view.
	Detail template.HTML
	// ProgressURL takes the "done" and "skip" buttons.
	ProgressURL string
}

// queuePath is the path of a page of one queue, rest appended.
func queuePath(projectID, queueID string, rest ...string) string {
	return projectPath(projectID, append([]string{"queues/", pathSegment(queueID)}, rest...)...)
}

// itemPath is the page of one item of a queue.
func itemPath(projectID, queueID, itemID string, rest ...string) string {
	return queuePath(projectID, queueID, append([]string{"/items/", pathSegment(itemID)}, rest...)...)
}

// queuesPage lists the project's annotation queues with their progress.
func (h *Handler) queuesPage(w http.ResponseWriter, r *http.Request, v *viewer, projectID string) {
	if h.cfg.Feedback == nil {
		h.refuse(w, r, weft.Errorf(errNoFeedback, "This server has no feedback service."))
		return
	}
	ctx := r.Context()
	limit := maxQueuesListed
	res, err := h.cfg.Feedback.QueryQueues(ctx, feedback.QueryQueuesReq{ProjectID: projectID, Limit: &limit})
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	view := queuesView{Project: projectID}
	ids := make([]string, len(res.Queues))
	for i, q := range res.Queues {
		ids[i] = q.ID
	}
	stats, err := h.cfg.Feedback.QueueStats(ctx, feedback.QueueStatsReq{ProjectID: projectID, QueueIDs: ids})
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	for i, q := range res.Queues {
		row := queueRow{Queue: q, Fields: len(q.ScorerRefs)}
		if i < len(stats.Stats) {
			row.Done, row.Total = stats.Stats[i].CompletedItems, stats.Stats[i].TotalItems
		}
		view.Queues = append(view.Queues, row)
	}
	h.render(w, r, http.StatusOK, "queue_list", page{Title: "Annotation queues", Viewer: v, Project: projectID, Body: view})
}

// queueResume opens a queue at its first unfinished item, in queue order;
// a queue with none left shows that it is done.
func (h *Handler) queueResume(w http.ResponseWriter, r *http.Request, v *viewer, projectID string) {
	queueID, ok := h.pathIDs(w, r, "queueID")
	if !ok {
		return
	}
	ctx := r.Context()
	view, err := h.queueHeader(ctx, projectID, queueID[0])
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	one := 1
	res, err := h.cfg.Feedback.QueryQueueItems(ctx, feedback.QueryQueueItemsReq{
		ProjectID: projectID, QueueID: queueID[0], Limit: &one,
		Filter: &feedback.QueueItemsFilter{AnnotationStates: unfinishedStates},
	})
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	if len(res.Items) > 0 {
		http.Redirect(w, r, itemPath(projectID, queueID[0], res.Items[0].ID), http.StatusSeeOther)
		return
	}
	h.render(w, r, http.StatusOK, "queue_item", page{Title: view.Queue.Name, Viewer: v, Project: projectID, Body: view})
}

// queueItemPage shows one item: the queue's specs as a form holding the
// caller's saved values, and the item's call.
func (h *Handler) queueItemPage(w http.ResponseWriter, r *http.Request, v *viewer, projectID string) {
	ids, ok := h.pathIDs(w, r, "queueID", "itemID")
	if !ok {
		return
	}
	view, err := h.queueItem(r.Context(), v, projectID, ids[0], ids[1])
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	h.render(w, r, http.StatusOK, "queue_item", page{Title: view.Queue.Name, Viewer: v, Project: projectID, Body: view})
}

// pathIDs reads the named path values, each a bounded id of UTF-8 text
// without NUL (which no database column can hold); a bad one is answered
// with 400 and ok false.
func (h *Handler) pathIDs(w http.ResponseWriter, r *http.Request, names ...string) (ids []string, ok bool) {
	for _, name := range names {
		id := r.PathValue(name)
		if id == "" || len(id) > maxIDLength || !utf8.ValidString(id) || strings.ContainsRune(id, 0) {
			h.refuse(w, r, weft.Errorf(errBadView, "%s: 1 to %d characters of text", name, maxIDLength))
			return nil, false
		}
		ids = append(ids, id)
	}
	return ids, true
}

// queueHeader reads a queue and its progress counts.
func (h *Handler) queueHeader(ctx context.Context, projectID, queueID string) (*queueItemView, error) {
	if h.cfg.Feedback == nil {
		return nil, weft.Errorf(errNoFeedback, "This server has no feedback service.")
	}
	q, err := h.cfg.Feedback.ReadQueue(ctx, projectID, queueID)
	if err != nil {
		return nil, err
	}
	stats, err := h.cfg.Feedback.QueueStats(ctx, feedback.QueueStatsReq{ProjectID: projectID, QueueIDs: []string{queueID}})
	if err != nil {
		return nil, err
	}
	view := &queueItemView{Project: projectID, Queue: q}
	if len(stats.Stats) == 1 {
		view.Done, view.Total = stats.Stats[0].CompletedItems, stats.Stats[0].TotalItems
	}
	return view, nil
}

// findItem reads one live item of a queue with its position, or errNoCall.
func (h *Handler) findItem(ctx context.Context, projectID, queueID, itemID string) (*feedback.QueueItem, error) {
	one := 1
	res, err := h.cfg.Feedback.QueryQueueItems(ctx, feedback.QueryQueueItemsReq{
		ProjectID: projectID, QueueID: queueID, Limit: &one, IncludePosition: true,
		Filter: &feedback.QueueItemsFilter{ID: &itemID},
	})
	if err != nil {
		return nil, err
	}
	if len(res.Items) == 0 {
		return nil, weft.Errorf(errNoCall, "There is no item %q in this queue.", truncate(itemID, 40))
	}
	return &res.Items[0], nil
}

// queueItem gathers the item page: queue, progress, neighbours, form and call.
func (h *Handler) queueItem(ctx context.Context, v *viewer, projectID, queueID, itemID string) (*queueItemView, error) {
	view, err := h.queueHeader(ctx, projectID, queueID)
	if err != nil {
		return nil, err
	}
	item, err := h.findItem(ctx, projectID, queueID, itemID)
	if err != nil {
		return nil, err
	}
	view.Item, view.ProgressURL = item, itemPath(projectID, queueID, itemID, "/progress")
	if item.PositionInQueue != nil {
		view.Position = *item.PositionInQueue
		// The items before and after, in the same (default) order.
		offset, limit := int(max(view.Position-2, 0)), 3
		if view.Position == 1 {
			limit = 2
		}
		around, err := h.cfg.Feedback.QueryQueueItems(ctx, feedback.QueryQueueItemsReq{
			ProjectID: projectID, QueueID: queueID, Offset: &offset, Limit: &limit,
		})
		if err != nil {
			return nil, err
		}
		for i, it := range around.Items {
			if it.ID != itemID {
				continue
			}
			if i > 0 {
				view.PrevURL = itemPath(projectID, queueID, around.Items[i-1].ID)
			}
			if i+1 < len(around.Items) {
				view.NextURL = itemPath(projectID, queueID, around.Items[i+1].ID)
			}
		}
	}
	if view.Fields, err = h.annotationFields(ctx, v, view.Queue, item); err != nil {
		return nil, err
	}
	for _, f := range view.Fields {
		f.CSRF = v.CSRF()
	}
	detail, err := h.detail(ctx, projectID, item.CallID)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := h.pages.byName["trace"].ExecuteTemplate(&buf, "call_detail", detail); err != nil {
		return nil, fmt.Errorf("webui: render the call of a queue item: %w", err)
	}
	view.Detail = template.HTML(buf.String()) //nolint:gosec // html/template's own escaped output
	return view, nil
}

// annotationFields builds the queue's form for one item, with the values the
// caller saved on its call.
func (h *Handler) annotationFields(ctx context.Context, v *viewer, q feedback.Queue, item *feedback.QueueItem) ([]*annotationField, error) {
	fields := make([]*annotationField, 0, len(q.ScorerRefs))
	for i := range q.ScorerRefs {
		f, err := h.specField(ctx, q, i, item)
		if err != nil {
			return nil, err
		}
		fields = append(fields, f)
	}
	saved, err := h.savedAnnotations(ctx, v, q.ProjectID, item.CallID)
	if err != nil {
		return nil, err
	}
	for _, f := range fields {
		if row, ok := saved[specKey(f.SpecRef)]; ok && f.Problem == "" {
			f.showSaved(row.value)
		}
	}
	return fields, nil
}

// specField reads the queue's index-th spec and builds its field for item.
// A spec that cannot be read becomes a field with a Problem.
func (h *Handler) specField(ctx context.Context, q feedback.Queue, index int, item *feedback.QueueItem) (*annotationField, error) {
	specRef := q.ScorerRefs[index]
	var val []byte
	r, err := ref.Parse(specRef)
	switch {
	case h.cfg.AnnotationSpecs == nil:
		val = []byte("{}") // specs cannot be read: every value is typed as JSON
	case err == nil && r.Kind == ref.KindObject && r.ProjectID() == q.ProjectID:
		got, err := h.cfg.AnnotationSpecs.ReadAnnotationSpec(ctx, q.ProjectID, r.Name, r.Version)
		if err != nil && !errors.Is(err, weft.ErrNotFound) {
			return nil, err
		}
		val = got
	}
	f := fieldOfSpec(specRef, val)
	f.ID = "field-" + strconv.Itoa(index+1)
	f.SaveURL = itemPath(q.ProjectID, q.ID, item.ID, "/annotation")
	return f, nil
}

// queueProgress records the caller's "done" or "skip" on an item and goes on
// to the first unfinished item of the queue.
func (h *Handler) queueProgress(w http.ResponseWriter, r *http.Request, v *viewer, projectID string) {
	ids, ok := h.pathIDs(w, r, "queueID", "itemID")
	if !ok {
		return
	}
	if err := h.cfg.Authorizer.Authorize(r.Context(), v.principal, projectID, true); err != nil {
		h.refuse(w, r, err)
		return
	}
	if h.cfg.Feedback == nil {
		h.refuse(w, r, weft.Errorf(errNoFeedback, "This server has no feedback service."))
		return
	}
	state := r.PostFormValue("state")
	if state != feedback.StateCompleted && state != feedback.StateSkipped {
		h.refuse(w, r, weft.Errorf(errBadView, "state: completed or skipped"))
		return
	}
	_, err := h.cfg.Feedback.UpdateItemProgress(r.Context(), feedback.ItemProgressReq{
		ProjectID: projectID, QueueID: ids[0], ItemID: ids[1], AnnotationState: state,
	})
	// The caller finished this item before: moving on is all that is asked.
	if err != nil && !(errors.Is(err, feedback.ErrInvalidProgress) && h.itemExists(r.Context(), projectID, ids[0], ids[1])) {
		h.refuse(w, r, err)
		return
	}
	http.Redirect(w, r, queuePath(projectID, ids[0]), http.StatusSeeOther)
}

// itemExists tells an item of the queue (whose progress the caller already
// finished) from an unknown one.
func (h *Handler) itemExists(ctx context.Context, projectID, queueID, itemID string) bool {
	_, err := h.findItem(ctx, projectID, queueID, itemID)
	return err == nil
}

// saveStatus is the fragment that answers an autosave.
type saveStatus struct {
	Saved   bool
	Cleared bool
	Error   string
}
