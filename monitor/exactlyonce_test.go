package monitor_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/feedback"
	"github.com/weftlabs/weft/internal/testdb"
	"github.com/weftlabs/weft/monitor"
)

// stallingWriter writes verdicts' feedback, then, the first time, holds the
// job until it is cancelled: a server that stops (or dies) after writing
// part of its work but before recording it.
type stallingWriter struct {
	monitor.FeedbackWriter
	once    sync.Once
	stalled chan struct{}
}

func (w *stallingWriter) BatchCreate(ctx context.Context, req feedback.BatchCreateReq) (feedback.BatchCreateRes, error) {
	res, err := w.FeedbackWriter.BatchCreate(ctx, req)
	if err != nil {
		return res, err
	}
	first := false
	w.once.Do(func() { first = true })
	if !first {
		return res, nil
	}
	close(w.stalled)
	<-ctx.Done()
	return res, ctx.Err()
}

// TestMonitorExactlyOnceAcrossServers: two servers on one database ingest
// calls of one project and both work the monitor jobs; one stops while a
// job of its own is half done (its feedback written, its verdicts not), and
// the other finishes that job. Every call gets exactly one verdict of each
// scorer, as one feedback row each.
func TestMonitorExactlyOnceAcrossServers(t *testing.T) {
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		stalling := &stallingWriter{stalled: make(chan struct{})}
		a := newServer(t, db, serverOptions{feedback: func(w monitor.FeedbackWriter) monitor.FeedbackWriter {
			stalling.FeedbackWriter = w
			return stalling
		}})
		ctx := a.user(t, "alice", "acme")
		const project = "acme/support"
		jsonRef := a.publish(t, ctx, project, "json_valid", scorerVal(monitor.ClassValidJSON, ""))
		digitRef := a.publish(t, ctx, project, "has_digit", scorerVal(monitor.ClassRegex, `"pattern":"[0-9]"`))
		a.publish(t, ctx, project, "every_call", monitorVal(1, nil, true, jsonRef, digitRef))

		var ids []string
		batch := func() []call {
			calls := make([]call, 20)
			for j := range calls {
				calls[j] = call{id: newID(), op: "weave:///acme/support/op/answer:abc", output: `"7"`}
				ids = append(ids, calls[j].id)
			}
			return calls
		}
		a.ingest(t, ctx, project, batch()...)
		select {
		case <-stalling.stalled:
		case <-time.After(30 * time.Second):
			t.Fatal("server a never took its monitor job")
		}
		// A second server starts while the first still runs, and both
		// ingest and work the queue; then the first stops, its stalled job
		// cancelled.
		// A stop that outlasts its deadline leaves the stalled job looking
		// running; the queue's rescuer gives it to b after rescueAfter.
		b := newServer(t, db, serverOptions{rescueAfter: 3 * time.Second})
		for i := range 8 {
			if i%2 == 0 {
				a.ingest(t, ctx, project, batch()...)
			} else {
				b.ingest(t, ctx, project, batch()...)
			}
		}
		a.stop(t)
		b.ingest(t, ctx, project, batch()...)

		var got map[string]map[string]map[string]any
		// The stalled job's feedback is written before its verdicts, so
		// the verdicts are what says every job has finished.
		doneVerdicts := func() int {
			var n int
			if err := db.NewRaw("SELECT count(*) FROM monitor_verdicts WHERE project_id = ? AND state = ?", project, monitor.StateDone).
				Scan(context.Background(), &n); err != nil {
				t.Fatal(err)
			}
			return n
		}
		eventually(t, 90*time.Second, "every call scored by both scorers", func() bool {
			if doneVerdicts() < 2*len(ids) {
				return false
			}
			got = b.verdictFeedback(t, project)
			for _, id := range ids {
				if len(got[id]) != 2 {
					return false
				}
			}
			return true
		})
		res, err := b.feedback.Query(context.Background(), feedback.QueryReq{ProjectID: project})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Result) != 2*len(ids) {
			t.Errorf("%d feedback rows, want %d: one per call and scorer", len(res.Result), 2*len(ids))
		}
		if verdicts := doneVerdicts(); verdicts != 2*len(ids) {
			t.Errorf("%d verdicts done, want %d", verdicts, 2*len(ids))
		}
	})
}
