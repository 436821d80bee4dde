package evalrun

import (
	"context"
	"encoding/json"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/feedback"
	"github.com/weftlabs/weft/internal/digest"
	"github.com/weftlabs/weft/objects/ref"
	"github.com/weftlabs/weft/trace"
)

// PredictionCreate implements [Service].
func (s *Store) PredictionCreate(ctx context.Context, req *PredictionCreateReq) (*PredictionCreateRes, error) {
	model, err := checkRef(req.ProjectID, "model", req.Model, ref.KindObject, ref.KindOp)
	if err != nil {
		return nil, err
	}
	inputs, err := jsonObject("inputs", req.Inputs)
	if err != nil {
		return nil, err
	}
	output := req.Output
	if len(output) == 0 {
		output = json.RawMessage(`null`)
	}
	id := newID()
	traceID, parentID := id, ""
	attrs := map[string]string{"prediction": "true", "model": req.Model}
	if req.EvaluationRunID != nil {
		run, _, err := s.read(ctx, req.ProjectID, *req.EvaluationRunID, "evaluation_run")
		if err != nil {
			return nil, err
		}
		var runInputs struct {
			Self json.RawMessage `json:"self"`
		}
		_ = json.Unmarshal(run.Inputs, &runInputs)
		opName, err := s.publishOp(ctx, req.ProjectID, predictAndScoreOp, predictAndScoreSource)
		if err != nil {
			return nil, err
		}
		parentID = newID()
		err = s.store(ctx, req.ProjectID, call{id: parentID, traceID: run.TraceID, parentID: run.ID, opName: opName,
			attributes: map[string]any{"weave": map[string]string{"predict_call_id": id}},
			inputs:     map[string]any{"self": orNull(runInputs.Self), "model": req.Model, "example": inputs}})
		if err != nil {
			return nil, err
		}
		traceID = run.TraceID
		attrs["evaluation_run_id"] = run.ID
	}
	opName, err := s.publishOp(ctx, req.ProjectID, model.Name+".predict", predictSource)
	if err != nil {
		return nil, err
	}
	err = s.store(ctx, req.ProjectID, call{id: id, traceID: traceID, parentID: parentID, opName: opName,
		attributes: map[string]any{"weave": attrs}, inputs: map[string]any{"self": req.Model, "inputs": inputs}, output: output})
	if err != nil {
		return nil, err
	}
	return &PredictionCreateRes{PredictionID: id}, nil
}

// predictionOf reads a prediction from its call.
func predictionOf(c *trace.Call, m markers) *Prediction {
	var inputs struct {
		Inputs json.RawMessage `json:"inputs"`
	}
	_ = json.Unmarshal(c.Inputs, &inputs)
	return &Prediction{PredictionID: c.ID, Model: m["model"], Inputs: orEmptyObject(inputs.Inputs), Output: orNull(c.Output),
		EvaluationRunID: m.optional("evaluation_run_id"), WbUserID: c.PfUserID}
}

// PredictionRead implements [Service].
func (s *Store) PredictionRead(ctx context.Context, projectID, predictionID string) (*Prediction, error) {
	c, m, err := s.read(ctx, projectID, predictionID, "prediction")
	if err != nil {
		return nil, err
	}
	return predictionOf(c, m), nil
}

// PredictionList implements [Service].
func (s *Store) PredictionList(ctx context.Context, req *ListReq, yield func(*Prediction) error) error {
	match := map[string]any{"prediction": "true"}
	if req.EvaluationRunID != "" {
		match["evaluation_run_id"] = req.EvaluationRunID
	}
	return s.list(ctx, req.ProjectID, match, trace.CallsFilter{}, req.Limit, req.Offset, func(c *trace.Call) error {
		return yield(predictionOf(c, markersOf(c)))
	})
}

// PredictionDelete implements [Service].
func (s *Store) PredictionDelete(ctx context.Context, projectID string, ids []string) (*DeleteRes, error) {
	return s.remove(ctx, projectID, ids)
}

// PredictionFinish implements [Service].
func (s *Store) PredictionFinish(ctx context.Context, projectID, predictionID string) (*FinishRes, error) {
	prediction, _, err := s.read(ctx, projectID, predictionID, "prediction")
	if err != nil {
		return nil, err
	}
	if prediction.EndedAt == nil {
		if err := s.end(ctx, projectID, prediction.ID, json.RawMessage(`null`), nil); err != nil {
			return nil, err
		}
		ended := s.cfg.Now()
		prediction.EndedAt = &ended
	}
	if prediction.ParentID == nil {
		return &FinishRes{Success: true}, nil
	}
	parent, err := s.cfg.Trace.CallRead(ctx, &trace.CallReadReq{ProjectID: projectID, ID: *prediction.ParentID})
	if err != nil {
		return nil, err
	}
	if parent.Call == nil || !opNameIs(parent.Call.OpName, predictAndScoreOp) {
		return &FinishRes{Success: true}, nil
	}
	var scores []digest.Member
	seen := map[string]int{}
	err = s.list(ctx, projectID, map[string]any{"score": "true"}, trace.CallsFilter{ParentIDs: []string{parent.Call.ID}}, 0, 0, func(c *trace.Call) error {
		if c.Output == nil {
			return nil
		}
		v, err := digest.Parse(c.Output)
		if err != nil {
			return nil
		}
		name := scorerName(markersOf(c)["scorer"])
		if i, ok := seen[name]; ok {
			scores[i].Value = v // the last score of a scorer wins
			return nil
		}
		seen[name] = len(scores)
		scores = append(scores, digest.M(name, v))
		return nil
	})
	if err != nil {
		return nil, err
	}
	predicted, err := digest.Parse(orNull(prediction.Output))
	if err != nil {
		predicted = digest.NullValue()
	}
	latency := digest.NullValue()
	if prediction.EndedAt != nil {
		latency = digest.Obj(digest.M("mean", pythonFloat(prediction.EndedAt.Sub(prediction.StartedAt).Seconds())))
	}
	output := digest.Obj(digest.M("output", predicted), digest.M("scores", digest.Obj(scores...)), digest.M("model_latency", latency))
	if err := s.end(ctx, projectID, parent.Call.ID, output.Compact(), nil); err != nil {
		return nil, err
	}
	return &FinishRes{Success: true}, nil
}

// scorerName is the object name of a scorer ref ("unknown" when it has none),
// the key of its scores.
func scorerName(scorer string) string {
	if r, err := ref.Parse(scorer); err == nil && r.Name != "" {
		return r.Name
	}
	return "unknown"
}

// ScoreCreate implements [Service].
func (s *Store) ScoreCreate(ctx context.Context, req *ScoreCreateReq) (*ScoreCreateRes, error) {
	scorer, err := checkRef(req.ProjectID, "scorer", req.Scorer, ref.KindObject)
	if err != nil {
		return nil, err
	}
	prediction, _, err := s.read(ctx, req.ProjectID, req.PredictionID, "prediction")
	if err != nil {
		return nil, err
	}
	var predictionInputs struct {
		Inputs json.RawMessage `json:"inputs"`
	}
	_ = json.Unmarshal(prediction.Inputs, &predictionInputs)
	id := newID()
	traceID, parentID := id, ""
	attrs := map[string]string{"score": "true", "prediction_id": prediction.ID, "scorer": req.Scorer}
	if req.EvaluationRunID != nil {
		run, _, err := s.read(ctx, req.ProjectID, *req.EvaluationRunID, "evaluation_run")
		if err != nil {
			return nil, err
		}
		traceID, parentID = run.TraceID, run.ID
		if prediction.ParentID != nil {
			parentID = *prediction.ParentID
		}
		attrs["evaluation_run_id"] = run.ID
	}
	opName, err := s.publishOp(ctx, req.ProjectID, scorer.Name+".score", scoreSource)
	if err != nil {
		return nil, err
	}
	value := json.RawMessage(pythonFloat(req.Value).Compact())
	err = s.store(ctx, req.ProjectID, call{id: id, traceID: traceID, parentID: parentID, opName: opName,
		attributes: map[string]any{"weave": attrs},
		inputs:     map[string]any{"self": req.Scorer, "inputs": orEmptyObject(predictionInputs.Inputs), "output": orNull(prediction.Output)},
		output:     value})
	if err != nil {
		return nil, err
	}
	payload, err := json.Marshal(map[string]json.RawMessage{"output": value})
	if err != nil {
		return nil, err
	}
	_, err = s.cfg.Feedback.Create(ctx, feedback.CreateReq{ProjectID: req.ProjectID,
		WeaveRef:     ref.Call(req.ProjectID, prediction.ID).WithScheme(ref.SchemeWeave).String(),
		FeedbackType: "wandb.runnable." + scorer.Name, Payload: payload, RunnableRef: &req.Scorer})
	if err != nil {
		return nil, err
	}
	return &ScoreCreateRes{ScoreID: id}, nil
}

// scoreOf reads a score from its call.
func scoreOf(c *trace.Call, m markers) *Score {
	value := c.Output
	if len(value) == 0 || string(value) == "null" {
		value = json.RawMessage(`0.0`)
	}
	return &Score{ScoreID: c.ID, Scorer: m["scorer"], Value: value, EvaluationRunID: m.optional("evaluation_run_id"), WbUserID: c.PfUserID}
}

// ScoreRead implements [Service].
func (s *Store) ScoreRead(ctx context.Context, projectID, scoreID string) (*Score, error) {
	c, m, err := s.read(ctx, projectID, scoreID, "score")
	if err != nil {
		return nil, err
	}
	return scoreOf(c, m), nil
}

// ScoreList implements [Service].
func (s *Store) ScoreList(ctx context.Context, req *ListReq, yield func(*Score) error) error {
	match := map[string]any{"score": "true"}
	if req.EvaluationRunID != "" {
		match["evaluation_run_id"] = req.EvaluationRunID
	}
	return s.list(ctx, req.ProjectID, match, trace.CallsFilter{}, req.Limit, req.Offset, func(c *trace.Call) error {
		return yield(scoreOf(c, markersOf(c)))
	})
}

// ScoreDelete implements [Service].
func (s *Store) ScoreDelete(ctx context.Context, projectID string, ids []string) (*DeleteRes, error) {
	return s.remove(ctx, projectID, ids)
}

// jsonObject checks that raw is a JSON object ({} when absent).
func jsonObject(field string, raw json.RawMessage) (json.RawMessage, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return json.RawMessage(`{}`), nil
	}
	if v, err := digest.Parse(raw); err != nil || v.Kind != digest.Object {
		return nil, weft.Errorf(ErrInvalid, "%s must be a JSON object", field)
	}
	return raw, nil
}

func orNull(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return json.RawMessage(`null`)
	}
	return raw
}

func orEmptyObject(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || string(raw) == "null" {
		return json.RawMessage(`{}`)
	}
	return raw
}
