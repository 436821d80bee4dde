package chat

import (
	"context"
	"time"
)

// LoRAAdapter is a trained LoRA adapter that a vLLM upstream can load at run
// time (POST /v1/load_lora_adapter with lora_name = Name, lora_path = Path).
type LoRAAdapter struct {
	// Name is the name the upstream serves the adapter under once loaded.
	Name string
	// Path is where the upstream reads the adapter weights from. Empty means
	// the model has no trained weights yet (a freshly registered model): the
	// LoRA upstream serves BaseModel itself and nothing is loaded.
	Path string
	// BaseModel is the base model the adapter was trained on.
	BaseModel string
}

// AdapterResolver finds the LoRA adapter behind a trained-model name, such as
// "<entity>/<project>/<name>", "<entity>/<project>/<name>:step<N>" or
// "wandb-artifact:///<entity>/<project>/<name>:<alias>". It reports found=false
// (and a nil error) for a name it does not know, and for a name the caller
// (weft.PrincipalFrom(ctx)) may not read, so that such a name answers as an
// unknown one; an error means the lookup itself failed. Implementations must
// be safe for concurrent use.
type AdapterResolver interface {
	ResolveAdapter(ctx context.Context, model string) (LoRAAdapter, bool, error)
}

// TrainedModel is a trained model a caller may be served: its name
// ("<entity>/<project>/<name>") and the model it was trained on.
type TrainedModel struct {
	Name      string
	BaseModel string
	CreatedAt time.Time
}

// TrainedModelLister is an [AdapterResolver] that also lists the trained
// models of the caller's own entities (weft.PrincipalFrom(ctx)'s Entities:
// never another tenant's, an admin's included), for GET /v1/models.
type TrainedModelLister interface {
	TrainedModels(ctx context.Context) ([]TrainedModel, error)
}
