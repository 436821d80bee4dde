package chat

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
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
