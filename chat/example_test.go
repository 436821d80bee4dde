package chat_test

import (
	"fmt"

	"github.com/weftlabs/weft/chat"
)

// A routing file maps public model names to upstreams; API keys come from
// the environment, and omitted settings take their defaults.
func ExampleParseRouting() {
	routing, err := chat.ParseRouting([]byte(`
models:
  - name: llama-8b
    max_model_len: 8192
    fallbacks: [gpt-4o-mini]
    upstreams:
      - {url: "http://vllm-a:8000/v1", model: meta-llama/Llama-3.1-8B-Instruct, weight: 3}
      - {url: "http://vllm-b:8000/v1", model: meta-llama/Llama-3.1-8B-Instruct}
  - name: gpt-4o-mini
    upstreams:
      - {url: "https://api.openai.com/v1", kind: openai, api_key_env: OPENAI_API_KEY}
`), func(name string) (string, bool) { return "sk-from-" + name, true })
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, route := range routing.Models {
		u := route.Upstreams[0]
		fmt.Println(route.Name, "->", u.Kind, u.Model, "weight", u.Weight, "timeout", route.Timeout, "fallbacks", route.Fallbacks)
	}
	// Output:
	// llama-8b -> vllm meta-llama/Llama-3.1-8B-Instruct weight 3 timeout 10m0s fallbacks [gpt-4o-mini]
	// gpt-4o-mini -> openai gpt-4o-mini weight 1 timeout 10m0s fallbacks []
}

// Requests are checked with vLLM's request-level validators and messages.
func ExampleValidate() {
	for _, body := range []string{
		`{"model":"m","messages":[{"role":"user","content":"hi"}],"top_logprobs":2}`,
		`{"model":"m","messages":[{"role":"user","content":"hi"}],"n":2,"temperature":0}`,
		`{"model":"m","messages":[{"role":"user","content":"hi"}],"my_extension":true}`,
	} {
		req, err := chat.ParseRequest([]byte(body))
		if err == nil {
			err = chat.Validate(req, chat.ModelInfo{})
		}
		fmt.Println(err)
	}
	// Output:
	// when using `top_logprobs`, `logprobs` must be set to true.
	// n must be 1 when using greedy sampling, got 2.
	// <nil>
}
