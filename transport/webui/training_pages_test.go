package webui_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/testdb"
	"github.com/weftlabs/weft/training"
	"github.com/weftlabs/weft/training/blob"
	"github.com/weftlabs/weft/transport/httpapi"
	"github.com/weftlabs/weft/transport/webui"
)

// stepTrainer stands in for a trainer: two gradient steps, each numbered
// (gradient_step, as the built-in trainer numbers them) with a loss.
type stepTrainer struct{}

func (stepTrainer) Train(ctx context.Context, _ *training.TrainJob, report training.Reporter) (*training.TrainResult, error) {
	if err := report.Started(ctx, 2); err != nil {
		return nil, err
	}
	for i := range 2 {
		if err := report.Step(ctx, map[string]any{"gradient_step": i + 1, "loss": 0.5 / float64(i+1), "learning_rate": 1e-4}); err != nil {
			return nil, err
		}
	}
	return &training.TrainResult{}, nil
}

// newTrainingServer is newServer with a training service whose jobs
// stepTrainer runs.
func newTrainingServer(t *testing.T, db *weft.DB, options ...serverOption) (*server, *training.Store) {
	t.Helper()
	ctx := context.Background()
	if err := training.MigrateQueue(db)(ctx); err != nil {
		t.Fatal(err)
	}
	blobs, err := blob.NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ts, err := training.New(training.Config{DB: db, Blobs: blobs, Trainer: stepTrainer{}, Workers: 1,
		PollInterval: 20 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if err := ts.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ts.Stop(context.Background()) })
	s := newServer(t, db, append(options, func(_ *httpapi.Config, ui *webui.Config) { ui.Training = ts })...)
	return s, ts
}

// trainOnce registers a model of alice/p and runs one RL job on trajectories
// that say prompt; it returns the model's and the job's ids.
func trainOnce(t *testing.T, s *server, ts *training.Store, prompt string) (modelID, jobID string) {
	t.Helper()
	alice, err := s.identity.Authenticate(context.Background(), "", s.aliceKey)
	if err != nil {
		t.Fatal(err)
	}
	ctx := weft.WithPrincipal(context.Background(), alice)
	model, err := ts.CreateModel(ctx, &training.CreateModelReq{Entity: new("alice"), Project: "p", Name: "agent", BaseModel: "base"})
	if err != nil {
		t.Fatal(err)
	}
	trajectory := func(reward float64) training.Trajectory {
		return training.Trajectory{Reward: &reward, MessagesAndChoices: []json.RawMessage{
			json.RawMessage(`{"role":"user","content":"` + prompt + `"}`),
			json.RawMessage(`{"finish_reason":"stop","index":0,"message":{"role":"assistant","content":"one, two"}}`)}}
	}
	job, err := ts.CreateJob(ctx, &training.CreateJobReq{ModelID: model.ID,
		TrajectoryGroups: []training.TrajectoryGroup{{Trajectories: []training.Trajectory{trajectory(1), trajectory(0)}}}})
	if err != nil {
		t.Fatal(err)
	}
	modelID, jobID = model.ID, job.ID
	deadline := time.Now().Add(time.Minute)
	for {
		j, err := ts.GetJob(context.Background(), jobID)
		if err != nil {
			t.Fatal(err)
		}
		if j.Status == training.StatusCompleted {
			return modelID, jobID
		}
		if j.Status.Terminal() || time.Now().After(deadline) {
			t.Fatalf("job %s: %s", jobID, j.Status)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestStepPages: a model's steps are its checkpoints' (0 up to the latest);
// each links to its neighbours that exist, a step past the latest is not
// found, and a step shows the trajectories of the job that trained from it,
// whose page links back.
func TestStepPages(t *testing.T) {
	s, ts := newTrainingServer(t, testdb.SQLite(t))
	modelID, jobID := trainOnce(t, s, ts, "teach me to count")
	b := s.browser(t)
	b.signIn("", s.aliceKey)
	steps := "/ui/p/alice/p/models/" + modelID + "/steps/"

	first := b.get(steps + "0")
	if first.status != http.StatusOK {
		t.Fatalf("step 0: %d %s", first.status, first.body)
	}
	first.mustContain(t, `href="`+steps+`1" rel="next">Step 1</a>`, "teach me to count", "one, two", `href="/ui/p/alice/p/training-jobs/`+jobID+`"`)
	first.mustNotContain(t, `rel="prev"`)

	latest := b.get(steps + "1")
	if latest.status != http.StatusOK {
		t.Fatalf("step 1: %d %s", latest.status, latest.body)
	}
	latest.mustContain(t, `href="`+steps+`0" rel="prev">Step 0</a>`, "no job has trained from it yet")
	latest.mustNotContain(t, `rel="next"`, "teach me to count")

	for _, step := range []string{"2", "7"} {
		p := b.get(steps + step)
		if p.status != http.StatusNotFound {
			t.Fatalf("step %s of a model whose latest is 1: %d", step, p.status)
		}
		p.mustContain(t, "agent has no step "+step+": its latest is step 1")
	}
	if p := b.get(steps + "99999999999999999999"); p.status != http.StatusBadRequest {
		t.Fatalf("a step past int64: %d", p.status)
	}

	job := b.get("/ui/p/alice/p/training-jobs/" + jobID)
	job.mustContain(t, `href="`+steps+`0#trained">step 0</a>`, `href="`+steps+`1">step 1</a>`)
}

// TestMetricsOnDemand: a model's and a job's charts read one metric at a
// time, aligned on their steps; the step numbers a trainer reports are no
// metric of either.
func TestMetricsOnDemand(t *testing.T) {
	s, ts := newTrainingServer(t, testdb.SQLite(t))
	modelID, jobID := trainOnce(t, s, ts, "count")
	b := s.browser(t)
	b.signIn("", s.aliceKey)
	for path, want := range map[string]string{
		"/ui/p/alice/p/models/" + modelID + "/chart?metric=loss":                  `{"x":[1],"values":[[0.375]]}`,
		"/ui/p/alice/p/models/" + modelID + "/chart?metric=learning_rate":         `{"x":[1],"values":[[0.0001]]}`,
		"/ui/p/alice/p/models/" + modelID + "/chart?metric=gradient_step":         `{"x":[1],"values":[[null]]}`,
		"/ui/p/alice/p/training-jobs/" + jobID + "/chart?metric=loss":             `{"x":[1,2],"values":[[0.5,0.25]]}`,
		"/ui/p/alice/p/training-jobs/" + jobID + "/chart?metric=num_trajectories": `{"x":[1,2],"values":[[2,2]]}`,
	} {
		p := b.get(path)
		if p.status != http.StatusOK || strings.TrimSpace(p.body) != want {
			t.Errorf("%s: %d %s, want %s", path, p.status, p.body, want)
		}
	}
	for path, status := range map[string]int{
		"/ui/p/alice/p/models/" + modelID + "/chart":                    http.StatusBadRequest,
		"/ui/p/alice/p/models/" + modelID + "/chart?metric=loss&with=x": http.StatusNotFound,
		"/ui/p/bob/p/models/" + modelID + "/chart?metric=loss":          http.StatusForbidden,
	} {
		if p := b.get(path); p.status != status {
			t.Errorf("%s: %d, want %d", path, p.status, status)
		}
	}
	page := b.get("/ui/p/alice/p/models/" + modelID)
	page.mustContain(t, `data-metric="loss"`, `class="metric-choice secondary" data-metric="num_trajectories"`)
	page.mustNotContain(t, `data-metric="gradient_step"`)
}
