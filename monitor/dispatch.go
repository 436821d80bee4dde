package monitor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/riverqueue/river"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/chat"
	"github.com/weftlabs/weft/feedback"
	"github.com/weftlabs/weft/jobs"
	"github.com/weftlabs/weft/objects"
	"github.com/weftlabs/weft/objects/ref"
	"github.com/weftlabs/weft/trace"
)

// River queues of the monitor jobs.
const (
	dispatchQueue = "weft_monitor"
	judgeQueue    = "weft_monitor_judge"
)

// dispatchMaxAttempts bounds the attempts of a dispatch job: its failures
// are the database's, worth waiting out.
const dispatchMaxAttempts = 10

// dispatchChunk is how many calls a dispatch reads and scores at once.
const dispatchChunk = 500

// dispatchArgs is the job that scores calls of one project that were
// written (started or ended) at At: it matches them against the project's
// active monitors, samples them, runs the deterministic scorers and queues
// a judge job per judged verdict.
type dispatchArgs struct {
	ProjectID string    `json:"project_id"`
	CallIDs   []string  `json:"call_ids"`
	At        time.Time `json:"at"`
	// MonitorID and BackfillID, for a backfill, run that one monitor on
	// calls whichever time they ended.
	MonitorID  string `json:"monitor_id,omitempty"`
	BackfillID string `json:"backfill_id,omitempty"`
	// Chunk is the job's number among its backfill's dispatch jobs.
	Chunk int `json:"chunk,omitempty"`
}

func (dispatchArgs) Kind() string { return "weft_monitor_dispatch" }

func (m *Monitors) dispatchJob(args dispatchArgs) river.InsertManyParams {
	return river.InsertManyParams{Args: args, InsertOpts: &river.InsertOpts{Queue: dispatchQueue, MaxAttempts: dispatchMaxAttempts}}
}

type dispatchWorker struct {
	river.WorkerDefaults[dispatchArgs]
	m *Monitors
}

func (w *dispatchWorker) Work(ctx context.Context, job *river.Job[dispatchArgs]) error {
	if job.Args.BackfillID != "" {
		running, err := w.m.backfillRunning(ctx, job.Args.ProjectID, job.Args.BackfillID)
		if err != nil || !running {
			return err
		}
	}
	err := w.m.dispatch(ctx, job.Args)
	if err == nil && job.Args.BackfillID != "" {
		err = w.m.chunkDone(ctx, job.Args)
	}
	if err != nil && job.Attempt >= job.MaxAttempts {
		w.m.cfg.Logger.ErrorContext(ctx, "monitor dispatch failed; its calls are not scored", "project_id", job.Args.ProjectID,
			"calls", len(job.Args.CallIDs), "error", err)
	}
	return err
}

func (w *dispatchWorker) Timeout(*river.Job[dispatchArgs]) time.Duration { return w.m.cfg.JobTimeout }

func (w *dispatchWorker) NextRetry(job *river.Job[dispatchArgs]) time.Time {
	return time.Now().Add(w.m.cfg.RetryDelay * time.Duration(job.Attempt))
}

// register adds the monitor workers to the job queue.
func (m *Monitors) register() error {
	if err := jobs.Register(m.cfg.Jobs, dispatchQueue, max(m.cfg.Workers, 0), &dispatchWorker{m: m}); err != nil {
		return err
	}
	if err := jobs.Register(m.cfg.Jobs, dispatchQueue, 0, &backfillWorker{m: m}); err != nil {
		return err
	}
	return jobs.Register(m.cfg.Jobs, judgeQueue, max(m.cfg.JudgeWorkers, 0), &judgeWorker{m: m})
}

// RegisterKinds registers the monitor job kinds on q with no workers, for
// a process that works none of them (a training worker): River's maintenance
// in that process then retries a monitor job whose worker died instead of
// discarding it.
func RegisterKinds(q *jobs.Queue) error {
	m := &Monitors{cfg: Config{Workers: -1, JudgeWorkers: -1, Jobs: q}}
	m.cfg.JobTimeout, m.cfg.RetryDelay = DefaultJobTimeout, DefaultRetryDelay
	return m.register()
}

// dispatch runs a dispatch job.
func (m *Monitors) dispatch(ctx context.Context, args dispatchArgs) error {
	rows, err := m.activeMonitors(ctx, args.ProjectID, args.MonitorID)
	if err != nil {
		return err
	}
	var mons []*Monitor
	for i := range rows {
		row := &rows[i]
		if args.BackfillID == "" && (row.ActiveSince == nil || args.At.Before(*row.ActiveSince)) {
			continue // the calls were written before the monitor was active
		}
		mon, err := row.monitor()
		if err != nil {
			return err
		}
		mons = append(mons, mon)
	}
	if len(mons) == 0 {
		return nil
	}
	for ids := range slices.Chunk(args.CallIDs, dispatchChunk) {
		if err := m.dispatchCalls(ctx, args, mons, ids); err != nil {
			return err
		}
	}
	return nil
}

// scoring is one scorer to run on one call for one monitor.
type scoring struct {
	mon    *Monitor
	call   *trace.Call
	key    verdictKey
	scorer *Scorer
	// failed says why the scorer cannot run; its verdict is an error.
	failed string
}

// dispatchCalls scores the calls ids of one dispatch.
func (m *Monitors) dispatchCalls(ctx context.Context, args dispatchArgs, mons []*Monitor, ids []string) error {
	calls, err := m.scorableCalls(ctx, args.ProjectID, ids)
	if err != nil || len(calls) == 0 {
		return err
	}
	candidates := make([]string, 0, len(calls))
	for id := range calls {
		candidates = append(candidates, id)
	}
	slices.Sort(candidates)
	var todo []scoring
	seen := map[verdictKey]bool{}
	for _, mon := range mons {
		matched, err := m.match(ctx, mon, candidates)
		if err != nil {
			return err
		}
		for _, id := range matched {
			if !Sampled(mon.ObjectID, id, mon.SamplingRate) {
				continue
			}
			for _, scorerRef := range mon.Scorers {
				r, err := ref.Parse(scorerRef)
				if err != nil {
					continue // ParseMonitor checked every ref
				}
				k := verdictKey{CallID: id, ScorerID: r.Name, ScorerDigest: r.Version}
				if seen[k] {
					continue // another monitor runs the same scorer version
				}
				seen[k] = true
				s := scoring{mon: mon, call: calls[id], key: k}
				if s.scorer, err = m.scorer(ctx, args.ProjectID, scorerRef); err != nil {
					if !errors.Is(err, weft.ErrInvalid) && !errors.Is(err, weft.ErrNotFound) {
						return err
					}
					s.failed = "the scorer cannot run: " + err.Error()
				}
				todo = append(todo, s)
			}
		}
	}
	if len(todo) == 0 {
		return nil
	}
	existing, err := m.existingVerdicts(ctx, args.ProjectID, candidates)
	if err != nil {
		return err
	}
	var scored, judged []scoring
	var failed []verdictRow
	for _, s := range todo {
		prev := existing[s.key]
		switch {
		case prev != nil && prev.State != StatePending:
		case s.failed != "":
			row := m.newVerdict(args, s, StateError)
			row.Error = &s.failed
			failed = append(failed, row)
		case s.scorer.Deterministic():
			scored = append(scored, s)
		default:
			judged = append(judged, s)
		}
	}
	if err := m.insertVerdicts(ctx, failed); err != nil {
		return err
	}
	if err := m.scoreNow(ctx, args, scored); err != nil {
		return err
	}
	return m.queueJudges(ctx, args, judged)
}

// scorableCalls reads the calls among ids that a monitor may score: ended
// without an exception (as Weave's scoring worker requires), and not the
// request of a judge (which would judge its own judging).
func (m *Monitors) scorableCalls(ctx context.Context, projectID string, ids []string) (map[string]*trace.Call, error) {
	calls := map[string]*trace.Call{}
	err := m.cfg.Calls.CallsQuery(ctx, &trace.CallsQueryReq{ProjectID: projectID, Filter: trace.CallsFilter{CallIDs: ids}},
		func(c *trace.Call) error {
			if c.EndedAt != nil && (c.Exception == nil || *c.Exception == "") && !isJudgeCall(c) {
				calls[c.ID] = c
			}
			return nil
		})
	return calls, err
}

// judgeUserPrefix starts the OpenAI "user" a judge's request names: the
// calls the gateway traces for judges are never themselves scored.
const judgeUserPrefix = "weft-monitor:"

func isJudgeCall(c *trace.Call) bool {
	if c.OpName != chat.OpChatCompletion {
		return false
	}
	var in struct {
		User string `json:"user"`
	}
	return json.Unmarshal(c.Inputs, &in) == nil && strings.HasPrefix(in.User, judgeUserPrefix)
}

// match returns the ids among ids of the calls mon's filter selects, as the
// calls query selects them.
func (m *Monitors) match(ctx context.Context, mon *Monitor, ids []string) ([]string, error) {
	if len(mon.OpNames) == 0 && mon.Query == nil {
		return ids, nil
	}
	var out []string
	err := m.cfg.Calls.CallsQuery(ctx, &trace.CallsQueryReq{ProjectID: mon.ProjectID,
		Filter: trace.CallsFilter{CallIDs: ids, OpNames: mon.OpNames}, Query: mon.Query, Columns: []string{"id"}},
		func(c *trace.Call) error {
			out = append(out, c.ID)
			return nil
		})
	return out, err
}

func (m *Monitors) newVerdict(args dispatchArgs, s scoring, state string) verdictRow {
	row := verdictRow{ProjectID: args.ProjectID, CallID: s.key.CallID, ScorerID: s.key.ScorerID, ScorerDigest: s.key.ScorerDigest,
		MonitorID: s.mon.ObjectID, MonitorDigest: s.mon.Digest, State: state, FeedbackID: feedbackID(args.ProjectID, s.key),
		CreatedAt: m.now()}
	if args.BackfillID != "" {
		row.BackfillID = &args.BackfillID
	}
	return row
}

// scoreNow runs deterministic scorers: their feedback first (its ids are
// the verdicts', so a retry rewrites the same rows), then their verdicts.
func (m *Monitors) scoreNow(ctx context.Context, args dispatchArgs, todo []scoring) error {
	if len(todo) == 0 {
		return nil
	}
	rows := make([]verdictRow, len(todo))
	byMonitor := map[*Monitor][]feedback.CreateReq{}
	now := m.now()
	for i, s := range todo {
		out := s.scorer.Score(s.call)
		rows[i] = m.newVerdict(args, s, StateDone)
		text := string(out)
		rows[i].Output, rows[i].ScoredAt = &text, &now
		byMonitor[s.mon] = append(byMonitor[s.mon], m.verdictFeedback(s, rows[i].FeedbackID, out, ""))
	}
	for mon, batch := range byMonitor {
		if err := m.writeFeedback(ctx, mon, batch); err != nil {
			return err
		}
	}
	return m.insertVerdicts(ctx, rows)
}

// verdictFeedback is the feedback row of a verdict, as Weave's scoring
// worker writes it: type wandb.runnable.<scorer>, the scorer's ref as
// runnable_ref, the monitor's as trigger_ref, the scorer's own call (a
// judge's request) as call_ref, and the verdict as payload.output.
func (m *Monitors) verdictFeedback(s scoring, id string, output json.RawMessage, scoreCallID string) feedback.CreateReq {
	payload := append(append([]byte(`{"output":`), output...), '}')
	runnable, trigger := s.scorer.Ref, monitorRef(s.mon)
	req := feedback.CreateReq{ProjectID: s.mon.ProjectID, WeaveRef: callRef(s.mon.ProjectID, s.key.CallID),
		FeedbackType: "wandb.runnable." + s.scorer.Name, Payload: payload, ID: &id, RunnableRef: &runnable, TriggerRef: &trigger}
	if scoreCallID != "" {
		c := callRef(s.mon.ProjectID, scoreCallID)
		req.CallRef = &c
	}
	return req
}

// writeFeedback stores verdicts' feedback as the monitor's publisher wrote
// it (wb_user_id), as Weave does.
func (m *Monitors) writeFeedback(ctx context.Context, mon *Monitor, batch []feedback.CreateReq) error {
	ctx = weft.WithPrincipal(ctx, weft.Principal{UserID: mon.PublishedBy})
	_, err := m.cfg.Feedback.BatchCreate(ctx, feedback.BatchCreateReq{Batch: batch})
	if err != nil {
		return fmt.Errorf("monitor %s: storing verdicts: %w", mon.ObjectID, err)
	}
	return nil
}

// scorer reads the scorer version scorerRef of projectID (and the model
// object a judge names by ref), from the cache when it was read before.
func (m *Monitors) scorer(ctx context.Context, projectID, scorerRef string) (*Scorer, error) {
	if s := m.scorers.get(scorerRef); s != nil {
		return s, nil
	}
	r, err := ref.Parse(scorerRef)
	if err != nil {
		return nil, weft.Errorf(ErrInvalidMonitor, "%v", err)
	}
	val, err := m.readObject(ctx, projectID, r)
	if err != nil {
		return nil, err
	}
	s, err := m.parseScorer(ctx, projectID, r, val)
	if err != nil {
		return nil, err
	}
	m.scorers.put(scorerRef, s)
	return s, nil
}

// parseScorer reads the value of scorer r of projectID, and the model
// object a judge names by ref.
func (m *Monitors) parseScorer(ctx context.Context, projectID string, r ref.Ref, val json.RawMessage) (*Scorer, error) {
	s, err := ParseScorer(r, val)
	if err != nil {
		return nil, err
	}
	if s.Judge != nil && s.Judge.ModelRef != "" {
		mr, _ := ref.Parse(s.Judge.ModelRef)
		val, err := m.readObject(ctx, projectID, mr)
		if err != nil {
			return nil, err
		}
		if err := s.Judge.resolveModel(s.Name, val); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func (m *Monitors) readObject(ctx context.Context, projectID string, r ref.Ref) (json.RawMessage, error) {
	if r.ProjectID() != projectID {
		return nil, weft.Errorf(ErrInvalidMonitor, "%s names an object of another project", r.String())
	}
	res, err := m.cfg.Objects.ObjRead(ctx, &objects.ObjReadReq{ProjectID: projectID, ObjectID: r.Name, Digest: r.Version})
	if err != nil {
		if errors.Is(err, weft.ErrNotFound) {
			return nil, weft.Errorf(ErrInvalidScorer, "%s: %v", r.String(), err)
		}
		return nil, err
	}
	return res.Obj.Val, nil
}
