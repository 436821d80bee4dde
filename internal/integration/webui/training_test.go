package webui_test

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"

	"github.com/weftlabs/weft/internal/gobuild"
	"github.com/weftlabs/weft/internal/integration/e2e"
)

// trainerArgs run the stand-in GPU trainer for the server's training jobs,
// slowed so that a job's page sees its steps arrive; while the file hold
// exists, a job waits after its first step (see holdJobs).
func trainerArgs(t testing.TB) (args, env []string, hold string) {
	hold = filepath.Join(t.TempDir(), "hold")
	return []string{"-trainer-command", gobuild.Binary(t, "./internal/testtrainer"), "-checkpoint-dir", t.TempDir()},
		[]string{"TESTTRAINER_STEP_DELAY=60ms", "TESTTRAINER_HOLD_FILE=" + hold}, hold
}

// holdJobs makes the jobs the stand-in trainer starts from now on wait
// after their first step, until the returned release is called: a page
// opened meanwhile sees the rest arrive however slow the machine is.
func holdJobs(t testing.TB, e *env) (release func()) {
	t.Helper()
	if err := os.WriteFile(e.holdFile, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	release = func() { _ = os.Remove(e.holdFile) }
	t.Cleanup(release)
	return release
}

// artProject is where the training pages' data lives.
const artProject = "alice/art"

type artModel struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

type artEvent struct {
	ID   string         `json:"id"`
	Type string         `json:"type"`
	Data map[string]any `json:"data"`
}

type artCheckpoint struct {
	Step    int64              `json:"step"`
	Metrics map[string]float64 `json:"metrics"`
}

// artGroups builds n trajectory groups of 4 rollouts with distinct rewards
// (each trajectory is one gradient step of the stand-in trainer), their
// prompts naming tag.
func artGroups(n int, tag string) []map[string]any {
	out := make([]map[string]any, n)
	for g := range out {
		trajs := make([]map[string]any, 4)
		for i := range trajs {
			trajs[i] = map[string]any{
				"messages_and_choices": []any{
					map[string]any{"role": "user", "content": fmt.Sprintf("%s scenario %d", tag, g)},
					map[string]any{"finish_reason": "stop", "index": 0, "message": map[string]any{"role": "assistant", "content": fmt.Sprintf("answer %d", i)}},
				},
				"reward": float64(i+g) / 4, "metrics": map[string]any{"turns": 1 + i},
			}
		}
		out[g] = map[string]any{"trajectories": trajs, "exceptions": []any{}}
	}
	return out
}

// artFlow is what ART's client does for one training step: log the train
// and val trajectories of the current step, then train on the train groups.
func artFlow(t testing.TB, c e2e.Client, modelID string, groups int, tag string) string {
	t.Helper()
	c.Call(t, http.MethodPost, "/v1/preview/models/"+modelID+"/log", map[string]any{"split": "train", "trajectory_groups": artGroups(groups, tag)}, nil)
	c.Call(t, http.MethodPost, "/v1/preview/models/"+modelID+"/log", map[string]any{"split": "val", "trajectory_groups": artGroups(1, tag+" val")}, nil)
	var job struct{ ID string }
	c.Call(t, http.MethodPost, "/v1/preview/training-jobs", map[string]any{"model_id": modelID, "trajectory_groups": artGroups(groups, tag)}, &job)
	return job.ID
}

// artEvents follows a job's events with the cursor, as ART polls, until the
// terminal event (within timeout), and returns all of them.
func artEvents(t testing.TB, c e2e.Client, jobID string, timeout time.Duration) []artEvent {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var all []artEvent
	after := ""
	for {
		var page struct {
			Data    []artEvent `json:"data"`
			HasMore bool       `json:"has_more"`
		}
		c.Call(t, http.MethodGet, "/v1/preview/training-jobs/"+jobID+"/events?limit=100&after="+after, nil, &page)
		all = append(all, page.Data...)
		if n := len(page.Data); n > 0 {
			after = page.Data[n-1].ID
			if last := page.Data[n-1].Type; !page.HasMore && (last == "training_ended" || last == "training_failed") {
				return all
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s has not ended after %s (%d events)", jobID, timeout, len(all))
		}
		if !page.HasMore {
			time.Sleep(50 * time.Millisecond)
		}
	}
}

func artCheckpoints(t *testing.T, c e2e.Client, modelID string) []artCheckpoint {
	t.Helper()
	var page struct{ Data []artCheckpoint }
	c.Call(t, http.MethodGet, "/v1/preview/models/"+modelID+"/checkpoints?limit=100", nil, &page)
	return page.Data
}

// trainingEnv is the ART data of alice/art: two models, A trained twice and
// B once, and a model of bob's.
type trainingEnv struct {
	c          e2e.Client
	a, b       artModel
	jobs       []string // A's two jobs
	bobModelID string
}

func seedTraining(t *testing.T, e *env) *trainingEnv {
	te := &trainingEnv{c: e2e.Client{URL: e.srv.URL, Auth: e2e.Bearer(e.aliceKey)}}
	register := func(c e2e.Client, entity, project, name string) artModel {
		var m artModel
		c.Call(t, http.MethodPost, "/v1/preview/models", map[string]any{"entity": entity, "project": project, "name": name, "base_model": "Qwen/Qwen3-14B"}, &m)
		return m
	}
	te.a = register(te.c, "alice", "art", "agent-001")
	te.b = register(te.c, "alice", "art", "agent-002")
	te.bobModelID = register(e2e.Client{URL: e.srv.URL, Auth: e2e.Bearer(e.bobKey)}, "bob", "secret", "bob-agent").ID
	te.jobs = append(te.jobs, artFlow(t, te.c, te.a.ID, 2, "first"))
	artEvents(t, te.c, te.jobs[0], time.Minute)
	te.jobs = append(te.jobs, artFlow(t, te.c, te.a.ID, 1, "second"))
	artEvents(t, te.c, artFlow(t, te.c, te.b.ID, 1, "other"), time.Minute)
	artEvents(t, te.c, te.jobs[1], time.Minute)
	return te
}

// chartOf reads back what a page's chart of metric draws: the uPlot
// instance's data (x, then one array per run) and the marked steps.
type drawnChart struct {
	Data    [][]*float64 `json:"data"`
	Runs    []string     `json:"runs"`
	Markers []int64      `json:"markers"`
}

func chartOf(tb *tab, metric string) drawnChart {
	tb.t.Helper()
	raw := eval[string](tb, fmt.Sprintf(`(() => {
	  const box = document.querySelector('.charts[data-chart]');
	  const u = box.charts.get(%q);
	  if (!u) return 'null';
	  return JSON.stringify({data: u.data, runs: u.series.slice(1).map(s => s.label), markers: box.chartData.markers});
	})()`, metric))
	var c drawnChart
	if err := json.Unmarshal([]byte(raw), &c); err != nil || c.Data == nil {
		tb.t.Fatalf("chart %s: %s %v", metric, raw, err)
	}
	return c
}

func sameNumber(got *float64, want float64) bool {
	return got != nil && math.Abs(*got-want) <= 1e-12*math.Max(1, math.Abs(want))
}

// checkRun checks that run r of a drawn chart is the metric of each
// checkpoint, at its step.
func checkRun(t *testing.T, what string, c drawnChart, r int, checkpoints []artCheckpoint, metric string) {
	t.Helper()
	at := map[int64]int{}
	for i, x := range c.Data[0] {
		at[int64(*x)] = i
	}
	n := 0
	for _, cp := range checkpoints {
		want, ok := cp.Metrics[metric]
		i, drawn := at[cp.Step]
		switch {
		case ok && (!drawn || !sameNumber(c.Data[1+r][i], want)):
			t.Errorf("%s: %s at step %d draws %v, the API says %v", what, metric, cp.Step, c.Data[1+r], want)
		case !ok && drawn && c.Data[1+r][i] != nil:
			t.Errorf("%s: %s at step %d draws %v where the API has none", what, metric, cp.Step, *c.Data[1+r][i])
		}
		if ok {
			n++
		}
	}
	if n == 0 {
		t.Errorf("%s: no checkpoint has %s", what, metric)
	}
}

func trainingPages(t *testing.T, e *env) {
	te := seedTraining(t, e)
	axe := axeSource(t)
	tb := newTab(t, e.srv.URL)
	tb.signIn("", e.aliceKey)

	// The models list, reached from the navigation, then opened by keyboard.
	tb.open("/ui/p/" + artProject + "/")
	tb.run(chromedp.Click(chromedp.CSS(`a[data-nav=models]`)), chromedp.WaitVisible(chromedp.CSS("#models")))
	if got := tb.text("#models"); !strings.Contains(got, "agent-001") || !strings.Contains(got, "agent-002") || strings.Contains(got, "bob-agent") {
		t.Fatalf("models: %q", got)
	}
	tb.checkAccessibility("models page", axe)
	tb.key("j")
	tb.key("\r")
	modelURL := "/ui/p/" + artProject + "/models/" + te.a.ID
	tb.waitPath(func(p string) bool { return p == modelURL })
	tb.poll(`!!document.querySelector('.charts[data-chart]')?.charts`)

	// Each chart draws the API's checkpoint metrics, with saved checkpoints marked.
	checkpoints := artCheckpoints(t, te.c, te.a.ID)
	if len(checkpoints) != 3 {
		t.Fatalf("checkpoints of A: %+v", checkpoints)
	}
	for _, metric := range []string{"train/reward", "loss", "grad_norm", "learning_rate", "val/reward"} {
		c := chartOf(tb, metric)
		checkRun(t, "model page", c, 0, checkpoints, metric)
		if fmt.Sprint(c.Markers) != "[1 2]" {
			t.Errorf("%s: markers %v, want the saved steps 1 and 2", metric, c.Markers)
		}
	}
	if got := tb.text("#checkpoints"); !strings.Contains(got, "step 2") || !strings.Contains(got, "step 0") {
		t.Fatalf("checkpoints table: %q", got)
	}
	// What people look for first is charted, in that order; the rest is
	// offered, and a metric chosen is charted from the API's values.
	firstCharts := "train/reward,val/reward,loss,grad_norm,learning_rate,entropy"
	if got := chartedMetrics(tb); got != firstCharts {
		t.Fatalf("the model page charts %s, want %s", got, firstCharts)
	}
	chooseMetric(tb, "policy_loss")
	checkRun(t, "model page, chosen", chartOf(tb, "policy_loss"), 0, checkpoints, "policy_loss")
	checkTicks(t, tb, "learning_rate") // 5e-6 on every step
	tb.checkAccessibility("model page", axe)

	// Two runs overlaid: the URL holds the view.
	tb.run(chromedp.SetValue(chromedp.CSS("#with"), te.b.ID), chromedp.Click(chromedp.CSS(".overlay button")))
	tb.waitPath(func(p string) bool { return p == modelURL+"?with="+te.b.ID })
	tb.poll(`!!document.querySelector('.charts[data-chart]')?.charts`)
	c := chartOf(tb, "train/reward")
	if len(c.Runs) != 2 || c.Runs[0] != "agent-001" || c.Runs[1] != "agent-002" {
		t.Fatalf("overlaid runs %v", c.Runs)
	}
	checkRun(t, "overlay", c, 0, checkpoints, "train/reward")
	checkRun(t, "overlay", c, 1, artCheckpoints(t, te.c, te.b.ID), "train/reward")

	// A click on step 1 of a chart opens the trajectories logged at step 1.
	at := eval[[]float64](tb, `(() => {
	  const u = document.querySelector('.charts[data-chart]').charts.get('train/reward');
	  const r = u.over.getBoundingClientRect();
	  return [r.left + u.valToPos(1, 'x'), r.top + r.height / 2];
	})()`)
	tb.run(chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, at[0], at[1]), chromedp.MouseClickXY(at[0], at[1]))
	tb.waitPath(func(p string) bool { return p == modelURL+"/steps/1" })
	tb.run(chromedp.WaitVisible(chromedp.CSS(".trajectory")))
	if n := eval[int](tb, `document.querySelectorAll('.step-log:not(#trained) .trajectory').length`); n != 4+4 {
		t.Fatalf("step 1 shows %d logged trajectories, want 4 train and 4 val", n)
	}
	// The second job trained from step 1: its trajectories, and its link.
	if n := eval[int](tb, `document.querySelectorAll('#trained .trajectory').length`); n != 4 {
		t.Fatalf("step 1 shows %d trajectories its job trained on, want 4", n)
	}
	if !eval[bool](tb, `!!document.querySelector('#trained a[href$="/training-jobs/`+te.jobs[1]+`"]')`) {
		t.Fatalf("step 1 does not link the job that trained from it: %s", tb.text("#trained h2"))
	}
	if got := tb.text("main"); !strings.Contains(got, "second scenario 0") || !strings.Contains(got, "second val scenario 0") || strings.Contains(got, "first scenario") {
		t.Fatalf("step 1 page: %q", got)
	}
	tb.checkAccessibility("step page", axe)
	tb.key("jj")
	if got := eval[int](tb, `[...document.querySelectorAll('.trajectory')].indexOf(document.activeElement)`); got != 1 {
		t.Fatalf("j j on the step page focuses trajectory %d", got)
	}

	// A finished job: status, every event, and its gradient steps charted.
	events := artEvents(t, te.c, te.jobs[0], time.Minute)
	tb.open("/ui/p/" + artProject + "/training-jobs/" + te.jobs[0])
	tb.poll(`!!document.querySelector('.charts[data-chart]')?.charts`)
	if got := tb.text("#job-status"); got != "COMPLETED" {
		t.Fatalf("job status %q", got)
	}
	if n := eval[int](tb, `document.querySelectorAll('#events tbody tr').length`); n != len(events) {
		t.Fatalf("%d event rows, the API lists %d", n, len(events))
	}
	checkSteps(t, "finished job", chartOf(tb, "loss"), 0, events, "loss")
	checkSteps(t, "finished job", chartOf(tb, "grad_norm"), 0, events, "grad_norm")
	if got, want := chartedMetrics(tb), "reward,loss,grad_norm,learning_rate,entropy"; got != want {
		t.Fatalf("the job page charts %s, want %s", got, want)
	}
	chooseMetric(tb, "tokens_per_second")
	checkSteps(t, "finished job, chosen", chartOf(tb, "tokens_per_second"), 0, events, "tokens_per_second")
	checkTicks(t, tb, "tokens_per_second") // 2048 on every step
	checkTicks(t, tb, "entropy")           // 1.5 down by 0.01 a step
	tb.checkAccessibility("job page", axe)
	// The overlay's choices tell the model's other jobs apart.
	short := func(id string) string { return id[len(id)-8:] }
	if got, title := eval[[]string](tb, `[...document.querySelectorAll('#with option')].slice(1).map(o => o.textContent)`), tb.text("h1"); len(got) != 1 ||
		!strings.HasPrefix(got[0], short(te.jobs[1])) || !strings.Contains(title, short(te.jobs[0])) {
		t.Fatalf("the other job offered %q on the page %q", got, title)
	}
	// The second job overlaid, through the form: the URL holds the view.
	jobURL := "/ui/p/" + artProject + "/training-jobs/" + te.jobs[0]
	tb.run(chromedp.SetValue(chromedp.CSS("#with"), te.jobs[1]), chromedp.Click(chromedp.CSS(".overlay button")))
	tb.waitPath(func(p string) bool { return p == jobURL+"?with="+te.jobs[1] })
	tb.poll(`!!document.querySelector('.charts[data-chart]')?.charts`)
	overlay := chartOf(tb, "loss")
	if len(overlay.Runs) != 2 || overlay.Runs[1] != "job "+short(te.jobs[1]) {
		t.Fatalf("overlaid jobs %v", overlay.Runs)
	}
	checkSteps(t, "job overlay", overlay, 0, events, "loss")
	checkSteps(t, "job overlay", overlay, 1, artEvents(t, te.c, te.jobs[1], time.Minute), "loss")
	// Events are listed in pages: from the 6th on, with a link back.
	tb.open("/ui/p/" + artProject + "/training-jobs/" + te.jobs[0] + "?from=5")
	if n, first := eval[int](tb, `document.querySelectorAll('#events tbody tr').length`), tb.text("#events tbody td"); n != len(events)-5 || first != "6" {
		t.Fatalf("events from the 6th: %d rows, first #%s", n, first)
	}
	tb.run(chromedp.Click(chromedp.CSS(`.pager a[rel=prev]`)))
	tb.waitPath(func(p string) bool { return strings.HasSuffix(p, "?from=0") })

	// The model's page follows its checkpoints: it is open while the next
	// step's trajectories are logged (their metrics join the latest
	// checkpoint) and a job trains (adding the next checkpoint).
	modelTab := newTab(t, e.srv.URL)
	modelTab.signIn("", e.aliceKey)
	modelTab.open(modelURL)
	modelTab.poll(`document.querySelector('#model-live')?.dataset.following === 'true'`)
	modelTab.run(chromedp.Evaluate[chromedp.Void](`window.__samePage = true`))

	// A running job's page follows its events as they are written.
	// It is overlaid with the first job, whose 8 steps are all drawn from the
	// start: the live job's steps still count from its own first.
	release := holdJobs(t, e)
	live := artFlow(t, te.c, te.a.ID, 2, "third")
	tb.open("/ui/p/" + artProject + "/training-jobs/" + live + "?with=" + te.jobs[0])
	tb.poll(`document.querySelector('#job-live')?.dataset.following === 'true'`)
	first := eval[int](tb, `(document.querySelector('.charts[data-chart]').charts.get('loss')?.data[1] ?? []).filter(v => v != null).length`)
	release()
	tb.poll(`document.querySelector('#job-live').dataset.following === 'ended'`)
	liveEvents := artEvents(t, te.c, live, time.Minute)
	if first >= 8 {
		t.Fatalf("the job's 8 steps were all there when the page loaded: nothing arrived live")
	}
	if got := tb.text("#job-status"); got != "COMPLETED" {
		t.Fatalf("live job status %q", got)
	}
	checkSteps(t, "live job", chartOf(tb, "loss"), 0, liveEvents, "loss")
	checkSteps(t, "live job", chartOf(tb, "learning_rate"), 0, liveEvents, "learning_rate")
	checkSteps(t, "live job's overlay", chartOf(tb, "loss"), 1, events, "loss")
	if n := eval[int](tb, `document.querySelectorAll('#events tbody tr').length`); n != len(liveEvents) {
		t.Fatalf("%d event rows after the live updates, the API lists %d", n, len(liveEvents))
	}

	// The model's new checkpoint (step 3, saved) arrives on its open page,
	// with the metrics logged at step 2 since the page was loaded.
	modelTab.poll(`(() => { const box = document.querySelector('.charts[data-chart]');
	  return box.charts.get('loss').data[0].includes(3) && box.chartData.markers.includes(3); })()`)
	if !eval[bool](modelTab, `window.__samePage === true`) {
		t.Fatal("the model page was reloaded")
	}
	checkpoints = artCheckpoints(t, te.c, te.a.ID)
	if len(checkpoints) != 4 {
		t.Fatalf("checkpoints of A after the third job: %+v", checkpoints)
	}
	for _, metric := range []string{"train/reward", "loss", "val/reward"} {
		checkRun(t, "live model page", chartOf(modelTab, metric), 0, checkpoints, metric)
	}
	// The live updates chart no metric beyond those; the others are offered.
	if got := chartedMetrics(modelTab); got != firstCharts {
		t.Fatalf("after the live updates the model page charts %s, want %s", got, firstCharts)
	}
	chooseMetric(modelTab, "policy_loss")
	checkRun(t, "live model page, chosen", chartOf(modelTab, "policy_loss"), 0, checkpoints, "policy_loss")

	// The training pages at phone width (each was checked at laptop width above).
	tb.checkPagesAt(phone, axe, []a11yPage{
		{"models", "/ui/p/" + artProject + "/models", "#models"},
		{"model page", modelURL + "?with=" + te.b.ID, ".charts .uplot"},
		{"step page", modelURL + "/steps/1", ".trajectory"},
		{"job page", jobURL + "?with=" + te.jobs[1], ".charts .uplot"},
	})
	tb.run(chromedp.EmulateViewport(laptop.width, laptop.height))

	// Other projects' models and jobs are not found under alice's project;
	// bob's project is refused.
	for path, status := range map[string]int{
		"/ui/p/" + artProject + "/models/" + te.bobModelID:                   http.StatusNotFound,
		"/ui/p/bob/secret/models":                                            http.StatusForbidden,
		"/ui/p/" + artProject + "/models/" + te.a.ID + "/steps/x":            http.StatusBadRequest,
		"/ui/p/" + artProject + "/models/" + te.a.ID + "/steps/9":            http.StatusNotFound,
		"/ui/p/" + artProject + "/training-jobs/" + te.jobs[0] + "?from=999": http.StatusBadRequest,
		"/ui/p/" + artProject + "/models/" + te.a.ID + "/live?from=x":        http.StatusBadRequest,
		"/ui/p/" + artProject + "/models/" + te.bobModelID + "/live?from=0":  http.StatusNotFound,
	} {
		bare, _, _ := strings.Cut(path, "?")
		tb.expect(bare, status)
		tb.open(path)
		if got := tb.text(".error-page"); !strings.Contains(got, fmt.Sprint(status)) || strings.Contains(got, "bob-agent") {
			t.Fatalf("%s: %q", path, got)
		}
	}
}

// chartedMetrics lists the metrics a page charts, in their order.
func chartedMetrics(tb *tab) string {
	tb.t.Helper()
	return eval[string](tb, `[...document.querySelectorAll('.charts[data-chart] figure.chart')].map(f => f.dataset.metric).join(',')`)
}

// chooseMetric charts one of the metrics offered under "More metrics".
func chooseMetric(tb *tab, metric string) {
	tb.t.Helper()
	sel, _ := json.Marshal(`.more-metrics button[data-metric="` + metric + `"]`)
	tb.run(chromedp.Click(chromedp.CSS(".more-metrics summary")))
	tb.poll(`!!document.querySelector(` + string(sel) + `)`)
	tb.run(chromedp.Click(chromedp.CSS(`.more-metrics button[data-metric="` + metric + `"]`)))
	tb.poll(`!!document.querySelector('.charts[data-chart]').charts.get(` + string(must(json.Marshal(metric))) + `)`)
}

// checkTicks checks that a chart's value axis labels its ticks apart,
// none of them a zero that is not there.
func checkTicks(t *testing.T, tb *tab, metric string) {
	t.Helper()
	raw := eval[string](tb, fmt.Sprintf(`(() => {
	  const u = document.querySelector('.charts[data-chart]').charts.get(%q);
	  return JSON.stringify({labels: u.axes[1]._values, ticks: u.axes[1]._splits});
	})()`, metric))
	var axis struct {
		Labels []string  `json:"labels"`
		Ticks  []float64 `json:"ticks"`
	}
	if err := json.Unmarshal([]byte(raw), &axis); err != nil || len(axis.Labels) < 2 || len(axis.Labels) != len(axis.Ticks) {
		t.Fatalf("%s: axis %s %v", metric, raw, err)
	}
	seen := map[string]bool{}
	for i, label := range axis.Labels {
		v, err := strconv.ParseFloat(label, 64)
		if seen[label] || err != nil || (v == 0) != (axis.Ticks[i] == 0) || math.Abs(v-axis.Ticks[i]) > 1e-9*math.Max(1, math.Abs(axis.Ticks[i]))+math.Abs(axis.Ticks[i])*1e-6 {
			t.Fatalf("%s: the axis labels %q for the ticks %v", metric, axis.Labels, axis.Ticks)
		}
		seen[label] = true
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// checkSteps checks that run r of a job chart is the job's gradient steps'
// metric, step n being the n-th gradient_step event, and that the run has
// no value past its last step (another run overlaid may have more).
func checkSteps(t *testing.T, what string, c drawnChart, r int, events []artEvent, metric string) {
	t.Helper()
	var want []float64
	for _, e := range events {
		if e.Type == "gradient_step" {
			want = append(want, e.Data[metric].(float64))
		}
	}
	if len(want) == 0 || len(c.Data[0]) < len(want) || (r == 0 && len(c.Data[0]) != len(want)) {
		t.Fatalf("%s: %s chart has %d steps, the job %d", what, metric, len(c.Data[0]), len(want))
	}
	for i, x := range c.Data[0] {
		switch {
		case *x != float64(i+1):
			t.Fatalf("%s: %s: the %d-th step is %v", what, metric, i+1, *x)
		case i < len(want) && !sameNumber(c.Data[1+r][i], want[i]):
			t.Fatalf("%s: %s step %d of run %d draws %v, the job's event says %v", what, metric, i+1, r, c.Data[1+r][i], want[i])
		case i >= len(want) && c.Data[1+r][i] != nil:
			t.Fatalf("%s: %s step %d of run %d draws %v past the job's last step", what, metric, i+1, r, *c.Data[1+r][i])
		}
	}
}
