// Package timeseries is what Weave's time-bucketed stats routes
// (/calls/stats, /feedback/stats) share: the window a request names, cut into
// buckets as Weave cuts it, and the aggregations they compute per bucket,
// named as Weave names them.
//
// A window runs from Start (inclusive) to End (exclusive). Its granularity is
// the request's, or chosen from the window's length as Weave chooses it (5
// minutes up to 2 hours, 1 hour up to 12 hours, 6 hours up to 3 days, 12
// hours up to 14 days, else a day), and widened so that no window has more
// than MaxBuckets buckets. Buckets are a regular grid of that width from
// the start of the bucket holding Start: for granularities of whole hours,
// counted from the local midnight (in the request's time zone) of Start's
// day, otherwise from the Unix epoch, as ClickHouse's toStartOfInterval
// aligns them. A row falls into bucket floor((t - origin) / granularity).
package timeseries

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/weftlabs/weft/internal/database"
)

// MaxBuckets bounds the buckets of one window (Weave's MAX_BUCKETS).
const MaxBuckets = 10_000

// Window is a resolved request window.
type Window struct {
	Start, End  time.Time
	Granularity int64 // seconds
	Location    *time.Location
	// Origin is the start of the first bucket.
	Origin time.Time
}

// Error is a window or aggregation a request names that cannot be served.
type Error struct{ msg string }

func (e *Error) Error() string { return e.msg }

func errorf(format string, args ...any) error { return &Error{fmt.Sprintf(format, args...)} }

// Resolve resolves a request's window: end defaults to now, timezone to UTC.
// A window longer than maxRange is refused.
func Resolve(start time.Time, end *time.Time, granularity *int64, timezone string, now time.Time, maxRange time.Duration) (Window, error) {
	w := Window{Start: start.UTC(), End: now.UTC()}
	if end != nil {
		w.End = end.UTC()
	}
	if start.IsZero() {
		return Window{}, errorf("start is required")
	}
	if w.End.Before(w.Start) {
		return Window{}, errorf("end must be after start")
	}
	if w.End.Sub(w.Start) > maxRange {
		return Window{}, errorf("the range from start to end cannot exceed %s (the server's stats range limit)", rangeText(maxRange))
	}
	if timezone == "" {
		timezone = "UTC"
	}
	loc, err := time.LoadLocation(timezone)
	if err != nil || timezone == "Local" {
		return Window{}, errorf("unknown time zone %q (an IANA name such as America/New_York)", timezone)
	}
	w.Location = loc
	span := w.End.Sub(w.Start).Seconds()
	if granularity != nil {
		if *granularity <= 0 {
			return Window{}, errorf("granularity must be a positive number of seconds")
		}
		w.Granularity = *granularity
	} else {
		w.Granularity = autoGranularity(span)
	}
	if span/float64(w.Granularity) > MaxBuckets {
		w.Granularity = max(w.Granularity, int64(span/MaxBuckets)+1)
	}
	w.Origin = w.bucketStart(w.Start)
	return w, nil
}

// rangeText writes a range limit in days when it is whole days.
func rangeText(d time.Duration) string {
	switch days := d / (24 * time.Hour); {
	case d%(24*time.Hour) != 0:
	case days == 1:
		return "1 day"
	case days > 1:
		return fmt.Sprintf("%d days", days)
	}
	return d.String()
}

// autoGranularity is Weave's choice of bucket width for a window of span
// seconds.
func autoGranularity(span float64) int64 {
	switch {
	case span <= 2*3600:
		return 300
	case span <= 12*3600:
		return 3600
	case span <= 3*86400:
		return 6 * 3600
	case span <= 14*86400:
		return 12 * 3600
	}
	return 86400
}

// bucketStart is the start of the bucket holding t.
func (w Window) bucketStart(t time.Time) time.Time {
	g := w.Granularity
	if g%3600 == 0 {
		local := t.In(w.Location)
		midnight := time.Date(local.Year(), local.Month(), local.Day(), 0, 0, 0, 0, w.Location)
		return midnight.Add(time.Duration((t.Unix()-midnight.Unix())/g*g) * time.Second).UTC()
	}
	return time.Unix(floorDiv(t.Unix(), g)*g, 0).UTC()
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// Buckets is the number of buckets from Origin up to End.
func (w Window) Buckets() int {
	n := int(math.Ceil(w.End.Sub(w.Origin).Seconds() / float64(w.Granularity)))
	return max(n, 0)
}

// BucketTime is the start of bucket i.
func (w Window) BucketTime(i int) time.Time {
	return w.Origin.Add(time.Duration(int64(i)*w.Granularity) * time.Second)
}

// Timestamp renders the start of bucket i as Weave does: ISO 8601 in the
// window's time zone, with its offset ("+00:00" for UTC).
func (w Window) Timestamp(i int) string {
	return w.BucketTime(i).In(w.Location).Format("2006-01-02T15:04:05-07:00")
}

// Index is the bucket index of the timestamp column ts (trusted text) of rows
// inside the window: whole buckets of Granularity seconds since Origin.
func (w Window) Index(d database.Dialect, ts string) database.Expr {
	return database.Expr{SQL: d.TimeBucket(ts), Args: []any{w.Origin.Unix(), w.Granularity}}
}

// Aggregation is one of Weave's AggregationType values.
type Aggregation string

// The aggregations of Weave's stats routes.
const (
	Sum        Aggregation = "sum"
	Avg        Aggregation = "avg"
	Min        Aggregation = "min"
	Max        Aggregation = "max"
	Count      Aggregation = "count"
	CountTrue  Aggregation = "count_true"
	CountFalse Aggregation = "count_false"
)

// Aggregations lists every Aggregation, for schemas.
var Aggregations = []string{string(Sum), string(Avg), string(Min), string(Max), string(Count), string(CountTrue), string(CountFalse)}

// SQL aggregates the value expression x (trusted text) over a group; NULLs
// are left out as ClickHouse's *OrNull aggregates leave them out.
func (a Aggregation) SQL(d database.Dialect, x string) (string, error) {
	switch a {
	case Sum, Avg, Min, Max, Count:
		return string(a) + "(" + x + ")", nil
	case CountTrue:
		return "sum(CASE WHEN " + x + " = 1 THEN 1 ELSE 0 END)", nil
	case CountFalse:
		return "sum(CASE WHEN " + x + " = 0 THEN 1 ELSE 0 END)", nil
	}
	return "", errorf("unknown aggregation %q (one of %v)", string(a), Aggregations)
}

// ZeroWhenEmpty tells whether Weave reports an empty bucket's value as 0
// (sums, counts, averages) rather than null (minimum, maximum, percentiles).
func (a Aggregation) ZeroWhenEmpty() bool {
	switch a {
	case Sum, Avg, Count, CountTrue, CountFalse:
		return true
	}
	return false
}

// Alias is the name of an aggregation of metric in a bucket: "sum_latency_ms".
func Alias(a Aggregation, metric string) string { return string(a) + "_" + metric }

// PercentileAlias is the name of a percentile of metric: "p95_latency_ms",
// "p99.9_latency_ms".
func PercentileAlias(p float64, metric string) string {
	return "p" + strconv.FormatFloat(p, 'f', -1, 64) + "_" + metric
}

// CheckPercentiles refuses a percentile outside 0..100.
func CheckPercentiles(ps []float64) error {
	for _, p := range ps {
		if !(p >= 0 && p <= 100) {
			return errorf("percentile must be between 0 and 100, got %v", p)
		}
	}
	return nil
}

// Percentiles computes percentiles of groups of values in the database:
// Query selects, from the rows of a subquery with a group column g and a
// value column v, the at most two rows around each asked percentile's rank
// in each group (g and k, a second key) (ranked by v, with the group's count), and Add and Value
// interpolate linearly between them, as ClickHouse's quantile does for the
// samples it keeps.
type Percentiles struct {
	levels []float64 // 0..1
	groups map[string]*ranked
}

type ranked struct {
	n      int64
	values map[int64]float64 // by 0-based rank
}

// NewPercentiles asks for ps (0..100).
func NewPercentiles(ps []float64) *Percentiles {
	p := &Percentiles{groups: map[string]*ranked{}}
	for _, x := range ps {
		p.levels = append(p.levels, math.Round(x/100*1e6)/1e6)
	}
	slices.Sort(p.levels)
	p.levels = slices.Compact(p.levels)
	return p
}

// Query is the selection over sub (whose columns are g, k and v), with
// columns g, k, r (the 0-based rank), n and v.
func (p *Percentiles) Query(sub database.Expr) database.Expr {
	var near []string
	args := append([]any(nil), sub.Args...)
	for _, l := range p.levels {
		near = append(near, "abs(r - ? * (n - 1)) < 1")
		args = append(args, l)
	}
	where := "false"
	if len(near) > 0 {
		where = near[0]
		for _, x := range near[1:] {
			where += " OR " + x
		}
	}
	return database.Expr{SQL: "SELECT g, k, r, n, v FROM (SELECT g, k, v, row_number() OVER (PARTITION BY g, k ORDER BY v) - 1 AS r, count(*) OVER (PARTITION BY g, k) AS n FROM (" +
		sub.SQL + ") AS s WHERE v IS NOT NULL) AS ranked WHERE " + where, Args: args}
}

// Add takes one row of Query; group names its g and k.
func (p *Percentiles) Add(group string, rank, n int64, v float64) {
	g := p.groups[group]
	if g == nil {
		g = &ranked{n: n, values: map[int64]float64{}}
		p.groups[group] = g
	}
	g.values[rank] = v
}

// Value is percentile x (0..100) of group; ok is false for a group without
// values.
func (p *Percentiles) Value(group string, x float64) (float64, bool) {
	g := p.groups[group]
	if g == nil || g.n == 0 {
		return 0, false
	}
	pos := math.Round(x/100*1e6) / 1e6 * float64(g.n-1)
	lo, hi := int64(math.Floor(pos)), int64(math.Ceil(pos))
	a, b := g.values[lo], g.values[hi]
	return a + (b-a)*(pos-float64(lo)), true
}
