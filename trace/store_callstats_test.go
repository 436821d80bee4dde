package trace_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/testdb"
	"github.com/weftlabs/weft/trace"
)

// CallStats answers Weave's /calls/stats: every bucket of the window, call
// metrics per bucket and usage per bucket and model, named and ordered as
// Weave's query builders name them, empty sums 0 and empty extremes null,
// percentiles interpolated between ranks, costs the summed tokens times the
// model's price. The expected answers are worked out by hand from Weave's
// rules (stats_query_base.py, call_metrics_query_builder.py,
// usage_query_builder.py, the cost step of call_stats).
func TestStoreCallStats(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		s, ctx := newStore(t, db)
		tr := id()
		a, b, c, late, early := id(), id(), id(), id(), id()
		boom := "boom"
		failed := end(b, t0.Add(2*time.Minute+3*time.Second), `{"usage":{"gpt-4":{"prompt_tokens":2,"completion_tokens":1},"claude-x":{"input_tokens":4,"output_tokens":4}}}`)
		failed.End.Exception = &boom
		upsert(t, ctx, s,
			start(a, tr, nil, t0.Add(time.Minute), `{}`),
			end(a, t0.Add(time.Minute+time.Second), `{"usage":{"gpt-4":{"prompt_tokens":10,"completion_tokens":5}}}`),
			start(b, tr, &a, t0.Add(2*time.Minute), `{}`), failed,
			start(c, tr, &a, t0.Add(7*time.Minute), `{}`),
			start(late, tr, &a, t0.Add(12*time.Minute), `{}`),
			start(early, tr, &a, t0.Add(-time.Minute), `{}`))
		day := t0.Add(-24 * time.Hour)
		if _, err := s.CostCreate(ctx, &trace.CostCreateReq{ProjectID: project, Costs: map[string]trace.PriceInput{
			"gpt-4": {PromptTokenCost: 0.01, CompletionTokenCost: 0.02, EffectiveDate: &day}}}); err != nil {
			t.Fatal(err)
		}
		stats := func(body string) string {
			t.Helper()
			res, err := s.CallStats(ctx, callStatsReq(t, body))
			if err != nil {
				t.Fatalf("%s: %v", body, err)
			}
			out, _ := json.Marshal(res)
			return string(out)
		}
		for _, tc := range []struct{ name, req, want string }{
			{"call metrics", `{"start":"2026-05-01T12:00:00Z","end":"2026-05-01T12:10:00Z","call_metrics":[
			{"metric":"latency_ms","aggregations":["avg","max"],"percentiles":[50]},{"metric":"call_count"},{"metric":"error_count","aggregations":[]}]}`,
				`{"start":"2026-05-01T12:00:00Z","end":"2026-05-01T12:10:00Z","granularity":300,"timezone":"UTC","usage_buckets":[],"call_buckets":[` +
					`{"timestamp":"2026-05-01T12:00:00+00:00","avg_latency_ms":2000,"max_latency_ms":3000,"p50_latency_ms":2000,"sum_call_count":2,"sum_error_count":1,"count":2},` +
					`{"timestamp":"2026-05-01T12:05:00+00:00","avg_latency_ms":0,"max_latency_ms":null,"p50_latency_ms":null,"sum_call_count":1,"sum_error_count":0,"count":1}]}`},
			{"usage", `{"start":"2026-05-01T12:00:00Z","end":"2026-05-01T12:10:00Z","usage_metrics":[
			{"metric":"input_tokens"},{"metric":"output_tokens","aggregations":["max"]},{"metric":"total_cost"}]}`,
				`{"start":"2026-05-01T12:00:00Z","end":"2026-05-01T12:10:00Z","granularity":300,"timezone":"UTC","usage_buckets":[` +
					`{"timestamp":"2026-05-01T12:00:00+00:00","model":"claude-x","sum_input_tokens":4,"max_output_tokens":4,"sum_output_tokens":4,"count":1,"sum_total_cost":0},` +
					`{"timestamp":"2026-05-01T12:00:00+00:00","model":"gpt-4","sum_input_tokens":12,"max_output_tokens":5,"sum_output_tokens":6,"count":2,"sum_total_cost":0.24},` +
					`{"timestamp":"2026-05-01T12:05:00+00:00","model":"claude-x","sum_input_tokens":0,"max_output_tokens":null,"sum_output_tokens":0,"count":0,"sum_total_cost":0},` +
					`{"timestamp":"2026-05-01T12:05:00+00:00","model":"gpt-4","sum_input_tokens":0,"max_output_tokens":null,"sum_output_tokens":0,"count":0,"sum_total_cost":0}],"call_buckets":[]}`},
			// Whole-hour buckets align to the local midnight of the time zone:
			// 17:00 in Kolkata (UTC+05:30) is 11:30 UTC.
			{"time zone", `{"start":"2026-05-01T12:00:00Z","end":"2026-05-01T12:10:00Z","granularity":3600,"timezone":"Asia/Kolkata","call_metrics":[{"metric":"call_count"}]}`,
				`{"start":"2026-05-01T12:00:00Z","end":"2026-05-01T12:10:00Z","granularity":3600,"timezone":"Asia/Kolkata","usage_buckets":[],"call_buckets":[` +
					`{"timestamp":"2026-05-01T17:00:00+05:30","sum_call_count":3,"count":3}]}`},
			{"filter", `{"start":"2026-05-01T12:00:00Z","end":"2026-05-01T12:10:00Z","granularity":600,"filter":{"call_ids":["` + b + `","` + c + `"]},"call_metrics":[{"metric":"call_count"}]}`,
				`{"start":"2026-05-01T12:00:00Z","end":"2026-05-01T12:10:00Z","granularity":600,"timezone":"UTC","usage_buckets":[],"call_buckets":[` +
					`{"timestamp":"2026-05-01T12:00:00+00:00","sum_call_count":2,"count":2}]}`},
			// A day in 1-second buckets is widened to stay within 10,000.
			{"widened", `{"start":"2026-05-01T00:00:00Z","end":"2026-05-02T00:00:00Z","granularity":1}`,
				`{"start":"2026-05-01T00:00:00Z","end":"2026-05-02T00:00:00Z","granularity":9,"timezone":"UTC","usage_buckets":[],"call_buckets":[]}`},
		} {
			if got := stats(tc.req); got != tc.want {
				t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
			}
		}

		for _, bad := range []string{
			`{"start":"2026-05-01T12:00:00Z","end":"2026-05-01T11:00:00Z"}`,
			`{"start":"2026-05-01T12:00:00Z","granularity":0}`,
			`{"start":"2026-05-01T12:00:00Z","timezone":"Mars/Olympus"}`,
			`{"start":"2026-05-01T12:00:00Z","call_metrics":[{"metric":"tokens"}]}`,
			`{"start":"2026-05-01T12:00:00Z","usage_metrics":[{"metric":"input_tokens","percentiles":[101]}]}`,
			`{"start":"2026-05-01T12:00:00Z","call_metrics":[{"metric":"latency_ms","aggregations":["median"]}]}`,
		} {
			if _, err := s.CallStats(ctx, callStatsReq(t, bad)); !errors.Is(err, weft.ErrInvalid) {
				t.Errorf("%s: %v", bad, err)
			}
		}

		// The window is bounded by Config.StatsMaxRange: 366 days by
		// default, what the store was given otherwise.
		year := &trace.CallStatsReq{ProjectID: project, Start: t0.Add(-366 * 24 * time.Hour), End: ptr(t0)}
		if _, err := s.CallStats(ctx, year); err != nil {
			t.Errorf("366 days under the default: %v", err)
		}
		year.Start = year.Start.Add(-time.Second)
		if _, err := s.CallStats(ctx, year); !errors.Is(err, weft.ErrInvalid) || !strings.Contains(err.Error(), "366 days") {
			t.Errorf("366 days and a second under the default: %v", err)
		}
		short, err := trace.New(trace.Config{DB: db, StatsMaxRange: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		hour := &trace.CallStatsReq{ProjectID: project, Start: t0, End: ptr(t0.Add(time.Hour))}
		if _, err := short.CallStats(ctx, hour); err != nil {
			t.Errorf("an hour under a limit of an hour: %v", err)
		}
		hour.End = ptr(t0.Add(time.Hour + time.Second))
		if _, err := short.CallStats(ctx, hour); !errors.Is(err, weft.ErrInvalid) || !strings.Contains(err.Error(), "1h0m0s") {
			t.Errorf("past a limit of an hour: %v", err)
		}
		if _, err := trace.New(trace.Config{DB: db, StatsMaxRange: -time.Hour}); err == nil {
			t.Error("a negative StatsMaxRange is accepted")
		}
	})
}

// callStatsReq is a /calls/stats request of project, decoded from body as
// the route decodes it.
func callStatsReq(t *testing.T, body string) *trace.CallStatsReq {
	t.Helper()
	req := &trace.CallStatsReq{ProjectID: project}
	if err := json.Unmarshal([]byte(body), req); err != nil {
		t.Fatal(err)
	}
	return req
}
