package inprocess

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/weftlabs/weft/chat"
	"github.com/weftlabs/weft/internal/llm/engine"
)

// Kind is how a routing file's upstreams of kind local are checked: hand
// it to chat.ParseRouting (or chat.LoadRouting) when the routing may name
// models run in-process. A local upstream is the only upstream of its
// route, takes a path rather than a url, and its knobs ([LocalOptions], in
// chat.Upstream.Options) get their defaults here.
var Kind = chat.UpstreamKind{Name: chat.KindLocal, Options: LocalOptions{}, Prepare: prepareUpstream}

// endpoints are what a model run in-process serves (embedding models are
// served in-process by chat/embeddings: chat.Config.Embeddings), and what
// its route serves when the routing file names none.
var endpoints = []string{chat.EndpointChat, chat.EndpointCompletions, chat.EndpointResponses}

// prepareUpstream checks a local upstream and its route and fills their
// defaults.
func prepareUpstream(route *chat.Route, u *chat.Upstream) error {
	o := u.Options.(LocalOptions) // of Kind.Options' type: chat decoded it
	switch {
	case len(route.Upstreams) > 1:
		return errors.New("a local upstream must be the only upstream of its model")
	case u.URL != "" || u.APIKeyEnv != "":
		return errors.New("a local upstream takes a path, not url or api_key_env")
	case o.Path == "":
		return errors.New("path (the model directory) is required for kind local")
	case o.Threads < 0 || o.MaxSequences < 0 || o.MaxBatchTokens < 0 || o.KVCacheBytes < 0 || o.MaxQueued < 0 || o.MaxQueueWait < 0 || o.MaxRequestTokens < 0:
		return errors.New("threads, max_sequences, max_batch_tokens, kv_cache_bytes, max_queued, max_queue_wait and max_request_tokens must not be negative")
	}
	if o.WeightType == "" {
		o.WeightType = string(engine.WeightAuto)
	} else if !engine.WeightType(o.WeightType).Valid() {
		return fmt.Errorf("weight_type %q must be one of %v", o.WeightType, engine.WeightTypes())
	}
	switch o.ReasoningParser {
	case "":
		o.ReasoningParser = "auto"
	case "auto", "none":
	default:
		return fmt.Errorf("reasoning_parser %q must be auto or none", o.ReasoningParser)
	}
	if so := o.StructuredOutputs; so.CacheSize < 0 || so.MaxMasks < 0 || so.MaxStringLength < 0 || so.MaxNesting < 0 || so.MaxWhitespace < -1 ||
		so.MaxStates < 0 || so.MaxCompileTime < 0 || so.MaxCompiles < 0 {
		return errors.New("structured_outputs: cache_size, max_masks, max_string_length, max_nesting, max_states, max_compile_time and max_compiles must not be negative, max_whitespace not below -1")
	}
	if u.Model == "" {
		u.Model = route.Name
	}
	u.Weight, u.Options = 1, o
	return checkEndpoints(route)
}

// checkEndpoints gives a local model's route the endpoints a model run
// in-process serves, or refuses a list naming another.
func checkEndpoints(route *chat.Route) error {
	if route.Endpoints == nil {
		route.Endpoints = slices.Clone(endpoints)
		return nil
	}
	for _, e := range route.Endpoints {
		if !slices.Contains(endpoints, e) {
			return fmt.Errorf("a local model serves %s; embedding models run in-process are served with -embedding-model", strings.Join(endpoints, ", "))
		}
	}
	return nil
}

// AddModels serves each model directory under its folder name (the
// server's -model flag), with the default LocalOptions. A name
// already routed is an error.
func AddModels(r *chat.Routing, dirs ...string) error {
	for _, dir := range dirs {
		name := filepath.Base(filepath.Clean(dir))
		if name == "." || name == string(filepath.Separator) {
			return fmt.Errorf("chat routing: model directory %q has no folder name to serve it under", dir)
		}
		route := chat.Route{Name: name, Upstreams: []chat.Upstream{{Kind: chat.KindLocal, Options: LocalOptions{Path: dir}}}}
		if err := r.Add(route, Kind); err != nil {
			return fmt.Errorf("%w (from %s)", err, dir)
		}
	}
	return nil
}

// Limits are per-request limits of the models run in-process that an
// operator sets for every local route at once (the server's -local-…
// flags); a value a route sets in the routing file wins. A zero field
// leaves the default named.
type Limits struct {
	// MaxRequestTokens bounds n × max_tokens of one request
	// (engine.DefaultMaxRequestTokens).
	MaxRequestTokens int
	// MaxLogprobs bounds top_logprobs and prompt_logprobs
	// (engine.DefaultMaxLogprobs).
	MaxLogprobs int64
	// MaxQueueWait bounds one request's wait for admission
	// (engine.DefaultMaxQueueWait).
	MaxQueueWait time.Duration
	// MaxStates bounds one request's output constraint automaton
	// (constrain.DefaultMaxStates).
	MaxStates int
	// MaxCompileTime bounds the compile of one request's output
	// constraint (constrain.DefaultMaxCompileTime).
	MaxCompileTime time.Duration
}

// ApplyLimits sets l on every route of r served in-process, where the
// routing file left the limit unset.
func ApplyLimits(r *chat.Routing, l Limits) {
	fill := func(v *int, to int) {
		if *v == 0 {
			*v = to
		}
	}
	fillDuration := func(v *time.Duration, to time.Duration) {
		if *v == 0 {
			*v = to
		}
	}
	for i := range r.Models {
		route := &r.Models[i]
		for j := range route.Upstreams {
			u := &route.Upstreams[j]
			if u.Kind != chat.KindLocal {
				continue
			}
			o := optionsOf(*u)
			fill(&o.MaxRequestTokens, l.MaxRequestTokens)
			fillDuration(&o.MaxQueueWait, l.MaxQueueWait)
			fill(&o.StructuredOutputs.MaxStates, l.MaxStates)
			fillDuration(&o.StructuredOutputs.MaxCompileTime, l.MaxCompileTime)
			u.Options = o
			if route.MaxLogprobs == 0 {
				route.MaxLogprobs = l.MaxLogprobs
			}
		}
	}
}

// optionsOf are a local upstream's options: its Options, the defaults
// (the zero value) where a route built in code and not checked by Kind
// set none.
func optionsOf(u chat.Upstream) LocalOptions {
	o, _ := u.Options.(LocalOptions)
	return o
}
