package chat

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/weftlabs/weft"
)

type countingRecorder struct {
	mu    sync.Mutex
	calls int
}

func (r *countingRecorder) RecordCalls(_ context.Context, calls []Call) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls += len(calls)
	return nil
}

// A stream that ends after the gateway closed (its shutdown grace ran out)
// hands its call to a closed queue: the call is counted as dropped and
// nothing panics.
func TestRecordQueueEnqueueAfterClose(t *testing.T) {
	rec := &countingRecorder{}
	q := newRecordQueue(rec, 4, slog.New(slog.NewTextHandler(io.Discard, nil)), prometheus.NewRegistry())
	q.enqueue(pendingCall{call: Call{ID: "before"}})
	if err := q.close(context.Background()); err != nil {
		t.Fatal(err)
	}
	q.enqueue(pendingCall{call: Call{ID: "after"}})
	if err := q.close(context.Background()); err != nil {
		t.Fatalf("second close: %v", err)
	}
	if rec.calls != 1 {
		t.Errorf("recorded %d calls, want the 1 enqueued before close", rec.calls)
	}
	var m dto.Metric
	if err := q.dropped.Write(&m); err != nil {
		t.Fatal(err)
	}
	if got := m.GetCounter().GetValue(); got != 1 {
		t.Errorf("dropped = %v, want 1", got)
	}
}

// failingRecorder fails its first failures writes with err, then records.
type failingRecorder struct {
	countingRecorder
	failures, attempts int
	err                error
}

func (r *failingRecorder) RecordCalls(ctx context.Context, calls []Call) error {
	r.mu.Lock()
	r.attempts++
	fail := r.attempts <= r.failures
	r.mu.Unlock()
	if fail {
		return r.err
	}
	return r.countingRecorder.RecordCalls(ctx, calls)
}

// A batch the database failed to take (busy, restarting) is written again
// rather than lost; a batch the trace store refused is not tried again.
func TestRecordQueueRetriesFailedWrites(t *testing.T) {
	for _, c := range []struct {
		name               string
		err                error
		recorded, attempts int
	}{
		{"database unavailable twice", errors.New("database is locked"), 1, 3},
		{"calls refused", fmt.Errorf("batch item 0: %w", weft.ErrInvalid), 0, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec := &failingRecorder{failures: 2, err: c.err}
			q := newRecordQueue(rec, 4, slog.New(slog.NewTextHandler(io.Discard, nil)), prometheus.NewRegistry())
			q.retryPause = time.Millisecond
			q.enqueue(pendingCall{call: Call{ID: "c"}})
			if err := q.close(context.Background()); err != nil {
				t.Fatal(err)
			}
			if rec.calls != c.recorded || rec.attempts != c.attempts {
				t.Errorf("recorded %d calls in %d attempts, want %d in %d", rec.calls, rec.attempts, c.recorded, c.attempts)
			}
		})
	}
}
