package evalrun

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/weftlabs/weft/internal/digest"
	"github.com/weftlabs/weft/objects/ref"
	"github.com/weftlabs/weft/trace"
)

// RunCreate implements [Service].
func (s *Store) RunCreate(ctx context.Context, req *RunCreateReq) (*RunCreateRes, error) {
	if _, err := checkRef(req.ProjectID, "evaluation", req.Evaluation, ref.KindObject); err != nil {
		return nil, err
	}
	if _, err := checkRef(req.ProjectID, "model", req.Model, ref.KindObject, ref.KindOp); err != nil {
		return nil, err
	}
	opName, err := s.publishOp(ctx, req.ProjectID, evaluateOp, evaluateSource)
	if err != nil {
		return nil, err
	}
	id := newID()
	err = s.store(ctx, req.ProjectID, call{id: id, traceID: id, opName: opName,
		attributes: map[string]any{"weave": map[string]string{"evaluation_run": "true", "evaluation": req.Evaluation, "model": req.Model}},
		inputs:     map[string]string{"self": req.Evaluation, "model": req.Model}})
	if err != nil {
		return nil, err
	}
	return &RunCreateRes{EvaluationRunID: id}, nil
}

// runOf reads a run from its call.
func runOf(c *trace.Call, m markers) *Run {
	run := &Run{EvaluationRunID: c.ID, Evaluation: m["evaluation"], Model: m["model"], FinishedAt: c.EndedAt, Summary: c.Summary}
	started := c.StartedAt
	run.StartedAt = &started
	var summary struct {
		Weave struct {
			Status *string `json:"status"`
		} `json:"weave"`
	}
	_ = json.Unmarshal(c.Summary, &summary)
	run.Status = summary.Weave.Status
	return run
}

// RunRead implements [Service].
func (s *Store) RunRead(ctx context.Context, projectID, runID string) (*Run, error) {
	c, m, err := s.read(ctx, projectID, runID, "evaluation_run")
	if err != nil {
		return nil, err
	}
	return runOf(c, m), nil
}

// RunList implements [Service].
func (s *Store) RunList(ctx context.Context, req *RunListReq, yield func(*Run) error) error {
	match := map[string]any{"evaluation_run": "true"}
	if len(req.Evaluations) > 0 {
		match["evaluation"] = req.Evaluations
	}
	if len(req.Models) > 0 {
		match["model"] = req.Models
	}
	return s.list(ctx, req.ProjectID, match, trace.CallsFilter{CallIDs: req.EvaluationRunIDs}, req.Limit, req.Offset, func(c *trace.Call) error {
		return yield(runOf(c, markersOf(c)))
	})
}

// RunDelete implements [Service].
func (s *Store) RunDelete(ctx context.Context, projectID string, runIDs []string) (*DeleteRes, error) {
	return s.remove(ctx, projectID, runIDs)
}

// RunFinish implements [Service].
func (s *Store) RunFinish(ctx context.Context, req *RunFinishReq) (*FinishRes, error) {
	run, _, err := s.read(ctx, req.ProjectID, req.EvaluationRunID, "evaluation_run")
	if err != nil {
		return nil, err
	}
	var inputs struct {
		Self json.RawMessage `json:"self"`
	}
	_ = json.Unmarshal(run.Inputs, &inputs)
	if inputs.Self == nil {
		inputs.Self = json.RawMessage(`null`)
	}
	var means meanBook
	q := &trace.CallsQueryReq{ProjectID: req.ProjectID, Filter: trace.CallsFilter{ParentIDs: []string{run.ID}}, Columns: []string{"op_name", "output"}}
	err = s.cfg.Trace.CallsQuery(ctx, q, func(c *trace.Call) error {
		if opNameIs(c.OpName, predictAndScoreOp) {
			means.add(c.Output)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	output := means.output()
	id := newID()
	err = s.store(ctx, req.ProjectID, call{id: id, traceID: run.TraceID, parentID: run.ID, opName: summarizeOp,
		attributes: map[string]any{}, inputs: map[string]json.RawMessage{"self": inputs.Self}, output: output})
	if err != nil {
		return nil, err
	}
	if err := s.end(ctx, req.ProjectID, run.ID, output, req.Summary); err != nil {
		return nil, err
	}
	return &FinishRes{Success: true}, nil
}

// meanBook gathers the means of a run's results, as Weave's server
// summarises a run finished over the v2 API: per scorer, the mean of its
// scores that are floats (JSON numbers written with a fraction or an
// exponent, as Python reads them), and the mean of the model's numeric
// outputs (booleans count as 0 and 1).
type meanBook struct {
	scorers []string // in first-seen order
	sums    map[string]*mean
	outputs mean
}

type mean struct {
	sum float64
	n   int
}

// add reads one predict_and_score output {output, scores: {…}}.
func (b *meanBook) add(raw json.RawMessage) {
	v, err := digest.Parse(raw)
	if err != nil || v.Kind != digest.Object {
		return
	}
	for _, member := range v.Members {
		switch member.Key {
		case "output":
			if x, ok := numeric(member.Value, true); ok {
				b.outputs.sum += x
				b.outputs.n++
			}
		case "scores":
			for _, score := range member.Value.Members {
				if b.sums == nil {
					b.sums = map[string]*mean{}
				}
				m := b.sums[score.Key]
				if m == nil {
					m = &mean{}
					b.sums[score.Key] = m
					b.scorers = append(b.scorers, score.Key)
				}
				if x, ok := numeric(score.Value, false); ok {
					m.sum += x
					m.n++
				}
			}
		}
	}
}

// output is {<scorer>: {"mean": m}, …, "output": {"mean": m}}, leaving out
// scorers without a float score and the output when none was numeric.
func (b *meanBook) output() json.RawMessage {
	var members []digest.Member
	meanOf := func(m mean) digest.Value {
		return digest.Obj(digest.M("mean", pythonFloat(m.sum/float64(m.n))))
	}
	for _, name := range b.scorers {
		if m := b.sums[name]; m.n > 0 {
			members = append(members, digest.M(name, meanOf(*m)))
		}
	}
	if b.outputs.n > 0 {
		members = append(members, digest.M("output", meanOf(b.outputs)))
	}
	return json.RawMessage(digest.Obj(members...).Compact())
}

// numeric reads a JSON number: only a float (written with a fraction or an
// exponent) unless anyNumber, which also takes integers and booleans.
func numeric(v digest.Value, anyNumber bool) (float64, bool) {
	switch {
	case v.Kind == digest.Bool && anyNumber:
		if v.Bool {
			return 1, true
		}
		return 0, true
	case v.Kind != digest.Number:
		return 0, false
	}
	x, err := strconv.ParseFloat(v.Text, 64)
	if err != nil {
		return 0, false
	}
	return x, anyNumber || strings.ContainsAny(v.Text, ".eE")
}

// pythonFloat is f as a JSON number Python writes for a float.
func pythonFloat(f float64) digest.Value {
	return digest.Value{Kind: digest.Number, Text: string(digest.AppendPythonFloat(nil, f))}
}
