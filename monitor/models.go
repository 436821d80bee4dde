package monitor

import (
	"context"
	"slices"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/chat"
)

// ChatModels is the [ModelAccess] of a chat service, the rule its
// completions apply: a caller may use a model the service routes by name,
// and a trained model's name (every spelling: "<entity>/<project>/<name>",
// "…:step<N>", wandb-artifact:///…) only when Adapters resolves it for the
// caller, which authorizes the caller on the model's project. Any other name
// is refused as unknown, the way a completion naming it is.
type ChatModels struct {
	Chat     chat.Service
	Adapters chat.AdapterResolver
}

// CheckModel implements ModelAccess.
func (c ChatModels) CheckModel(ctx context.Context, model string) error {
	if c.Chat != nil {
		if slices.ContainsFunc(c.Chat.Models(), func(m chat.ModelCard) bool { return m.ID == model }) {
			return nil
		}
		if c.Adapters != nil {
			_, found, err := c.Adapters.ResolveAdapter(ctx, model)
			if err != nil || found {
				return err
			}
		}
	}
	return weft.Errorf(chat.ErrModelNotFound, "The model `%s` does not exist.", model)
}
