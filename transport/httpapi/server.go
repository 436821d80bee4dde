// Package httpapi serves weft's services over HTTP at the documented routes.
//
// It is a thin adapter: it authenticates the caller, decodes and validates the
// request (huma v2 over chi), checks that the caller may touch the project,
// calls a domain Service and encodes the answer. Every route of the trace,
// feedback, objects and training families takes these steps through one
// generic helper (route.go). Domain errors become statuses and bodies in one
// place (errors.go): FastAPI-style bodies for the trace, feedback, objects and
// training routes, vLLM-style bodies for chat.
//
// Mount the handler in any net/http program:
//
//	h, err := httpapi.New(httpapi.Config{Identity: identity, Trace: traceService})
//	http.Handle("/", h)
package httpapi

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"path"
	"reflect"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humachi"
	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/chat"
	"github.com/weftlabs/weft/chat/responses"
	"github.com/weftlabs/weft/datasets"
	"github.com/weftlabs/weft/evalrun"
	"github.com/weftlabs/weft/feedback"
	"github.com/weftlabs/weft/monitor"
	"github.com/weftlabs/weft/objects"
	"github.com/weftlabs/weft/trace"
	"github.com/weftlabs/weft/training"
)

// Version is the server version reported by /server_info and /version.
const Version = "0.1.0"

// Defaults of [Config], exported so that a command line can show and reuse them.
const (
	// DefaultMaxBodyBytes is the request body limit: the Weave clients split
	// their batches at 31 MiB.
	DefaultMaxBodyBytes = 32 << 20
	// DefaultBodyReadTimeout bounds reading one request body.
	DefaultBodyReadTimeout = time.Minute
)

// Timeouts of the http.Server that serves a [Handler], as weft serve sets
// them: they bound what a connection holds before and between requests, where
// no handler runs (Config.BodyReadTimeout bounds the body).
const (
	// DefaultReadHeaderTimeout bounds the time a request's headers may take
	// to arrive (http.Server.ReadHeaderTimeout); then the connection is
	// closed.
	DefaultReadHeaderTimeout = 10 * time.Second
	// DefaultIdleTimeout bounds the time a keep-alive connection may wait
	// for its next request (http.Server.IdleTimeout); then it is closed.
	DefaultIdleTimeout = time.Minute
)

// Config configures [New]. Services left nil leave their routes unregistered,
// except Chat (see there).
type Config struct {
	// Identity authenticates API keys and authorizes projects unless
	// Authenticator or Authorizer replace it. Required unless both are set.
	Identity *weft.Identity
	// Authenticator checks credentials. Defaults to Identity.
	Authenticator Authenticator
	// Authorizer checks project access. Defaults to Identity.
	Authorizer Authorizer

	// MaxBodyBytes bounds every request body; larger bodies get 413.
	// Defaults to [DefaultMaxBodyBytes].
	MaxBodyBytes int64
	// BodyReadTimeout bounds reading one request body. Defaults to
	// [DefaultBodyReadTimeout].
	BodyReadTimeout time.Duration

	// Logger receives one line per request and every internal error.
	// Defaults to slog.Default().
	Logger *slog.Logger
	// Registry receives the HTTP metrics and is served at /metrics (with the Go
	// and process collectors when the registry is created here).
	// Defaults to a new registry.
	Registry *prometheus.Registry
	// Middleware wraps the whole handler, outermost first: the place for
	// OpenTelemetry (otelhttp.NewMiddleware) or an embedder's own concerns.
	// Off (empty) by default.
	Middleware []func(http.Handler) http.Handler
	// RateLimit bounds requests per API key; over it a request gets 429 with
	// Retry-After. Off by default.
	RateLimit RateLimit
	// Trace serves the call routes (/call/*, /calls/*, /cost/*, /v2/.../call*).
	Trace trace.Service
	// Chat serves /v1/chat/completions, /v1/embeddings, /v1/models and
	// /image/create.
	// Defaults to a gateway with no models: the routes are always there,
	// authenticate like every route, list no models and answer any model
	// with the gateway's "model does not exist" (404 for a completion), so
	// that clients see a server with nothing to serve rather than a missing
	// route.
	Chat chat.Service
	// Responses serves OpenAI's Responses API (/v1/responses and its
	// stored responses) over Chat's models; nil leaves those routes out.
	Responses *responses.Service
	// Feedback serves /feedback/* and /annotation_queues/*.
	Feedback feedback.Service
	// Objects serves /obj/*, /objs/*, /refs/*, /file/*, /files/*, /table/* and
	// the /v2/{entity}/{project}/ object family. With Trace and Feedback it
	// also serves the v2 evaluation_runs, predictions and scores (package
	// evalrun).
	Objects objects.Service
	// Health reports whether the server can do its work (typically a database
	// ping); /health answers 503 when it fails. Defaults to always healthy.
	Health func(context.Context) error

	// Training serves the /v1/preview model and training-job routes.
	Training training.Service
	// Monitors serves /v2/{entity}/{project}/monitor_backfills.
	Monitors monitor.Service
	// DatasetLimits bound the datasets made of calls
	// (/v2/{entity}/{project}/datasets/from_calls, served with Trace and
	// Objects); zero fields are package datasets' defaults.
	DatasetLimits datasets.Limits
	// OTLP configures OpenTelemetry trace ingest at /otel/v1/traces, served
	// with Trace.
	OTLP OTLPConfig
}

// Authenticator checks an API key. username is the user part of a Basic
// credential ("" for Bearer). A bad key must return an error wrapping
// weft.ErrUnauthenticated.
type Authenticator interface {
	Authenticate(ctx context.Context, username, key string) (weft.Principal, error)
}

// Authorizer checks that p may read (write=false) or write a project
// "<entity>/<project>"; a refusal wraps weft.ErrForbidden, or weft.ErrNotFound
// for an entity that does not exist. Authorize only checks; ProjectWritten is
// told of each project a write succeeded in (the project list shows it from
// then on), never of a refused or failed one.
type Authorizer interface {
	Authorize(ctx context.Context, p weft.Principal, projectID string, write bool) error
	ProjectWritten(ctx context.Context, p weft.Principal, projectID string) error
}

// Handler serves weft's routes. It is an http.Handler.
type Handler struct {
	cfg     Config
	limiter *keyLimiter // nil without a rate limit
	router  chi.Router
	api     huma.API
	handler http.Handler

	upsertBatchSchema *huma.Schema // the documented /call/upsert_batch body
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.handler.ServeHTTP(w, r) }

// API returns the huma API, for embedders that add operations of their own.
func (h *Handler) API() huma.API { return h.api }

// New builds the handler for cfg.
func New(cfg Config) (*Handler, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	installErrorRenderer()

	router := chi.NewRouter()
	humaCfg := huma.DefaultConfig("weft", Version)
	humaCfg.Components.Schemas = huma.NewMapRegistry("#/components/schemas/", schemaName)
	jsonFormat := huma.DefaultJSONFormat
	jsonFormat.Unmarshal = unmarshalJSON
	humaCfg.Formats = map[string]huma.Format{"application/json": jsonFormat, "json": jsonFormat}
	humaCfg.CreateHooks = nil // no $schema field or Link header: clients compare bodies
	humaCfg.OpenAPIPath = "/openapi"
	humaCfg.DocsPath = "" // served from the binary (docs.go), not from a CDN
	humaCfg.Info.Description = "Call tracing, feedback, versioned objects, chat completions and training jobs."
	humaCfg.Components.SecuritySchemes = map[string]*huma.SecurityScheme{
		"basicAuth":  {Type: "http", Scheme: "basic", Description: "user name `api` (or your user name), password = API key"},
		"bearerAuth": {Type: "http", Scheme: "bearer", Description: "the API key"},
	}
	api := humachi.New(router, humaCfg)
	h := &Handler{cfg: cfg, router: router, api: api}
	if cfg.RateLimit.PerSecond > 0 {
		h.limiter = newKeyLimiter(cfg.RateLimit, time.Now)
	}
	api.UseMiddleware(h.authenticate, h.checkJSONText)

	router.NotFound(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusNotFound, map[string]any{"detail": "Not Found"})
	})
	router.MethodNotAllowed(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusMethodNotAllowed, map[string]any{"detail": "Method Not Allowed"})
	})
	router.Handle("/metrics", promhttp.HandlerFor(cfg.Registry, promhttp.HandlerOpts{}))
	reference, err := newDocs()
	if err != nil {
		return nil, err
	}
	reference.register(router)
	h.registerSystem()
	h.registerChat()
	h.registerResponses()
	h.registerEmbeddings()
	h.registerTextCompletions()
	if cfg.Feedback != nil {
		h.registerFeedback()
	}
	if cfg.Trace != nil {
		h.registerTrace()
		h.registerOTLP()
	}
	if cfg.Training != nil {
		h.registerTraining()
	}
	if cfg.Objects != nil {
		h.registerObjects()
	}
	if cfg.Monitors != nil {
		h.registerMonitors(cfg.Monitors)
	}
	if cfg.Trace != nil && cfg.Objects != nil {
		h.registerProjectStats()
	}
	if cfg.Trace != nil {
		h.registerTTLSettings()
		h.registerProjectsInfo()
		h.registerServerEvaluations()
	}
	if cfg.Trace != nil && cfg.Objects != nil {
		builder, err := datasets.New(datasets.Config{Calls: cfg.Trace, Datasets: cfg.Objects, Limits: cfg.DatasetLimits})
		if err != nil {
			return nil, err
		}
		h.registerDatasetsFromCalls(builder)
	}
	if cfg.Trace != nil && cfg.Objects != nil && cfg.Feedback != nil {
		runs, err := evalrun.New(evalrun.Config{Trace: cfg.Trace, Objects: cfg.Objects, Feedback: cfg.Feedback})
		if err != nil {
			return nil, err
		}
		h.registerEvalRuns(runs)
	}
	typeTaggedFields(humaCfg.Components.Schemas, "#/components/schemas/")

	var handler http.Handler = router
	handler = h.limitBody(handler)
	handler = BodyTimeout(cfg.BodyReadTimeout)(handler)
	handler = rejectNULInURL(handler)
	handler = h.observe(handler)
	handler = collapseSlashes(handler)
	for i := len(cfg.Middleware) - 1; i >= 0; i-- {
		handler = cfg.Middleware[i](handler)
	}
	h.handler = handler
	return h, nil
}

func (cfg *Config) setDefaults() error {
	if cfg.Authenticator == nil && cfg.Identity != nil {
		cfg.Authenticator = cfg.Identity
	}
	if cfg.Authorizer == nil && cfg.Identity != nil {
		cfg.Authorizer = cfg.Identity
	}
	if cfg.Authenticator == nil || cfg.Authorizer == nil {
		return errors.New("httpapi: Config needs Identity, or both Authenticator and Authorizer")
	}
	if cfg.MaxBodyBytes == 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if cfg.MaxBodyBytes < 0 {
		return errors.New("httpapi: MaxBodyBytes must not be negative")
	}
	if cfg.RateLimit.PerSecond < 0 {
		return errors.New("httpapi: RateLimit.PerSecond must not be negative")
	}
	if cfg.BodyReadTimeout == 0 {
		cfg.BodyReadTimeout = DefaultBodyReadTimeout
	}
	if err := cfg.OTLP.setDefaults(); err != nil {
		return err
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Chat == nil {
		noModels, err := chat.New(chat.Config{Routing: &chat.Routing{}, Logger: cfg.Logger})
		if err != nil {
			return err
		}
		cfg.Chat = noModels
	}
	if cfg.Registry == nil {
		cfg.Registry = prometheus.NewRegistry()
		cfg.Registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	if cfg.Health == nil {
		cfg.Health = func(context.Context) error { return nil }
	}
	return nil
}

// schemaName names a type's schema in the OpenAPI document. Domain types are
// prefixed with their package ("TraceSortBy", "FeedbackSortBy") so that two
// domains may use the same Go name without colliding in one document.
func schemaName(t reflect.Type, hint string) string {
	name := huma.DefaultSchemaNamer(t, hint)
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	if t.Name() == "" || !strings.HasPrefix(t.PkgPath(), modulePath) || strings.HasSuffix(t.PkgPath(), "/transport/httpapi") {
		return name
	}
	pkg := path.Base(t.PkgPath())
	prefix := strings.ToUpper(pkg[:1]) + pkg[1:]
	if strings.HasPrefix(name, prefix) {
		return name
	}
	return prefix + name
}

// modulePath is weft's module, whose packages' types get prefixed schema names.
const modulePath = "github.com/weftlabs/weft/"
