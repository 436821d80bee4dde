package training_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/testdb"
	"github.com/weftlabs/weft/training"
	"github.com/weftlabs/weft/training/blob"
)

// adapterTrainer writes a one-file checkpoint.
type adapterTrainer struct{}

func (adapterTrainer) Train(ctx context.Context, job *training.TrainJob, report training.Reporter) (*training.TrainResult, error) {
	if err := report.Started(ctx, 1); err != nil {
		return nil, err
	}
	dir := filepath.Join(job.WorkDir, "adapter")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "adapter_model.safetensors"), []byte("weights"), 0o600); err != nil {
		return nil, err
	}
	return &training.TrainResult{CheckpointDir: dir}, report.Step(ctx, map[string]any{"loss": 1})
}

// TestCheckpointDurableBeforeCommit: a checkpoint's files and the directory
// holding them are synced before the checkpoint's row commits, so a crash
// right after the commit cannot leave a listed checkpoint without its files.
// The blob store's sync seam asks, at each sync, whether the row is visible.
func TestCheckpointDurableBeforeCommit(t *testing.T) {
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		ctx := weft.WithPrincipal(context.Background(), weft.Principal{UserID: "u1", DefaultEntity: "acme"})
		if err := training.MigrateQueue(db)(ctx); err != nil {
			t.Fatal(err)
		}
		var (
			s         *training.Store
			modelID   string
			mu        sync.Mutex
			fileSyncs int
			dirSyncs  []string
		)
		root := t.TempDir()
		blobs := &blob.Dir{Root: root, Sync: func(f *os.File) error {
			cps, err := s.ListCheckpoints(ctx, modelID, training.ListParams{Limit: 10})
			if err != nil {
				return err
			}
			if len(cps.Data) != 1 {
				t.Errorf("sync of %s after the checkpoint committed: %+v", f.Name(), cps.Data)
			}
			info, err := f.Stat()
			if err != nil {
				return err
			}
			mu.Lock()
			if info.IsDir() {
				dirSyncs = append(dirSyncs, f.Name())
			} else {
				fileSyncs++
			}
			mu.Unlock()
			return f.Sync()
		}}
		var err error
		s, err = training.New(training.Config{DB: db, Blobs: blobs, Trainer: adapterTrainer{}, Workers: 1,
			PollInterval: 20 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		model, err := s.CreateModel(ctx, &training.CreateModelReq{Project: "p", Name: "m", BaseModel: "b"})
		if err != nil {
			t.Fatal(err)
		}
		modelID = model.ID
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Stop(context.Background()) })
		job, err := s.CreateJob(ctx, rlJob(model.ID))
		if err != nil {
			t.Fatal(err)
		}
		if done, _ := waitEnd(t, ctx, s, job.ID); done.Status != training.StatusCompleted {
			t.Fatalf("job = %+v", done)
		}
		mu.Lock()
		defer mu.Unlock()
		jobDir := filepath.Join(root, "models", model.ID, "jobs", job.ID)
		if fileSyncs != 1 || len(dirSyncs) == 0 || dirSyncs[len(dirSyncs)-1] != jobDir {
			t.Fatalf("synced %d files and directories %q; want the checkpoint file, then its directory %s", fileSyncs, dirSyncs, jobDir)
		}
	})
}
