package webui

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/feedback"
	"github.com/weftlabs/weft/objects/ref"
)

// quickReactions are the reactions offered as one-click buttons.
var quickReactions = []string{"👍", "👎", "🎉", "🤔", "❤️"}

// Feedback types the page writes, Weave's spelling (the one its SDKs and UI
// read).
const (
	reactionType = "wandb.reaction.1"
	noteType     = "wandb.note.1"
)

// maxFeedbackForm bounds the body of a feedback form.
const maxFeedbackForm = 16 << 10

// forViewer fills in what the detail pane shows only to its viewer: the
// CSRF token of the feedback forms, and whether they are offered at all
// (the API's authorizer, asked for write access).
func (h *Handler) forViewer(r *http.Request, v *viewer, projectID string, d *callDetail) {
	d.CSRF = v.CSRF()
	d.CanWrite = h.cfg.Feedback != nil && h.cfg.Authorizer.Authorize(r.Context(), v.principal, projectID, true) == nil
}

// addFeedback answers POST …/calls/{callID}/feedback: a reaction (form field
// "emoji") or a note ("note") on the call, stored through the feedback
// service with the API's write authorization. An htmx request gets the
// call's feedback section again; a plain form post goes back to the call.
func (h *Handler) addFeedback(w http.ResponseWriter, r *http.Request, v *viewer, projectID string) {
	if h.cfg.Feedback == nil {
		h.renderError(w, r, http.StatusNotFound, "This server keeps no feedback.")
		return
	}
	if err := h.cfg.Authorizer.Authorize(r.Context(), v.principal, projectID, true); err != nil {
		h.refuse(w, r, err)
		return
	}
	callID := r.PathValue("callID")
	if len(callID) > maxIDLength {
		h.refuse(w, r, weft.Errorf(errBadView, "call id: at most %d characters", maxIDLength))
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxFeedbackForm)
	if err := r.ParseForm(); err != nil {
		h.refuse(w, r, weft.Errorf(errBadView, "the form could not be read"))
		return
	}
	emoji, note := strings.TrimSpace(r.PostFormValue("emoji")), strings.TrimSpace(r.PostFormValue("note"))
	var feedbackType string
	var payload any
	switch {
	case emoji != "" && note == "":
		feedbackType, payload = reactionType, map[string]string{"emoji": emoji}
	case note != "" && emoji == "":
		feedbackType, payload = noteType, map[string]string{"note": note}
	default:
		h.refuse(w, r, weft.Errorf(errBadView, "send either a reaction (emoji) or a note"))
		return
	}
	// The call must be one this project shows; feedback on a call that is
	// not there would be invisible.
	call, err := h.readCall(r.Context(), projectID, callID)
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	body, _ := json.Marshal(payload)
	_, err = h.cfg.Feedback.Create(r.Context(), feedback.CreateReq{
		ProjectID: projectID, WeaveRef: ref.Call(projectID, callID).WithScheme(ref.SchemeWeave).String(),
		FeedbackType: feedbackType, Payload: body,
	})
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	if r.Header.Get("HX-Request") != "true" {
		http.Redirect(w, r, projectPath(projectID, "traces/", pathSegment(call.TraceID))+"?call="+url.QueryEscape(callID), http.StatusSeeOther)
		return
	}
	d, err := h.detail(r.Context(), projectID, callID)
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	h.forViewer(r, v, projectID, d)
	h.renderFragment(w, r, "trace", "feedback_section", d)
}

// annotationName is the name of an annotation feedback type
// ("wandb.annotation.<name>" or "trace.annotation.<name>").
func annotationName(feedbackType string) (string, bool) {
	for _, prefix := range []string{"wandb.annotation.", "trace.annotation."} {
		if name, ok := strings.CutPrefix(feedbackType, prefix); ok && name != "" {
			return name, true
		}
	}
	return "", false
}
