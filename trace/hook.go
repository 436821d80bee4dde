package trace

import (
	"context"
	"database/sql"

	"github.com/jackc/pgx/v5"
)

// WriteHook is told of the calls a write starts or ends, inside the write's
// transaction and after its rows are written: what the hook writes in tx
// commits with the calls or not at all, so that work which must follow every
// ended call (an online evaluation) cannot be lost between the two. It runs
// on the ingest path, so it should cost little more than a statement or
// two; an error fails the whole write. Renames are not reported.
type WriteHook interface {
	CallsWritten(ctx context.Context, tx WriteTx, calls []WrittenCall) error
}

// WriteTx is the transaction of a write, in the form its driver runs it:
// Pgx on PostgreSQL, SQL on SQLite. Exactly one is set.
type WriteTx struct {
	Pgx pgx.Tx
	SQL *sql.Tx
}

// WrittenCall is a call a write started or ended (or both). A call may end
// before it starts; the write that brings its second half completes it.
type WrittenCall struct {
	ProjectID string
	ID        string
	Started   bool
	Ended     bool
}

// written lists the calls of w that a start or an end wrote.
func (w *writeSet) written() []WrittenCall {
	out := make([]WrittenCall, 0, len(w.order))
	for _, p := range w.order {
		if p.hasStart || p.hasEnd {
			out = append(out, WrittenCall{ProjectID: p.row.ProjectID, ID: p.row.ID, Started: p.hasStart, Ended: p.hasEnd})
		}
	}
	return out
}

// callHook tells the hook, if any, of the calls w started or ended.
func (s *Store) callHook(ctx context.Context, tx WriteTx, w *writeSet) error {
	if s.hook == nil {
		return nil
	}
	if calls := w.written(); len(calls) > 0 {
		return s.hook.CallsWritten(ctx, tx, calls)
	}
	return nil
}
