package webui

import (
	"math"
	"net/http"
	"time"

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
	// Range names the range the charts show (Ranges offers the others):
	// the verdicts queued From … To per interval, and their cost.
	Range    string
	Ranges   []string
	From, To time.Time
	Charts   []*chart
}

// scorerLink is a scorer a monitor runs.
type scorerLink struct{ Name, Ref string }

// monitorPage shows one monitor: what its verdicts came to (counts, the
// judges' tokens and cost), the same per interval of a range as charts,
// its backfills with their progress, and its newest verdicts, each linked
// to the call it scored.
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
	rng, err := chartRangeOf(r.URL.Query().Get("range"), h.cfg.Now())
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	view := monitorView{Project: projectID, Range: rng.Name, Ranges: chartRangeNames(), From: rng.From, To: rng.To}
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
	var series *monitor.Stats
	if view.Stats, err = h.cfg.Monitors.Stats(ctx, monitor.StatsReq{ProjectID: projectID, MonitorID: id}); err == nil {
		series, err = h.cfg.Monitors.Stats(ctx, monitor.StatsReq{ProjectID: projectID, MonitorID: id, From: &rng.From, Before: &rng.To,
			Granularity: int64(rng.Width / time.Second)})
	}
	if err == nil {
		if view.Backfills, err = h.cfg.Monitors.Backfills(ctx, projectID, id); err == nil {
			view.Verdicts, err = h.cfg.Monitors.Verdicts(ctx, projectID, id, maxVerdictRows)
		}
	}
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	view.Charts = verdictCharts(view, series.Intervals)
	h.render(w, r, http.StatusOK, "monitor", page{Title: "Monitor " + id, Viewer: v, Project: projectID, Body: view})
}

// verdictCharts draws a monitor's verdicts per interval (done, errors,
// pending), its judges' tokens and their cost. Each bar links to the trace
// list of the interval by the verdict of the monitor's first scorer.
func verdictCharts(view monitorView, intervals []monitor.Interval) []*chart {
	charts := []*chart{
		{ID: "verdicts", Title: "Verdicts", Unit: countOf("verdict"), Series: []string{monitor.StateDone, "errors", monitor.StatePending}},
		{ID: "judge-tokens", Title: "Judge tokens", Unit: countOf("token"), Series: []string{"prompt", "completion"}},
		{ID: "cost", Title: "Cost"},
	}
	values := func(in monitor.Interval) [][]float64 {
		cost := math.NaN()
		if in.PricedVerdicts > 0 {
			cost = in.Cost
		}
		return [][]float64{
			{float64(in.Verdicts.Done), float64(in.Verdicts.Error), float64(in.Verdicts.Pending)},
			{float64(in.PromptTokens), float64(in.CompletionTokens)},
			{cost},
		}
	}
	formats := []func(float64) string{formatNumber, formatNumber, formatCost}
	list := listView{Sort: "started_at", Dir: "desc"}
	if len(view.Scorers) > 0 {
		list = listView{Verdict: verdictFilter{Scorer: view.Scorers[0].Name, Op: "eq"}, Sort: sortVerdict, Dir: "asc"}
	}
	for i, c := range charts {
		grid := make([][]float64, len(intervals))
		for slot, in := range intervals {
			grid[slot] = values(in)[i]
		}
		c.plot(grid, formats[i], func(slot, s int, value string) (string, string) {
			in := intervals[slot]
			end := in.Start.Add(time.Duration(in.Seconds) * time.Second)
			label := in.Start.Format("Jan 2 15:04") + ": " + c.Unit.of(value)
			if len(c.Series) > 1 {
				label = c.Series[s] + ", " + label
			}
			return label, list.url(view.Project, "from", in.Start.Format("2006-01-02T15:04"), "to", end.Format("2006-01-02T15:04"))
		})
	}
	return charts
}
