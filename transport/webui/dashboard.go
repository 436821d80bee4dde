package webui

import (
	"math"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/trace"
)

// dashboardRanges are the ranges the dashboard shows, each with the width
// of its intervals.
var dashboardRanges = []struct {
	Name  string
	Span  time.Duration
	Width time.Duration
}{{"24h", 24 * time.Hour, time.Hour}, {"7d", 7 * 24 * time.Hour, 6 * time.Hour}, {"30d", 30 * 24 * time.Hour, 24 * time.Hour}}

// dashboardGroups are the breakdowns offered, by URL value.
var dashboardGroups = []struct{ Value, Label string }{
	{trace.GroupNone, "nothing"}, {trace.GroupOp, "op"}, {trace.GroupUser, "user"}, {trace.GroupStatus, "status"}}

// maxDashboardGroups bounds the series a chart draws: the largest groups
// by calls, the rest as one.
const maxDashboardGroups = 8

// chartHeight is the height of a chart's plot in SVG units.
const chartHeight = 120

// dashboardView is the data of the dashboard page.
type dashboardView struct {
	Project string
	Range   string
	Group   string
	Ranges  []string
	Groups  []struct{ Value, Label string }
	From    time.Time
	To      time.Time
	Charts  []*chart
	Empty   bool
}

// chart is one metric over the intervals, a bar per interval and series.
type chart struct {
	ID, Title, Unit string
	Max             string // the highest value, as text
	Width           int    // of the SVG
	Bars            []chartBar
	Series          []string // the groups, in their bars' order
}

// chartBar is one interval's value of one series, drawn at X with height H.
type chartBar struct {
	X, Y, W, H float64
	Series     int
	Label      string // what the bar says to a screen reader and on hover
	Href       string // the trace list filtered to the bar's traces
}

// dashboardPage serves the project's dashboard: its traces over a range,
// per interval, as charts of calls, errors, latency percentiles, tokens and
// cost, broken down by a group; every bar links to its traces.
func (h *Handler) dashboardPage(w http.ResponseWriter, r *http.Request, v *viewer, projectID string) {
	q := r.URL.Query()
	view := dashboardView{Project: projectID, Range: q.Get("range"), Group: q.Get("group"), Groups: dashboardGroups}
	if view.Range == "" {
		view.Range = "24h"
	}
	i := slices.IndexFunc(dashboardRanges, func(d struct {
		Name        string
		Span, Width time.Duration
	}) bool {
		return d.Name == view.Range
	})
	if i < 0 {
		h.refuse(w, r, weft.Errorf(errBadView, "range: one of 24h, 7d, 30d"))
		return
	}
	if !slices.ContainsFunc(dashboardGroups, func(g struct{ Value, Label string }) bool { return g.Value == view.Group }) {
		h.refuse(w, r, weft.Errorf(errBadView, "group: one of op_name, wb_user_id, status or nothing"))
		return
	}
	for _, d := range dashboardRanges {
		view.Ranges = append(view.Ranges, d.Name)
	}
	rng := dashboardRanges[i]
	view.To = h.cfg.Now().UTC().Truncate(rng.Width).Add(rng.Width)
	view.From = view.To.Add(-rng.Span)
	buckets, err := h.cfg.Trace.CallsOverTime(r.Context(), &trace.CallsOverTimeReq{ProjectID: projectID, From: view.From, To: view.To, Width: rng.Width, GroupBy: view.Group})
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	view.Empty = len(buckets) == 0
	view.Charts = dashboardCharts(projectID, view, rng.Width, buckets)
	h.render(w, r, http.StatusOK, "dashboard", page{Title: "Dashboard", Viewer: v, Project: projectID, Body: view})
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
		id, title, unit string
		value           func(*trace.TimeBucket) float64
		status          string
		format          func(float64) string
	}{
		{"calls", "Traces", "traces", func(b *trace.TimeBucket) float64 { return float64(b.Calls) }, "", formatNumber},
		{"errors", "Errors", "errors", func(b *trace.TimeBucket) float64 { return float64(b.Errors) }, trace.StatusError, formatNumber},
		{"p50", "Latency, median", "ms", func(b *trace.TimeBucket) float64 { return b.Percentile(0.5) }, "", formatNumber},
		{"p95", "Latency, 95th percentile", "ms", func(b *trace.TimeBucket) float64 { return b.Percentile(0.95) }, "", formatNumber},
		{"tokens", "Tokens", "tokens", func(b *trace.TimeBucket) float64 { return float64(b.Tokens) }, "", formatNumber},
		{"cost", "Cost", "$", func(b *trace.TimeBucket) float64 { return b.Cost }, "", func(c float64) string { return strconv.FormatFloat(c, 'f', 4, 64) }},
	}
	const slotWidth = 24
	var charts []*chart
	for _, m := range metrics {
		c := &chart{ID: m.id, Title: m.title, Unit: m.unit, Width: slots * slotWidth, Series: series}
		top := 0.0
		for _, row := range cells {
			for _, b := range row {
				if b != nil {
					if v := m.value(b); !math.IsNaN(v) {
						top = max(top, v)
					}
				}
			}
		}
		c.Max = m.format(top)
		barWidth := float64(slotWidth-4) / float64(max(len(series), 1))
		for slot, row := range cells {
			start := view.From.Add(time.Duration(slot) * width)
			for s, b := range row {
				if b == nil {
					continue
				}
				v := m.value(b)
				if math.IsNaN(v) || v <= 0 || top <= 0 {
					continue
				}
				hgt := max(v/top*chartHeight, 1)
				label := start.Format("Jan 2 15:04") + ": " + m.format(v) + " " + m.unit
				if series[s] != "" {
					label = series[s] + ", " + label
				}
				changes := []string{"from", start.Format("2006-01-02T15:04"), "to", start.Add(width).Format("2006-01-02T15:04")}
				if m.status != "" {
					changes = append(changes, "status", m.status)
				}
				if !(folded && s == len(series)-1) {
					switch view.Group {
					case trace.GroupOp:
						changes = append(changes, "op", series[s])
					case trace.GroupStatus:
						changes = append(changes, "status", series[s])
					}
				}
				c.Bars = append(c.Bars, chartBar{X: float64(slot*slotWidth+2) + float64(s)*barWidth, Y: chartHeight - hgt, W: barWidth, H: hgt,
					Series: s % maxDashboardGroups, Label: label, Href: listView{Sort: "started_at", Dir: "desc"}.url(projectID, changes...)})
			}
		}
		charts = append(charts, c)
	}
	return charts
}

// formatNumber is a count or measure without needless digits.
func formatNumber(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}
