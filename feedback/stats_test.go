package feedback_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/feedback"
	"github.com/weftlabs/weft/internal/testdb"
)

// Stats answers Weave's /feedback/stats: every bucket of the window with
// each metric's aggregations named "<agg>_<slug>" (empty sums, counts and
// averages 0, extremes and percentiles null) and the count of rows, and the
// aggregations over the whole window by slug; numbers, booleans and strings
// read as Weave's extraction reads them (feedback_stats_query_builder.py).
// The expected answers are worked out by hand from those rules.
func TestStats(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		tl := newTimeline(t, db)
		svc, ctx := tl.svc, userCtx("u1")
		add := func(at time.Duration, body string) {
			tl.add(at, feedback.CreateReq{FeedbackType: "custom", Payload: payload(body)})
		}
		add(time.Minute, `{"output":{"score":1,"passed":true,"label":"a"}}`)
		add(2*time.Minute, `{"output":{"score":3,"passed":false,"label":"b"}}`)
		add(3*time.Minute, `{"output":{"score":"high","passed":"yes"}}`)
		add(7*time.Minute, `{"output":{"score":4,"passed":true}}`)
		add(20*time.Minute, `{"output":{"score":100}}`)

		request := func(body string) feedback.StatsReq {
			t.Helper()
			req := feedback.StatsReq{ProjectID: project}
			if err := json.Unmarshal([]byte(body), &req); err != nil {
				t.Fatal(err)
			}
			return req
		}
		stats := func(body string) feedback.StatsRes {
			t.Helper()
			res, err := svc.Stats(ctx, request(body))
			if err != nil {
				t.Fatal(err)
			}
			return res
		}
		check := tl.check
		check("metrics", stats(`{"start":"2026-05-01T12:00:00Z","end":"2026-05-01T12:10:00Z","metrics":[
			{"json_path":"output.score","percentiles":[50]},{"json_path":"output.passed","value_type":"boolean"},{"json_path":"output.label","value_type":"categorical"}]}`),
			`{"start":"2026-05-01T12:00:00Z","end":"2026-05-01T12:10:00Z","granularity":300,"timezone":"UTC","buckets":[`+
				`{"timestamp":"2026-05-01T12:00:00+00:00","avg_output_score":2,"min_output_score":1,"max_output_score":3,"p50_output_score":2,`+
				`"count_true_output_passed":1,"count_false_output_passed":1,"count_output_label":2,"count":3},`+
				`{"timestamp":"2026-05-01T12:05:00+00:00","avg_output_score":4,"min_output_score":4,"max_output_score":4,"p50_output_score":4,`+
				`"count_true_output_passed":1,"count_false_output_passed":0,"count_output_label":0,"count":1}],`+
				`"window_stats":{"output_label":{"count":2},"output_passed":{"count_false":1,"count_true":2},"output_score":{"avg":2.6666666666666665,"max":4,"min":1,"p50":3}}}`)
		check("empty window", stats(`{"start":"2026-05-01T13:00:00Z","end":"2026-05-01T13:05:00Z","metrics":[{"json_path":"output.score","aggregations":["sum"]},{"json_path":"output.passed","value_type":"boolean"}]}`),
			`{"start":"2026-05-01T13:00:00Z","end":"2026-05-01T13:05:00Z","granularity":300,"timezone":"UTC","buckets":[`+
				`{"timestamp":"2026-05-01T13:00:00+00:00","sum_output_score":0,"count_true_output_passed":0,"count_false_output_passed":0,"count":0}],`+
				`"window_stats":{"output_passed":{"count_false":0,"count_true":0},"output_score":{"sum":null}}}`)
		check("no metrics", stats(`{"start":"2026-05-01T12:00:00Z","end":"2026-05-01T12:10:00Z","feedback_type":"other"}`),
			`{"start":"2026-05-01T12:00:00Z","end":"2026-05-01T12:10:00Z","granularity":300,"timezone":"UTC","buckets":[],"window_stats":{}}`)
		for _, bad := range []string{
			`{"start":"2026-05-01T12:00:00Z","metrics":[{"json_path":"output-score"}]}`,
			`{"start":"2026-05-01T12:00:00Z","metrics":[{"json_path":" "}]}`,
			`{"start":"2026-05-01T12:00:00Z","metrics":[{"json_path":"label","value_type":"categorical","aggregations":["sum"]}]}`,
			`{"start":"2026-05-01T12:00:00Z","metrics":[{"json_path":"x","percentiles":[-1]}]}`,
			`{"start":"2026-05-01T12:00:00Z","end":"2026-04-01T12:00:00Z"}`,
		} {
			if _, err := svc.Stats(ctx, request(bad)); !errors.Is(err, weft.ErrInvalid) {
				t.Errorf("%s: %v", bad, err)
			}
		}

		// The window is bounded by Config.StatsMaxRange.
		short, err := feedback.New(feedback.Config{DB: db, StatsMaxRange: 24 * time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
		day := feedback.StatsReq{ProjectID: project, Start: start, End: ptrTime(start.Add(24 * time.Hour))}
		if _, err := short.Stats(ctx, day); err != nil {
			t.Errorf("a day under a limit of a day: %v", err)
		}
		day.End = ptrTime(start.Add(25 * time.Hour))
		if _, err := short.Stats(ctx, day); !errors.Is(err, weft.ErrInvalid) || !strings.Contains(err.Error(), "1 day") {
			t.Errorf("past a limit of a day: %v", err)
		}
	})
}

func ptrTime(t time.Time) *time.Time { return &t }
