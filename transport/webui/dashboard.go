package webui

import (
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/trace"
)

// customRange is the range value of a chosen from and to.
const customRange = "custom"

// customWidths are the widths of a custom range's intervals, the first
// whose intervals number at most maxCustomIntervals; a longer range is
// refused.
var customWidths = []time.Duration{time.Hour, 6 * time.Hour, 24 * time.Hour}

// maxCustomIntervals bounds the bars of a custom range's charts (a year by
// the day).
const maxCustomIntervals = 366

// dashboardGroups are the breakdowns offered, by URL value. Broken down by
// verdict, the series are the values of the view's scorer's verdict (or a
// member of it: the trace list's verdict filter, tracelist_verdict.go).
var dashboardGroups = []struct{ Value, Label string }{
	{trace.GroupNone, "nothing"}, {trace.GroupOp, "op"}, {trace.GroupUser, "user"}, {trace.GroupStatus, "status"}, {trace.GroupModel, "model"},
	{groupVerdict, "verdict"}}

// groupVerdict is the dashboard's breakdown by a scorer's verdict.
const groupVerdict = "verdict"

// maxDashboardGroups bounds the series a chart draws: the largest groups
// by calls, the rest as one.
const maxDashboardGroups = 8

// dashboardView is the data of the dashboard page.
type dashboardView struct {
	Project string
	Range   string
	Group   string
	Ranges  []string
	Groups  []struct{ Value, Label string }
	From    time.Time
	To      time.Time
	// FromText and ToText are the custom range's bounds as typed.
	FromText, ToText string
	// Verdict names the scorer (and the member of its verdict) of the
	// breakdown by verdict.
	Verdict verdictFilter
	Charts  []*chart
	Empty   bool
}

// dashboardPage serves the project's dashboard: its traces over a range,
// per interval, as charts of calls, errors, latency percentiles, tokens and
// cost, broken down by a group; every bar links to its traces.
func (h *Handler) dashboardPage(w http.ResponseWriter, r *http.Request, v *viewer, projectID string) {
	q := r.URL.Query()
	view := dashboardView{Project: projectID, Range: q.Get("range"), Group: q.Get("group"), Groups: dashboardGroups,
		FromText: strings.TrimSpace(q.Get("from")), ToText: strings.TrimSpace(q.Get("to"))}
	var rng chartRange
	var err error
	if view.Range == customRange {
		rng, err = customChartRange(view.FromText, view.ToText)
	} else {
		rng, err = chartRangeOf(view.Range, h.cfg.Now())
	}
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	if !slices.ContainsFunc(dashboardGroups, func(g struct{ Value, Label string }) bool { return g.Value == view.Group }) {
		h.refuse(w, r, weft.Errorf(errBadView, "group: one of op_name, wb_user_id, status, model, verdict or nothing"))
		return
	}
	req := &trace.CallsOverTimeReq{ProjectID: projectID, Width: rng.Width, GroupBy: view.Group}
	if view.Group == groupVerdict {
		if view.Verdict, err = parseVerdict(q); err == nil && view.Verdict.Scorer == "" {
			err = weft.Errorf(errBadView, "verdict: name the scorer whose verdicts to break down by")
		}
		if err != nil {
			h.refuse(w, r, err)
			return
		}
		view.Verdict.Op, view.Verdict.Value = "eq", ""
		req.GroupBy, req.Field = trace.GroupFeedback, view.Verdict.field()
	}
	view.Range, view.Ranges, view.From, view.To = rng.Name, append(chartRangeNames(), customRange), rng.From, rng.To
	req.From, req.To = view.From, view.To
	buckets, err := h.cfg.Trace.CallsOverTime(r.Context(), req)
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	view.Empty = len(buckets) == 0
	view.Charts = dashboardCharts(projectID, view, rng.Width, buckets)
	h.render(w, r, http.StatusOK, "dashboard", page{Title: "Dashboard", Viewer: v, Project: projectID, Body: view})
}

// customChartRange is the range of a chosen from and to (UTC, as a
// datetime-local input sends them), widened to whole intervals of the first
// of customWidths that draws at most maxCustomIntervals of them.
func customChartRange(fromText, toText string) (chartRange, error) {
	from, okFrom := parseTime(fromText)
	to, okTo := parseTime(toText)
	switch {
	case !okFrom:
		return chartRange{}, weft.Errorf(errBadView, "from: a time such as 2026-01-02T15:04 (UTC)")
	case !okTo:
		return chartRange{}, weft.Errorf(errBadView, "to: a time such as 2026-01-02T15:04 (UTC)")
	case !from.Before(to):
		return chartRange{}, weft.Errorf(errBadView, "to: after from")
	}
	for _, width := range customWidths {
		rng := chartRange{Name: customRange, From: from.UTC().Truncate(width), To: to.UTC().Add(width - 1).Truncate(width), Width: width}
		if rng.To.Sub(rng.From)/width <= maxCustomIntervals {
			return rng, nil
		}
	}
	return chartRange{}, weft.Errorf(errBadView, "to: at most %d days after from", maxCustomIntervals)
}

// otherGroup names the series of the groups past maxDashboardGroups.
const otherGroup = "other"

// dashboardCharts draws the charts of buckets.
func dashboardCharts(projectID string, view dashboardView, width time.Duration, buckets []trace.TimeBucket) []*chart {
	// The series: the largest groups by calls, the rest folded into one.
	calls := map[string]int64{}
	for _, b := range buckets {
		calls[b.Group] += b.Calls
	}
	var series []string
	for g := range calls {
		series = append(series, g)
	}
	slices.SortFunc(series, func(a, b string) int {
		if calls[a] != calls[b] {
			return int(calls[b] - calls[a])
		}
		if a < b {
			return -1
		}
		return 1
	})
	folded := len(series) > maxDashboardGroups
	if folded {
		series = append(series[:maxDashboardGroups-1], otherGroup)
	}
	index := map[string]int{}
	for i, g := range series {
		index[g] = i
	}
	slots := int(view.To.Sub(view.From) / width)
	cells := make([][]*trace.TimeBucket, slots)
	for i := range cells {
		cells[i] = make([]*trace.TimeBucket, len(series))
	}
	for _, b := range buckets {
		slot := int(b.Start.Sub(view.From) / width)
		s, ok := index[b.Group]
		if !ok {
			s = len(series) - 1
		}
		if slot < 0 || slot >= slots {
			continue
		}
		if c := cells[slot][s]; c != nil { // folded groups add up
			c.Calls += b.Calls
			c.Errors += b.Errors
			c.Tokens += b.Tokens
			c.Cost += b.Cost
			for i := range c.Latency {
				c.Latency[i] += b.Latency[i]
			}
			continue
		}
		b.Latency = slices.Clone(b.Latency)
		cells[slot][s] = &b
	}
	metrics := []struct {
		id, title string
		unit      unit
		value     func(*trace.TimeBucket) float64
		status    string
		format    func(float64) string
	}{
		{"calls", "Traces", countOf("trace"), func(b *trace.TimeBucket) float64 { return float64(b.Calls) }, "", formatNumber},
		{"errors", "Errors", countOf("error"), func(b *trace.TimeBucket) float64 { return float64(b.Errors) }, trace.StatusError, formatNumber},
		{"p50", "Latency, median", unit{many: "ms"}, func(b *trace.TimeBucket) float64 { return b.Percentile(0.5) }, "", formatNumber},
		{"p95", "Latency, 95th percentile", unit{many: "ms"}, func(b *trace.TimeBucket) float64 { return b.Percentile(0.95) }, "", formatNumber},
		{"tokens", "Tokens", countOf("token"), func(b *trace.TimeBucket) float64 { return float64(b.Tokens) }, "", formatNumber},
		{"cost", "Cost", unit{many: "$"}, func(b *trace.TimeBucket) float64 { return b.Cost }, "", func(c float64) string { return strconv.FormatFloat(c, 'f', 4, 64) }},
	}
	var charts []*chart
	for _, m := range metrics {
		c := &chart{ID: m.id, Title: m.title, Unit: m.unit, Series: series}
		values := make([][]float64, slots)
		for slot, row := range cells {
			values[slot] = make([]float64, len(row))
			for s, b := range row {
				values[slot][s] = math.NaN()
				if b != nil {
					values[slot][s] = m.value(b)
				}
			}
		}
		c.plot(values, m.format, func(slot, s int, value string) (string, string) {
			start := view.From.Add(time.Duration(slot) * width)
			label := start.Format("Jan 2 15:04") + ": " + m.unit.of(value)
			if series[s] != "" {
				label = series[s] + ", " + label
			}
			changes := []string{"from", start.Format("2006-01-02T15:04"), "to", start.Add(width).Format("2006-01-02T15:04")}
			if m.status != "" {
				changes = append(changes, "status", m.status)
			}
			if !(folded && s == len(series)-1) {
				switch {
				case view.Group == trace.GroupOp:
					changes = append(changes, "op", series[s])
				case view.Group == trace.GroupStatus:
					changes = append(changes, "status", series[s])
				case view.Group == trace.GroupModel && series[s] != "":
					changes = append(changes, "model", series[s])
				case view.Group == groupVerdict && series[s] != "":
					changes = append(changes, "verdict", view.Verdict.Scorer, "verdict_path", view.Verdict.Path, "verdict_value", series[s])
				}
			}
			return label, listView{Sort: "started_at", Dir: "desc"}.url(projectID, changes...)
		})
		charts = append(charts, c)
	}
	return charts
}
