package webui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/training"
)

// jobPoll is how often a live job stream looks for new events: a trainer
// writes them to the database, which has no feed of them.
const jobPoll = 300 * time.Millisecond

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
	view.Total, view.TotalSteps = total, len(run.Points)
	runs := []chartRun{run}
	if withID := r.URL.Query().Get("with"); withID != "" && withID != job.ID {
		with, ok := h.projectJob(w, r, projectID, withID)
		if !ok {
			return
		}
		_, _, theirs, _, err := h.jobEvents(ctx, with, "job "+shortID(with.ID), 0)
		if err != nil {
			h.refuse(w, r, err)
			return
		}
		view.With = with
		runs = append(runs, theirs)
	}
	view.Chart = buildChart(runs, nil)
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
	run := chartRun{Label: label, Points: map[int64]map[string]float64{}}
	var rows []eventRow
	n, last := 0, ""
	err := h.cfg.Training.EachEvent(ctx, job.ID, "", func(e training.Event) error {
		step := 0
		if e.Type == training.EventGradientStep {
			step = len(run.Points) + 1
			run.Points[int64(step)] = numbers(e.Data)
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
	var all map[string]any
	_ = json.Unmarshal(data, &all)
	out := make(map[string]float64, len(all))
	for k, v := range all {
		if f, ok := v.(float64); ok {
			out[k] = f
		}
	}
	return out
}

// shortID is the first 8 characters of an id, for titles.
func shortID(id string) string { return id[:min(8, len(id))] }

// liveEvent is one event as the live stream sends it.
type liveEvent struct {
	Type string             `json:"type"`
	Data json.RawMessage    `json:"data"`
	Nums map[string]float64 `json:"numbers,omitempty"`
}

// jobLive streams a job's events after ?after= as server-sent "training"
// events, read from the store every jobPoll, and ends with an "end" event
// carrying the job's final status once the job has finished.
func (h *Handler) jobLive(w http.ResponseWriter, r *http.Request, _ *viewer, projectID string) {
	job, ok := h.projectJob(w, r, projectID, r.PathValue("jobID"))
	if !ok {
		return
	}
	ctx := r.Context()
	after := r.URL.Query().Get("after")
	// Check the cursor before the stream starts, so that a bad one is a 404.
	if err := h.cfg.Training.EachEvent(ctx, job.ID, after, func(training.Event) error { return errStop }); err != nil && !errors.Is(err, errStop) {
		h.refuse(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	if _, err := fmt.Fprint(w, ": live\n\n"); err != nil || rc.Flush() != nil {
		return
	}
	poll := time.NewTicker(jobPoll)
	defer poll.Stop()
	idle := time.Duration(0)
	sent := false
	send := func(e training.Event) error {
		b, _ := json.Marshal(liveEvent{Type: e.Type, Data: e.Data, Nums: numbers(e.Data)})
		after, sent = e.ID, true
		return writeEvent(w, "training", string(b))
	}
	for {
		sent = false
		if err := h.cfg.Training.EachEvent(ctx, job.ID, after, send); err != nil {
			return
		}
		if sent || idle >= liveHeartbeat {
			if !sent {
				if _, err := fmt.Fprint(w, ": ping\n\n"); err != nil {
					return
				}
			}
			idle = 0
			if rc.Flush() != nil || !h.stillAllowed(r, projectID) {
				return
			}
		}
		now, err := h.cfg.Training.GetJob(ctx, job.ID)
		if err != nil {
			return
		}
		if now.Status.Terminal() {
			// Events written before the status changed were read above; read
			// once more for those committed with it, then end.
			_ = h.cfg.Training.EachEvent(ctx, job.ID, after, send)
			_ = writeEvent(w, "end", string(now.Status))
			_ = rc.Flush()
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-h.closing:
			return
		case <-poll.C:
			idle += jobPoll
		}
	}
}

// errStop ends an EachEvent early.
var errStop = errors.New("stop")
