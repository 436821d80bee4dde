package training_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/testdb"
	"github.com/weftlabs/weft/training"
)

// TestStoreLists: the lists the web UI reads (a project's models, a model's
// jobs, a job's events whole, a step's logs) on every database.
func TestStoreLists(t *testing.T) {
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		clock := time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)
		s := newStore(t, db, &clock)
		ctx := weft.WithPrincipal(context.Background(), weft.Principal{UserID: "u1", DefaultEntity: "acme"})
		var models []*training.Model
		for _, name := range []string{"a", "b", "c"} {
			m, err := s.CreateModel(ctx, &training.CreateModelReq{Project: "mail", Name: name, BaseModel: "base"})
			if err != nil {
				t.Fatal(err)
			}
			models = append(models, m)
		}
		if _, err := s.CreateModel(ctx, &training.CreateModelReq{Project: "other", Name: "x", BaseModel: "base"}); err != nil {
			t.Fatal(err)
		}
		first, err := s.ListModels(ctx, "acme/mail", training.ListParams{Limit: 2})
		if err != nil || len(first.Data) != 2 || !first.HasMore || first.Data[0].Name != "a" || first.Data[1].Name != "b" {
			t.Fatalf("first page = %+v %v", first, err)
		}
		rest, err := s.ListModels(ctx, "acme/mail", training.ListParams{Limit: 2, After: first.LastID})
		if err != nil || len(rest.Data) != 1 || rest.HasMore || rest.Data[0].Name != "c" {
			t.Fatalf("second page = %+v %v", rest, err)
		}
		if none, err := s.ListModels(ctx, "acme/none", training.ListParams{}); err != nil || len(none.Data) != 0 {
			t.Fatalf("unknown project = %+v %v", none, err)
		}
		// The models of entities, across their projects, by project and name.
		bobCtx := weft.WithPrincipal(context.Background(), weft.Principal{UserID: "u2", DefaultEntity: "bob"})
		if _, err := s.CreateModel(bobCtx, &training.CreateModelReq{Project: "mail", Name: "b0", BaseModel: "base"}); err != nil {
			t.Fatal(err)
		}
		of := func(entities []string, limit int) (names []string) {
			ms, err := s.ModelsOf(ctx, entities, limit)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range ms {
				names = append(names, m.ProjectID()+"/"+m.Name)
			}
			return names
		}
		if got := of([]string{"acme"}, 10); !slices.Equal(got, []string{"acme/mail/a", "acme/mail/b", "acme/mail/c", "acme/other/x"}) {
			t.Errorf("ModelsOf(acme) = %v", got)
		}
		if got := of([]string{"acme", "bob"}, 5); !slices.Equal(got, []string{"acme/mail/a", "acme/mail/b", "acme/mail/c", "acme/other/x", "bob/mail/b0"}) {
			t.Errorf("ModelsOf(acme, bob) = %v", got)
		}
		if got := of([]string{"bob"}, 10); !slices.Equal(got, []string{"bob/mail/b0"}) || len(of(nil, 10)) != 0 || len(of([]string{"acme"}, 2)) != 2 {
			t.Errorf("ModelsOf(bob) = %v", got)
		}

		var jobs []string
		for range 2 {
			clock = clock.Add(time.Second)
			j, err := s.CreateJob(ctx, rlJob(models[0].ID))
			if err != nil {
				t.Fatal(err)
			}
			jobs = append(jobs, j.ID)
		}
		if _, err := s.CancelJob(ctx, jobs[1]); err != nil {
			t.Fatal(err)
		}
		listed, err := s.ListJobs(ctx, models[0].ID, training.ListParams{})
		if err != nil || len(listed.Data) != 2 || listed.Data[0].ID != jobs[0] || listed.Data[1].Status != training.StatusCancelled ||
			listed.Data[0].ProjectID() != "acme/mail" {
			t.Fatalf("jobs = %+v %v", listed, err)
		}
		if other, err := s.ListJobs(ctx, models[1].ID, training.ListParams{}); err != nil || len(other.Data) != 0 {
			t.Fatalf("another model's jobs = %+v %v", other, err)
		}
		if _, err := s.ListJobs(ctx, jobs[0], training.ListParams{}); !errors.Is(err, training.ErrModelNotFound) {
			t.Fatalf("a job id as model: %v", err)
		}

		// An RL job's trajectories as it stores them; an SFT job has none.
		raw, err := s.JobTrajectories(ctx, jobs[0])
		var trained []training.TrajectoryGroup
		if err != nil || json.Unmarshal(raw, &trained) != nil || len(trained) != 1 || len(trained[0].Trajectories) != 2 {
			t.Fatalf("job trajectories %s: %v", raw, err)
		}
		data := "wandb-artifact:///acme/mail/sft-data:v0"
		sft, err := s.CreateSFTJob(ctx, &training.CreateSFTJobReq{ModelID: models[1].ID, TrainingDataURL: &data})
		if err != nil {
			t.Fatal(err)
		}
		if raw, err := s.JobTrajectories(ctx, sft.ID); err != nil || raw != nil {
			t.Fatalf("an SFT job's trajectories: %s %v", raw, err)
		}
		if _, err := s.JobTrajectories(ctx, "no-such-job"); !errors.Is(err, training.ErrJobNotFound) {
			t.Fatalf("unknown job's trajectories: %v", err)
		}

		var seen []training.Event
		collect := func(e training.Event) error { seen = append(seen, e); return nil }
		if err := s.EachEvent(ctx, jobs[1], "", collect); err != nil || len(seen) != 1 || seen[0].Type != training.EventTrainingFailed {
			t.Fatalf("events = %+v %v", seen, err)
		}
		seen = nil
		if err := s.EachEvent(ctx, jobs[1], seenID(t, s, jobs[1]), collect); err != nil || len(seen) != 0 {
			t.Fatalf("events after the last = %+v %v", seen, err)
		}
		if err := s.EachEvent(ctx, jobs[1], "no-such-event", collect); !errors.Is(err, training.ErrCursorNotFound) {
			t.Fatalf("unknown cursor: %v", err)
		}
		if err := s.EachEvent(ctx, "no-such-job", "", collect); !errors.Is(err, training.ErrJobNotFound) {
			t.Fatalf("unknown job: %v", err)
		}

		split := "train"
		logged := rlJob(models[0].ID).TrajectoryGroups
		raw, _ = json.Marshal(logged)
		if _, err := s.Log(ctx, models[0].ID, &training.LogReq{Split: &split, TrajectoryGroups: logged, RawGroups: raw}); err != nil {
			t.Fatal(err)
		}
		logs, err := s.StepLogs(ctx, models[0].ID, 0)
		if err != nil || len(logs) != 1 || logs[0].Split != "train" || logs[0].Metrics["train/reward"] != 0.5 {
			t.Fatalf("step 0 logs = %+v %v", logs, err)
		}
		var groups []training.TrajectoryGroup
		if err := json.Unmarshal(logs[0].TrajectoryGroups, &groups); err != nil || len(groups) != 1 || len(groups[0].Trajectories) != 2 {
			t.Fatalf("stored groups %s: %v", logs[0].TrajectoryGroups, err)
		}
		if none, err := s.StepLogs(ctx, models[0].ID, 1); err != nil || len(none) != 0 {
			t.Fatalf("step 1 logs = %+v %v", none, err)
		}
	})
}

// seenID is the id of the last event of a job.
func seenID(t *testing.T, s *training.Store, jobID string) string {
	t.Helper()
	last := ""
	if err := s.EachEvent(context.Background(), jobID, "", func(e training.Event) error { last = e.ID; return nil }); err != nil {
		t.Fatal(err)
	}
	return last
}
