package monitor_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/chat"
	"github.com/weftlabs/weft/internal/testdb"
	"github.com/weftlabs/weft/monitor"
)

// TestBackfillScoresPastCallsOnce: a backfill runs a monitor over the
// calls that started in its range — over three jobs' chunks of them — at the
// monitor's sampling rate, and leaves the calls already scored live as they
// were: each sampled call of the range ends with exactly one verdict per
// scorer, calls outside the range or the monitor's ops none. Its progress
// counts what it matched, sampled, dispatched and scored; a second backfill
// of the same range scores nothing again.
func TestBackfillScoresPastCallsOnce(t *testing.T) {
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		s := newServer(t, db, serverOptions{monitor: func(cfg *monitor.Config) { cfg.BackfillChunk = 50 }})
		ctx := s.user(t, "alice", "acme")
		const project = "acme/support"
		answer := "weave:///acme/support/op/answer:abc"
		from := time.Now().UTC().Add(-2 * time.Hour).Truncate(time.Millisecond)

		var past, ignored []call
		for i := range 110 {
			past = append(past, call{id: newID(), op: answer, output: `"7"`, at: from.Add(time.Duration(i) * time.Second)})
		}
		for i := range 5 {
			ignored = append(ignored, call{id: newID(), op: answer, output: `"7"`, at: from.Add(-time.Duration(i+1) * time.Minute)},
				call{id: newID(), op: "weave:///acme/support/op/other:abc", output: `"7"`, at: from.Add(time.Duration(i) * time.Minute)})
		}
		s.ingest(t, ctx, project, append(past, ignored...)...)

		jsonRef := s.publish(t, ctx, project, "json_valid", scorerVal(monitor.ClassValidJSON, ""))
		digitRef := s.publish(t, ctx, project, "has_digit", scorerVal(monitor.ClassRegex, `"pattern":"[0-9]"`))
		const rate = 0.5
		s.publish(t, ctx, project, "sampled", monitorVal(rate, []string{"weave:///acme/support/op/answer:*"}, true, jsonRef, digitRef))
		var live []call
		for range 20 {
			live = append(live, call{id: newID(), op: answer, output: `"8"`})
		}
		s.ingest(t, ctx, project, live...)
		sampled := func(calls []call) (ids []string) {
			for _, c := range calls {
				if monitor.Sampled("sampled", c.id, rate) {
					ids = append(ids, c.id)
				}
			}
			return ids
		}
		pastSampled, liveSampled := sampled(past), sampled(live)
		eventually(t, 30*time.Second, "the live calls scored", func() bool {
			got := s.verdictFeedback(t, project)
			for _, id := range liveSampled {
				if len(got[id]) != 2 {
					return false
				}
			}
			return true
		})

		b, err := s.monitors.StartBackfill(ctx, monitor.BackfillReq{ProjectID: project, MonitorID: "sampled", StartedFrom: &from})
		if err != nil {
			t.Fatal(err)
		}
		if b.State != monitor.BackfillRunning || b.CreatedBy != weft.UserID(ctx) {
			t.Errorf("new backfill: state %s, created_by %s; want running, by %s", b.State, b.CreatedBy, weft.UserID(ctx))
		}
		b = waitBackfill(t, s, project, b.ID)
		want := monitor.Backfill{CallsMatched: int64(len(past) + len(live)), CallsSampled: int64(len(pastSampled) + len(liveSampled)),
			Verdicts: monitor.VerdictCounts{Done: 2 * int64(len(pastSampled))}}
		want.CallsDispatched = want.CallsSampled
		if b.State != monitor.BackfillDone || !b.Planned || b.CallsMatched != want.CallsMatched || b.CallsSampled != want.CallsSampled ||
			b.CallsDispatched != want.CallsDispatched || b.Verdicts != want.Verdicts || b.FinishedAt == nil {
			t.Errorf("backfill: %+v\nwant done, planned, matched %d, sampled %d, dispatched %d, verdicts %+v", *b,
				want.CallsMatched, want.CallsSampled, want.CallsDispatched, want.Verdicts)
		}

		got := s.verdictFeedback(t, project) // fails on a call with two verdicts of one scorer
		scored := map[string]bool{}
		for _, id := range append(pastSampled, liveSampled...) {
			scored[id] = true
			if len(got[id]) != 2 {
				t.Errorf("sampled call %s has %d verdicts, want 2", id, len(got[id]))
			}
		}
		for id := range got {
			if !scored[id] {
				t.Errorf("call %s was scored, but it is not a sampled call of the range", id)
			}
		}

		again, err := s.monitors.StartBackfill(ctx, monitor.BackfillReq{ProjectID: project, MonitorID: "sampled", StartedFrom: &from})
		if err != nil {
			t.Fatal(err)
		}
		again = waitBackfill(t, s, project, again.ID)
		if again.CallsSampled != want.CallsSampled || again.Verdicts != (monitor.VerdictCounts{}) {
			t.Errorf("second backfill: sampled %d, verdicts %+v; want %d and none new", again.CallsSampled, again.Verdicts, want.CallsSampled)
		}
		list, err := s.monitors.Backfills(ctx, project, "sampled")
		if err != nil || len(list) != 2 || list[0].ID != again.ID {
			t.Errorf("listing: %d backfills (%v), want both, newest first", len(list), err)
		}
	})
}

// waitBackfill waits for a backfill to end and returns it.
func waitBackfill(t *testing.T, s *server, projectID, id string) *monitor.Backfill {
	t.Helper()
	var b *monitor.Backfill
	eventually(t, 60*time.Second, "the backfill done", func() bool {
		var err error
		if b, err = s.monitors.Backfill(context.Background(), projectID, id); err != nil {
			t.Fatal(err)
		}
		return b.State != monitor.BackfillRunning
	})
	return b
}

// TestBackfillRefused: a backfill of a monitor the project does not have,
// or of a range that ends before it starts, is refused; an unknown
// backfill is not found.
func TestBackfillRefused(t *testing.T) {
	s := newServer(t, testdb.SQLite(t), serverOptions{})
	ctx := s.user(t, "alice", "acme")
	const project = "acme/support"
	jsonRef := s.publish(t, ctx, project, "json_valid", scorerVal(monitor.ClassValidJSON, ""))
	s.publish(t, ctx, project, "m", monitorVal(1, nil, false, jsonRef))
	now := time.Now()
	later := now.Add(time.Hour)
	for name, c := range map[string]struct {
		req  monitor.BackfillReq
		want error
	}{
		"unknown monitor":    {monitor.BackfillReq{ProjectID: project, MonitorID: "nothing"}, monitor.ErrMonitorNotFound},
		"other project":      {monitor.BackfillReq{ProjectID: "rival/p", MonitorID: "m"}, monitor.ErrMonitorNotFound},
		"range ends first":   {monitor.BackfillReq{ProjectID: project, MonitorID: "m", StartedFrom: &later, StartedBefore: &now}, monitor.ErrInvalidBackfill},
		"range of no length": {monitor.BackfillReq{ProjectID: project, MonitorID: "m", StartedFrom: &now, StartedBefore: &now}, monitor.ErrInvalidBackfill},
	} {
		if _, err := s.monitors.StartBackfill(ctx, c.req); !errors.Is(err, c.want) {
			t.Errorf("%s: err %v, want %v", name, err, c.want)
		}
	}
	if _, err := s.monitors.Backfill(ctx, project, "nothing"); !errors.Is(err, monitor.ErrBackfillNotFound) {
		t.Errorf("unknown backfill: err %v, want ErrBackfillNotFound", err)
	}
	if _, err := s.monitors.CancelBackfill(ctx, project, "nothing"); !errors.Is(err, monitor.ErrBackfillNotFound) {
		t.Errorf("cancelling an unknown backfill: err %v, want ErrBackfillNotFound", err)
	}
}

// heldJudge is a judge model that holds every request until released, then
// answers that it is busy (a failure worth retrying).
type heldJudge struct {
	entered atomic.Int64
	release chan struct{}
}

func (h *heldJudge) Complete(ctx context.Context, _ string, _ []byte) (*chat.Completion, error) {
	h.entered.Add(1)
	select {
	case <-h.release:
	case <-ctx.Done():
	}
	return nil, errors.New("the judge model is busy")
}

// TestBackfillCancel: cancelling a backfill whose judge requests are
// queued drops them: the verdicts it waits for are removed, the jobs that
// would have asked for them find nothing to do, and no verdict or feedback
// appears after the cancel; the backfill says cancelled.
func TestBackfillCancel(t *testing.T) {
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		judge := &heldJudge{release: make(chan struct{})}
		s := newServer(t, db, serverOptions{monitor: func(cfg *monitor.Config) {
			cfg.Chat = judge
			cfg.MaxAttempts = 100
		}})
		ctx := s.user(t, "alice", "acme")
		const project = "acme/support"
		var calls []call
		for range 10 {
			calls = append(calls, call{id: newID(), op: "weave:///acme/support/op/answer:abc", output: `"7"`})
		}
		s.ingest(t, ctx, project, calls...)
		judgeRef := s.publish(t, ctx, project, "judge", judgeVal("judge-qwen3"))
		s.publish(t, ctx, project, "graded", monitorVal(1, nil, false, judgeRef)) // inactive: a backfill runs it all the same

		b, err := s.monitors.StartBackfill(ctx, monitor.BackfillReq{ProjectID: project, MonitorID: "graded"})
		if err != nil {
			t.Fatal(err)
		}
		eventually(t, 30*time.Second, "the judge requests queued and one asked", func() bool {
			b, err = s.monitors.Backfill(ctx, project, b.ID)
			return err == nil && b.Verdicts.Pending == int64(len(calls)) && judge.entered.Load() > 0
		})
		b, err = s.monitors.CancelBackfill(ctx, project, b.ID)
		if err != nil {
			t.Fatal(err)
		}
		if b.State != monitor.BackfillCancelled || b.Verdicts != (monitor.VerdictCounts{}) || b.FinishedAt == nil {
			t.Errorf("cancelled backfill: %+v; want cancelled, with no verdict pending", *b)
		}
		close(judge.release)
		time.Sleep(time.Second) // the held and queued judge jobs run, and find nothing to do
		var rows int
		if err := db.NewRaw("SELECT count(*) FROM monitor_verdicts WHERE project_id = ?", project).Scan(context.Background(), &rows); err != nil {
			t.Fatal(err)
		}
		if rows != 0 {
			t.Errorf("%d verdict rows after the cancel, want none", rows)
		}
		if got := s.verdictFeedback(t, project); len(got) != 0 {
			t.Errorf("feedback after the cancel: %v", got)
		}
		if again, err := s.monitors.CancelBackfill(ctx, project, b.ID); err != nil || again.State != monitor.BackfillCancelled {
			t.Errorf("cancelling again: %v, %v; want it cancelled still", again, err)
		}
	})
}
