package webui

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/weftlabs/weft/training"
)

// trainingFixtures are the training pages' data, with the payload in every
// stored text: model names, base models, metric names, event data and
// logged conversations.
func trainingFixtures(v *viewer) map[string]page {
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	reward := 0.75
	errMsg := xss
	model := &training.Model{ID: "m-1", Entity: "team", Project: "p", Name: xss, BaseModel: xss, CreatedAt: at}
	other := training.Model{ID: "m-2", Entity: "team", Project: "p", Name: "other " + xss, CreatedAt: at}
	job := &training.Job{ID: "0190aaaa-0000-7000-8000-000000000001", ModelID: "m-1", Kind: training.KindRL, Status: training.StatusRunning,
		CreatedAt: at, TrainingStart: &at, ErrorMessage: &errMsg}
	done := training.Job{ID: "0190aaaa-0000-7000-8000-000000000002", ModelID: "m-1", Kind: training.KindSFT, Status: training.StatusCompleted, CreatedAt: at, TrainingEnd: &at}
	checkpoints := []training.Checkpoint{
		{ID: "c0", Step: 0, Metrics: map[string]float64{}, CreatedAt: at},
		{ID: "c1", Step: 1, Metrics: map[string]float64{"train/reward": 0.5, "loss": 0.3, "val/" + xss: 1}, BlobPrefix: "x/", CreatedAt: at},
	}
	chart := buildChart([]chartRun{checkpointRun(xss, checkpoints), checkpointRun("other", checkpoints[:1])}, []int64{1})
	chart.StepURL = modelPath("team/p", "m-1", "/steps/")
	groups := json.RawMessage(`[{"trajectories":[{"messages_and_choices":[{"role":"user","content":"` + strings.ReplaceAll(xss, `"`, `\"`) +
		`"},{"finish_reason":"stop","index":0,"message":{"role":"assistant","content":"<b>bold</b>"}}],"reward":1},` +
		`{"messages_and_choices":[42],"reward":null}]}]`)
	jobChart := buildChart([]chartRun{{Label: xss, Points: map[int64]map[string]float64{1: {"loss": 1, "grad_norm": 2}, 2: {"loss": 0.5}}}}, nil)
	return map[string]page{
		"training_models": {Title: "Models", Viewer: v, Project: "team/p", Body: modelsView{Project: "team/p", More: true, Models: []modelListRow{
			{Model: *model, LatestStep: 3, Reward: &reward}, {Model: other}}}},
		"training_model": {Title: xss, Viewer: v, Project: "team/p", Body: modelView{Project: "team/p", Model: model, With: &other,
			Others: []training.Model{other}, Checkpoints: checkpoints, Total: 150, Jobs: []training.Job{*job, done}, MoreJobs: true, Chart: chart}},
		"training_step": {Title: xss, Viewer: v, Project: "team/p", Body: stepView{Project: "team/p", Model: model, Step: 1, Logs: []stepLogView{{
			Log:    training.StepLog{ID: "l1", Split: xss, Step: 1, TrajectoryGroups: groups, Metrics: map[string]float64{xss: 0.5}, CreatedAt: at},
			Groups: trajectoryGroups(groups)}}}},
		"training_job": {Title: xss, Viewer: v, Project: "team/p", Body: jobView{Project: "team/p", Job: job, Model: model, With: &done,
			Others: []training.Job{done}, Events: []eventRow{{Seq: 1, Type: "training_started", Data: `{"x":"` + xss + `"}`}, {Seq: 2, Type: "gradient_step", Step: 1, Data: `{"loss":1}`}},
			Total: 2, TotalSteps: 1, NextURL: jobPath("team/p", job.ID) + "?from=100", PrevURL: jobPath("team/p", job.ID) + "?from=0",
			Chart: jobChart, LiveURL: jobPath("team/p", job.ID, "/live?after=e2")}},
	}
}

// TestTrainingChart: runs are aligned on the union of their steps, with null
// where a run has no value, and the metrics come in their reading order.
func TestTrainingChart(t *testing.T) {
	a := chartRun{Label: "a", Points: map[int64]map[string]float64{1: {"loss": 1, "zeta": 3}, 3: {"loss": 0.5, "val/acc": 0.9, "train/reward": 0.2}}}
	b := chartRun{Label: "b", Points: map[int64]map[string]float64{2: {"loss": 2}}}
	d := buildChart([]chartRun{a, b}, nil)
	raw, err := d.JSON()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"runs":["a","b"],"x":[1,2,3],"metrics":[` +
		`{"name":"train/reward","values":[[null,null,0.2],[null,null,null]]},` +
		`{"name":"loss","values":[[1,null,0.5],[null,2,null]]},` +
		`{"name":"val/acc","values":[[null,null,0.9],[null,null,null]]},` +
		`{"name":"zeta","values":[[3,null,null],[null,null,null]]}],"markers":[]}`
	if raw != want {
		t.Fatalf("chart =\n%s\nwant\n%s", raw, want)
	}
}
