package webui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/training"
)

// trainingPoll is how often a live training stream looks for new events and
// checkpoints: trainers write them to the database, which has no feed of
// them.
const trainingPoll = 300 * time.Millisecond

// pollStream serves server-sent events from poll, called at once and then
// every trainingPoll until it reports done, fails, or the client leaves.
// Between polls that send nothing a comment keeps the connection open every
// liveHeartbeat; before each flush the caller's session and project rights
// are checked again, so a revoked session or membership ends the stream.
// The job and model pages' charts both follow their data through it. send
// writes one event; its id (when not "") is where the stream resumes: the
// browser sends the last one back as Last-Event-ID when it reconnects after
// the stream dropped, so that nothing is sent twice (see resumeFrom). It
// counts as one of the session's Config.MaxLiveStreams.
func (h *Handler) pollStream(w http.ResponseWriter, r *http.Request, v *viewer, projectID string,
	poll func(ctx context.Context, send func(id, event, data string) error) (done bool, err error)) {
	release, err := h.live.openStream(v.session)
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	defer release()
	rc, ok := openEventStream(w)
	if !ok {
		return
	}
	ctx := r.Context()
	ticker := time.NewTicker(trainingPoll)
	defer ticker.Stop()
	idle := time.Duration(0)
	for {
		sent := false
		send := func(id, event, data string) error {
			sent = true
			if id != "" {
				if _, err := fmt.Fprintf(w, "id: %s\n", id); err != nil {
					return err
				}
			}
			return writeEvent(w, event, data)
		}
		done, err := poll(ctx, send)
		if err != nil {
			return
		}
		if done {
			_ = rc.Flush()
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
		select {
		case <-ctx.Done():
			return
		case <-h.closing:
			return
		case <-ticker.C:
			idle += trainingPoll
		}
	}
}

// liveEvent is one job event as the live stream sends it.
type liveEvent struct {
	Type string             `json:"type"`
	Data json.RawMessage    `json:"data"`
	Nums map[string]float64 `json:"numbers,omitempty"`
}

// jobLive streams a job's events after ?after= as "training" events and
// ends with an "end" event carrying the job's final status once the job has
// finished.
func (h *Handler) jobLive(w http.ResponseWriter, r *http.Request, v *viewer, projectID string) {
	job, ok := h.projectJob(w, r, projectID, r.PathValue("jobID"))
	if !ok {
		return
	}
	after := resumeFrom(r, r.URL.Query().Get("after"))
	// Check the cursor before the stream starts, so that a bad one is a 404.
	if err := h.cfg.Training.EachEvent(r.Context(), job.ID, after, func(training.Event) error { return errStop }); err != nil && !errors.Is(err, errStop) {
		h.refuse(w, r, err)
		return
	}
	h.pollStream(w, r, v, projectID, func(ctx context.Context, send func(id, event, data string) error) (bool, error) {
		sendEvent := func(e training.Event) error {
			b, _ := json.Marshal(liveEvent{Type: e.Type, Data: e.Data, Nums: numbers(e.Data)})
			after = e.ID
			return send(e.ID, "training", string(b))
		}
		if err := h.cfg.Training.EachEvent(ctx, job.ID, after, sendEvent); err != nil {
			return false, err
		}
		now, err := h.cfg.Training.GetJob(ctx, job.ID)
		if err != nil || !now.Status.Terminal() {
			return false, err
		}
		// Events written before the status changed were read above; read
		// once more for those committed with it, then end.
		_ = h.cfg.Training.EachEvent(ctx, job.ID, after, sendEvent)
		return true, send("", "end", string(now.Status))
	})
}

// resumeFrom is where a live stream starts: the last event id the browser
// had when it reconnects after the stream dropped (Last-Event-ID), else the
// page's own cursor.
func resumeFrom(r *http.Request, cursor string) string {
	if last := r.Header.Get("Last-Event-ID"); last != "" {
		return last
	}
	return cursor
}

// errStop ends an EachEvent early.
var errStop = errors.New("stop")

// livePoint is one checkpoint as the model's live stream sends it: its
// step, its metrics and whether its files are saved (a marker).
type livePoint struct {
	Step    int64              `json:"step"`
	Numbers map[string]float64 `json:"numbers"`
	Saved   bool               `json:"saved"`
}

// modelLive streams a model's checkpoints from step ?from= on as
// "checkpoint" events: first every one of them, then each new checkpoint and
// each change of the latest one's metrics (logged trajectories add theirs to
// the latest checkpoint). Models do not finish: the stream runs until the
// page leaves.
func (h *Handler) modelLive(w http.ResponseWriter, r *http.Request, v *viewer, projectID string) {
	model, ok := h.projectModel(w, r, projectID, r.PathValue("modelID"))
	if !ok {
		return
	}
	from, err := strconv.ParseInt(resumeFrom(r, r.URL.Query().Get("from")), 10, 64)
	if err != nil || from < 0 {
		h.refuse(w, r, weft.Errorf(errBadView, "from: a step ≥ 0"))
		return
	}
	// sent is what the page has of the watched steps (from on).
	sent := map[int64]map[string]float64{}
	h.pollStream(w, r, v, projectID, func(ctx context.Context, send func(id, event, data string) error) (bool, error) {
		latest, err := h.checkpointsFrom(ctx, model.ID, from)
		if err != nil {
			return false, err
		}
		for _, c := range latest {
			if had, ok := sent[c.Step]; ok && maps.Equal(had, c.Metrics) {
				continue
			}
			b, _ := json.Marshal(livePoint{Step: c.Step, Numbers: c.Metrics, Saved: c.BlobPrefix != ""})
			if err := send(strconv.FormatInt(c.Step, 10), "checkpoint", string(b)); err != nil {
				return false, err
			}
			sent[c.Step] = c.Metrics
		}
		// Only the latest checkpoint changes from now on; newer ones follow it.
		if n := len(latest); n > 0 {
			from = latest[n-1].Step
			maps.DeleteFunc(sent, func(step int64, _ map[string]float64) bool { return step < from })
		}
		return false, nil
	})
}

// checkpointsFrom reads a model's checkpoints of step from on, ascending:
// newest first, page by page, until a step before from.
func (h *Handler) checkpointsFrom(ctx context.Context, modelID string, from int64) ([]training.Checkpoint, error) {
	var out []training.Checkpoint
	p := training.ListParams{Limit: 100, Order: training.OrderDesc}
	for {
		page, err := h.cfg.Training.ListCheckpoints(ctx, modelID, p)
		if err != nil {
			return nil, err
		}
		for _, c := range page.Data {
			if c.Step < from {
				slices.Reverse(out)
				return out, nil
			}
			out = append(out, c)
		}
		if !page.HasMore {
			slices.Reverse(out)
			return out, nil
		}
		p.After = page.LastID
	}
}
