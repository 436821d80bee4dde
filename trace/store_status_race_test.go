package trace_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/testdb"
	"github.com/weftlabs/weft/trace"
)

// TestStatusRollUpConcurrent: a raising child's start and end and its root's
// end written at once from two goroutines, each apart (call/start, call/end)
// or in one batch, leave every root descendant_error, whichever transaction
// takes the root's row first.
func TestStatusRollUpConcurrent(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		s, ctx := newStore(t, db)
		raised := "ValueError: no"
		const traces = 120
		roots := make([]string, traces)
		for i := range roots {
			roots[i] = id()
			upsert(t, ctx, s, start(roots[i], roots[i], nil, t0, `{}`))
		}
		// Each write alone or in one batch, by the trace's number.
		write := func(apart bool, items ...trace.BatchItem) error {
			if !apart {
				res, err := s.UpsertBatch(ctx, &trace.UpsertBatchReq{Batch: items})
				if err == nil {
					err = errors.Join(res.Res[0].Err, res.Res[len(res.Res)-1].Err)
				}
				return err
			}
			for _, item := range items {
				var err error
				if item.Start != nil {
					_, err = s.CallStart(ctx, &trace.CallStartReq{Start: *item.Start})
				} else {
					_, err = s.CallEnd(ctx, &trace.CallEndReq{End: *item.End})
				}
				if err != nil {
					return err
				}
			}
			return nil
		}
		for i, root := range roots {
			child := id()
			childEnd := end(child, t0.Add(time.Second), `{}`)
			childEnd.End.Exception = &raised
			var wg sync.WaitGroup
			errs := make([]error, 2)
			ready := make(chan struct{})
			wg.Go(func() { <-ready; errs[0] = write(i%2 == 0, start(child, root, &root, t0, `{}`), childEnd) })
			wg.Go(func() { <-ready; errs[1] = write(i%4 < 2, end(root, t0.Add(2*time.Second), `{}`)) })
			close(ready)
			wg.Wait()
			if err := errors.Join(errs...); err != nil {
				t.Fatal(err)
			}
		}
		missed := 0
		for _, root := range roots {
			var status string
			if err := db.NewSelect().Table("calls").Column("status").Where("project_id = ? AND id = ?", project, root).Scan(ctx, &status); err != nil {
				t.Fatal(err)
			}
			if status != trace.StatusDescendantError {
				missed++
			}
		}
		if missed > 0 {
			t.Errorf("%d of %d roots whose child raised are not %s", missed, traces, trace.StatusDescendantError)
		}
	})
}

// TestStatusRollUpAtomic: a call's end is written with its root's roll-up
// or not at all. A trigger makes the roll-up's update of the root fail; the
// raising child's end (written alone, as call/end does) must then be
// missing too, and its root still a success.
func TestStatusRollUpAtomic(t *testing.T) {
	t.Parallel()
	trigger := map[string][]string{
		"sqlite": {`CREATE TRIGGER calls_refuse_rollup BEFORE UPDATE OF status ON calls
			WHEN NEW.status = 'descendant_error' AND OLD.parent_id IS NULL
			BEGIN SELECT RAISE(ABORT, 'roll-up refused'); END`},
		"postgres": {`CREATE FUNCTION calls_refuse_rollup() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN IF NEW.status = 'descendant_error' AND OLD.parent_id IS NULL THEN RAISE EXCEPTION 'roll-up refused'; END IF; RETURN NEW; END $$`,
			`CREATE TRIGGER calls_refuse_rollup BEFORE UPDATE ON calls FOR EACH ROW EXECUTE FUNCTION calls_refuse_rollup()`},
	}
	for name, open := range map[string]func(testing.TB) *weft.DB{"sqlite": testdb.SQLite, "postgres": testdb.Postgres} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			db := open(t)
			s, ctx := newStore(t, db)
			root, child := id(), id()
			upsert(t, ctx, s, start(root, root, nil, t0, `{}`), end(root, t0.Add(2*time.Second), `{}`))
			if _, err := s.CallStart(ctx, &trace.CallStartReq{Start: *start(child, root, &root, t0, `{}`).Start}); err != nil {
				t.Fatal(err)
			}
			for _, q := range trigger[name] {
				if _, err := db.ExecContext(ctx, q); err != nil {
					t.Fatal(err)
				}
			}
			childEnd := end(child, t0.Add(time.Second), `{}`)
			raised := "ValueError: no"
			childEnd.End.Exception = &raised
			if _, err := s.CallEnd(ctx, &trace.CallEndReq{End: *childEnd.End}); err == nil {
				t.Fatal("the roll-up failed, yet the end was written")
			}
			var stored struct {
				Status    string  `bun:"status"`
				Exception *string `bun:"exception"`
			}
			for callID, want := range map[string]string{root: trace.StatusSuccess, child: trace.StatusRunning} {
				if err := db.NewSelect().Table("calls").Column("status", "exception").Where("project_id = ? AND id = ?", project, callID).
					Scan(context.Background(), &stored); err != nil {
					t.Fatal(err)
				}
				if stored.Status != want || (callID == child && stored.Exception != nil) {
					t.Errorf("call %s: status %q, exception written %v after a failed roll-up, want %q and nothing of the end",
						callID, stored.Status, stored.Exception != nil, want)
				}
			}
		})
	}
}

// holdWrite holds, inside its transaction, the first write that writes
// call held, until released or a while has passed.
type holdWrite struct {
	held    string
	once    sync.Once
	written chan struct{} // closed when the held write has written its rows
	release chan struct{}
}

func (h *holdWrite) CallsWritten(_ context.Context, _ trace.WriteTx, calls []trace.WrittenCall) error {
	for _, c := range calls {
		if c.ID == h.held {
			h.once.Do(func() {
				close(h.written)
				select {
				case <-h.release:
				case <-time.After(2 * time.Second):
				}
			})
		}
	}
	return nil
}

// TestStatusRollUpFirstRows: a root and a raising child of its trace,
// each the first row of its call, written at the same moment: the first
// write is held in its transaction after its rows and its roll-up, and
// the second is written meanwhile. Neither sees the other's row, so unless
// the second waits for the first to commit, the root stays a success. In
// both orders the root must end descendant_error.
func TestStatusRollUpFirstRows(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		for _, rootFirst := range []bool{true, false} {
			root, child := id(), id()
			hold := &holdWrite{written: make(chan struct{}), release: make(chan struct{})}
			s, err := trace.New(trace.Config{DB: db, Hook: hold})
			if err != nil {
				t.Fatal(err)
			}
			ctx := weft.WithPrincipal(context.Background(), weft.Principal{UserID: "u-alice", Username: "alice"})
			raised := "ValueError: no"
			childEnd := end(child, t0.Add(time.Second), `{}`)
			childEnd.End.Exception = &raised
			writes := [][]trace.BatchItem{
				{start(root, root, nil, t0, `{}`), end(root, t0.Add(2*time.Second), `{}`)},
				{start(child, root, &root, t0, `{}`), childEnd},
			}
			hold.held = root
			if !rootFirst {
				writes[0], writes[1] = writes[1], writes[0]
				hold.held = child
			}
			write := func(items []trace.BatchItem) error {
				res, err := s.UpsertBatch(ctx, &trace.UpsertBatchReq{Batch: items})
				if err == nil {
					err = errors.Join(res.Res[0].Err, res.Res[1].Err)
				}
				return err
			}
			var wg sync.WaitGroup
			errs := make([]error, 2)
			wg.Go(func() { errs[0] = write(writes[0]) })
			<-hold.written
			wg.Go(func() { errs[1] = write(writes[1]); close(hold.release) })
			wg.Wait()
			if err := errors.Join(errs...); err != nil {
				t.Fatal(err)
			}
			var status string
			if err := db.NewSelect().Table("calls").Column("status").Where("project_id = ? AND id = ?", project, root).Scan(ctx, &status); err != nil {
				t.Fatal(err)
			}
			if status != trace.StatusDescendantError {
				t.Errorf("root written first %v: the root is %q, want %s", rootFirst, status, trace.StatusDescendantError)
			}
		}
	})
}
