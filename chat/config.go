package chat

import (
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/weftlabs/weft/chat/embeddings"
)

// Defaults of [Config], exported so that a command line can show and reuse them.
const (
	// DefaultProject is the project a completion is traced into when the
	// request names none (no OpenAI-Project header):
	// "<caller's default entity>/chat".
	DefaultProject = "chat"
	// DefaultQueueSize bounds the completions waiting to be traced.
	DefaultQueueSize = 10000
	// DefaultMaxResponseBytes bounds a non-streamed upstream response: 64 MiB.
	DefaultMaxResponseBytes = 64 << 20
	// DefaultMaxCompletionPrompts bounds the prompts of one POST
	// /v1/completions batch.
	DefaultMaxCompletionPrompts = 256
	// DefaultMaxCompletionTokens bounds the tokens one POST /v1/completions
	// request may ask for: prompts × max(n, best_of) × max_tokens.
	DefaultMaxCompletionTokens = 1 << 20
)

// Config configures [New]. The zero value of every optional field is its
// documented default.
type Config struct {
	// Routing maps model names to upstreams. Required.
	Routing *Routing
	// Backends serve the upstreams of other kinds than the remote ones
	// (vllm, openai), by kind: a *inprocess.Server (package chat/inprocess)
	// for KindLocal. A route of a kind no backend is registered for fails
	// New. A registered backend also serves the trained models whose base
	// model is one of its routes, applying their adapters itself
	// (Target.Adapter), rather than Routing.LoRA. The gateway does not own
	// them: their owner closes them after the gateway.
	Backends map[string]Backend
	// Recorder stores traced calls. Nil turns tracing off.
	Recorder CallRecorder
	// Embeddings serves the embedding models run in-process, each under its
	// own name (no route may have it); POST /v1/embeddings for any other
	// model goes to a route serving embeddings. Its limits bound every
	// embeddings request, forwarded or not. Nil: none run in-process, and
	// embeddings.Default… limits. The caller closes it.
	Embeddings *embeddings.Service
	// Files stores generated images. Nil leaves image URLs and base64 data in
	// /image/create responses as the provider returned them.
	Files FileStore
	// Adapters resolves trained-model names to LoRA adapters, served by
	// their local base model's engine or by Routing.LoRA, for the callers
	// who may read them (see [AdapterResolver]). Nil leaves such names
	// unknown (404).
	Adapters AdapterResolver
	// DefaultProject is the project name used under the caller's default
	// entity when a request names no project. Defaults to DefaultProject.
	DefaultProject string
	// Client sends upstream requests. Defaults to a client over a transport
	// tuned for many concurrent keep-alive connections to few hosts.
	Client *http.Client
	// QueueSize bounds the calls waiting to be traced; beyond it calls are
	// dropped and counted. Defaults to [DefaultQueueSize].
	QueueSize int
	// MaxResponseBytes bounds a non-streamed upstream response. Defaults to
	// [DefaultMaxResponseBytes].
	MaxResponseBytes int64
	// MaxCompletionPrompts bounds the prompts one POST /v1/completions
	// request may hold (a batch); more get 400, whoever serves the model.
	// Defaults to [DefaultMaxCompletionPrompts].
	MaxCompletionPrompts int
	// MaxCompletionTokens bounds the tokens one POST /v1/completions
	// request may ask for, prompts × max(n, best_of) × max_tokens (vLLM's
	// 16 when max_tokens is left out); more get 400, whoever serves the
	// model. Defaults to [DefaultMaxCompletionTokens].
	MaxCompletionTokens int64
	// Registerer receives the gateway's metrics. Defaults to a private registry.
	Registerer prometheus.Registerer
	// Logger receives upstream failures and tracing errors. Defaults to slog.Default().
	Logger *slog.Logger
	// Now is the clock that stamps traced calls. Defaults to time.Now; times
	// are recorded in UTC.
	Now func() time.Time
}

func (cfg *Config) setDefaults() error {
	if cfg.Routing == nil {
		return errors.New("chat: Config.Routing is required")
	}
	if cfg.Embeddings == nil {
		cfg.Embeddings = embeddings.New(embeddings.Config{})
	}
	if cfg.DefaultProject == "" {
		cfg.DefaultProject = DefaultProject
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{Transport: NewTransport()}
	}
	if cfg.QueueSize == 0 {
		cfg.QueueSize = DefaultQueueSize
	}
	if cfg.MaxResponseBytes == 0 {
		cfg.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if cfg.MaxCompletionPrompts == 0 {
		cfg.MaxCompletionPrompts = DefaultMaxCompletionPrompts
	}
	if cfg.MaxCompletionTokens == 0 {
		cfg.MaxCompletionTokens = DefaultMaxCompletionTokens
	}
	if cfg.QueueSize < 0 || cfg.MaxResponseBytes < 0 || cfg.MaxCompletionPrompts < 0 || cfg.MaxCompletionTokens < 0 {
		return errors.New("chat: QueueSize, MaxResponseBytes, MaxCompletionPrompts and MaxCompletionTokens must not be negative")
	}
	if cfg.Registerer == nil {
		cfg.Registerer = prometheus.NewRegistry()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return nil
}
