package chat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/weftlabs/weft"
)

// Gateway is the [Service] over configured upstreams. It is safe for
// concurrent use; Close flushes the trace queue.
type Gateway struct {
	cfg    Config
	routes map[string]*Route
	// backends serve the upstreams of the kinds registered for them
	// (Config.Backends), remote the others.
	backends map[string]Backend
	remote   relay
	queue    *recordQueue
	started  time.Time
	// loaded remembers the LoRA adapters already loaded into Routing.LoRA.
	loaded sync.Map
	// loading serialises first loads of adapters.
	loading sync.Mutex

	attempts *prometheus.CounterVec
}

// NewTransport returns the shared upstream transport: keep-alive connections
// pooled per host, enough idle connections for a busy gateway, no implicit
// compression (bodies pass through as the upstream sent them).
func NewTransport() *http.Transport {
	return &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:          2048,
		MaxIdleConnsPerHost:   1024,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
		DisableCompression:    true,
		ForceAttemptHTTP2:     true,
	}
}

var _ Service = (*Gateway)(nil)

// now is the configured clock's time in UTC.
func (s *Gateway) now() time.Time { return s.cfg.Now().UTC() }

// New builds the gateway.
func New(cfg Config) (*Gateway, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	s := &Gateway{cfg: cfg, routes: map[string]*Route{}, backends: cfg.Backends, started: cfg.Now()}
	s.remote = relay{s: s}
	for i := range cfg.Routing.Models {
		route := &cfg.Routing.Models[i]
		if route.Endpoints == nil && len(route.Upstreams) > 0 {
			// A routing built in code rather than parsed.
			if err := route.prepareEndpoints(); err != nil {
				return nil, fmt.Errorf("chat: %w", err)
			}
		}
		if cfg.Embeddings.Serves(route.Name) {
			return nil, fmt.Errorf("chat: model %q is both routed and an embedding model run in-process", route.Name)
		}
		s.routes[route.Name] = route
		for _, u := range route.Upstreams {
			// An empty kind is vLLM's, as the routing file defaults it.
			if _, ok := s.backends[u.Kind]; !ok && u.Kind != "" && u.Kind != KindVLLM && u.Kind != KindOpenAI {
				return nil, fmt.Errorf("chat: model %q: no backend serves upstreams of kind %q (Config.Backends)", route.Name, u.Kind)
			}
		}
	}
	s.attempts = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "weft_chat_upstream_attempts_total", Help: "Upstream attempts by configured route and outcome (ok, retry, error); trained models count under their base model's route, or " + loraMetricsLabel + ".",
	}, []string{"model", "outcome"})
	cfg.Registerer.MustRegister(s.attempts)
	if cfg.Recorder != nil {
		s.queue = newRecordQueue(cfg.Recorder, cfg.QueueSize, cfg.Logger, cfg.Registerer)
	}
	return s, nil
}

// Close stops tracing after writing the calls still queued, or when ctx
// ends. The backends of Config.Backends stay open: their owner closes
// them.
func (s *Gateway) Close(ctx context.Context) error {
	if s.queue == nil {
		return nil
	}
	return s.queue.close(ctx)
}

// ProjectFor is the project a caller's completion is traced into: the
// OpenAI-Project header ("<entity>/<project>", or a bare project name under
// the caller's default entity), else "<default entity>/<DefaultProject>".
func (s *Gateway) ProjectFor(p weft.Principal, header string) string {
	header = strings.TrimSpace(header)
	switch {
	case strings.Contains(header, "/"):
		return header
	case header != "":
		return p.DefaultEntity + "/" + header
	default:
		return p.DefaultEntity + "/" + s.cfg.DefaultProject
	}
}

// Models lists the routed models in configuration order, then the
// embedding models run in-process, each with the endpoints it serves.
func (s *Gateway) Models() []ModelCard {
	models := make([]ModelCard, 0, len(s.cfg.Routing.Models))
	card := func(name string, maxLen int64, endpoints []string) ModelCard {
		return ModelCard{ID: name, Object: "model", Created: s.started.Unix(), OwnedBy: "weft", Root: name, MaxModelLen: maxLen, Endpoints: endpoints}
	}
	for _, r := range s.cfg.Routing.Models {
		models = append(models, card(r.Name, r.MaxModelLen, r.Endpoints))
	}
	for _, name := range s.cfg.Embeddings.Models() {
		models = append(models, card(name, 0, []string{EndpointEmbeddings}))
	}
	return models
}

// TrainedModels lists the trained models of the caller's own entities
// that the gateway can serve (their base model is run in-process, or a
// LoRA upstream is configured), with the endpoints of their base model's
// route. None without Config.Adapters or when it lists none.
func (s *Gateway) TrainedModels(ctx context.Context) ([]ModelCard, error) {
	lister, ok := s.cfg.Adapters.(TrainedModelLister)
	if !ok {
		return nil, nil
	}
	trained, err := lister.TrainedModels(ctx)
	if err != nil {
		return nil, fmt.Errorf("chat: listing trained models: %w", err)
	}
	var cards []ModelCard
	for _, m := range trained {
		base, ok := s.routes[m.BaseModel]
		if !ok || (!s.registered(base) && s.cfg.Routing.LoRA == nil) {
			continue
		}
		cards = append(cards, ModelCard{ID: m.Name, Object: "model", Created: m.CreatedAt.Unix(), OwnedBy: "weft", Root: m.Name,
			Parent: m.BaseModel, MaxModelLen: base.MaxModelLen,
			Endpoints: slices.DeleteFunc(slices.Clone(base.Endpoints), func(e string) bool { return e == EndpointEmbeddings })})
	}
	return cards, nil
}

// resolve finds the route of a model name: a configured route, the first
// route for an empty name (vLLM's "default served model"), or a trained
// model's LoRA adapter.
func (s *Gateway) resolve(ctx context.Context, model string) (*Route, error) {
	if route, ok := s.routes[model]; ok {
		return route, nil
	}
	if model == "" && len(s.cfg.Routing.Models) > 0 {
		return &s.cfg.Routing.Models[0], nil
	}
	if s.cfg.Adapters != nil && trainedModelName(model) {
		adapter, found, err := s.cfg.Adapters.ResolveAdapter(ctx, model)
		switch {
		case errors.Is(err, weft.ErrUnknownEntity):
			// An entity that does not exist is answered as a model that
			// does not: the answer must not tell which entities exist.
			found = false
		case err != nil:
			return nil, fmt.Errorf("chat: resolving adapter %q: %w", model, err)
		}
		if base, ok := s.routes[adapter.BaseModel]; found && ok && s.registered(base) {
			return servedAdapterRoute(base, adapter), nil
		}
		// A model with no weights yet is its base model: never another
		// trained model, which the LoRA upstream would serve by that name
		// to whoever registered a model over it.
		if found && s.cfg.Routing.LoRA != nil && (adapter.Path != "" || !trainedModelName(adapter.BaseModel)) {
			return s.adapterRoute(ctx, adapter)
		}
	}
	return nil, weft.WithFields(ErrModelNotFound, map[string]any{"param": "model"}, "The model `%s` does not exist.", model)
}

// trainedModelName tells the names a training run gives its models.
func trainedModelName(model string) bool {
	_, ok := weft.ParseTrainedModel(model)
	return ok
}

// adapterRoute loads adapter into the LoRA upstream on first use and routes
// to it by name; an adapter without weights routes to its base model.
func (s *Gateway) adapterRoute(ctx context.Context, adapter LoRAAdapter) (*Route, error) {
	upstream := *s.cfg.Routing.LoRA
	upstream.Model = adapter.Name
	if adapter.Path == "" {
		upstream.Model = adapter.BaseModel // nothing trained yet: the base model answers
	} else if _, ok := s.loaded.Load(adapter.Name); !ok {
		if err := s.loadAdapter(ctx, upstream, adapter); err != nil {
			return nil, err
		}
	}
	return &Route{Name: adapter.Name, Upstreams: []Upstream{upstream}, Timeout: DefaultTimeout, RetryBackoff: DefaultRetryBackoff,
		metricsLabel: loraMetricsLabel}, nil
}

// loraMetricsLabel is the route label of the attempts of trained models
// the LoRA upstream serves.
const loraMetricsLabel = "lora"

func (s *Gateway) loadAdapter(ctx context.Context, upstream Upstream, adapter LoRAAdapter) error {
	s.loading.Lock()
	defer s.loading.Unlock()
	if _, ok := s.loaded.Load(adapter.Name); ok {
		return nil
	}
	body, _ := json.Marshal(map[string]string{"lora_name": adapter.Name, "lora_path": adapter.Path})
	res, err := s.send(ctx, upstream, "/load_lora_adapter", body)
	if err != nil {
		return weft.Errorf(ErrUpstreamUnavailable, "loading adapter %s: %v", adapter.Name, err)
	}
	text, _ := readAll(res.Body, 1<<20)
	res.Body.Close()
	// vLLM answers 400 "... has already been loaded" when another gateway
	// replica loaded it first.
	if res.StatusCode/100 != 2 && !strings.Contains(string(text), "already") {
		return weft.Errorf(ErrUpstreamUnavailable, "loading adapter %s: upstream answered %d: %s", adapter.Name, res.StatusCode, text)
	}
	s.loaded.Store(adapter.Name, struct{}{})
	return nil
}

// servedAdapterRoute routes a trained checkpoint over a base model that a
// registered backend serves to that backend, which applies the adapter
// itself (Target.Adapter): the checkpoint shares the base model's
// upstream, and its attempts count under the base model's name.
func servedAdapterRoute(base *Route, adapter LoRAAdapter) *Route {
	r := *base
	r.Name, r.Upstreams, r.Fallbacks, r.metricsLabel, r.adapter = adapter.Name, base.Upstreams[:1], nil, base.Name, &adapter
	return &r
}

// registered tells a route served by a registered backend.
func (s *Gateway) registered(r *Route) bool {
	_, ok := s.backends[r.Upstreams[0].Kind]
	return ok
}

// backendOf is the backend serving an upstream's routes.
func (s *Gateway) backendOf(u Upstream) Backend {
	if b, ok := s.backends[u.Kind]; ok {
		return b
	}
	return s.remote
}

// newCall starts the record of a call made now.
func (s *Gateway) newCall(ctx context.Context, projectID, op string, inputs []byte) Call {
	id := uuid.Must(uuid.NewV7()).String()
	return Call{
		ProjectID: projectID, ID: id, TraceID: uuid.Must(uuid.NewV7()).String(), OpName: op,
		UserID: weft.UserID(ctx), StartedAt: s.now(), Inputs: inputs,
	}
}
