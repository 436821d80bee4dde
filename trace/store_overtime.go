package trace

import (
	"context"
	"math"
	"slices"
	"time"

	"github.com/weftlabs/weft"
)

// Groupings of [CallsOverTimeReq]: what a series of the answer is per.
const (
	GroupNone   = ""
	GroupOp     = "op_name"
	GroupUser   = "wb_user_id"
	GroupStatus = "status"
)

// MaxTimeBuckets bounds the intervals of one [CallsOverTimeReq]: a 30-day
// range by the hour is 720.
const MaxTimeBuckets = 1000

// LatencyBounds are the upper bounds, in milliseconds, of the latency
// histogram of a [TimeBucket] (its last bin holds what is longer).
var LatencyBounds = []float64{10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000, 300000}

// CallsOverTimeReq asks for a project's traces (root calls) started in
// [From, To), counted per interval of Width and per group.
type CallsOverTimeReq struct {
	ProjectID string
	From, To  time.Time
	// Width is the interval, at least a minute; (To - From) / Width is at
	// most MaxTimeBuckets.
	Width time.Duration
	// GroupBy is GroupNone, GroupOp, GroupUser or GroupStatus.
	GroupBy string
}

// TimeBucket is what the traces of one group started in one interval came
// to.
type TimeBucket struct {
	// Start is the start of the interval.
	Start time.Time
	// Group is the op name, the user id or the status ("" for GroupNone,
	// and for traces without one).
	Group  string
	Calls  int64
	Errors int64 // traces whose root raised
	// Tokens are the roots' own total tokens over their models; Cost their
	// priced usage (0 when none is priced).
	Tokens int64
	Cost   float64
	// Latency counts the ended roots by latency, bin i up to
	// LatencyBounds[i] (and the last bin beyond them).
	Latency []int64
}

// Percentile estimates the p-th quantile (0 < p < 1) of the bucket's
// latencies in milliseconds from its histogram, linearly within a bin (the
// last bin reads as its lower bound); NaN without an ended call.
func (b *TimeBucket) Percentile(p float64) float64 { return histogramPercentile(b.Latency, p) }

// histogramPercentile is TimeBucket.Percentile over the bins of counts.
func histogramPercentile(counts []int64, p float64) float64 {
	var n int64
	for _, c := range counts {
		n += c
	}
	if n == 0 {
		return math.NaN()
	}
	rank := p * float64(n)
	var below int64
	for i, c := range counts {
		if c == 0 || float64(below+c) < rank {
			below += c
			continue
		}
		lo := 0.0
		if i > 0 {
			lo = LatencyBounds[i-1]
		}
		if i == len(LatencyBounds) {
			return lo
		}
		return lo + (LatencyBounds[i]-lo)*(rank-float64(below))/float64(c)
	}
	return LatencyBounds[len(LatencyBounds)-1]
}

// timeBucketRow is a row of the query.
type timeBucketRow struct {
	Bucket int64    `bun:"bucket"`
	Group  *string  `bun:"grp"`
	Calls  int64    `bun:"calls"`
	Errors int64    `bun:"errors"`
	Tokens *float64 `bun:"tokens"`
	Cost   *float64 `bun:"cost"`
}

// CallsOverTime implements [Service].
func (s *Store) CallsOverTime(ctx context.Context, req *CallsOverTimeReq) ([]TimeBucket, error) {
	if _, _, err := weft.ParseProjectID(req.ProjectID); err != nil {
		return nil, err
	}
	switch {
	case req.Width < time.Minute || req.Width%time.Second != 0:
		return nil, weft.Errorf(ErrInvalidQuery, "the interval must be whole seconds, at least a minute")
	case !req.From.Before(req.To):
		return nil, weft.Errorf(ErrInvalidQuery, "the range must end after it starts")
	case req.To.Sub(req.From)/req.Width > MaxTimeBuckets:
		return nil, weft.Errorf(ErrInvalidQuery, "at most %d intervals: choose a wider interval or a shorter range", MaxTimeBuckets)
	}
	var group string
	var groupArgs []any
	switch req.GroupBy {
	case GroupNone:
		group = "NULL"
	case GroupOp:
		group = "c.op_name"
	case GroupUser:
		group = "c.pf_user_id"
	case GroupStatus:
		st := statusExpr(s.dialect)
		group, groupArgs = st.SQL, st.Args
	default:
		return nil, weft.WithFields(ErrInvalidQuery, map[string]any{"param": "group_by"}, "group by one of op_name, wb_user_id, status")
	}
	book, err := s.priceBook(ctx, req.ProjectID, true)
	if err != nil {
		return nil, err
	}
	cost := book.costSQL(s.dialect)
	// Each trace's own figures once, in a subquery; the outer query adds
	// them up per interval and group, its latency bins reading the
	// subquery's column rather than computing a latency per bin.
	traces := s.db.NewSelect().TableExpr("calls AS c").
		ColumnExpr(s.dialect.TimeBucket("c.started_at")+" AS bucket", req.From.Unix(), int64(req.Width/time.Second)).
		ColumnExpr(group+" AS grp", groupArgs...).
		ColumnExpr("CASE WHEN "+failedCondition+" THEN 1 ELSE 0 END AS failed").
		ColumnExpr(s.dialect.JSONObjectArraySum("c.usage", usageTotal)+" AS tokens").
		ColumnExpr(cost.SQL+" AS cost", cost.Args...).
		ColumnExpr(s.dialect.ElapsedMillis("c.started_at", "c.ended_at") + " AS d")
	traces = visible(traces, req.ProjectID).Where("c.parent_id IS NULL").
		Where("c.started_at >= ?", req.From.UTC()).Where("c.started_at < ?", req.To.UTC())
	q := s.db.NewSelect().TableExpr("(?) AS t", traces).
		ColumnExpr("bucket, grp, count(*) AS calls, sum(failed) AS errors, sum(tokens) AS tokens, sum(cost) AS cost")
	// One count per latency bin: the bounds are the package's own numbers.
	bins := make([]int64, len(LatencyBounds)+1)
	binArgs := make([]any, len(bins))
	for i := range bins {
		binArgs[i] = &bins[i]
		cond, args := "d IS NOT NULL", []any{}
		if i > 0 {
			cond += " AND d >= ?"
			args = append(args, LatencyBounds[i-1])
		}
		if i < len(LatencyBounds) {
			cond += " AND d < ?"
			args = append(args, LatencyBounds[i])
		}
		q = q.ColumnExpr("sum(CASE WHEN "+cond+" THEN 1 ELSE 0 END) AS lat"+itoa(i), args...)
	}
	q = q.GroupExpr("bucket, grp").OrderExpr("bucket, grp")
	rows, err := q.Rows(ctx)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []TimeBucket
	for rows.Next() {
		var r timeBucketRow
		if err := rows.Scan(append([]any{&r.Bucket, &r.Group, &r.Calls, &r.Errors, &r.Tokens, &r.Cost}, binArgs...)...); err != nil {
			return nil, err
		}
		b := TimeBucket{Start: req.From.Add(time.Duration(r.Bucket) * req.Width).UTC(), Calls: r.Calls, Errors: r.Errors, Latency: slices.Clone(bins)}
		if r.Group != nil {
			b.Group = *r.Group
		}
		if r.Tokens != nil {
			b.Tokens = int64(*r.Tokens)
		}
		if r.Cost != nil {
			b.Cost = *r.Cost
		}
		out = append(out, b)
	}
	return out, rows.Err()
}
