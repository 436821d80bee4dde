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

var _ chat.AdapterResolver = Adapters{}

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
