package training_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/testdb"
	"github.com/weftlabs/weft/training"
	"github.com/weftlabs/weft/training/blob"
)

// namedTrainer trains one step and records which base models it ran.
type namedTrainer struct {
	mu   sync.Mutex
	runs []string
}

func (n *namedTrainer) Train(ctx context.Context, job *training.TrainJob, report training.Reporter) (*training.TrainResult, error) {
	n.mu.Lock()
	n.runs = append(n.runs, job.BaseModel)
	n.mu.Unlock()
	if err := report.Started(ctx, 1); err != nil {
		return nil, err
	}
	return &training.TrainResult{}, report.Step(ctx, map[string]any{"loss": 1})
}

func (n *namedTrainer) ran() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]string(nil), n.runs...)
}

func startStore(t *testing.T, db *weft.DB, trainer training.Trainer, otherWorkers bool) *training.Store {
	t.Helper()
	ctx := context.Background()
	if err := training.MigrateQueue(db)(ctx); err != nil {
		t.Fatal(err)
	}
	blobs, err := blob.NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s, err := training.New(training.Config{DB: db, Blobs: blobs, Trainer: trainer, Workers: 1, OtherWorkers: otherWorkers,
		PollInterval: 20 * time.Millisecond, RetryDelay: 20 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
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

// waitEnd polls a job until it is terminal and returns its events.
func waitEnd(t *testing.T, ctx context.Context, s *training.Store, jobID string) (*training.Job, []training.Event) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		job, err := s.GetJob(ctx, jobID)
		if err != nil {
			t.Fatal(err)
		}
		if job.Status.Terminal() {
			events, err := s.ListEvents(ctx, jobID, training.ListParams{Limit: 100})
			if err != nil {
				t.Fatal(err)
			}
			return job, events.Data
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s still %s", jobID, job.Status)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestTrainerSet: jobs go to the trainer of their base model; a job whose base
// model no trainer runs fails when it is created, with one training_failed
// naming the base model and what the server does train.
func TestTrainerSet(t *testing.T) {
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		local, exec := &namedTrainer{}, &namedTrainer{}
		set := &training.TrainerSet{}
		set.Add("local", local, "tiny-llama", "tiny-qwen3")
		s := startStore(t, db, set, false)
		ctx := weft.WithPrincipal(context.Background(), weft.Principal{UserID: "u1", DefaultEntity: "acme"})
		newModel := func(name, base string) *training.Model {
			m, err := s.CreateModel(ctx, &training.CreateModelReq{Project: "p", Name: name, BaseModel: base})
			if err != nil {
				t.Fatal(err)
			}
			return m
		}
		served, foreign := newModel("a", "tiny-qwen3"), newModel("b", "Qwen/Qwen3-8B")

		// Not run by any trainer: failed in the answer to the POST, not later.
		job, err := s.CreateJob(ctx, rlJob(foreign.ID))
		if err != nil {
			t.Fatal(err)
		}
		if job.Status != training.StatusFailed || job.ErrorMessage == nil {
			t.Fatalf("job for an untrained base model = %+v", job)
		}
		for _, want := range []string{`"Qwen/Qwen3-8B"`, `local trains "tiny-llama", "tiny-qwen3"`} {
			if !strings.Contains(*job.ErrorMessage, want) {
				t.Errorf("error message %q lacks %q", *job.ErrorMessage, want)
			}
		}
		_, events := waitEnd(t, ctx, s, job.ID)
		if len(events) != 1 || events[0].Type != training.EventTrainingFailed {
			t.Fatalf("events = %+v", events)
		}
		var data struct {
			ErrorMessage string `json:"error_message"`
		}
		if err := json.Unmarshal(events[0].Data, &data); err != nil || data.ErrorMessage != *job.ErrorMessage {
			t.Fatalf("training_failed data %s: %v", events[0].Data, err)
		}
		// So does an SFT job.
		url := "wandb-artifact:///acme/p/data:v0"
		sft, err := s.CreateSFTJob(ctx, &training.CreateSFTJobReq{ModelID: foreign.ID, TrainingDataURL: &url})
		if err != nil || sft.Status != training.StatusFailed {
			t.Fatalf("SFT job for an untrained base model = %+v %v", sft, err)
		}

		// A served base model trains with its trainer.
		job, err = s.CreateJob(ctx, rlJob(served.ID))
		if err != nil || job.Status != training.StatusQueued {
			t.Fatalf("job for a served base model = %+v %v", job, err)
		}
		if done, _ := waitEnd(t, ctx, s, job.ID); done.Status != training.StatusCompleted {
			t.Fatalf("job = %+v", done)
		}

		// An exec trainer for every other base model takes the rest.
		set.Add("exec", exec)
		job, err = s.CreateJob(ctx, rlJob(foreign.ID))
		if err != nil || job.Status != training.StatusQueued {
			t.Fatalf("job with a fallback trainer = %+v %v", job, err)
		}
		if done, _ := waitEnd(t, ctx, s, job.ID); done.Status != training.StatusCompleted {
			t.Fatalf("job = %+v", done)
		}
		if got := local.ran(); len(got) != 1 || got[0] != "tiny-qwen3" {
			t.Errorf("local trainer ran %v", got)
		}
		if got := exec.ran(); len(got) != 1 || got[0] != "Qwen/Qwen3-8B" {
			t.Errorf("exec trainer ran %v", got)
		}
	})
}

// TestTrainerSetEmptyAndOtherWorkers: a server with no trainer at all fails
// jobs at once; with OtherWorkers the job stays queued for another process
// (its TrainerSet.Train still refuses it with ErrNoTrainer).
func TestTrainerSetEmptyAndOtherWorkers(t *testing.T) {
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		ctx := weft.WithPrincipal(context.Background(), weft.Principal{UserID: "u1", DefaultEntity: "acme"})
		empty := &training.TrainerSet{}
		s := startStore(t, db, empty, false)
		m, err := s.CreateModel(ctx, &training.CreateModelReq{Project: "p", Name: "a", BaseModel: "base"})
		if err != nil {
			t.Fatal(err)
		}
		job, err := s.CreateJob(ctx, rlJob(m.ID))
		if err != nil || job.Status != training.StatusFailed || !strings.Contains(*job.ErrorMessage, "no trainer is configured") {
			t.Fatalf("job on a server without trainers = %+v %v", job, err)
		}
		_, err = empty.Train(ctx, &training.TrainJob{BaseModel: "base"}, nil)
		if !errors.Is(err, training.ErrNoTrainer) {
			t.Fatalf("Train = %v", err)
		}

		// Another process's view of the same database: it runs nothing itself
		// but other workers may.
		s2 := startStore(t, db, &training.TrainerSet{}, true)
		m2, err := s2.CreateModel(ctx, &training.CreateModelReq{Project: "p", Name: "b", BaseModel: "base"})
		if err != nil {
			t.Fatal(err)
		}
		job, err = s2.CreateJob(ctx, rlJob(m2.ID))
		if err != nil || job.Status != training.StatusQueued {
			t.Fatalf("job left for other workers = %+v %v", job, err)
		}
		if _, err := s2.CancelJob(ctx, job.ID); err != nil {
			t.Fatal(err)
		}
	})
}
