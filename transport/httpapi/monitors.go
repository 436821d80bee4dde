package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/weftlabs/weft/monitor"
)

// The inputs of the monitor routes, which name their project in the path.
type (
	backfillInput struct {
		Entity  string `path:"entity"`
		Project string `path:"project"`
		ID      string `path:"id" maxLength:"64"`
	}
	backfillListInput struct {
		Entity    string `path:"entity"`
		Project   string `path:"project"`
		MonitorID string `query:"monitor_id" maxLength:"128" doc:"only the backfills of this monitor (its object id)"`
	}
	monitorStatsInput struct {
		Entity    string    `path:"entity"`
		Project   string    `path:"project"`
		MonitorID string    `path:"monitor_id" maxLength:"128"`
		From      time.Time `query:"from" doc:"verdicts queued at or after this instant (RFC 3339; default: no bound)"`
		Before    time.Time `query:"before" doc:"verdicts queued before this instant (RFC 3339; default: no bound)"`
		// Granularity asks for intervals as well.
		Granularity int64 `query:"granularity" minimum:"0" doc:"also the verdicts per interval of this many seconds, from the start of from's interval (from is then required) to before (default now)"`
	}
	backfillList struct {
		Backfills []monitor.Backfill `json:"backfills"`
	}
)

// registerMonitors registers the routes of the monitors that weft runs:
// what their verdicts came to, and backfills over past calls.
func (h *Handler) registerMonitors(svc monitor.Service) {
	op := func(id, method, path, summary string) huma.Operation {
		return huma.Operation{OperationID: id, Method: method, Path: "/v2/{entity}/{project}/" + path, Summary: summary, Tags: []string{"monitors"}}
	}
	read := func(_ context.Context, in *backfillInput) (*backfillInput, []string, error) {
		return in, one(projectOf(in.Entity, in.Project)), nil
	}
	route(h, op("monitor-stats", http.MethodGet, "monitors/{monitor_id}/stats",
		"What a monitor's verdicts came to: counts by state, the judges' tokens and their cost, over a range and per interval"), false,
		func(_ context.Context, in *monitorStatsInput) (*monitor.StatsReq, []string, error) {
			req := &monitor.StatsReq{ProjectID: projectOf(in.Entity, in.Project), MonitorID: in.MonitorID, Granularity: in.Granularity}
			if !in.From.IsZero() {
				req.From = &in.From
			}
			if !in.Before.IsZero() {
				req.Before = &in.Before
			}
			return req, one(req.ProjectID), nil
		}, byValue(svc.Stats))
	route(h, op("scorer-score", http.MethodPost, "scorers/score",
		"Score answers that are no calls (an RL job's rollouts) with a scorer of the project, a judge with the caller's authority, and read each verdict's reward"), true,
		v2Body(func(r *monitor.ScoreReq) *string { return &r.ProjectID }), byValue(svc.Score))
	route(h, op("monitor-backfill-create", http.MethodPost, "monitor_backfills",
		"Run a monitor over the calls that started in a time range, once per call and scorer version"), true,
		v2Body(func(r *monitor.BackfillReq) *string { return &r.ProjectID }), byValue(svc.StartBackfill))
	route(h, op("monitor-backfill-list", http.MethodGet, "monitor_backfills", "List the newest backfills, with their progress"), false,
		func(_ context.Context, in *backfillListInput) (*backfillListInput, []string, error) {
			return in, one(projectOf(in.Entity, in.Project)), nil
		},
		func(ctx context.Context, in *backfillListInput) (*backfillList, error) {
			list, err := svc.Backfills(ctx, projectOf(in.Entity, in.Project), in.MonitorID)
			return &backfillList{Backfills: list}, err
		})
	route(h, op("monitor-backfill-read", http.MethodGet, "monitor_backfills/{id}", "Read a backfill and its progress"), false, read,
		func(ctx context.Context, in *backfillInput) (*monitor.Backfill, error) {
			return svc.Backfill(ctx, projectOf(in.Entity, in.Project), in.ID)
		})
	route(h, op("monitor-backfill-cancel", http.MethodPost, "monitor_backfills/{id}/cancel",
		"Cancel a backfill: its queued work is dropped, verdicts given stay"), true, read,
		func(ctx context.Context, in *backfillInput) (*monitor.Backfill, error) {
			return svc.CancelBackfill(ctx, projectOf(in.Entity, in.Project), in.ID)
		})
}
