package training_test

import (
	"context"
	"testing"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/testdb"
	"github.com/weftlabs/weft/training"
)

// openDB opens the database at url, migrated, closed when the test ends.
func openDB(t *testing.T, url string) *weft.DB {
	t.Helper()
	db, err := weft.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	if err := weft.Migrate(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	return db
}

// TestLeaseExpiredJobRunsAgain: a worker cut off from the database mid-job
// (as a killed one is) stops renewing its attempt's lease; another process's
// watchdog queues the job again once the lease has expired — not after the
// job timeout — and the job runs there to its one training_ended.
func TestLeaseExpiredJobRunsAgain(t *testing.T) {
	testdb.EachURL(t, func(t *testing.T, url string) {
		ctx := weft.WithPrincipal(context.Background(), weft.Principal{UserID: "u1", DefaultEntity: "acme"})
		cutOff := openDB(t, url)
		stale := &blockingTrainer{started: make(chan struct{}), stopped: make(chan struct{})}
		a := sftStore(t, cutOff, training.Config{Trainer: stale, Workers: 1, Lease: time.Second, WatchdogInterval: time.Hour})
		m, err := a.CreateModel(ctx, &training.CreateModelReq{Project: "p", Name: "m", BaseModel: "b"})
		if err != nil {
			t.Fatal(err)
		}
		job, err := a.CreateJob(ctx, rlJob(m.ID))
		if err != nil {
			t.Fatal(err)
		}
		<-stale.started
		if err := cutOff.Close(); err != nil {
			t.Fatal(err)
		}

		live := &namedTrainer{}
		b := sftStore(t, openDB(t, url), training.Config{Trainer: live, Workers: 1, Lease: time.Second, WatchdogInterval: 50 * time.Millisecond})
		done, events := waitEnd(t, ctx, b, job.ID)
		if done.Status != training.StatusCompleted || len(live.ran()) != 1 {
			t.Fatalf("job %+v, the live worker ran %d attempts; want it completed there", done, len(live.ran()))
		}
		var types []string
		for _, e := range events {
			types = append(types, e.Type)
		}
		want := []string{training.EventTrainingStarted, training.EventTrainingStarted, training.EventGradientStep, training.EventTrainingEnded}
		if len(types) != len(want) || types[0] != want[0] || types[1] != want[1] || types[3] != want[3] {
			t.Fatalf("events %v; want the cut-off attempt's start, then the live one's start, step and end", types)
		}
	})
}
