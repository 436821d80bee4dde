package monitor

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/objects/ref"
)

// draftVersion stands for the digest of a scorer not yet published.
const draftVersion = "draft"

// CheckScorer implements Service: the value is read as a monitor reads a
// published scorer (its class, pattern, template, model and schema), a
// judge's model by ref must be a model object of the project, and the
// caller must be allowed the judge's model. Errors are ErrInvalidScorer
// and ErrJudgeModel.
func (m *Monitors) CheckScorer(ctx context.Context, projectID, name string, val json.RawMessage) error {
	_, err := m.draftScorer(ctx, projectID, name, val)
	return err
}

// draftScorer reads and checks a scorer value named name that is not yet
// published.
func (m *Monitors) draftScorer(ctx context.Context, projectID, name string, val json.RawMessage) (*Scorer, error) {
	s, err := m.parseScorer(ctx, projectID, ref.Object(projectID, name, draftVersion).WithScheme(ref.SchemeWeave), val)
	if err != nil {
		return nil, err
	}
	if s.Judge != nil && m.cfg.Models != nil {
		if err := m.cfg.Models.CheckModel(ctx, s.Judge.Model); err != nil {
			return nil, weft.Errorf(ErrJudgeModel, "judge %s names model %q, which you may not use: %v", name, s.Judge.Model, err)
		}
	}
	return s, nil
}

// Preview is what a scorer would do with one call, without asking a
// model: a judge's request, or a deterministic scorer's verdict.
type Preview struct {
	// Messages are a judge's messages filled from the call, the prompt
	// last.
	Messages []PreviewMessage `json:"messages,omitempty"`
	// Model is the judge's model.
	Model string `json:"model,omitempty"`
	// Schema is the verdict's JSON Schema, when the judge answers under
	// one.
	Schema json.RawMessage `json:"schema,omitempty"`
	// Verdict is a deterministic scorer's verdict on the call.
	Verdict json.RawMessage `json:"verdict,omitempty"`
	// Error says why the template cannot be filled from this call (a
	// field it names that the call lacks): the verdict would be an error.
	Error string `json:"error,omitempty"`
}

// PreviewMessage is one message of a judge's request.
type PreviewMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// PreviewScorer implements Service.
func (m *Monitors) PreviewScorer(ctx context.Context, projectID, name string, val json.RawMessage, callID string) (*Preview, error) {
	s, err := m.draftScorer(ctx, projectID, name, val)
	if err != nil {
		return nil, err
	}
	judge := s.Judge
	if judge == nil {
		judge = &Judge{}
	}
	call, children, err := m.judgedCall(ctx, projectID, callID, judge)
	var failure *judgeFailure
	if errors.As(err, &failure) {
		return nil, weft.Errorf(ErrCallNotFound, "This project has no call %q.", callID)
	}
	if err != nil {
		return nil, err
	}
	if s.Judge == nil {
		return &Preview{Verdict: s.Score(call)}, nil
	}
	p := &Preview{Model: s.Judge.Model}
	if s.Judge.Format == FormatSchema {
		p.Schema = s.Judge.Schema
	}
	body, err := s.Judge.request(&Monitor{ObjectID: name}, call, children)
	if errors.As(err, &failure) {
		p.Error = failure.reason
		return p, nil
	}
	if err != nil {
		return nil, err
	}
	var req struct {
		Messages []PreviewMessage `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, err
	}
	p.Messages = req.Messages
	return p, nil
}
