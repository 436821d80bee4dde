package monitor_test

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/testdb"
	"github.com/weftlabs/weft/monitor"
)

// TestStatsPerInterval: a monitor's stats with a granularity count its
// verdicts per interval of the range by when they were queued, every
// interval of the range listed (the empty ones as zeros), the range's
// totals the sum of its intervals; verdicts queued outside the range are
// left out, and a range without a start, with an end before it or longer
// than Config.StatsMaxRange is a 400.
func TestStatsPerInterval(t *testing.T) {
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		t0 := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
		var clock atomic.Int64
		clock.Store(t0.Add(-time.Hour).UnixNano()) // the monitor is active from 08:00
		s := newServer(t, db, serverOptions{monitor: func(c *monitor.Config) {
			c.Now = func() time.Time { return time.Unix(0, clock.Load()) }
			c.StatsMaxRange = 3 * time.Hour
		}})
		ctx := s.user(t, "alice", "acme")
		const project = "acme/support"
		digits := s.publish(t, ctx, project, "has_digit", scorerVal(monitor.ClassRegex, `"pattern":"[0-9]+"`))
		s.publish(t, ctx, project, "quality", monitorVal(1, []string{"weave:///acme/support/op/answer:*"}, true, digits))
		// Verdicts queued at 08:30 (before the range), 09:10 twice, 11:59
		// and 12:00 (the range's end).
		done := 0
		for _, at := range []time.Duration{-30 * time.Minute, 10 * time.Minute, 10 * time.Minute, 179 * time.Minute, 180 * time.Minute} {
			clock.Store(t0.Add(at).UnixNano())
			s.ingest(t, ctx, project, call{id: newID(), op: "weave:///acme/support/op/answer:abc", output: `"42"`})
			done++
			eventually(t, 30*time.Second, "the verdict", func() bool {
				st, err := s.monitors.Stats(ctx, monitor.StatsReq{ProjectID: project, MonitorID: "quality"})
				return err == nil && st.Verdicts.Done == int64(done)
			})
		}

		end := t0.Add(3 * time.Hour)
		st, err := s.monitors.Stats(ctx, monitor.StatsReq{ProjectID: project, MonitorID: "quality", From: &t0, Before: &end, Granularity: 3600})
		if err != nil {
			t.Fatal(err)
		}
		want := []int64{2, 0, 1}
		if len(st.Intervals) != len(want) {
			t.Fatalf("%d intervals, want %d: %+v", len(st.Intervals), len(want), st.Intervals)
		}
		for i, in := range st.Intervals {
			if !in.Start.Equal(t0.Add(time.Duration(i)*time.Hour)) || in.Seconds != 3600 || in.Verdicts.Done != want[i] || in.Verdicts.Error != 0 {
				t.Errorf("interval %d: %+v, want %d done from %s", i, in, want[i], t0.Add(time.Duration(i)*time.Hour))
			}
		}
		if st.Verdicts.Done != 3 {
			t.Errorf("the range's totals: %+v, want the 3 verdicts of its intervals", st.Totals)
		}

		tooLong := end.Add(time.Hour)
		for _, req := range []monitor.StatsReq{
			{ProjectID: project, MonitorID: "quality", Granularity: 3600},
			{ProjectID: project, MonitorID: "quality", From: &end, Before: &t0, Granularity: 3600},
			{ProjectID: project, MonitorID: "quality", From: &t0, Before: &tooLong, Granularity: 3600},
		} {
			if _, err := s.monitors.Stats(ctx, req); !errors.Is(err, monitor.ErrInvalidStats) {
				t.Errorf("stats of %+v: %v, want ErrInvalidStats", req, err)
			}
		}
	})
}
