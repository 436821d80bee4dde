package monitor

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/trace"
)

// ScoreReq asks a scorer of the project for verdicts on answers that are
// no calls: the rollouts of an RL job, whose rewards the verdicts give. The
// scorer runs as a monitor runs it, a judge through weft's own chat path
// under its verdict's schema, but with the caller's authority.
type ScoreReq struct {
	ProjectID string `json:"-"`
	// Scorer is the ref of a scorer version of the project
	// (weave:///<entity>/<project>/object/<name>:<digest>).
	Scorer string `json:"scorer" minLength:"1" maxLength:"1024"`
	// Items are what is scored, each as a call would hold it: inputs (an
	// object, whose members a judge's template names) and output.
	Items []ScoreItem `json:"items" minItems:"1"`
	// Reward is a path into the verdict ("score", "contains",
	// "scores.0"): its number, or its boolean as 1 or 0, is each item's
	// reward. Empty gives no rewards.
	Reward string `json:"reward,omitempty" maxLength:"256"`
}

// ScoreItem is one answer to score.
type ScoreItem struct {
	Inputs json.RawMessage `json:"inputs,omitempty"`
	Output json.RawMessage `json:"output"`
}

// ScoreRes holds one result per item, in order.
type ScoreRes struct {
	Results []ScoreResult `json:"results"`
}

// ScoreResult is the verdict on one item, or why there is none.
type ScoreResult struct {
	// Output is the verdict, as a monitor's feedback holds it in
	// payload.output.
	Output json.RawMessage `json:"output,omitempty"`
	// Reward is the number at ScoreReq.Reward in the verdict.
	Reward *float64 `json:"reward,omitempty"`
	// Error says why the item has no verdict (or no reward).
	Error string `json:"error,omitempty"`
	// CallID is a judge's traced chat call.
	CallID           string   `json:"call_id,omitempty"`
	PromptTokens     int64    `json:"prompt_tokens,omitempty"`
	CompletionTokens int64    `json:"completion_tokens,omitempty"`
	Cost             *float64 `json:"cost,omitempty"`
}

// Score implements Service.
func (m *Monitors) Score(ctx context.Context, req ScoreReq) (*ScoreRes, error) {
	if len(req.Items) > m.cfg.MaxScoreItems {
		return nil, weft.Errorf(ErrInvalidScore, "items: at most %d items are scored in one request", m.cfg.MaxScoreItems)
	}
	if err := checkScorerRef(req.ProjectID, req.Scorer); err != nil {
		return nil, weft.Errorf(ErrInvalidScore, "scorer: %v", err)
	}
	var reward []string
	if req.Reward != "" {
		path, err := parseField("output." + req.Reward)
		if err != nil {
			return nil, weft.Errorf(ErrInvalidScore, "reward: %v", err)
		}
		reward = path
	}
	s, err := m.scorer(ctx, req.ProjectID, req.Scorer)
	if err != nil {
		return nil, err
	}
	if s.Judge != nil {
		switch {
		case m.cfg.Chat == nil:
			return nil, weft.Errorf(ErrInvalidScore, "this server serves no chat models, so judge %s cannot run", s.Name)
		case m.cfg.Models != nil:
			if err := m.cfg.Models.CheckModel(ctx, s.Judge.Model); err != nil {
				return nil, weft.Errorf(ErrJudgeModel, "judge %s names model %q, which the caller may not use: %v", s.Name, s.Judge.Model, err)
			}
		}
	}
	res := &ScoreRes{Results: make([]ScoreResult, len(req.Items))}
	for i, item := range req.Items {
		call := &trace.Call{ProjectID: req.ProjectID, Inputs: orNull(item.Inputs), Output: orNull(item.Output)}
		r := &res.Results[i]
		if s.Judge == nil {
			r.Output = s.Score(call)
		} else if err := m.scoreWithJudge(ctx, s, call, r); err != nil {
			return nil, err
		}
		if r.Output != nil && reward != nil {
			r.Reward, r.Error = rewardOf(&trace.Call{Output: r.Output}, reward, req.Reward)
		}
	}
	return res, nil
}

// scoreWithJudge asks s's judge for the verdict on call, as the caller.
// A judge that cannot give one leaves the reason in r; an error is one the
// request as a whole fails with (the caller gone, the database down).
func (m *Monitors) scoreWithJudge(ctx context.Context, s *Scorer, call *trace.Call, r *ScoreResult) error {
	body, err := s.Judge.request(&Monitor{ObjectID: s.Name}, call, nil)
	if err == nil {
		var a *answer
		if a, err = complete(ctx, m.cfg.Chat, call.ProjectID, body); err == nil {
			r.CallID, r.PromptTokens, r.CompletionTokens = a.callID, a.Usage.PromptTokens, a.Usage.CompletionTokens
			if r.Output, err = s.Judge.verdict(a); err == nil {
				r.Cost, err = m.cost(ctx, call.ProjectID, cmp.Or(a.Model, s.Judge.Model), r.PromptTokens, r.CompletionTokens)
				return err
			}
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var failure *judgeFailure
	if errors.As(err, &failure) {
		r.Error = failure.reason
	} else {
		r.Error = err.Error()
	}
	return nil
}

// rewardOf reads the reward at path in a verdict.
func rewardOf(verdict *trace.Call, path []string, name string) (*float64, string) {
	raw := fieldOf(verdict, path)
	var v any
	if raw == nil || json.Unmarshal(raw, &v) != nil {
		return nil, "the verdict has no " + name
	}
	switch x := v.(type) {
	case float64:
		return &x, ""
	case bool:
		f := 0.0
		if x {
			f = 1
		}
		return &f, ""
	}
	return nil, "the verdict's " + name + " is neither a number nor a boolean"
}
