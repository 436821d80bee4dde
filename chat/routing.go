package chat

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math"
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
	// directory (Path): no server behind it. See [LocalOptions]; package
	// chat/inprocess checks its upstreams (inprocess.Kind, handed to
	// ParseRouting) and serves them, registered in [Config.Backends].
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
//	        threads: 2                 # see LocalOptions for these knobs and their defaults
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
	// LocalOptions configure a local upstream (kind local).
	LocalOptions `yaml:",inline"`

	apiKey string
}

// LocalOptions are the knobs of a model run in-process. Zero values are the
// documented defaults.
type LocalOptions struct {
	// Path is the model directory: config.json, model.safetensors (or
	// shards with model.safetensors.index.json), tokenizer.json,
	// tokenizer_config.json and, when present, chat_template.jinja and
	// generation_config.json. Required for kind local.
	Path string `yaml:"path"`
	// Threads is how many threads a forward pass uses. Default (0): the
	// number of CPUs the process may use (GOMAXPROCS).
	Threads int `yaml:"threads"`
	// MaxSequences bounds the sequences decoded together (continuous
	// batching); requests beyond it wait in a queue. Default:
	// engine.DefaultMaxSeqs (16).
	MaxSequences int `yaml:"max_sequences"`
	// MaxBatchTokens bounds the tokens of one forward pass (decode rows
	// first, then prompt chunks); it must be at least MaxSequences.
	// Default: engine.DefaultMaxBatchTokens (512).
	MaxBatchTokens int `yaml:"max_batch_tokens"`
	// KVCacheBytes bounds the memory of the key-value cache, e.g. "512MiB"
	// or "2GiB". A request that cannot get room waits; once the queue is
	// full it is answered 503 with Retry-After. Default:
	// engine.DefaultKVCacheBytes (1GiB).
	KVCacheBytes ByteSize `yaml:"kv_cache_bytes"`
	// MaxQueued bounds the requests waiting for admission; one more is
	// answered 503 with Retry-After at once. Default:
	// engine.DefaultMaxQueued (256).
	MaxQueued int `yaml:"max_queued"`
	// MaxQueueWait bounds how long a request waits for admission (a free
	// sequence slot and room in the KV cache) before it is answered 503
	// with Retry-After. Default: engine.DefaultMaxQueueWait (10s).
	MaxQueueWait time.Duration `yaml:"max_queue_wait"`
	// MaxRequestTokens bounds n × max_tokens of one request (max_tokens
	// as sent, else what the context leaves); over it the request is
	// answered 400 naming both. Default: engine.DefaultMaxRequestTokens
	// (65536).
	MaxRequestTokens int `yaml:"max_request_tokens"`
	// WeightType is how linear-layer weights are held: "auto" (default:
	// as the model's file stores them, a GGUF file's quantised blocks
	// used in place; a safetensors checkpoint as f32), "f32" (exact),
	// "int8" (blocks of 32 weights with one scale each: a quarter
	// of the memory traffic, for speed on larger models), a GGUF block
	// format quantised at load ("q8_0", "q4_0", "q4_k", "q5_k", "q6_k") or
	// half precision ("f16", "bf16"): engine.WeightTypes.
	WeightType string `yaml:"weight_type"`
	// PromptTokensDetails reports usage.prompt_tokens_details.cached_tokens
	// (prompt tokens served from the prefix cache), as vLLM does with
	// --enable-prompt-tokens-details. Default false: the field is null.
	PromptTokensDetails bool `yaml:"prompt_tokens_details"`
	// ReasoningParser reads a thinking model's reasoning — the text of a
	// think block the prompt left open (a generation prompt ending in
	// <think>) or the model opened with <think>, up to </think> — into
	// the answer's reasoning (and reasoning_content) rather than its
	// content; the rest is content: "auto" (the default) for models whose
	// vocabulary has <think> and </think> (Qwen3), when the request leaves
	// chat_template_kwargs.enable_thinking on; "none" leaves the thinking
	// in content.
	ReasoningParser string `yaml:"reasoning_parser"`
	// StructuredOutputs bounds what constrained decoding may cost.
	StructuredOutputs StructuredOptions `yaml:"structured_outputs"`
	// TrustRequestChatTemplate lets a request bring its own chat template
	// (chat_template, or chat_template inside chat_template_kwargs), as
	// vLLM's --trust-request-chat-template does. Default false: such a
	// request is refused with a 400, since a template is a program the
	// server runs.
	TrustRequestChatTemplate bool `yaml:"trust_request_chat_template"`
}

// StructuredOptions bound structured outputs (constrained decoding) on a
// local model. Zero values are the documented defaults.
type StructuredOptions struct {
	// CacheSize is how many compiled constraints are kept, so that a
	// repeated schema is compiled once. Default 128.
	CacheSize int `yaml:"cache_size"`
	// MaxMasks is how many distinct allowed-token masks one compiled
	// constraint keeps (states allowing the same tokens share one; each
	// is vocabulary/8 bytes). Default 512.
	MaxMasks int `yaml:"max_masks"`
	// MaxWhitespace is how many bytes of white space JSON output may have
	// between two of its tokens. Default 8; -1 allows none. The tool
	// calls tool_choice required and named constrain have at most one.
	MaxWhitespace int `yaml:"max_whitespace"`
	// MaxStringLength bounds the characters of JSON strings whose schema
	// sets no maxLength. Default 0: unbounded.
	MaxStringLength int `yaml:"max_string_length"`
	// MaxNesting bounds the nesting of recursive schemas and of generic
	// JSON values (json_object). Default 32.
	MaxNesting int `yaml:"max_nesting"`
	// MaxStates bounds one constraint's automaton, and so what compiling
	// it takes (about 200 bytes of memory a state); a constraint that
	// needs more is a 400 "too complex", refused as soon as the build
	// sees it cannot fit. Default: constrain.DefaultMaxStates (500,000).
	MaxStates int `yaml:"max_states"`
	// MaxCompileTime bounds one constraint's compile (a 400 "too
	// complex" past it), and apart from it its wait for a turn.
	// Default: constrain.DefaultMaxCompileTime (5s).
	MaxCompileTime time.Duration `yaml:"max_compile_time"`
	// MaxCompiles is how many new constraints compile at once; a request
	// that finds no turn within max_compile_time is answered 503 with
	// Retry-After. Default: constrain.DefaultMaxCompiles (2).
	MaxCompiles int `yaml:"max_compiles"`
}

// ByteSize is a number of bytes, written in a routing file as an integer or
// with a unit: "512MiB", "2GiB", "1.5GB".
type ByteSize int64

// UnmarshalYAML reads an integer or a size with a unit (B, KB, MB, GB,
// KiB, MiB, GiB).
func (b *ByteSize) UnmarshalYAML(node *yaml.Node) error {
	text := strings.TrimSpace(node.Value)
	units := []struct {
		suffix string
		scale  float64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"B", 1}}
	scale := 1.0
	for _, u := range units {
		if number, ok := strings.CutSuffix(text, u.suffix); ok {
			text, scale = strings.TrimSpace(number), u.scale
			break
		}
	}
	n, err := strconv.ParseFloat(text, 64)
	if err != nil || n < 0 || math.IsInf(n, 0) {
		return fmt.Errorf("line %d: %q is not a size (an integer number of bytes or e.g. 512MiB, 2GiB)", node.Line, node.Value)
	}
	*b = ByteSize(n * scale)
	return nil
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
			err = kind.Prepare(route, u)
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
	if u.LocalOptions != (LocalOptions{}) {
		return errors.New("path, threads, max_sequences, max_batch_tokens, kv_cache_bytes, max_queued, max_queue_wait, max_request_tokens, weight_type, prompt_tokens_details, reasoning_parser and structured_outputs are for kind local only")
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
