package webui

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/training"
)

// maxEventRows is how many events a job page lists at once.
const maxEventRows = 100

// jobView is the data of a training job's page.
type jobView struct {
	Project string
	Job     *training.Job
	Model   *training.Model
	With    *training.Job // the job overlaid, if any
	Others  []training.Job
	// Events are the listed page of events (from EventsFrom on).
	Events     []eventRow
	EventsFrom int
	TotalSteps int
	Total      int
	// NextURL and PrevURL page the events.
	NextURL, PrevURL string
	Chart            chartData
	// LiveURL streams the job's next events while it has not finished.
	LiveURL string
	// Made is the step the job made, 0 until it has made one (no job makes
	// step 0): the job trained from the step before it, whose page shows
	// the trajectories.
	Made int64
}

// eventRow is one event as the page lists it.
type eventRow struct {
	Seq  int
	Type string
	Step int // the gradient step's number, 0 for other events
	Data string
}

// jobPage shows a job's status, its events and a chart of its gradient
// steps, live while the job runs; ?with= overlays another job of the
// project, ?from= pages the events.
func (h *Handler) jobPage(w http.ResponseWriter, r *http.Request, v *viewer, projectID string) {
	ctx := r.Context()
	job, ok := h.projectJob(w, r, projectID, r.PathValue("jobID"))
	if !ok {
		return
	}
	model, err := h.cfg.Training.GetModel(ctx, job.ModelID)
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	view := jobView{Project: projectID, Job: job, Model: model}
	from, err := eventsFrom(r.URL.Query().Get("from"))
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	events, total, run, lastID, err := h.jobEvents(ctx, job, model.Name, from)
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	if from > total {
		h.refuse(w, r, weft.Errorf(errBadView, "from: an event number from 0 to %d", total))
		return
	}
	view.Total, view.TotalSteps = total, len(run.Steps)
	runs, with, ok := h.jobChartRuns(w, r, projectID, job, run)
	if !ok {
		return
	}
	view.With = with
	view.Chart = buildChart(runs, nil, stepFirst)
	view.Chart.MetricURL = metricURL(jobPath(projectID, job.ID, "/chart"), r.URL.Query().Get("with"))
	end := from + len(events)
	view.Events, view.EventsFrom = events, from
	query := func(f int) string {
		q := r.URL.Query()
		q.Set("from", fmt.Sprint(f))
		return jobPath(projectID, job.ID) + "?" + q.Encode()
	}
	if end < total {
		view.NextURL = query(end)
	}
	if from > 0 {
		view.PrevURL = query(max(0, from-maxEventRows))
	}
	if !job.Status.Terminal() {
		view.LiveURL = jobPath(projectID, job.ID, "/live?after=", lastID)
	}
	checkpoints, err := h.allCheckpoints(ctx, model.ID)
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	for _, c := range checkpoints {
		if c.JobID == job.ID {
			view.Made = c.Step
		}
	}
	jobs, err := h.cfg.Training.ListJobs(ctx, job.ModelID, training.ListParams{Limit: 100})
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	for _, o := range jobs.Data {
		if o.ID != job.ID {
			view.Others = append(view.Others, o)
		}
	}
	title := "Training job " + shortID(job.ID)
	h.render(w, r, http.StatusOK, "training_job", page{Title: title, Viewer: v, Project: projectID, Body: view})
}

// jobChartRuns are the runs of a job's chart: its gradient steps (run),
// then those of the job ?with= names (with, nil when none).
func (h *Handler) jobChartRuns(w http.ResponseWriter, r *http.Request, projectID string, job *training.Job,
	run chartRun) (runs []chartRun, with *training.Job, ok bool) {
	runs = []chartRun{run}
	withID := r.URL.Query().Get("with")
	if withID == "" || withID == job.ID {
		return runs, nil, true
	}
	if with, ok = h.projectJob(w, r, projectID, withID); !ok {
		return nil, nil, false
	}
	_, _, theirs, _, err := h.jobEvents(r.Context(), with, "job "+shortID(with.ID), 0)
	if err != nil {
		h.refuse(w, r, err)
		return nil, nil, false
	}
	return append(runs, theirs), with, true
}

// jobMetric answers GET …/training-jobs/{jobID}/chart?metric=<name>[&with=]:
// one metric of the job's chart, which its page draws on demand.
func (h *Handler) jobMetric(w http.ResponseWriter, r *http.Request, _ *viewer, projectID string) {
	job, ok := h.projectJob(w, r, projectID, r.PathValue("jobID"))
	if !ok {
		return
	}
	name, ok := h.metricParam(w, r)
	if !ok {
		return
	}
	model, err := h.cfg.Training.GetModel(r.Context(), job.ModelID)
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	_, _, run, _, err := h.jobEvents(r.Context(), job, model.Name, 0)
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	runs, _, ok := h.jobChartRuns(w, r, projectID, job, run)
	if !ok {
		return
	}
	writeJSON(w, metricOf(runs, name))
}

// eventsFrom reads ?from=, the number of the first event listed ("" is 0).
func eventsFrom(s string) (int, error) {
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0, weft.Errorf(errBadView, "from: an event number ≥ 0")
	}
	return n, nil
}

// projectJob reads a job of the project; a job of another project is not
// found.
func (h *Handler) projectJob(w http.ResponseWriter, r *http.Request, projectID, jobID string) (*training.Job, bool) {
	if h.cfg.Training == nil {
		h.refuse(w, r, weft.Errorf(errNoTraining, "This server has no training service."))
		return nil, false
	}
	if !validID(jobID) {
		h.refuse(w, r, weft.Errorf(errBadView, "job: 1 to %d characters of text", maxIDLength))
		return nil, false
	}
	job, err := h.cfg.Training.GetJob(r.Context(), jobID)
	if err == nil && job.ProjectID() != projectID {
		err = weft.Errorf(training.ErrJobNotFound, "training job %s not found", jobID)
	}
	if err != nil {
		h.refuse(w, r, err)
		return nil, false
	}
	return job, true
}

// jobEvents reads a job's events whole: the rows of the listed window (at
// most maxEventRows from event number from), how many there are, its
// gradient steps as a chart run (step n is the n-th gradient_step) and the
// last event's id.
func (h *Handler) jobEvents(ctx context.Context, job *training.Job, label string, from int) ([]eventRow, int, chartRun, string, error) {
	run := newChartRun(label)
	var rows []eventRow
	n, last := 0, ""
	nums := map[string]float64{} // reused: add copies the values
	err := h.cfg.Training.EachEvent(ctx, job.ID, "", func(e training.Event) error {
		step := 0
		if e.Type == training.EventGradientStep {
			step = len(run.Steps) + 1
			clear(nums)
			readNumbers(e.Data, nums)
			run.add(int64(step), nums)
		}
		if n >= from && n < from+maxEventRows {
			rows = append(rows, eventRow{Seq: n + 1, Type: e.Type, Step: step, Data: string(e.Data)})
		}
		n++
		last = e.ID
		return nil
	})
	return rows, n, run, last, err
}

// numbers keeps the numeric members of an event's data.
func numbers(data json.RawMessage) map[string]float64 {
	out := map[string]float64{}
	readNumbers(data, out)
	return out
}

// readNumbers adds the numeric members of an event's data to into. A
// gradient step's data is a flat object of numbers, read by flatNumbers (a
// 10,000-step job's page reads them all, and the general decoder spends
// most of that page's time boxing them); other data is decoded whole and its
// numbers picked.
func readNumbers(data json.RawMessage, into map[string]float64) {
	if flatNumbers(data, into) {
		return
	}
	clear(into)
	var all map[string]any
	_ = json.Unmarshal(data, &all)
	for k, v := range all {
		if f, ok := v.(float64); ok {
			into[k] = f
		}
	}
}

// flatNumbers reads data when it is an object whose members are all numbers
// with plain (unescaped) names, as the store writes a gradient step's data,
// and reports whether it was; on false, into may hold some members.
func flatNumbers(data []byte, into map[string]float64) bool {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return false
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return skipSpace(data, i+1) == len(data)
	}
	for {
		if i >= len(data) || data[i] != '"' {
			return false
		}
		end := bytes.IndexByte(data[i+1:], '"')
		if end < 0 {
			return false
		}
		name := data[i+1 : i+1+end]
		if bytes.IndexByte(name, '\\') >= 0 {
			return false
		}
		i = skipSpace(data, i+2+end)
		if i >= len(data) || data[i] != ':' {
			return false
		}
		i = skipSpace(data, i+1)
		start := i
		for i < len(data) && strings.IndexByte("0123456789+-.eE", data[i]) >= 0 {
			i++
		}
		v, err := strconv.ParseFloat(string(data[start:i]), 64)
		if err != nil {
			return false
		}
		into[string(name)] = v
		i = skipSpace(data, i)
		switch {
		case i < len(data) && data[i] == ',':
			i = skipSpace(data, i+1)
		case i < len(data) && data[i] == '}':
			return skipSpace(data, i+1) == len(data)
		default:
			return false
		}
	}
}

func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

// shortID is the last 8 characters of an id, for titles: ids are UUIDv7,
// whose first characters are a timestamp that jobs made within a minute
// share, and whose last are random.
func shortID(id string) string { return id[max(0, len(id)-8):] }
