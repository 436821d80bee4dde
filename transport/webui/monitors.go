package webui

import (
	"net/http"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/monitor"
	"github.com/weftlabs/weft/objects/ref"
)

// errNoMonitors: the UI was built without the monitors (HTTP 503).
var errNoMonitors = weft.DefineError(weft.ErrUnavailable, "ServiceUnavailable", "monitors are not served here")

// maxVerdictRows is how many of a monitor's newest verdicts its page lists.
const maxVerdictRows = 100

// monitorsView is the data of the monitors page.
type monitorsView struct {
	Project  string
	Monitors []monitor.Listed
}

// monitorsPage lists the project's monitors: their filters, sampling,
// scorers and whether they run.
func (h *Handler) monitorsPage(w http.ResponseWriter, r *http.Request, v *viewer, projectID string) {
	if h.cfg.Monitors == nil {
		h.refuse(w, r, weft.Errorf(errNoMonitors, "This server runs no monitors."))
		return
	}
	list, err := h.cfg.Monitors.List(r.Context(), projectID)
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	h.render(w, r, http.StatusOK, "monitors", page{Title: "Monitors", Viewer: v, Project: projectID,
		Body: monitorsView{Project: projectID, Monitors: list}})
}

// monitorView is the data of a monitor's page.
type monitorView struct {
	Project string
	Monitor monitor.Listed
	// Scorers are the monitor's scorers, by name, each linked to its form.
	Scorers   []scorerLink
	Stats     *monitor.Stats
	Backfills []monitor.Backfill
	Verdicts  []monitor.Verdict
}

// scorerLink is a scorer a monitor runs.
type scorerLink struct{ Name, Ref string }

// monitorPage shows one monitor: what its verdicts came to (counts, the
// judges' tokens and cost), its backfills with their progress, and its
// newest verdicts, each linked to the call it scored.
func (h *Handler) monitorPage(w http.ResponseWriter, r *http.Request, v *viewer, projectID string) {
	if h.cfg.Monitors == nil {
		h.refuse(w, r, weft.Errorf(errNoMonitors, "This server runs no monitors."))
		return
	}
	ctx, id := r.Context(), r.PathValue("monitorID")
	list, err := h.cfg.Monitors.List(ctx, projectID)
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	view := monitorView{Project: projectID}
	found := false
	for _, m := range list {
		if m.ObjectID == id {
			view.Monitor, found = m, true
		}
	}
	if !found {
		h.refuse(w, r, weft.Errorf(monitor.ErrMonitorNotFound, "This project has no monitor %q.", id))
		return
	}
	for _, s := range view.Monitor.Scorers {
		if sr, err := ref.Parse(s); err == nil {
			view.Scorers = append(view.Scorers, scorerLink{Name: sr.Name, Ref: s})
		}
	}
	if view.Stats, err = h.cfg.Monitors.Stats(ctx, monitor.StatsReq{ProjectID: projectID, MonitorID: id}); err == nil {
		if view.Backfills, err = h.cfg.Monitors.Backfills(ctx, projectID, id); err == nil {
			view.Verdicts, err = h.cfg.Monitors.Verdicts(ctx, projectID, id, maxVerdictRows)
		}
	}
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	h.render(w, r, http.StatusOK, "monitor", page{Title: "Monitor " + id, Viewer: v, Project: projectID, Body: view})
}
