package inprocess

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weftlabs/weft/chat"
)

// The server's -local-… limits reach every model served in-process where
// the routing file leaves them unset; a route's own value wins, and remote
// routes are left alone.
func TestApplyLimits(t *testing.T) {
	t.Parallel()
	r, err := chat.ParseRouting([]byte(`models:
  - name: own
    max_logprobs: 5
    upstreams:
      - kind: local
        path: /models/own
        max_request_tokens: 100
        max_queue_wait: 2s
        structured_outputs: {max_states: 1000, max_compile_time: 1s}
  - name: remote
    upstreams:
      - url: http://127.0.0.1:1/v1
`), func(string) (string, bool) { return "", false }, Kind)
	if err != nil {
		t.Fatal(err)
	}
	if err := AddModels(r, "/models/flagged"); err != nil {
		t.Fatal(err)
	}
	ApplyLimits(r, Limits{MaxRequestTokens: 4096, MaxLogprobs: 3, MaxQueueWait: 7 * time.Second, MaxStates: 9000, MaxCompileTime: 3 * time.Second})
	type limits struct {
		tokens, states int
		logprobs       int64
		wait, compile  time.Duration
	}
	of := func(i int) limits {
		u := optionsOf(r.Models[i].Upstreams[0])
		return limits{u.MaxRequestTokens, u.StructuredOutputs.MaxStates, r.Models[i].MaxLogprobs, u.MaxQueueWait, u.StructuredOutputs.MaxCompileTime}
	}
	for i, want := range []limits{
		{100, 1000, 5, 2 * time.Second, time.Second},
		{},
		{4096, 9000, 3, 7 * time.Second, 3 * time.Second},
	} {
		if got := of(i); got != want {
			t.Errorf("%s: %+v, want %+v", r.Models[i].Name, got, want)
		}
	}
}

// The local knobs of a routing file, their checks and sizes with units.
func TestParseLocalRouting(t *testing.T) {
	t.Parallel()
	r, err := chat.ParseRouting([]byte(`models:
  - name: q
    max_model_len: 2048
    fallbacks: [r]
    upstreams: [{kind: local, path: /models/q, threads: 2, max_sequences: 8, kv_cache_bytes: 1.5GiB, max_queue_wait: 2s, weight_type: int8,
      reasoning_parser: none, structured_outputs: {max_masks: 1024, max_whitespace: -1, max_string_length: 64,
      max_states: 100000, max_compile_time: 2s, max_compiles: 1}}]
  - name: r
    upstreams: [{kind: local, path: /models/r, kv_cache_bytes: 1000000}]
`), nil, Kind)
	if err != nil {
		t.Fatal(err)
	}
	q, qo, ro := r.Models[0].Upstreams[0], optionsOf(r.Models[0].Upstreams[0]), optionsOf(r.Models[1].Upstreams[0])
	if qo.KVCacheBytes != 3<<29 || qo.WeightType != "int8" || qo.Threads != 2 || qo.MaxSequences != 8 || qo.MaxQueueWait != 2*time.Second || q.Model != "q" ||
		ro.KVCacheBytes != 1000000 || ro.WeightType != "auto" ||
		qo.ReasoningParser != "none" || qo.StructuredOutputs != (StructuredOptions{MaxMasks: 1024, MaxWhitespace: -1, MaxStringLength: 64,
		MaxStates: 100000, MaxCompileTime: 2 * time.Second, MaxCompiles: 1}) ||
		ro.ReasoningParser != "auto" || !slices.Equal(r.Models[0].Endpoints, []string{chat.EndpointChat, chat.EndpointCompletions, chat.EndpointResponses}) {
		t.Fatalf("%+v %+v", q, r.Models[1].Upstreams[0])
	}
	for _, tc := range []struct{ text, want string }{
		{`models: [{name: q, upstreams: [{kind: local}]}]`, "path (the model directory) is required"},
		{`models: [{name: q, upstreams: [{kind: local, path: /m, url: "http://x/v1"}]}]`, "takes a path, not url"},
		{`models: [{name: q, upstreams: [{kind: local, path: /m}, {url: "http://x/v1"}]}]`, "must be the only upstream"},
		{`models: [{name: q, upstreams: [{kind: local, path: /m, weight_type: f8}]}]`, `weight_type "f8" must be one of`},
		{`models: [{name: q, upstreams: [{kind: local, path: /m, kv_cache_bytes: lots}]}]`, `"lots" is not a size`},
		{`models: [{name: q, upstreams: [{url: "http://x/v1", threads: 2}]}]`, "for kind local only"},
		{`models: [{name: q, upstreams: [{kind: local, path: /m, reasoning_parser: qwen}]}]`, `reasoning_parser "qwen" must be auto or none`},
		{`models: [{name: q, upstreams: [{kind: local, path: /m, structured_outputs: {max_whitespace: -2}}]}]`, "max_whitespace not below -1"},
		{`models: [{name: q, upstreams: [{kind: local, path: /m, structured_outputs: {max_compiles: -1}}]}]`, "max_compiles must not be negative"},
		{`models: [{name: m, endpoints: [embeddings], upstreams: [{kind: local, path: /m/x}]}]`, "-embedding-model"},
		{`models: [{name: q, upstreams: [{kind: bogus, url: "http://x/v1"}]}]`, `kind "bogus" must be "vllm", "openai" or "local"`},
		{"models:\n  - name: q\n    upstreams:\n      - kind: local\n        path: /m\n        thread: 2\n", "line 6: field thread not found in type inprocess.LocalOptions"},
		{"models:\n  - name: q\n    upstreams:\n      - kind: local\n        path: /m\n        structured_outputs: {max_state: 2}\n", "line 6: field max_state not found in type inprocess.StructuredOptions"},
	} {
		if _, err := chat.ParseRouting([]byte(tc.text), nil, Kind); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.text, err, tc.want)
		}
	}
	if err := AddModels(r, "/models/q"); err == nil || !strings.Contains(err.Error(), "already routed") {
		t.Errorf("a second q: %v", err)
	}
	if err := AddModels(r, "/srv/models/Qwen3-0.6B/"); err != nil || r.Models[2].Name != "Qwen3-0.6B" || optionsOf(r.Models[2].Upstreams[0]).Path != "/srv/models/Qwen3-0.6B/" {
		t.Errorf("AddModels: %v %+v", err, r.Models)
	}
}
