package chat

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Upstream kinds: how a request is shaped for the server behind a route.
const (
	// KindVLLM forwards every field, vLLM extensions included (vLLM, SGLang,
	// and servers that ignore unknown fields such as llama.cpp or Ollama).
	KindVLLM = "vllm"
	// KindOpenAI translates vLLM extensions to OpenAI's fields where a
	// translation exists and refuses the request with a 400 where none does.
	KindOpenAI = "openai"
	// KindLocal runs the model in-process from a Hugging Face model
	// directory (its path): no server behind it. Package chat/inprocess
	// decodes and checks its upstreams' options (inprocess.Kind, handed to
	// ParseRouting; inprocess.LocalOptions) and serves them, registered in
	// [Config.Backends].
	KindLocal = "local"
)

// Routing maps public model names to upstream servers. It is read from a YAML
// or JSON file with [LoadRouting]:
//
//	models:
//	  - name: llama-8b                 # the name clients send as "model"
//	    max_model_len: 8192            # model metadata for model-aware checks
//	    vocab_size: 128256
//	    timeout: 60s                   # per attempt; default 10m
//	    retries: 1                     # extra attempts per route; default 0
//	    retry_backoff: 100ms           # doubled after each retry; default 100ms
//	    fallbacks: [llama-8b-backup]   # other routes tried in order
//	    endpoints: [chat, completions, responses]  # the APIs it serves; this is the default
//	    upstreams:
//	      - url: http://vllm-a:8000/v1 # base URL of an OpenAI-compatible server
//	        model: meta-llama/Llama-3.1-8B-Instruct  # upstream's name; default: name
//	        kind: vllm                 # vllm (default) or openai
//	        api_key_env: VLLM_A_KEY    # environment variable holding its API key
//	        weight: 3                  # load-balancing weight; default 1
//	  - name: qwen3-0.6b               # a model weft runs itself
//	    max_model_len: 4096            # caps the model's context; default: its config's
//	    upstreams:
//	      - kind: local
//	        path: models/Qwen3-0.6B    # config.json, model.safetensors, tokenizer.json, ...
//	        threads: 2                 # see inprocess.LocalOptions for these knobs and their defaults
//	        max_sequences: 8
//	        max_request_tokens: 65536  # n × max_tokens of one request
//	        kv_cache_bytes: 1GiB
//	        weight_type: int8
//	  - name: bge-m3                   # a remote embedding model
//	    endpoints: [embeddings]
//	    upstreams: [{url: http://tei:8080/v1, model: BAAI/bge-m3}]
//	lora:                              # where trained LoRA adapters are served
//	  url: http://vllm-lora:8000/v1
//	  api_key_env: VLLM_LORA_KEY
//
// A local upstream is the only upstream of its route (it may still have
// fallbacks); its model is opened once when the gateway starts and closed
// with it.
type Routing struct {
	Models []Route `yaml:"models"`
	// LoRA is the vLLM server (run with --enable-lora and runtime LoRA
	// updating) that serves trained adapters. Optional.
	LoRA *Upstream `yaml:"lora"`
}

// Route is one public model name.
type Route struct {
	Name      string     `yaml:"name"`
	Upstreams []Upstream `yaml:"upstreams"`
	// Fallbacks name other routes tried, in order, when every attempt on this
	// one failed with a connect error, a timeout, a 5xx or a 429.
	Fallbacks    []string      `yaml:"fallbacks"`
	Retries      int           `yaml:"retries"`
	RetryBackoff time.Duration `yaml:"retry_backoff"`
	Timeout      time.Duration `yaml:"timeout"`
	// Endpoints are the APIs the route serves (EndpointChat,
	// EndpointCompletions, EndpointEmbeddings, EndpointResponses); a
	// request through another is refused with a 400 naming it, and its
	// fallbacks that do not serve it are passed over. Default:
	// DefaultEndpoints.
	Endpoints []string `yaml:"endpoints"`
	ModelInfo `yaml:",inline"`

	// metricsLabel names the route in metrics, which anyone may read, when
	// Name is a caller's (a trained model's): never a tenant's model name.
	metricsLabel string
	// adapter is the trained checkpoint a registered backend applies over
	// the route's model (see Gateway.servedAdapterRoute), nil for a
	// configured route.
	adapter *LoRAAdapter
}

// label is the route's name in metrics: a configured route's name, or the
// label a trained model's route counts under.
func (route *Route) label() string {
	if route.metricsLabel != "" {
		return route.metricsLabel
	}
	return route.Name
}

// Upstream is one OpenAI-compatible server, or a model run in-process
// (kind local).
type Upstream struct {
	// URL is the base URL up to and including /v1 (not for kind local).
	URL   string `yaml:"url"`
	Model string `yaml:"model"`
	Kind  string `yaml:"kind"`
	// APIKeyEnv names the environment variable holding the upstream's key,
	// read once when the routing is loaded.
	APIKeyEnv string `yaml:"api_key_env"`
	Weight    int    `yaml:"weight"`
	// Options configure an upstream of a kind a registered backend serves
	// (kind local: inprocess.LocalOptions), of the type its [UpstreamKind]
	// names: decoded from the routing file's keys that Upstream itself does
	// not name, or set by a route built in code. Nil for kinds vllm and
	// openai.
	Options any `yaml:"-"`

	apiKey string
	// optionKeys are the routing file's keys of the upstream that Upstream
	// does not name (a mapping node), for its kind's Options; nil without.
	optionKeys *yaml.Node
}

// Default route settings.
const (
	DefaultTimeout      = 10 * time.Minute
	DefaultRetryBackoff = 100 * time.Millisecond
)

// LoadRouting reads a routing file (YAML or JSON), resolves API keys from the
// environment and checks it. kinds are the upstream kinds registered
// backends serve, besides the remote vllm and openai (see [ParseRouting]).
func LoadRouting(path string, kinds ...UpstreamKind) (*Routing, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("chat routing: %w", err)
	}
	return ParseRouting(data, os.LookupEnv, kinds...)
}

// UpstreamKind is how a routing file's upstreams of a kind that a
// registered backend serves ([Config.Backends]) are checked, told by the
// backend's own package: package chat/inprocess has inprocess.Kind for
// kind local. The routing file knows the remote kinds (vllm, openai)
// itself and every other kind only through one of these.
type UpstreamKind struct {
	// Name is the kind as a routing file names it.
	Name string
	// Options is the zero value of the kind's options (kind local:
	// inprocess.LocalOptions{}), nil for a kind that has none. An
	// upstream's keys that Upstream does not name are decoded into a copy,
	// strictly: a key no field of it is decoded from fails the routing,
	// naming the key and its line. Prepare finds them in Upstream.Options,
	// always of this type.
	Options any
	// Prepare checks an upstream of this kind and fills its defaults. It
	// is handed the upstream's route, whose Endpoints are as the file
	// names them (nil when it names none, the default then being the
	// kind's to set, else DefaultEndpoints).
	Prepare func(route *Route, u *Upstream) error
}

// ParseRouting parses routing text (YAML or JSON); lookupEnv resolves
// api_key_env names. An upstream of a kind other than vllm and openai is
// checked by the one of kinds that names it, and is an error without one.
func ParseRouting(data []byte, lookupEnv func(string) (string, bool), kinds ...UpstreamKind) (*Routing, error) {
	var r Routing
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("chat routing: %w", err)
	}
	if err := r.prepare(lookupEnv, kinds); err != nil {
		return nil, fmt.Errorf("chat routing: %w", err)
	}
	return &r, nil
}

// Add adds a route built in code, checked and completed as a routing
// file's would be (without API keys: lookupEnv finds none). A name already
// routed is an error.
func (r *Routing) Add(route Route, kinds ...UpstreamKind) error {
	for _, have := range r.Models {
		if have.Name == route.Name {
			return fmt.Errorf("chat routing: model %q is already routed", route.Name)
		}
	}
	if err := route.prepare(len(r.Models), func(string) (string, bool) { return "", false }, kindsByName(kinds)); err != nil {
		return fmt.Errorf("chat routing: %w", err)
	}
	r.Models = append(r.Models, route)
	return nil
}

func kindsByName(kinds []UpstreamKind) map[string]UpstreamKind {
	byName := make(map[string]UpstreamKind, len(kinds))
	for _, k := range kinds {
		byName[k.Name] = k
	}
	return byName
}

// prepare fills defaults and checks the routing once.
func (r *Routing) prepare(lookupEnv func(string) (string, bool), kinds []UpstreamKind) error {
	byName := kindsByName(kinds)
	names := map[string]bool{}
	for i := range r.Models {
		route := &r.Models[i]
		if names[route.Name] {
			return fmt.Errorf("model %q is listed twice", route.Name)
		}
		names[route.Name] = true
		if err := route.prepare(i, lookupEnv, byName); err != nil {
			return err
		}
	}
	for _, route := range r.Models {
		for _, fb := range route.Fallbacks {
			if !names[fb] || fb == route.Name {
				return fmt.Errorf("model %q: fallback %q is not another listed model", route.Name, fb)
			}
		}
	}
	if r.LoRA != nil {
		if err := r.LoRA.prepare("", lookupEnv, nil); err != nil {
			return fmt.Errorf("lora: %w", err)
		}
		if r.LoRA.Kind != KindVLLM {
			return errors.New("lora: the LoRA upstream must be of kind vllm")
		}
	}
	return nil
}

// prepare fills a route's defaults and checks it; i is its place in the list.
func (route *Route) prepare(i int, lookupEnv func(string) (string, bool), kinds map[string]UpstreamKind) error {
	if route.Name == "" {
		return fmt.Errorf("models[%d]: name is required", i)
	}
	if len(route.Upstreams) == 0 {
		return fmt.Errorf("model %q: at least one upstream is required", route.Name)
	}
	if route.Timeout == 0 {
		route.Timeout = DefaultTimeout
	}
	if route.RetryBackoff == 0 {
		route.RetryBackoff = DefaultRetryBackoff
	}
	if route.Retries < 0 || route.Timeout < 0 || route.RetryBackoff < 0 {
		return fmt.Errorf("model %q: retries, timeout and retry_backoff must not be negative", route.Name)
	}
	for j := range route.Upstreams {
		u := &route.Upstreams[j]
		var err error
		if kind, ok := kinds[u.Kind]; ok {
			if err = u.decodeOptions(kind); err == nil {
				err = kind.Prepare(route, u)
			}
		} else {
			err = u.prepare(route.Name, lookupEnv, kinds)
		}
		if err != nil {
			return fmt.Errorf("model %q: upstreams[%d]: %w", route.Name, j, err)
		}
	}
	return route.prepareEndpoints()
}

// prepare checks a remote upstream (kind vllm or openai) and fills its
// defaults; kinds are the others a backend registered, for the error
// naming the kinds there are.
func (u *Upstream) prepare(model string, lookupEnv func(string) (string, bool), kinds map[string]UpstreamKind) error {
	switch u.Kind {
	case "":
		u.Kind = KindVLLM
	case KindVLLM, KindOpenAI:
	default:
		known := []string{strconv.Quote(KindVLLM), strconv.Quote(KindOpenAI)}
		for _, name := range slices.Sorted(maps.Keys(kinds)) {
			known = append(known, strconv.Quote(name))
		}
		return fmt.Errorf("kind %q must be %s or %s", u.Kind, strings.Join(known[:len(known)-1], ", "), known[len(known)-1])
	}
	if err := u.refuseOptions(kinds); err != nil {
		return err
	}
	parsed, err := url.Parse(u.URL)
	if err != nil || (parsed.Scheme != "http" && parsed.Scheme != "https") || parsed.Host == "" {
		return fmt.Errorf("url %q must be an http(s) URL", u.URL)
	}
	u.URL = strings.TrimSuffix(u.URL, "/")
	if u.Model == "" {
		u.Model = model
	}
	if u.Weight == 0 {
		u.Weight = 1
	}
	if u.Weight < 0 {
		return errors.New("weight must not be negative")
	}
	if u.APIKeyEnv != "" {
		key, ok := lookupEnv(u.APIKeyEnv)
		if !ok {
			return fmt.Errorf("api_key_env %s is not set", u.APIKeyEnv)
		}
		u.apiKey = key
	}
	return nil
}
