package training_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/testdb"
	"github.com/weftlabs/weft/training"
	"github.com/weftlabs/weft/training/blob"
)

// newStore returns a Store that accepts jobs but runs none, on db, with a
// clock that the test sets.
func newStore(t *testing.T, db *weft.DB, clock *time.Time) *training.Store {
	t.Helper()
	ctx := context.Background()
	if err := training.MigrateQueue(db)(ctx); err != nil {
		t.Fatal(err)
	}
	blobs, err := blob.NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s, err := training.New(training.Config{DB: db, Blobs: blobs, Logger: slog.New(slog.DiscardHandler),
		Now: func() time.Time { return *clock }})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func rlJob(modelID string) *training.CreateJobReq {
	reward := func(r float64) *float64 { return &r }
	prompt := []json.RawMessage{json.RawMessage(`{"role":"user","content":"hi"}`)}
	return &training.CreateJobReq{ModelID: modelID, TrajectoryGroups: []training.TrajectoryGroup{{Trajectories: []training.Trajectory{
		{MessagesAndChoices: prompt, Reward: reward(1)}, {MessagesAndChoices: prompt, Reward: reward(0)}}}}}
}

// TestStore: the training store's contract on every database, without HTTP.
func TestStore(t *testing.T) {
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		clock := time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)
		s := newStore(t, db, &clock)
		ctx := weft.WithPrincipal(context.Background(), weft.Principal{UserID: "u1", DefaultEntity: "acme"})

		model, err := s.CreateModel(ctx, &training.CreateModelReq{Project: "mail", Name: "agent", BaseModel: "Qwen/Qwen3-8B"})
		if err != nil {
			t.Fatal(err)
		}
		if !model.CreatedAt.Equal(clock) || model.Entity != "acme" || model.Project != "mail" {
			t.Fatalf("model = %+v", model)
		}
		if _, err := s.CreateModel(ctx, &training.CreateModelReq{Project: "mail", Name: "agent", BaseModel: "Qwen/Qwen3-8B"}); !errors.Is(err, training.ErrModelExists) {
			t.Fatalf("same name again: %v", err)
		}
		yes := true
		again, err := s.CreateModel(ctx, &training.CreateModelReq{Project: "mail", Name: "agent", BaseModel: "Qwen/Qwen3-8B", ReturnExisting: &yes})
		if err != nil || again.ID != model.ID {
			t.Fatalf("return_existing: %+v %v", again, err)
		}
		// The same name in another project is another model.
		other, err := s.CreateModel(ctx, &training.CreateModelReq{Project: "other", Name: "agent", BaseModel: "b"})
		if err != nil || other.ID == model.ID {
			t.Fatalf("other project: %+v %v", other, err)
		}
		got, err := s.GetModel(ctx, model.ID)
		if err != nil || got.Name != "agent" || got.Project != "mail" {
			t.Fatalf("GetModel = %+v %v", got, err)
		}
		if _, err := s.GetModel(ctx, "no-such-model"); !errors.Is(err, training.ErrModelNotFound) {
			t.Fatalf("GetModel(unknown) = %v", err)
		}

		cps, err := s.ListCheckpoints(ctx, model.ID, training.ListParams{Limit: 10})
		if err != nil || len(cps.Data) != 1 || cps.Data[0].Step != 0 {
			t.Fatalf("a new model has its step-0 checkpoint: %+v %v", cps, err)
		}

		clock = clock.Add(time.Minute)
		job, err := s.CreateJob(ctx, rlJob(model.ID))
		if err != nil {
			t.Fatal(err)
		}
		if job.Status != training.StatusQueued || !job.CreatedAt.Equal(clock) || job.ModelID != model.ID {
			t.Fatalf("job = %+v", job)
		}
		if _, err := s.GetJob(ctx, model.ID); !errors.Is(err, training.ErrJobNotFound) {
			t.Fatalf("a model id is not a job id: %v", err)
		}
		if _, err := s.GetModel(ctx, job.ID); !errors.Is(err, training.ErrModelNotFound) {
			t.Fatalf("a job id is not a model id: %v", err)
		}

		clock = clock.Add(time.Minute)
		cancelled, err := s.CancelJob(ctx, job.ID)
		if err != nil || cancelled.Status != training.StatusCancelled || cancelled.TrainingEnd == nil || !cancelled.TrainingEnd.Equal(clock) {
			t.Fatalf("CancelJob = %+v %v", cancelled, err)
		}
		events, err := s.ListEvents(ctx, job.ID, training.ListParams{Limit: 10})
		if err != nil || len(events.Data) != 1 || events.Data[0].Type != training.EventTrainingFailed {
			t.Fatalf("events = %+v %v", events, err)
		}
		after, err := s.ListEvents(ctx, job.ID, training.ListParams{Limit: 10, After: events.Data[0].ID})
		if err != nil || len(after.Data) != 0 {
			t.Fatalf("events after the last = %+v %v", after, err)
		}
		if _, err := s.ListEvents(ctx, job.ID, training.ListParams{Limit: 10, After: "no-such-event"}); !errors.Is(err, training.ErrCursorNotFound) {
			t.Fatalf("unknown cursor = %v", err)
		}
		if n, err := s.Sweep(ctx); err != nil || n != 0 {
			t.Fatalf("Sweep with no active job = %d %v", n, err)
		}

		res, err := s.DeleteModel(ctx, model.ID)
		if err != nil || res.ModelID != model.ID {
			t.Fatalf("DeleteModel = %+v %v", res, err)
		}
		if _, err := s.GetModel(ctx, model.ID); !errors.Is(err, training.ErrModelNotFound) {
			t.Fatalf("deleted model = %v", err)
		}
		if _, err := s.GetJob(ctx, job.ID); !errors.Is(err, training.ErrJobNotFound) {
			t.Fatalf("job of a deleted model = %v", err)
		}
		if _, err := s.GetModel(ctx, other.ID); err != nil {
			t.Fatalf("the other project's model: %v", err)
		}
	})
}
