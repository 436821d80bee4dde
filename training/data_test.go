package training_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/testdb"
	"github.com/weftlabs/weft/training"
	"github.com/weftlabs/weft/training/blob"
)

// sftStore starts a store on db that downloads SFT data from loopback (the
// tests' data servers), with cfg's other fields as given.
func sftStore(t *testing.T, db *weft.DB, cfg training.Config) *training.Store {
	t.Helper()
	ctx := context.Background()
	if err := training.MigrateQueue(db)(ctx); err != nil {
		t.Fatal(err)
	}
	blobs, err := blob.NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cfg.DB, cfg.Blobs, cfg.DataHosts = db, blobs, []string{"127.0.0.1"}
	cfg.PollInterval, cfg.Logger = 20*time.Millisecond, slog.New(slog.DiscardHandler)
	s, err := training.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stopCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = s.Stop(stopCtx)
	})
	return s
}

// conversations streams JSONL conversations of about 200 bytes each, flushed
// as they go, until limit bytes are written (0: until the client leaves),
// pausing pause between lines. It counts the bytes written and reports when
// the client went away.
type conversations struct {
	limit   int64
	pause   time.Duration
	written atomic.Int64
	gone    chan struct{}
}

func (c *conversations) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer close(c.gone)
	filler := strings.Repeat("x", 120)
	for i := 0; c.limit == 0 || c.written.Load() < c.limit; i++ {
		n, err := fmt.Fprintf(w, `{"messages":[{"role":"user","content":"question %d"},{"role":"assistant","content":"%s"}]}`+"\n", i, filler)
		c.written.Add(int64(n))
		if err != nil {
			return
		}
		if c.pause > 0 {
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(c.pause):
			}
		}
	}
}

// liveHeapPeak samples the live heap (as of the last collection) until stop
// is closed and returns its largest value.
func liveHeapPeak(stop <-chan struct{}) <-chan uint64 {
	out := make(chan uint64, 1)
	go func() {
		sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		var peak uint64
		for {
			metrics.Read(sample)
			peak = max(peak, sample[0].Value.Uint64())
			select {
			case <-stop:
				out <- peak
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	return out
}

// TestSFTDataOverTheCap: SFT data larger than MaxDataBytes fails the job
// with the cap in its message once that many bytes arrived, and is streamed
// to disk on the way: the live heap stays far below the data's size.
func TestSFTDataOverTheCap(t *testing.T) {
	db := testdb.SQLite(t)
	const maxBytes = 32 << 20
	trainer := &sftTrainer{}
	s := sftStore(t, db, training.Config{Trainer: trainer, Workers: 1, MaxDataBytes: maxBytes})
	ctx := weft.WithPrincipal(context.Background(), weft.Principal{UserID: "u1", DefaultEntity: "acme"})
	m, err := s.CreateModel(ctx, &training.CreateModelReq{Project: "p", Name: "m", BaseModel: "b"})
	if err != nil {
		t.Fatal(err)
	}
	data, _ := countingServer(t, (&conversations{limit: 2 * maxBytes, gone: make(chan struct{})}).ServeHTTP)

	runtime.GC()
	baseline := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(baseline)
	stop := make(chan struct{})
	peak := liveHeapPeak(stop)
	url := data.URL + "/train.jsonl"
	job, err := s.CreateSFTJob(ctx, &training.CreateSFTJobReq{ModelID: m.ID, TrainingDataURL: &url})
	if err != nil {
		t.Fatal(err)
	}
	done, events := waitEnd(t, ctx, s, job.ID)
	close(stop)
	grew := int64(<-peak) - int64(baseline[0].Value.Uint64())
	t.Logf("live heap grew by %.1f MiB while %d MiB of data over a %d MiB cap streamed", float64(grew)/(1<<20), 2*maxBytes>>20, maxBytes>>20)
	if done.Status != training.StatusFailed || len(events) != 1 || !strings.Contains(string(events[0].Data), fmt.Sprintf("larger than %d bytes", maxBytes)) {
		t.Fatalf("job %+v, events %+v; want training_failed naming the cap", done, events)
	}
	if trainer.data.Load() != nil {
		t.Fatal("the trainer ran on data over the cap")
	}
	if grew > maxBytes/4 {
		t.Fatalf("the live heap grew by %d bytes: the data was held in memory", grew)
	}
}

// TestSFTCancelStopsDownload: a job cancelled by another process sharing the
// database (a server, while a worker runs the job) stops downloading: the
// data server sees its client leave, and the job ends cancelled, once.
func TestSFTCancelStopsDownload(t *testing.T) {
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		ctx := weft.WithPrincipal(context.Background(), weft.Principal{UserID: "u1", DefaultEntity: "acme"})
		worker := sftStore(t, db, training.Config{Trainer: &sftTrainer{}, Workers: 1})
		server := sftStore(t, db, training.Config{})
		m, err := server.CreateModel(ctx, &training.CreateModelReq{Project: "p", Name: "m", BaseModel: "b"})
		if err != nil {
			t.Fatal(err)
		}
		stream := &conversations{pause: 5 * time.Millisecond, gone: make(chan struct{})}
		data, _ := countingServer(t, stream.ServeHTTP)
		url := data.URL + "/train.jsonl"
		job, err := server.CreateSFTJob(ctx, &training.CreateSFTJobReq{ModelID: m.ID, TrainingDataURL: &url})
		if err != nil {
			t.Fatal(err)
		}
		for stream.written.Load() == 0 {
			time.Sleep(5 * time.Millisecond)
		}
		if _, err := server.CancelJob(ctx, job.ID); err != nil {
			t.Fatal(err)
		}
		select {
		case <-stream.gone:
		case <-time.After(time.Minute):
			t.Fatalf("the download went on after the job was cancelled (%d bytes)", stream.written.Load())
		}
		done, events := waitEnd(t, ctx, worker, job.ID)
		if done.Status != training.StatusCancelled || len(events) != 1 || events[0].Type != training.EventTrainingFailed {
			t.Fatalf("job %+v, events %+v; want one training_failed, cancelled", done, events)
		}
	})
}

// blockingTrainer runs until its context ends and records that it did.
type blockingTrainer struct {
	started, stopped chan struct{}
}

func (b *blockingTrainer) Train(ctx context.Context, _ *training.TrainJob, report training.Reporter) (*training.TrainResult, error) {
	if err := report.Started(ctx, 1); err != nil {
		return nil, err
	}
	close(b.started)
	<-ctx.Done()
	close(b.stopped)
	return nil, ctx.Err()
}

// TestStopCancelsRunningAttempts: Stop waits for a running attempt until its
// context ends, then cancels it (a server shutting down is not held up by a
// job of hours), and the job stays to be retried, not failed.
func TestStopCancelsRunningAttempts(t *testing.T) {
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		ctx := weft.WithPrincipal(context.Background(), weft.Principal{UserID: "u1", DefaultEntity: "acme"})
		trainer := &blockingTrainer{started: make(chan struct{}), stopped: make(chan struct{})}
		s := sftStore(t, db, training.Config{Trainer: trainer, Workers: 1})
		m, err := s.CreateModel(ctx, &training.CreateModelReq{Project: "p", Name: "m", BaseModel: "b"})
		if err != nil {
			t.Fatal(err)
		}
		job, err := s.CreateJob(ctx, rlJob(m.ID))
		if err != nil {
			t.Fatal(err)
		}
		<-trainer.started
		stopCtx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		_ = s.Stop(stopCtx)
		select {
		case <-trainer.stopped:
		default:
			t.Fatal("Stop returned with the attempt still running")
		}
		if got, err := s.GetJob(ctx, job.ID); err != nil || got.Status.Terminal() {
			t.Fatalf("after shutdown the job is %+v (%v); want it left to retry", got, err)
		}
	})
}
