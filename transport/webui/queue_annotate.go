package webui

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/feedback"
	"github.com/weftlabs/weft/objects/ref"
	"github.com/weftlabs/weft/transport/httpapi"
)

// annotationTypePrefix starts the feedback type of an annotation; the spec's
// name follows. It is the Weave spelling, as the SDKs and Weave's UI store it.
const annotationTypePrefix = "wandb.annotation."

// maxAnnotationForm bounds the body of one autosave.
const maxAnnotationForm = maxAnnotationText + 4<<10

// savedAnnotation is the caller's stored annotation of one spec on a call.
type savedAnnotation struct {
	id    string
	value json.RawMessage
}

// specKey identifies a spec ref whichever scheme spells it.
func specKey(specRef string) string {
	r, err := ref.Parse(specRef)
	if err != nil {
		return specRef
	}
	return r.WithScheme(ref.SchemeTrace).String()
}

// savedAnnotations returns the caller's newest annotation per spec (by
// specKey) on the call, whichever ref scheme the rows use.
func (h *Handler) savedAnnotations(ctx context.Context, v *viewer, projectID, callID string) (map[string]savedAnnotation, error) {
	callRef := ref.Call(projectID, callID)
	literal := func(s string) map[string]any { return map[string]any{"$literal": s} }
	expr, err := json.Marshal(map[string]any{"$and": []any{
		map[string]any{"$in": []any{map[string]any{"$getField": "weave_ref"},
			[]any{literal(callRef.WithScheme(ref.SchemeWeave).String()), literal(callRef.WithScheme(ref.SchemeTrace).String())}}},
		map[string]any{"$eq": []any{map[string]any{"$getField": "wb_user_id"}, literal(v.principal.UserID)}},
	}})
	if err != nil {
		return nil, err
	}
	limit := maxFeedbackShown
	res, err := h.cfg.Feedback.Query(ctx, feedback.QueryReq{
		ProjectID: projectID, Query: &feedback.Query{Expr: expr}, Limit: &limit,
		Fields: []string{"id", "feedback_type", "annotation_ref", "payload"},
	})
	if err != nil {
		return nil, err
	}
	saved := map[string]savedAnnotation{}
	for _, row := range res.Result { // oldest first: the newest row wins
		feedbackType, _ := row["feedback_type"].(string)
		specRef := stringField(row["annotation_ref"])
		if specRef == "" || !isAnnotationType(feedbackType) {
			continue
		}
		var payload struct {
			Value json.RawMessage `json:"value"`
		}
		raw, _ := row["payload"].(json.RawMessage)
		if json.Unmarshal(raw, &payload) != nil || payload.Value == nil {
			continue
		}
		saved[specKey(specRef)] = savedAnnotation{id: stringField(row["id"]), value: payload.Value}
	}
	return saved, nil
}

// isAnnotationType reports whether a feedback type is an annotation, in either
// spelling.
func isAnnotationType(feedbackType string) bool {
	return strings.HasPrefix(feedbackType, annotationTypePrefix) || strings.HasPrefix(feedbackType, "trace.annotation.")
}

// saveAnnotation is the autosave of one field of a queue item's form: the
// value becomes feedback of type wandb.annotation.<spec> on the item's call,
// with the spec as annotation_ref and the queue as queue_id, exactly as the
// API stores it. It replaces the caller's earlier value of the same spec
// (an empty value removes it) and marks the item in progress for the caller.
// htmx requests get the field's status line; a plain form post goes back to
// the item.
func (h *Handler) saveAnnotation(w http.ResponseWriter, r *http.Request, v *viewer, projectID string) {
	ids, ok := h.pathIDs(w, r, "queueID", "itemID")
	if !ok {
		return
	}
	ctx := r.Context()
	if err := h.cfg.Authorizer.Authorize(ctx, v.principal, projectID, true); err != nil {
		h.refuse(w, r, err)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxAnnotationForm)
	if err := r.ParseForm(); err != nil {
		h.refuse(w, r, weft.Errorf(errBadAnnotation, "the form could not be read: %v", err))
		return
	}
	view, err := h.queueHeader(ctx, projectID, ids[0])
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	item, err := h.findItem(ctx, projectID, ids[0], ids[1])
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	specRef := r.PostFormValue("spec")
	index := -1
	for i, s := range view.Queue.ScorerRefs {
		if s == specRef {
			index = i
		}
	}
	if index < 0 {
		h.refuse(w, r, weft.Errorf(errBadAnnotation, "spec: %q is not a spec of this queue", truncate(specRef, 80)))
		return
	}
	field, err := h.specField(ctx, view.Queue, index, item)
	if err != nil {
		h.internalError(w, r, err)
		return
	}
	if field.Problem != "" {
		h.saveAnswer(w, r, view, item, http.StatusUnprocessableEntity, saveStatus{Error: field.Problem})
		return
	}
	value, err := field.valueOf(r.PostFormValue("choice"), r.PostFormValue("value"))
	if err != nil {
		h.saveAnswer(w, r, view, item, http.StatusUnprocessableEntity, saveStatus{Error: err.Error()})
		return
	}
	saved, err := h.savedAnnotations(ctx, v, projectID, item.CallID)
	if err != nil {
		h.internalError(w, r, err)
		return
	}
	earlier, hasEarlier := saved[specKey(specRef)]
	var status saveStatus
	switch {
	case value == nil && hasEarlier:
		err = h.purgeFeedback(ctx, projectID, earlier.id)
		status.Cleared = true
	case value == nil:
		status.Cleared = true
	default:
		payload, _ := json.Marshal(map[string]json.RawMessage{"value": value})
		req := feedback.CreateReq{
			ProjectID: projectID, WeaveRef: ref.Call(projectID, item.CallID).WithScheme(ref.SchemeWeave).String(),
			FeedbackType: annotationTypePrefix + field.Name, Payload: payload,
			AnnotationRef: &specRef, QueueID: &view.Queue.ID,
		}
		if hasEarlier {
			_, err = h.cfg.Feedback.Replace(ctx, feedback.ReplaceReq{CreateReq: req, FeedbackID: earlier.id})
		} else {
			_, err = h.cfg.Feedback.Create(ctx, req)
		}
		status.Saved = true
	}
	if err != nil {
		if httpapi.StatusOf(err) < 500 { // the value breaks the spec's schema
			h.saveAnswer(w, r, view, item, http.StatusUnprocessableEntity, saveStatus{Error: err.Error()})
			return
		}
		h.internalError(w, r, err)
		return
	}
	_, err = h.cfg.Feedback.UpdateItemProgress(ctx, feedback.ItemProgressReq{
		ProjectID: projectID, QueueID: view.Queue.ID, ItemID: item.ID, AnnotationState: feedback.StateInProgress,
	})
	if err != nil && !errors.Is(err, feedback.ErrInvalidProgress) { // a record of the caller exists already
		h.internalError(w, r, err)
		return
	}
	h.saveAnswer(w, r, view, item, http.StatusOK, status)
}

// saveAnswer answers an autosave: the status line for htmx, else the item.
func (h *Handler) saveAnswer(w http.ResponseWriter, r *http.Request, view *queueItemView, item *feedback.QueueItem, status int, s saveStatus) {
	if r.Header.Get("HX-Request") != "true" {
		if s.Error != "" {
			h.renderError(w, r, status, s.Error)
			return
		}
		http.Redirect(w, r, itemPath(view.Project, view.Queue.ID, item.ID), http.StatusSeeOther)
		return
	}
	if s.Error != "" {
		h.execute(w, r, status, "queue_item", "save_status", s)
		return
	}
	// The call's feedback pane beside the form shows the value saved: the
	// answer carries the pane again, swapped in by its id.
	d, err := h.detail(r.Context(), view.Project, item.CallID)
	if err != nil {
		h.internalError(w, r, err)
		return
	}
	d.SwapOOB = true
	h.execute(w, r, status, "queue_item", "save_answer", saveAnswer{Status: s, Detail: d})
}

// saveAnswer is the answer of an autosave that stored or cleared a value:
// its status line and the call's feedback pane.
type saveAnswer struct {
	Status saveStatus
	Detail *callDetail
}

// purgeFeedback deletes one feedback row by id.
func (h *Handler) purgeFeedback(ctx context.Context, projectID, id string) error {
	expr, err := json.Marshal(map[string]any{"$eq": []any{map[string]any{"$getField": "id"}, map[string]any{"$literal": id}}})
	if err != nil {
		return err
	}
	_, err = h.cfg.Feedback.Purge(ctx, feedback.PurgeReq{ProjectID: projectID, Query: feedback.Query{Expr: expr}})
	return err
}
