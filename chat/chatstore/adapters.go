package chatstore

import (
	"context"
	"errors"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/chat"
	"github.com/weftlabs/weft/training"
)

// CheckpointResolver is the part of the training service that names the
// adapter of a trained model.
type CheckpointResolver interface {
	ResolveAdapter(ctx context.Context, model string) (training.Adapter, bool, error)
}

// ModelLister is the part of the training service that lists the trained
// models of entities (training.Store.ModelsOf).
type ModelLister interface {
	ModelsOf(ctx context.Context, entities []string, limit int) ([]training.Model, error)
}

// Authorizer decides whether a caller may read a project
// ("<entity>/<project>"); a refusal wraps weft.ErrForbidden. *weft.Identity
// is one, and the API's routes use the same.
type Authorizer interface {
	Authorize(ctx context.Context, p weft.Principal, projectID string, write bool) error
}

// Adapters is a chat.AdapterResolver over the training service: a trained
// model's name ("<entity>/<project>/<name>", "…:step<N>", the
// wandb-artifact:/// forms) is served as its checkpoint's LoRA adapter to a
// caller who may read the model's project, the rule that lets the caller
// read the model itself. To anyone else the name is unknown, as one that
// names nothing: the project is checked before the model is looked up.
type Adapters struct {
	Training CheckpointResolver
	// Authorizer checks the caller (weft.PrincipalFrom) on the model's
	// project. Nil applies weft.Identity's rule: the caller is an admin or
	// a member of the project's entity. A context without a principal is
	// refused either way.
	Authorizer Authorizer
}

var _ chat.TrainedModelLister = Adapters{}

// TrainedModels implements chat.TrainedModelLister: the models of the
// caller's own entities (an admin's too: never every tenant's), at most
// training.MaxModelsOf, when Training lists models (a ModelLister); none
// otherwise, and none for a context without a principal.
func (a Adapters) TrainedModels(ctx context.Context) ([]chat.TrainedModel, error) {
	lister, ok := a.Training.(ModelLister)
	p, signedIn := weft.PrincipalFrom(ctx)
	if !ok || !signedIn {
		return nil, nil
	}
	models, err := lister.ModelsOf(ctx, p.Entities, training.MaxModelsOf)
	if err != nil {
		return nil, err
	}
	out := make([]chat.TrainedModel, len(models))
	for i, m := range models {
		out[i] = chat.TrainedModel{Name: m.ProjectID() + "/" + m.Name, BaseModel: m.BaseModel, CreatedAt: m.CreatedAt}
	}
	return out, nil
}

// ResolveAdapter implements chat.AdapterResolver.
func (a Adapters) ResolveAdapter(ctx context.Context, model string) (chat.LoRAAdapter, bool, error) {
	ref, ok := weft.ParseTrainedModel(model)
	if !ok {
		return chat.LoRAAdapter{}, false, nil
	}
	if allowed, err := a.mayRead(ctx, ref.ProjectID); err != nil || !allowed {
		return chat.LoRAAdapter{}, false, err
	}
	adapter, found, err := a.Training.ResolveAdapter(ctx, model)
	if err != nil || !found {
		return chat.LoRAAdapter{}, false, err
	}
	return chat.LoRAAdapter{Name: adapter.Name, Path: adapter.Path, BaseModel: adapter.BaseModel}, true, nil
}

// mayRead reports whether the caller may read projectID; an error is a
// failed check, not a refusal.
func (a Adapters) mayRead(ctx context.Context, projectID string) (bool, error) {
	p, ok := weft.PrincipalFrom(ctx)
	if !ok {
		return false, nil
	}
	if a.Authorizer == nil {
		entity, _, err := weft.ParseProjectID(projectID)
		return err == nil && p.MemberOf(entity), nil
	}
	err := a.Authorizer.Authorize(ctx, p, projectID, false)
	if errors.Is(err, weft.ErrForbidden) || errors.Is(err, weft.ErrInvalid) {
		return false, nil
	}
	return err == nil, err
}
