package chat

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"os"
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
//	    upstreams:
//	      - url: http://vllm-a:8000/v1 # base URL of an OpenAI-compatible server
//	        model: meta-llama/Llama-3.1-8B-Instruct  # upstream's name; default: name
//	        kind: vllm                 # vllm (default) or openai
//	        api_key_env: VLLM_A_KEY    # environment variable holding its API key
//	        weight: 3                  # load-balancing weight; default 1
//	lora:                              # where trained LoRA adapters are served
//	  url: http://vllm-lora:8000/v1
//	  api_key_env: VLLM_LORA_KEY
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
	ModelInfo    `yaml:",inline"`
}

// Upstream is one OpenAI-compatible server.
type Upstream struct {
	// URL is the base URL up to and including /v1.
	URL   string `yaml:"url"`
	Model string `yaml:"model"`
	Kind  string `yaml:"kind"`
	// APIKeyEnv names the environment variable holding the upstream's key,
	// read once when the routing is loaded.
	APIKeyEnv string `yaml:"api_key_env"`
	Weight    int    `yaml:"weight"`

	apiKey string
}

// Default route settings.
const (
	DefaultTimeout      = 10 * time.Minute
	DefaultRetryBackoff = 100 * time.Millisecond
)

// LoadRouting reads a routing file (YAML or JSON), resolves API keys from the
// environment and checks it.
func LoadRouting(path string) (*Routing, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("chat routing: %w", err)
	}
	return ParseRouting(data, os.LookupEnv)
}

// ParseRouting parses routing text (YAML or JSON); lookupEnv resolves
// api_key_env names.
func ParseRouting(data []byte, lookupEnv func(string) (string, bool)) (*Routing, error) {
	var r Routing
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("chat routing: %w", err)
	}
	if err := r.prepare(lookupEnv); err != nil {
		return nil, fmt.Errorf("chat routing: %w", err)
	}
	return &r, nil
}

// prepare fills defaults and checks the routing once.
func (r *Routing) prepare(lookupEnv func(string) (string, bool)) error {
	names := map[string]bool{}
	for i := range r.Models {
		route := &r.Models[i]
		if route.Name == "" {
			return fmt.Errorf("models[%d]: name is required", i)
		}
		if names[route.Name] {
			return fmt.Errorf("model %q is listed twice", route.Name)
		}
		names[route.Name] = true
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
			if err := route.Upstreams[j].prepare(route.Name, lookupEnv); err != nil {
				return fmt.Errorf("model %q: upstreams[%d]: %w", route.Name, j, err)
			}
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
		if err := r.LoRA.prepare("", lookupEnv); err != nil {
			return fmt.Errorf("lora: %w", err)
		}
		if r.LoRA.Kind != KindVLLM {
			return errors.New("lora: the LoRA upstream must be of kind vllm")
		}
	}
	return nil
}

func (u *Upstream) prepare(model string, lookupEnv func(string) (string, bool)) error {
	parsed, err := url.Parse(u.URL)
	if err != nil || (parsed.Scheme != "http" && parsed.Scheme != "https") || parsed.Host == "" {
		return fmt.Errorf("url %q must be an http(s) URL", u.URL)
	}
	u.URL = strings.TrimSuffix(u.URL, "/")
	if u.Model == "" {
		u.Model = model
	}
	switch u.Kind {
	case "":
		u.Kind = KindVLLM
	case KindVLLM, KindOpenAI:
	default:
		return fmt.Errorf("kind %q must be %q or %q", u.Kind, KindVLLM, KindOpenAI)
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
