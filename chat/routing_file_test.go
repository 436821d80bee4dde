package chat

import (
	"os"
	"testing"
	"time"
)

// The example routing file shipped with the server parses.
func TestExampleRoutingFile(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("../examples/server/chat-routing.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	r, err := ParseRouting(data, func(name string) (string, bool) { return "key-of-" + name, true })
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Models) != 3 || r.LoRA == nil || r.Models[0].Upstreams[1].apiKey != "key-of-VLLM_B_API_KEY" || r.Models[0].MaxModelLen != 8192 {
		t.Fatalf("%+v", r)
	}
}

// The server's -local-… limits reach every model served in-process where
// the routing file leaves them unset; a route's own value wins, and remote
// routes are left alone.
func TestApplyLocalLimits(t *testing.T) {
	t.Parallel()
	r, err := ParseRouting([]byte(`models:
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
`), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	if err := r.AddLocalModels("/models/flagged"); err != nil {
		t.Fatal(err)
	}
	r.ApplyLocalLimits(LocalLimits{MaxRequestTokens: 4096, MaxLogprobs: 3, MaxQueueWait: 7 * time.Second, MaxStates: 9000, MaxCompileTime: 3 * time.Second})
	type limits struct {
		tokens, states int
		logprobs       int64
		wait, compile  time.Duration
	}
	of := func(i int) limits {
		u := r.Models[i].Upstreams[0]
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
