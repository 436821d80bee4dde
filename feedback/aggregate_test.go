package feedback_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/feedback"
	"github.com/weftlabs/weft/internal/testdb"
)

// TestAggregate checks /feedback/aggregate against what Weave's trace server
// answers for the same rows (its in-memory server mirrors its ClickHouse
// query row by row): the filters, the buckets from the epoch, the group_by
// dimensions (scorer_id being runnable_ref's object id), the tallies, and the
// one row an ungrouped aggregate always has.
func TestAggregate(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		tl := newTimeline(t, db)
		svc, ctx, add := tl.svc, userCtx("u1"), tl.add
		monitor := func(scorer, trigger, agent string, tags []string, ratings string) feedback.CreateReq {
			return feedback.CreateReq{FeedbackType: "wandb.agent_monitor", RunnableRef: str(objectRef(scorer)), TriggerRef: str(objectRef(trigger)),
				ScorerTags: tags, ScorerRatings: payload(ratings), SpanAgentName: str(agent)}
		}
		add(10*time.Second, monitor("judge-a:d1", "mon-1:d2", "bot", []string{"good", "fast"}, `{"_rating_":0.75}`))
		add(20*time.Second, monitor("judge-a:d1", "mon-1:d2", "bot", []string{"good"}, `{"_rating_":0.25,"other":2}`))
		add(70*time.Second, monitor("judge-b:d3", "mon-2:d4", "other", nil, `{}`))
		add(80*time.Second, feedback.CreateReq{FeedbackType: "custom"})

		ms := t0.UnixMilli()
		aggregate := func(req feedback.AggregateReq) []feedback.AggregateBucket {
			t.Helper()
			req.ProjectID = project
			if req.AfterMS == 0 {
				req.AfterMS, req.BeforeMS = ms, ms+3600_000
			}
			res, err := svc.Aggregate(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			return res.Buckets
		}
		check := tl.check
		row := func(start, group string, total, scored int, tags, counts, sums string) string {
			return `{"time_bucket_start_ms":` + start + `,"group":` + group + `,"total_count":` + itoa(total) + `,"scored_count":` + itoa(scored) +
				`,"tag_counts":` + tags + `,"rating_counts":` + counts + `,"rating_sums":` + sums + `}`
		}
		minute := int64(60)
		check("buckets by scorer", aggregate(feedback.AggregateReq{TimeBucketSeconds: &minute, GroupBy: []string{"scorer_id"}}), "["+
			row(itoa64(ms), `{"scorer_id":"judge-a"}`, 2, 2, `{"fast":1,"good":2}`, `{"_rating_":2,"other":1}`, `{"_rating_":1,"other":2}`)+","+
			row(itoa64(ms+60_000), `{"scorer_id":""}`, 1, 0, `{}`, `{}`, `{}`)+","+
			row(itoa64(ms+60_000), `{"scorer_id":"judge-b"}`, 1, 0, `{}`, `{}`, `{}`)+"]")
		check("by agent", aggregate(feedback.AggregateReq{GroupBy: []string{"span_agent_name", "span_status_code"}}), "["+
			row("null", `{"span_agent_name":"","span_status_code":"UNSET"}`, 1, 0, `{}`, `{}`, `{}`)+","+
			row("null", `{"span_agent_name":"bot","span_status_code":"UNSET"}`, 2, 2, `{"fast":1,"good":2}`, `{"_rating_":2,"other":1}`, `{"_rating_":1,"other":2}`)+","+
			row("null", `{"span_agent_name":"other","span_status_code":"UNSET"}`, 1, 0, `{}`, `{}`, `{}`)+"]")
		for _, tc := range []struct {
			name string
			req  feedback.AggregateReq
			want string
		}{
			{"everything", feedback.AggregateReq{}, row("null", `{}`, 4, 2, `{"fast":1,"good":2}`, `{"_rating_":2,"other":1}`, `{"_rating_":1,"other":2}`)},
			{"monitor prefix", feedback.AggregateReq{MonitorIDs: []string{"mon-*"}}, row("null", `{}`, 3, 2, `{"fast":1,"good":2}`, `{"_rating_":2,"other":1}`, `{"_rating_":1,"other":2}`)},
			{"monitor exact", feedback.AggregateReq{MonitorIDs: []string{"mon-2"}}, row("null", `{}`, 1, 0, `{}`, `{}`, `{}`)},
			{"scorer", feedback.AggregateReq{ScorerIDs: []string{"judge-a"}, RatingMin: ptrFloat(0.5)}, row("null", `{}`, 1, 1, `{"fast":1,"good":1}`, `{"_rating_":1}`, `{"_rating_":0.75}`)},
			{"rating max", feedback.AggregateReq{RatingMax: ptrFloat(0.5)}, row("null", `{}`, 1, 1, `{"good":1}`, `{"_rating_":1,"other":1}`, `{"_rating_":0.25,"other":2}`)},
			{"tags", feedback.AggregateReq{Tags: []string{"fast", "slow"}}, row("null", `{}`, 1, 1, `{"fast":1,"good":1}`, `{"_rating_":1}`, `{"_rating_":0.75}`)},
			{"types", feedback.AggregateReq{FeedbackTypes: []string{"cust*"}}, row("null", `{}`, 1, 0, `{}`, `{}`, `{}`)},
			{"agent", feedback.AggregateReq{SpanAgentNames: []string{"other"}}, row("null", `{}`, 1, 0, `{}`, `{}`, `{}`)},
			// weave_ref is a call ref: its second-to-last segment is "call".
			{"span types", feedback.AggregateReq{SpanTypes: []string{"agent_turn"}}, row("null", `{}`, 0, 0, `{}`, `{}`, `{}`)},
			{"window", feedback.AggregateReq{AfterMS: ms + 15_000, BeforeMS: ms + 75_000}, row("null", `{}`, 2, 1, `{"good":1}`, `{"_rating_":1,"other":1}`, `{"_rating_":0.25,"other":2}`)},
		} {
			check(tc.name, aggregate(tc.req), "["+tc.want+"]")
		}

		// Another project's rows are not counted.
		res, err := svc.Aggregate(ctx, feedback.AggregateReq{ProjectID: "team/other", AfterMS: ms, BeforeMS: ms + 3600_000})
		if err != nil || len(res.Buckets) != 1 || res.Buckets[0].TotalCount != 0 {
			t.Errorf("another project: %+v %v", res, err)
		}
		second := int64(1)
		for _, bad := range []feedback.AggregateReq{
			{AfterMS: ms, BeforeMS: ms - 1},
			{AfterMS: 0, BeforeMS: 400 * 24 * 3600_000},
			{AfterMS: ms, BeforeMS: ms + 3600_000, TimeBucketSeconds: new(int64)},
			{AfterMS: ms, BeforeMS: ms + 24*3600_000, TimeBucketSeconds: &second},
		} {
			bad.ProjectID = project
			if _, err := svc.Aggregate(ctx, bad); !errors.Is(err, weft.ErrInvalid) {
				t.Errorf("%+v: %v", bad, err)
			}
		}
	})
}

func ptrFloat(f float64) *float64 { return &f }
func itoa(n int) string           { return itoa64(int64(n)) }
func itoa64(n int64) string       { b, _ := json.Marshal(n); return string(b) }
