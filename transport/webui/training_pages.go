package webui

import (
	"cmp"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/training"
)

// errNoTraining: the UI was built without a training service (HTTP 503).
var errNoTraining = weft.DefineError(weft.ErrUnavailable, "ServiceUnavailable", "training is not served here")

// maxModelsListed bounds the models page and the overlay choices.
const maxModelsListed = 100

// maxCheckpointRows is how many checkpoints (newest first) a model's table
// lists; the chart has them all.
const maxCheckpointRows = 100

// modelPath and jobPath are the pages of one model and one job.
func modelPath(projectID, modelID string, rest ...string) string {
	return projectPath(projectID, append([]string{"models/", pathSegment(modelID)}, rest...)...)
}

func jobPath(projectID, jobID string, rest ...string) string {
	return projectPath(projectID, append([]string{"training-jobs/", pathSegment(jobID)}, rest...)...)
}

// modelRow is one model on the models page.
type modelListRow struct {
	Model      training.Model
	LatestStep int64
	Reward     *float64 // train/reward of the latest checkpoint that has one
}

type modelsView struct {
	Project string
	Models  []modelListRow
	More    bool
}

// modelsPage lists the project's trainable models with their latest step.
func (h *Handler) modelsPage(w http.ResponseWriter, r *http.Request, v *viewer, projectID string) {
	if h.cfg.Training == nil {
		h.refuse(w, r, weft.Errorf(errNoTraining, "This server has no training service."))
		return
	}
	ctx := r.Context()
	models, err := h.cfg.Training.ListModels(ctx, projectID, training.ListParams{Limit: maxModelsListed})
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	view := modelsView{Project: projectID, More: models.HasMore}
	for _, m := range models.Data {
		latest, err := h.cfg.Training.ListCheckpoints(ctx, m.ID, training.ListParams{Limit: 1, Order: training.OrderDesc})
		if err != nil {
			h.refuse(w, r, err)
			return
		}
		row := modelListRow{Model: m}
		if len(latest.Data) > 0 {
			row.LatestStep = latest.Data[0].Step
			if rw, ok := latest.Data[0].Metrics["train/reward"]; ok {
				row.Reward = &rw
			}
		}
		view.Models = append(view.Models, row)
	}
	h.render(w, r, http.StatusOK, "training_models", page{Title: "Models", Viewer: v, Project: projectID, Body: view})
}

// modelView is the data of a model's page.
type modelView struct {
	Project     string
	Model       *training.Model
	With        *training.Model // the run overlaid, if any
	Others      []training.Model
	Checkpoints []training.Checkpoint // newest first, at most maxCheckpointRows
	Total       int
	Jobs        []training.Job
	MoreJobs    bool
	Chart       chartData
	// LiveURL streams the model's checkpoints from its latest on.
	LiveURL string
}

// modelPage shows a model's chart over its checkpoints' metrics (another
// model of the project overlaid with ?with=), following its new checkpoints
// live, its checkpoints and its jobs.
func (h *Handler) modelPage(w http.ResponseWriter, r *http.Request, v *viewer, projectID string) {
	ctx := r.Context()
	model, ok := h.projectModel(w, r, projectID, r.PathValue("modelID"))
	if !ok {
		return
	}
	view := modelView{Project: projectID, Model: model}
	checkpoints, err := h.allCheckpoints(ctx, model.ID)
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	view.Total = len(checkpoints)
	for i := len(checkpoints) - 1; i >= 0 && len(view.Checkpoints) < maxCheckpointRows; i-- {
		view.Checkpoints = append(view.Checkpoints, checkpoints[i])
	}
	var markers []int64
	for _, c := range checkpoints {
		if c.BlobPrefix != "" {
			markers = append(markers, c.Step)
		}
	}
	runs, with, ok := h.modelChartRuns(w, r, projectID, model, checkpoints)
	if !ok {
		return
	}
	view.With = with
	view.Chart = buildChart(runs, markers, checkpointFirst)
	view.Chart.StepURL = modelPath(projectID, model.ID, "/steps/")
	view.Chart.MetricURL = metricURL(modelPath(projectID, model.ID, "/chart"), r.URL.Query().Get("with"))
	latest := int64(0)
	if n := len(checkpoints); n > 0 {
		latest = checkpoints[n-1].Step
	}
	view.LiveURL = modelPath(projectID, model.ID, "/live?from=", strconv.FormatInt(latest, 10))
	others, err := h.cfg.Training.ListModels(ctx, projectID, training.ListParams{Limit: maxModelsListed})
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	for _, o := range others.Data {
		if o.ID != model.ID {
			view.Others = append(view.Others, o)
		}
	}
	jobs, err := h.cfg.Training.ListJobs(ctx, model.ID, training.ListParams{Limit: 100})
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	view.Jobs, view.MoreJobs = jobs.Data, jobs.HasMore
	h.render(w, r, http.StatusOK, "training_model", page{Title: model.Name, Viewer: v, Project: projectID, Body: view})
}

// modelChartRuns are the runs of a model's chart: its checkpoints', then
// those of the model ?with= names (with, nil when none).
func (h *Handler) modelChartRuns(w http.ResponseWriter, r *http.Request, projectID string, model *training.Model,
	checkpoints []training.Checkpoint) (runs []chartRun, with *training.Model, ok bool) {
	runs = []chartRun{checkpointRun(model.Name, checkpoints)}
	withID := r.URL.Query().Get("with")
	if withID == "" || withID == model.ID {
		return runs, nil, true
	}
	if with, ok = h.projectModel(w, r, projectID, withID); !ok {
		return nil, nil, false
	}
	theirs, err := h.allCheckpoints(r.Context(), with.ID)
	if err != nil {
		h.refuse(w, r, err)
		return nil, nil, false
	}
	return append(runs, checkpointRun(with.Name, theirs)), with, true
}

// modelMetric answers GET …/models/{modelID}/chart?metric=<name>[&with=]:
// one metric of the model's chart, which its page draws on demand.
func (h *Handler) modelMetric(w http.ResponseWriter, r *http.Request, _ *viewer, projectID string) {
	model, ok := h.projectModel(w, r, projectID, r.PathValue("modelID"))
	if !ok {
		return
	}
	name, ok := h.metricParam(w, r)
	if !ok {
		return
	}
	checkpoints, err := h.allCheckpoints(r.Context(), model.ID)
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	runs, _, ok := h.modelChartRuns(w, r, projectID, model, checkpoints)
	if !ok {
		return
	}
	writeJSON(w, metricOf(runs, name))
}

// metricParam reads ?metric=, the name of a metric.
func (h *Handler) metricParam(w http.ResponseWriter, r *http.Request) (string, bool) {
	name := r.URL.Query().Get("metric")
	if name == "" || len(name) > maxIDLength || !cleanText(name) {
		h.refuse(w, r, weft.Errorf(errBadView, "metric: 1 to %d characters of text", maxIDLength))
		return "", false
	}
	return name, true
}

// metricURL is where a page's chart reads one metric on demand: base with
// the page's overlaid run (withID, "" for none), then metric= for the name
// the page appends.
func metricURL(base, withID string) string {
	q := url.Values{}
	if withID != "" {
		q.Set("with", withID)
	}
	q.Set("metric", "")
	return base + "?" + q.Encode()
}

// projectModel reads a model of the project; a model of another project is
// not found, exactly like one that does not exist.
func (h *Handler) projectModel(w http.ResponseWriter, r *http.Request, projectID, modelID string) (*training.Model, bool) {
	if h.cfg.Training == nil {
		h.refuse(w, r, weft.Errorf(errNoTraining, "This server has no training service."))
		return nil, false
	}
	if !validID(modelID) {
		h.refuse(w, r, weft.Errorf(errBadView, "model: 1 to %d characters of text", maxIDLength))
		return nil, false
	}
	model, err := h.cfg.Training.GetModel(r.Context(), modelID)
	if err == nil && model.ProjectID() != projectID {
		err = weft.Errorf(training.ErrModelNotFound, "model %s not found", modelID)
	}
	if err != nil {
		h.refuse(w, r, err)
		return nil, false
	}
	return model, true
}

// allCheckpoints reads a model's checkpoints, ascending by step.
func (h *Handler) allCheckpoints(ctx context.Context, modelID string) ([]training.Checkpoint, error) {
	var out []training.Checkpoint
	p := training.ListParams{Limit: 100}
	for {
		page, err := h.cfg.Training.ListCheckpoints(ctx, modelID, p)
		if err != nil {
			return nil, err
		}
		out = append(out, page.Data...)
		if !page.HasMore {
			return out, nil
		}
		p.After = page.LastID
	}
}

// checkpointRun is a model's metrics by checkpoint step.
func checkpointRun(label string, checkpoints []training.Checkpoint) chartRun {
	run := newChartRun(label)
	for _, c := range checkpoints {
		if len(c.Metrics) > 0 {
			run.add(c.Step, c.Metrics)
		}
	}
	return run
}

// stepView is the data of the page of one step's trajectories: those
// logged at the step, and those the job that trained from it trained on.
type stepView struct {
	Project string
	Model   *training.Model
	Step    int64
	// Latest is the model's latest step: the last page of its steps.
	Latest int64
	Logs   []stepLogView
	// Job made the next step from this one (nil when none did yet), trained
	// on JobGroups (none for an SFT job).
	Job       *training.Job
	JobGroups []groupView
}

type stepLogView struct {
	Log    training.StepLog
	Groups []groupView
}

type groupView struct {
	Trajectories []trajectoryView
}

type trajectoryView struct {
	Reward   *float64
	Messages []chatMessage
	// Raw is the trajectory as JSON when its messages are not chat messages.
	Raw *jsonNode
}

// errNoStep: a step past the model's latest (HTTP 404).
var errNoStep = weft.DefineError(weft.ErrNotFound, "NotFoundError", "no such step")

// stepPage shows one step of a model: the trajectories logged at it, and
// those the job that trained from it (making the next step) trained on. A
// step past the model's latest is not found.
func (h *Handler) stepPage(w http.ResponseWriter, r *http.Request, v *viewer, projectID string) {
	ctx := r.Context()
	model, ok := h.projectModel(w, r, projectID, r.PathValue("modelID"))
	if !ok {
		return
	}
	step, err := strconv.ParseInt(r.PathValue("step"), 10, 64)
	if err != nil || step < 0 {
		h.refuse(w, r, weft.Errorf(errBadView, "step: a whole number ≥ 0"))
		return
	}
	checkpoints, err := h.allCheckpoints(ctx, model.ID)
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	logs, err := h.cfg.Training.StepLogs(ctx, model.ID, step)
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	view := stepView{Project: projectID, Model: model, Step: step}
	if n := len(checkpoints); n > 0 {
		view.Latest = checkpoints[n-1].Step
	}
	if step > view.Latest && len(logs) == 0 {
		h.refuse(w, r, weft.Errorf(errNoStep, "%s has no step %d: its latest is step %d", model.Name, step, view.Latest))
		return
	}
	for _, l := range logs {
		view.Logs = append(view.Logs, stepLogView{Log: l, Groups: trajectoryGroups(l.TrajectoryGroups)})
	}
	if next := checkpointAt(checkpoints, step+1); next != nil && next.JobID != "" {
		if view.Job, err = h.cfg.Training.GetJob(ctx, next.JobID); err != nil {
			h.refuse(w, r, err)
			return
		}
		groups, err := h.cfg.Training.JobTrajectories(ctx, next.JobID)
		if err != nil {
			h.refuse(w, r, err)
			return
		}
		view.JobGroups = trajectoryGroups(groups)
	}
	title := model.Name + " · step " + strconv.FormatInt(step, 10)
	h.render(w, r, http.StatusOK, "training_step", page{Title: title, Viewer: v, Project: projectID, Body: view})
}

// checkpointAt is the checkpoint of step among checkpoints (ascending by
// step), nil when there is none.
func checkpointAt(checkpoints []training.Checkpoint, step int64) *training.Checkpoint {
	i, found := slices.BinarySearchFunc(checkpoints, step, func(c training.Checkpoint, s int64) int { return cmp.Compare(c.Step, s) })
	if !found {
		return nil
	}
	return &checkpoints[i]
}

// trajectoryGroups reads logged groups for display: each trajectory's
// messages_and_choices as a conversation (a choice shows its message).
func trajectoryGroups(raw json.RawMessage) []groupView {
	var groups []struct {
		Trajectories []json.RawMessage `json:"trajectories"`
	}
	if json.Unmarshal(raw, &groups) != nil {
		return nil
	}
	out := make([]groupView, len(groups))
	for i, g := range groups {
		for _, t := range g.Trajectories {
			var traj struct {
				MessagesAndChoices []json.RawMessage `json:"messages_and_choices"`
				Reward             *float64          `json:"reward"`
			}
			_ = json.Unmarshal(t, &traj)
			msgs := make([]json.RawMessage, len(traj.MessagesAndChoices))
			for j, m := range traj.MessagesAndChoices {
				var choice struct {
					Message json.RawMessage `json:"message"`
				}
				if json.Unmarshal(m, &choice) == nil && len(choice.Message) > 0 {
					m = choice.Message
				}
				msgs[j] = m
			}
			tv := trajectoryView{Reward: traj.Reward, Messages: messagesOf(msgs)}
			if tv.Messages == nil {
				tv.Raw = jsonTree(t)
			}
			out[i].Trajectories = append(out[i].Trajectories, tv)
		}
	}
	return out
}

// validID is the check pathIDs makes, for ids from a query.
func validID(id string) bool {
	return id != "" && len(id) <= maxIDLength && cleanText(id)
}
