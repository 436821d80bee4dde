package webui

import (
	"encoding/json"
	"maps"
	"math"
	"slices"
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
	chart := buildChart([]chartRun{checkpointRun(xss, checkpoints), checkpointRun("other", checkpoints[:1])}, []int64{1}, checkpointFirst)
	chart.MetricURL = metricURL(modelPath("team/p", "m-1", "/chart"), "m-2")
	chart.StepURL = modelPath("team/p", "m-1", "/steps/")
	groups := json.RawMessage(`[{"trajectories":[{"messages_and_choices":[{"role":"user","content":"` + strings.ReplaceAll(xss, `"`, `\"`) +
		`"},{"finish_reason":"stop","index":0,"message":{"role":"assistant","content":"<b>bold</b>"}}],"reward":1},` +
		`{"messages_and_choices":[42],"reward":null}]}]`)
	jobChart := buildChart([]chartRun{pointsRun(xss, map[int64]map[string]float64{1: {"loss": 1, "grad_norm": 2, xss: 3}, 2: {"loss": 0.5}})}, nil, stepFirst)
	return map[string]page{
		"training_models": {Title: "Models", Viewer: v, Project: "team/p", Body: modelsView{Project: "team/p", More: true, Models: []modelListRow{
			{Model: *model, LatestStep: 3, Reward: &reward}, {Model: other}}}},
		"training_model": {Title: xss, Viewer: v, Project: "team/p", Body: modelView{Project: "team/p", Model: model, With: &other,
			Others: []training.Model{other}, Checkpoints: checkpoints, Total: 150, Jobs: []training.Job{*job, done}, MoreJobs: true, Chart: chart, LiveURL: modelPath("team/p", "m-1", "/live?from=1")}},
		"training_step": {Title: xss, Viewer: v, Project: "team/p", Body: stepView{Project: "team/p", Model: model, Step: 1, Latest: 3, Logs: []stepLogView{{
			Log:    training.StepLog{ID: "l1", Split: xss, Step: 1, TrajectoryGroups: groups, Metrics: map[string]float64{xss: 0.5}, CreatedAt: at},
			Groups: trajectoryGroups(groups)}}, Job: &done, JobGroups: trajectoryGroups(groups)}},
		"training_job": {Title: xss, Viewer: v, Project: "team/p", Body: jobView{Project: "team/p", Job: job, Model: model, With: &done,
			Others: []training.Job{done}, Events: []eventRow{{Seq: 1, Type: "training_started", Data: `{"x":"` + xss + `"}`}, {Seq: 2, Type: "gradient_step", Step: 1, Data: `{"loss":1}`}},
			Total: 2, TotalSteps: 1, NextURL: jobPath("team/p", job.ID) + "?from=100", PrevURL: jobPath("team/p", job.ID) + "?from=0",
			Chart: jobChart, LiveURL: jobPath("team/p", job.ID, "/live?after=e2"), Made: 2}},
	}
}

// TestTrainingChart: runs are aligned on the union of their steps, with null
// where a run has no value; the first metrics the runs have are charted in
// their order, the others listed (validation metrics first) to be charted on
// demand, each read aligned the same way.
func TestTrainingChart(t *testing.T) {
	a := pointsRun("a", map[int64]map[string]float64{1: {"loss": 1, "zeta": 3}, 3: {"loss": 0.5, "val/acc": 0.9, "train/reward": 0.2}})
	b := pointsRun("b", map[int64]map[string]float64{2: {"loss": 2}})
	d := buildChart([]chartRun{a, b}, nil, checkpointFirst)
	raw, err := chartJSON(d)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"runs":["a","b"],"x":[1,2,3],"metrics":[` +
		`{"name":"train/reward","values":[[null,null,0.2],[null,null,null]]},` +
		`{"name":"loss","values":[[1,null,0.5],[null,2,null]]}],"markers":[],` +
		`"first":["train/reward","val/reward","loss","grad_norm","learning_rate","entropy"],"more":["val/acc","zeta"]}`
	if raw != want {
		t.Fatalf("chart =\n%s\nwant\n%s", raw, want)
	}
	zeta, _ := json.Marshal(metricOf([]chartRun{a, b}, "zeta"))
	if want := `{"x":[1,2,3],"values":[[3,null,null],[null,null,null]]}`; string(zeta) != want {
		t.Fatalf("zeta read on demand = %s, want %s", zeta, want)
	}
}

// TestTrainingChartOthers: runs with none of the first metrics chart a few
// of their others; a trainer's step number is the X, never a metric.
func TestTrainingChartOthers(t *testing.T) {
	metrics := map[string]float64{"gradient_step": 1, "kl": 0.1, "aux": 2, "b": 3, "c": 4, "d": 5}
	d := buildChart([]chartRun{pointsRun("a", map[int64]map[string]float64{1: metrics})}, nil, stepFirst)
	var drawn []string
	for _, m := range d.Metrics {
		drawn = append(drawn, m.Name)
	}
	if !slices.Equal(drawn, []string{"aux", "b", "c", "d"}) || !slices.Equal(d.More, []string{"kl"}) {
		t.Fatalf("charted %v, more %v", drawn, d.More)
	}
}

// pointsRun is a run of the given points (step → metric → value).
func pointsRun(label string, points map[int64]map[string]float64) chartRun {
	run := newChartRun(label)
	steps := slices.Sorted(maps.Keys(points))
	for _, s := range steps {
		run.add(s, points[s])
	}
	return run
}

// TestTrainingChartOneRun: a lone run keeps its steps; a step lacking a
// metric is null in that metric's line, and a value that is not finite is
// null too.
func TestTrainingChartOneRun(t *testing.T) {
	tenth := 0.1
	run := pointsRun("a", map[int64]map[string]float64{1: {"loss": 1e-7}, 2: {"grad_norm": math.Inf(1)}, 5: {"loss": tenth + 0.2, "grad_norm": 2}})
	raw, err := chartJSON(buildChart([]chartRun{run}, []int64{5}, stepFirst))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"runs":["a"],"x":[1,2,5],"metrics":[` +
		`{"name":"loss","values":[[1e-07,null,0.30000000000000004]]},` +
		`{"name":"grad_norm","values":[[null,null,2]]}],"markers":[5],` +
		`"first":["reward","loss","grad_norm","learning_rate","entropy"],"more":[]}`
	if raw != want {
		t.Fatalf("chart =\n%s\nwant\n%s", raw, want)
	}
}

// TestTrainingChartEmpty: a run without points is an empty chart, not null.
func TestTrainingChartEmpty(t *testing.T) {
	for _, runs := range [][]chartRun{{newChartRun("a")}, {newChartRun("a"), newChartRun("b")}} {
		raw, err := chartJSON(buildChart(runs, nil, stepFirst))
		if err != nil || !strings.Contains(raw, `"x":[],"metrics":[],"markers":[]`) {
			t.Fatalf("%d empty runs: %s %v", len(runs), raw, err)
		}
	}
}

// TestNumbers: an event's numeric members are kept, every other member is
// skipped, whatever comes first.
func TestNumbers(t *testing.T) {
	got := numbers(json.RawMessage(`{"note":"x","loss":0.5,"nested":{"a":1},"list":[1],"flag":true,"step":3,"none":null}`))
	if len(got) != 2 || got["loss"] != 0.5 || got["step"] != 3 {
		t.Fatalf("numbers = %v", got)
	}
	for data, want := range map[string]map[string]float64{
		`{"loss":0.25,"grad_norm":1e-3}`:             {"loss": 0.25, "grad_norm": 1e-3},
		` { "loss" : -2.5E+2 , "n" : 0 } `:           {"loss": -250, "n": 0},
		`{}`:                                         {},
		`{"loss":1,"note":"x"}`:                      {"loss": 1},
		`{"lo\u0073s":1}`:                            {"loss": 1},
		`{"loss":1,"nested":{"grad_norm":2},"lr":3}`: {"loss": 1, "lr": 3},
		`{"loss":0x10,"lr":3}`:                       {}, // not JSON
		`{"loss":1}{"lr":2}`:                         {},
		`[1,2]`:                                      {},
	} {
		got := numbers(json.RawMessage(data))
		if !maps.Equal(got, want) {
			t.Errorf("numbers(%s) = %v, want %v", data, got, want)
		}
	}
}

func chartJSON(d chartData) (string, error) {
	b, err := json.Marshal(d)
	return string(b), err
}
