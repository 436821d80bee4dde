package monitor

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/riverqueue/river"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/chat"
	"github.com/weftlabs/weft/feedback"
	"github.com/weftlabs/weft/objects/ref"
	"github.com/weftlabs/weft/trace"
)

// judgeArgs is the job that asks a judge for one verdict.
type judgeArgs struct {
	ProjectID    string `json:"project_id"`
	CallID       string `json:"call_id"`
	ScorerID     string `json:"scorer_id"`
	ScorerDigest string `json:"scorer_digest"`
}

func (judgeArgs) Kind() string { return "weft_monitor_judge" }

type judgeWorker struct {
	river.WorkerDefaults[judgeArgs]
	m *Monitors
}

func (w *judgeWorker) Work(ctx context.Context, job *river.Job[judgeArgs]) error {
	return w.m.judge(ctx, job)
}

func (w *judgeWorker) Timeout(*river.Job[judgeArgs]) time.Duration { return w.m.cfg.JobTimeout }

func (w *judgeWorker) NextRetry(job *river.Job[judgeArgs]) time.Time {
	return time.Now().Add(w.m.cfg.RetryDelay * time.Duration(job.Attempt))
}

// queueJudges stores the pending verdicts of judged scorings and queues
// one judge job each. A job is unique by its verdict, so a dispatch that
// runs twice queues it once.
func (m *Monitors) queueJudges(ctx context.Context, args dispatchArgs, todo []scoring) error {
	if len(todo) == 0 {
		return nil
	}
	rows := make([]verdictRow, len(todo))
	params := make([]river.InsertManyParams, len(todo))
	for i, s := range todo {
		rows[i] = m.newVerdict(args, s, StatePending)
		params[i] = river.InsertManyParams{
			Args: judgeArgs{ProjectID: args.ProjectID, CallID: s.key.CallID, ScorerID: s.key.ScorerID, ScorerDigest: s.key.ScorerDigest},
			InsertOpts: &river.InsertOpts{Queue: judgeQueue, MaxAttempts: m.cfg.MaxAttempts,
				UniqueOpts: river.UniqueOpts{ByArgs: true}},
		}
	}
	if err := m.insertVerdicts(ctx, rows); err != nil {
		return err
	}
	return m.cfg.Jobs.Insert(ctx, params...)
}

// judgeFailure is a verdict that cannot be given: retrying would fail the
// same way.
type judgeFailure struct{ reason string }

func (f *judgeFailure) Error() string { return f.reason }

func failf(format string, args ...any) error {
	return &judgeFailure{reason: fmt.Sprintf(format, args...)}
}

// judge runs a judge job: one request to the judge model, its answer
// checked against the verdict's schema, stored as feedback linked to the
// request's traced call. A failure that retrying cannot mend, or the last
// attempt's failure, is an error verdict with its reason.
func (m *Monitors) judge(ctx context.Context, job *river.Job[judgeArgs]) error {
	a := job.Args
	row := verdictRow{ProjectID: a.ProjectID, CallID: a.CallID, ScorerID: a.ScorerID, ScorerDigest: a.ScorerDigest}
	err := m.db.NewSelect().Model(&row).WherePK().Scan(ctx)
	if isNoRows(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if row.State != StatePending {
		return nil
	}
	if row.BackfillID != nil {
		running, err := m.backfillRunning(ctx, a.ProjectID, *row.BackfillID)
		if err != nil {
			return err
		}
		if !running {
			return m.dropPending(ctx, a.ProjectID, *row.BackfillID)
		}
	}
	limitKey := a.ProjectID + "\x00" + row.MonitorID
	wait, ok := m.limits.acquire(limitKey, time.Now())
	if !ok {
		return river.JobSnooze(wait)
	}
	defer m.limits.release(limitKey)

	res, err := m.judgeOnce(ctx, &row)
	var failure *judgeFailure
	if err == nil && row.BackfillID != nil {
		// The backfill may have been cancelled while the judge ran.
		running, err := m.backfillRunning(ctx, a.ProjectID, *row.BackfillID)
		if err != nil || !running {
			return err
		}
	}
	switch {
	case err == nil:
		return m.storeJudgement(ctx, &row, res)
	case errors.As(err, &failure):
		return m.failVerdict(ctx, &row, job.Attempt, failure.reason)
	case job.Attempt >= job.MaxAttempts:
		return m.failVerdict(ctx, &row, job.Attempt, fmt.Sprintf("%v (after %d attempts)", err, job.Attempt))
	}
	m.cfg.Logger.WarnContext(ctx, "judge attempt failed; retrying", "project_id", a.ProjectID, "call_id", a.CallID,
		"scorer", a.ScorerID, "attempt", job.Attempt, "error", err)
	return err
}

// judgement is a judge's answer.
type judgement struct {
	mon              *Monitor
	scorer           *Scorer
	output           json.RawMessage
	callID           string
	promptTokens     int64
	completionTokens int64
	// cost is the tokens' price, nil when the model has none.
	cost *float64
}

// judgeOnce asks the judge for row's verdict.
func (m *Monitors) judgeOnce(ctx context.Context, row *verdictRow) (*judgement, error) {
	var reg monitorRow
	err := m.db.NewSelect().Model(&reg).Where("project_id = ? AND object_id = ?", row.ProjectID, row.MonitorID).Scan(ctx)
	if isNoRows(err) {
		return nil, failf("the monitor %s was deleted before its judge ran", row.MonitorID)
	}
	if err != nil {
		return nil, err
	}
	if row.BackfillID == nil && !reg.Active {
		return nil, failf("the monitor %s was paused before its judge ran", row.MonitorID)
	}
	mon := &Monitor{ProjectID: row.ProjectID, ObjectID: row.MonitorID, Digest: row.MonitorDigest}
	if reg.PublishedBy != nil {
		mon.PublishedBy = *reg.PublishedBy
	}
	scorerRef := ref.Object(row.ProjectID, row.ScorerID, row.ScorerDigest).WithScheme(ref.SchemeWeave).String()
	s, err := m.scorer(ctx, row.ProjectID, scorerRef)
	if err != nil {
		if errors.Is(err, weft.ErrInvalid) || errors.Is(err, weft.ErrNotFound) {
			return nil, failf("the scorer cannot run: %v", err)
		}
		return nil, err
	}
	if s.Judge == nil {
		return nil, failf("scorer %s is not a judge", s.Name)
	}
	if m.cfg.Chat == nil {
		return nil, failf("this server serves no chat models, so judge %s cannot run", s.Name)
	}
	call, children, err := m.judgedCall(ctx, row.ProjectID, row.CallID, s.Judge)
	if err != nil {
		return nil, err
	}
	body, err := s.Judge.request(mon, call, children)
	if err != nil {
		return nil, err
	}
	p, err := m.cfg.Principals.PrincipalOfUser(ctx, mon.PublishedBy)
	if err != nil {
		return nil, failf("the publisher of monitor %s cannot be found: %v", mon.ObjectID, err)
	}
	if entity, _, _ := strings.Cut(row.ProjectID, "/"); !p.MemberOf(entity) {
		return nil, failf("the publisher of monitor %s may no longer touch project %s", mon.ObjectID, row.ProjectID)
	}
	answer, err := complete(weft.WithPrincipal(ctx, p), m.cfg.Chat, row.ProjectID, body)
	if err != nil {
		return nil, err
	}
	out, err := s.Judge.verdict(answer)
	if err != nil {
		return nil, err
	}
	j := &judgement{mon: mon, scorer: s, output: out, callID: answer.callID,
		promptTokens: answer.Usage.PromptTokens, completionTokens: answer.Usage.CompletionTokens}
	if j.cost, err = m.cost(ctx, row.ProjectID, cmp.Or(answer.Model, s.Judge.Model), j.promptTokens, j.completionTokens); err != nil {
		return nil, err
	}
	return j, nil
}

// cost is what a judge's answer of promptTokens and completionTokens by
// model cost, priced as projectID's calls of the model are; nil when the
// model has no price.
func (m *Monitors) cost(ctx context.Context, projectID, model string, promptTokens, completionTokens int64) (*float64, error) {
	if m.cfg.Prices == nil {
		return nil, nil
	}
	price, ok, err := m.cfg.Prices.ModelPrice(ctx, projectID, model, m.now())
	if err != nil || !ok {
		return nil, err
	}
	cost := price.Cost(promptTokens, completionTokens)
	return &cost, nil
}

// judgedCall reads the call a verdict judges and, when the judge reads
// them, its children (the first MaxChildren by start).
func (m *Monitors) judgedCall(ctx context.Context, projectID, callID string, j *Judge) (*trace.Call, []*trace.Call, error) {
	var call *trace.Call
	err := m.cfg.Calls.CallsQuery(ctx, &trace.CallsQueryReq{ProjectID: projectID, Filter: trace.CallsFilter{CallIDs: []string{callID}}},
		func(c *trace.Call) error {
			call = c
			return nil
		})
	if err != nil {
		return nil, nil, err
	}
	if call == nil {
		return nil, nil, failf("the call was deleted before its judge ran")
	}
	if !j.IncludeChildren || j.MaxChildren == 0 {
		return call, nil, nil
	}
	var children []*trace.Call
	err = m.cfg.Calls.CallsQuery(ctx, &trace.CallsQueryReq{ProjectID: projectID, Filter: trace.CallsFilter{ParentIDs: []string{callID}},
		Limit: j.MaxChildren}, func(c *trace.Call) error {
		children = append(children, c)
		return nil
	})
	return call, children, err
}

// request builds the judge's chat completion for call: the template's
// messages and prompt filled from the call (never from any other project's
// data: the call, its children and the scorer are all of the monitor's
// project), the sampling parameters, and the verdict's schema as the
// response format.
func (j *Judge) request(mon *Monitor, call *trace.Call, children []*trace.Call) ([]byte, error) {
	vars := templateVars(call, children)
	type message struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	var msgs []message
	for _, t := range j.Messages {
		text, err := t.Content.Render(vars)
		if err != nil {
			return nil, failf("%v", err)
		}
		msgs = append(msgs, message{Role: t.Role, Content: text})
	}
	prompt, err := j.Prompt.Render(vars)
	if err != nil {
		return nil, failf("%v", err)
	}
	msgs = append(msgs, message{Role: "user", Content: prompt})
	req := map[string]any{"model": j.Model, "messages": msgs, "user": judgeUserPrefix + mon.ObjectID}
	for k, v := range j.Params {
		req[k] = v
	}
	switch j.Format {
	case FormatSchema:
		req["response_format"] = map[string]any{"type": "json_schema",
			"json_schema": map[string]any{"name": "verdict", "schema": j.Schema, "strict": true}}
	case FormatJSON:
		req["response_format"] = map[string]string{"type": "json_object"}
	}
	return json.Marshal(req)
}

// templateVars are the fields a judge's template may name: output, inputs,
// each input by its name, and children (a list of {op_name, inputs,
// output}).
func templateVars(call *trace.Call, children []*trace.Call) map[string]json.RawMessage {
	vars := map[string]json.RawMessage{}
	var inputs map[string]json.RawMessage
	if json.Unmarshal(call.Inputs, &inputs) == nil {
		for k, v := range inputs {
			if k != "self" {
				vars[k] = v
			}
		}
	}
	vars["inputs"] = orNull(call.Inputs)
	vars["output"] = orNull(call.Output)
	type child struct {
		OpName string          `json:"op_name"`
		Inputs json.RawMessage `json:"inputs"`
		Output json.RawMessage `json:"output"`
	}
	list := make([]child, len(children))
	for i, c := range children {
		list[i] = child{OpName: c.OpName, Inputs: orNull(c.Inputs), Output: orNull(c.Output)}
	}
	vars["children"], _ = json.Marshal(list)
	return vars
}

func orNull(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return json.RawMessage("null")
	}
	return raw
}

// answer is what a judge's completion said.
type answer struct {
	callID  string
	Model   string `json:"model"`
	Choices []struct {
		Message struct {
			Content *string `json:"content"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage struct {
		PromptTokens     int64 `json:"prompt_tokens"`
		CompletionTokens int64 `json:"completion_tokens"`
	} `json:"usage"`
}

// maxAnswerBytes bounds a judge's recorded answer.
const maxAnswerBytes = 4 << 20

// complete sends a judge's request through the chat path and reads the
// answer and the id of the call it was traced as. Refusals that a retry
// would meet again (a bad request, an unknown model) are failures; others
// (an upstream or the engine busy) are errors to retry.
func complete(ctx context.Context, c Completer, projectID string, body []byte) (*answer, error) {
	comp, err := c.Complete(ctx, projectID, body)
	if err != nil {
		if permanent(err) {
			return nil, failf("the judge's request was refused: %v", err)
		}
		return nil, err
	}
	rec := &recorder{header: http.Header{}}
	if err := comp.Relay(rec); err != nil {
		return nil, err
	}
	if rec.status/100 != 2 {
		msg := fmt.Sprintf("the judge model answered %d: %s", rec.status, clip(rec.body.String(), 500))
		if rec.status == http.StatusTooManyRequests || rec.status >= 500 {
			return nil, errors.New(msg)
		}
		return nil, failf("%s", msg)
	}
	a := &answer{callID: rec.header.Get(chat.CallIDHeader)}
	if err := json.Unmarshal(rec.body.Bytes(), a); err != nil || len(a.Choices) == 0 {
		return nil, failf("the judge's answer is not a chat completion: %s", clip(rec.body.String(), 500))
	}
	return a, nil
}

// permanent tells errors of requests that would fail again.
func permanent(err error) bool {
	for _, class := range []error{weft.ErrInvalid, weft.ErrValidation, weft.ErrNotFound, weft.ErrForbidden, weft.ErrTooLarge} {
		if errors.Is(err, class) {
			return true
		}
	}
	return false
}

// verdict reads the judge's answer as a verdict: its text (FormatText) or
// the JSON it wrote, which must satisfy the schema.
func (j *Judge) verdict(a *answer) (json.RawMessage, error) {
	choice := a.Choices[0]
	content := ""
	if choice.Message.Content != nil {
		content = *choice.Message.Content
	}
	if j.Format == FormatText {
		out, _ := json.Marshal(content)
		return out, nil
	}
	truncated := ""
	if choice.FinishReason == "length" {
		truncated = " (the answer reached max_tokens)"
	}
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(content))
	if err != nil {
		return nil, failf("the judge's answer is not JSON%s: %s", truncated, clip(content, 500))
	}
	if j.Format == FormatJSON {
		if _, ok := doc.(map[string]any); !ok {
			return nil, failf("the judge's answer is not a JSON object: %s", clip(content, 500))
		}
	}
	if j.schema != nil {
		if err := j.schema.Validate(doc); err != nil {
			return nil, failf("the judge's answer is off-schema%s: %s", truncated, clip(strings.TrimSpace(err.Error()), 500))
		}
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, []byte(content)); err != nil {
		return nil, failf("the judge's answer is not JSON: %v", err)
	}
	return compact.Bytes(), nil
}

// storeJudgement writes a verdict's feedback, then marks it done.
func (m *Monitors) storeJudgement(ctx context.Context, row *verdictRow, j *judgement) error {
	s := scoring{mon: j.mon, scorer: j.scorer, key: row.key()}
	fb := m.verdictFeedback(s, row.FeedbackID, j.output, j.callID)
	if err := m.writeFeedback(ctx, j.mon, []feedback.CreateReq{fb}); err != nil {
		return err
	}
	now, out := m.now(), string(j.output)
	q := m.db.NewUpdate().Model(row).Set("state = ?", StateDone).Set("output = ?", out).Set("scored_at = ?", now).
		Set("prompt_tokens = ?", j.promptTokens).Set("completion_tokens = ?", j.completionTokens).
		Set("attempts = attempts + 1").WherePK()
	if j.callID != "" {
		q = q.Set("judge_call_id = ?", j.callID)
	}
	if j.cost != nil {
		q = q.Set("cost = ?", *j.cost)
	}
	_, err := q.Exec(ctx)
	return err
}

// failVerdict records that a verdict could not be given, and why.
func (m *Monitors) failVerdict(ctx context.Context, row *verdictRow, attempts int, reason string) error {
	m.cfg.Logger.WarnContext(ctx, "judge failed", "project_id", row.ProjectID, "call_id", row.CallID, "scorer", row.ScorerID, "reason", reason)
	_, err := m.db.NewUpdate().Model(row).Set("state = ?", StateError).Set("error = ?", clip(reason, 2000)).
		Set("attempts = ?", attempts).Set("scored_at = ?", m.now()).WherePK().Where("state = ?", StatePending).Exec(ctx)
	return err
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// recorder is the http.ResponseWriter a judge's completion is relayed to.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	if r.body.Len()+len(b) > maxAnswerBytes {
		return 0, errors.New("judge answer too large")
	}
	return r.body.Write(b)
}
