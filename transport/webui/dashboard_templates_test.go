package webui

import (
	"time"

	"github.com/weftlabs/weft/trace"
)

// dashboardFixtures are the dashboard page's data: groups named with hostile
// text, as op names and user ids are chosen by whoever traces.
func dashboardFixtures(v *viewer) map[string]page {
	to := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
	view := dashboardView{Project: "team/p", Range: "24h", Group: trace.GroupOp, Groups: dashboardGroups, From: to.Add(-24 * time.Hour), To: to,
		Ranges: chartRangeNames()}
	latency := make([]int64, len(trace.LatencyBounds)+1)
	latency[3], latency[len(latency)-1] = 4, 1
	buckets := []trace.TimeBucket{
		{Start: to.Add(-2 * time.Hour), Group: xss, Calls: 5, Errors: 1, Tokens: 120, Cost: 0.0042, Latency: latency},
		{Start: to.Add(-time.Hour), Group: "", Calls: 2, Latency: make([]int64, len(latency))},
	}
	view.Charts = dashboardCharts("team/p", view, time.Hour, buckets)
	return map[string]page{
		"dashboard": {Title: "Dashboard", Viewer: v, Project: "team/p", Body: view},
	}
}
