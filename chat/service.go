package chat

import (
	"context"

	"github.com/weftlabs/weft"
)

// Service is the chat side of weft: OpenAI-compatible chat completions, the
// model list and image generation, each traced into a project. The caller is
// taken from the context (weft.WithPrincipal); authorization is the
// transport's job.
type Service interface {
	// Complete validates a raw chat-completion request body, routes it by its
	// model and returns the answer, streamed or whole, to be relayed as it
	// comes. projectID is where the call is traced. Errors come before
	// anything is relayed: ErrMalformed and ErrBadRequest (400),
	// ErrModelNotFound (404, naming the model), ErrUnsupportedField (400),
	// ErrUpstreamUnavailable (502) when nothing that serves the model answered.
	Complete(ctx context.Context, projectID string, raw []byte) (*Completion, error)
	// CompleteAs is Complete for a request of another API translated to a
	// chat completion (the Responses API): served if the route serves
	// as.Endpoint, traced as as says, its call ended by
	// Completion.EndTrace.
	CompleteAs(ctx context.Context, projectID string, raw []byte, as TraceAs) (*Completion, error)
	// TextComplete answers a raw POST /v1/completions request through the
	// model's route, traced into projectID; errors as Complete's.
	TextComplete(ctx context.Context, projectID string, raw []byte) (*Completion, error)
	// Embed answers a raw POST /v1/embeddings request with an embedding
	// model run in-process or a route serving embeddings, traced into
	// projectID; errors as Complete's.
	Embed(ctx context.Context, projectID string, raw []byte) (*Completion, error)
	// Tokenize and Detokenize answer vLLM's POST /tokenize and POST
	// /detokenize (raw JSON bodies) with a local model's tokenizer and chat
	// template: ErrModelNotFound (404) for an unknown model, ErrMalformed /
	// ErrBadRequest (400) for a bad body, ErrUnsupportedField (400) for a
	// model served by a remote upstream.
	Tokenize(ctx context.Context, raw []byte) (*TokenizeResult, error)
	Detokenize(ctx context.Context, raw []byte) (*DetokenizeResult, error)
	// CreateImage generates images and reports failures inside the result, as
	// the /image/create route answers them; a model that generates no
	// images (one run in-process) is refused with ErrUnsupportedEndpoint
	// (400) before any call.
	CreateImage(ctx context.Context, req ImageRequest) (ImageResult, error)
	// Models lists the models served, in the order they are configured (an
	// empty list when there are none), with the endpoints each serves.
	Models() []ModelCard
	// TrainedModels lists the trained models of the caller's own entities
	// (weft.PrincipalFrom(ctx)) that the service can serve, each with its
	// base model as Parent: never another tenant's.
	TrainedModels(ctx context.Context) ([]ModelCard, error)
	// ProjectFor is the project a caller's completion is traced into: the
	// OpenAI-Project header ("<entity>/<project>", or a bare project name
	// under the caller's default entity), else "<default entity>/chat".
	ProjectFor(p weft.Principal, header string) string
	// Close stops tracing after writing the calls still queued, or when ctx
	// ends.
	Close(ctx context.Context) error
}
