package chatstore

import (
	"context"

	"github.com/weftlabs/weft/chat"
	"github.com/weftlabs/weft/training"
)

// CheckpointResolver is the part of the training service that names the
// adapter of a trained model.
type CheckpointResolver interface {
	ResolveAdapter(ctx context.Context, model string) (training.Adapter, bool, error)
}

// Adapters is a chat.AdapterResolver over the training service: a trained
// model's name ("<entity>/<project>/<name>", "…:step<N>", the
// wandb-artifact:/// forms) is served as its checkpoint's LoRA adapter.
type Adapters struct {
	Training CheckpointResolver
}

var _ chat.AdapterResolver = Adapters{}

// ResolveAdapter implements chat.AdapterResolver.
func (a Adapters) ResolveAdapter(ctx context.Context, model string) (chat.LoRAAdapter, bool, error) {
	adapter, found, err := a.Training.ResolveAdapter(ctx, model)
	if err != nil || !found {
		return chat.LoRAAdapter{}, false, err
	}
	return chat.LoRAAdapter{Name: adapter.Name, Path: adapter.Path, BaseModel: adapter.BaseModel}, true, nil
}
