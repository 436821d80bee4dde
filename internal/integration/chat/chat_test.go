// Package chat_test drives the chat gateway of the real server binary with the
// official openai-go SDK, in front of model servers written for the tests.
package chat_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/weftlabs/weft/internal/integration/e2e"
	"github.com/weftlabs/weft/internal/integration/modelserver"
	"github.com/weftlabs/weft/internal/integration/serverproc"
	"github.com/weftlabs/weft/internal/testdb"
)

func TestMain(m *testing.M) { e2e.Main(m) }

// gateway is a running weft server routing to test model servers.
type gateway struct {
	srv        *serverproc.Server
	model      *modelserver.Server
	failedHits *atomic.Int64
	client     openai.Client
}

func startGateway(t *testing.T) *gateway {
	t.Helper()
	g := &gateway{model: modelserver.New(t), failedHits: &atomic.Int64{}}
	failing := modelserver.Failing(t, g.failedHits)
	routing := fmt.Sprintf(`models:
  - name: test-model
    max_model_len: 4096
    vocab_size: 32000
    upstreams: [{url: %[1]s/v1, model: upstream-model, api_key_env: TEST_UPSTREAM_KEY}]
  - name: slow
    upstreams: [{url: %[1]s/v1, model: slow}]
  - name: flaky
    upstreams: [{url: %[2]s/v1}]
    fallbacks: [test-model]
  - name: embedder
    endpoints: [embeddings]
    upstreams: [{url: %[1]s/v1, model: upstream-embedder}]
  - name: flaky-embedder
    endpoints: [embeddings]
    upstreams: [{url: %[2]s/v1}]
    fallbacks: [test-model, embedder]
`, g.model.URL, failing.URL)
	path := filepath.Join(t.TempDir(), "routing.yaml")
	if err := os.WriteFile(path, []byte(routing), 0o600); err != nil {
		t.Fatal(err)
	}
	g.srv = serverproc.Start(t, serverproc.Options{
		DatabaseURL: testdb.SQLiteURL(t),
		Args:        []string{"-chat-config", path},
		Env:         []string{"TEST_UPSTREAM_KEY=upstream-secret"},
	})
	g.client = openai.NewClient(option.WithBaseURL(g.srv.URL+"/v1/"), option.WithAPIKey(g.srv.Key), option.WithMaxRetries(0))
	return g
}

// weave sends Weave-style requests with the admin key.
func (g *gateway) weave() e2e.Client { return e2e.Admin(g.srv) }

func userMessage(text string) []openai.ChatCompletionMessageParamUnion {
	return []openai.ChatCompletionMessageParamUnion{openai.UserMessage(text)}
}

func TestChatCompletions(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	ctx := context.Background()

	t.Run("plain", func(t *testing.T) {
		res, err := g.client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "test-model", Messages: userMessage("hi")})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Choices) != 1 || res.Choices[0].Message.Content != "Hello from the model" || res.Usage.TotalTokens != modelserver.PromptTokens+4 {
			t.Fatalf("got %s", res.RawJSON())
		}
		var forwarded map[string]any
		_ = json.Unmarshal(g.model.Last.Load().([]byte), &forwarded)
		if forwarded["model"] != "upstream-model" {
			t.Fatalf("upstream got model %v", forwarded["model"])
		}
	})

	t.Run("n>1", func(t *testing.T) {
		res, err := g.client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "test-model", Messages: userMessage("hi"), N: openai.Int(3)})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Choices) != 3 || res.Choices[2].Index != 2 || res.Usage.CompletionTokens != 12 {
			t.Fatalf("got %s", res.RawJSON())
		}
	})

	t.Run("stream", func(t *testing.T) {
		for _, n := range []int64{1, 2} {
			stream := g.client.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{
				Model: "test-model", Messages: userMessage("hi"), N: openai.Int(n),
				StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
			})
			acc := openai.ChatCompletionAccumulator{}
			var chunks []openai.ChatCompletionChunk
			for stream.Next() {
				chunk := stream.Current()
				acc.AddChunk(chunk)
				chunks = append(chunks, chunk)
			}
			if err := stream.Err(); err != nil {
				t.Fatal(err)
			}
			if len(chunks) == 0 || chunks[0].Choices[0].Delta.Role != "assistant" {
				t.Fatalf("first chunk is not the role chunk: %+v", chunks)
			}
			for _, c := range chunks[:len(chunks)-1] {
				if len(c.Choices) != 1 {
					t.Fatalf("chunk with %d choices", len(c.Choices))
				}
			}
			last := chunks[len(chunks)-1]
			if len(last.Choices) != 0 || last.Usage.TotalTokens != modelserver.PromptTokens+4*n {
				t.Fatalf("last chunk is not the usage chunk: %s", last.RawJSON())
			}
			if len(acc.Choices) != int(n) || acc.Choices[int(n)-1].Message.Content != "Hello from the model" || acc.Choices[0].FinishReason != "stop" {
				t.Fatalf("accumulated %+v", acc.Choices)
			}
		}
	})

	t.Run("stream without usage", func(t *testing.T) {
		stream := g.client.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{Model: "test-model", Messages: userMessage("hi")})
		for stream.Next() {
			if stream.Current().Usage.TotalTokens != 0 {
				t.Fatal("usage invented")
			}
		}
		if err := stream.Err(); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("tools", func(t *testing.T) {
		res, err := g.client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
			Model: "test-model", Messages: userMessage("weather?"),
			Tools: []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
				Name: "get_weather", Parameters: shared.FunctionParameters{"type": "object", "properties": map[string]any{"location": map[string]any{"type": "string"}}},
			})},
			ToolChoice: openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String("auto")},
		})
		if err != nil {
			t.Fatal(err)
		}
		calls := res.Choices[0].Message.ToolCalls
		if len(calls) != 1 || calls[0].Function.Name != "get_weather" || calls[0].Function.Arguments != `{"location":"Paris"}` || res.Choices[0].FinishReason != "tool_calls" {
			t.Fatalf("got %s", res.RawJSON())
		}
	})

	t.Run("logprobs", func(t *testing.T) {
		res, err := g.client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
			Model: "test-model", Messages: userMessage("hi"), Logprobs: openai.Bool(true), TopLogprobs: openai.Int(2),
		})
		if err != nil {
			t.Fatal(err)
		}
		lp := res.Choices[0].Logprobs.Content
		if len(lp) != 4 || len(lp[0].TopLogprobs) != 2 || lp[0].Logprob != -0.5 {
			t.Fatalf("got %s", res.RawJSON())
		}
	})

	t.Run("structured outputs", func(t *testing.T) {
		res, err := g.client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
			Model: "test-model", Messages: userMessage("capital of France as JSON"),
			ResponseFormat: openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
				JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: "city", Schema: map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}}},
			}},
		})
		if err != nil {
			t.Fatal(err)
		}
		var out struct{ City string }
		if err := json.Unmarshal([]byte(res.Choices[0].Message.Content), &out); err != nil || out.City != "Paris" {
			t.Fatalf("got %q", res.Choices[0].Message.Content)
		}
		// vLLM's own structured_outputs and any unknown field reach the upstream as sent.
		_, err = g.client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "test-model", Messages: userMessage("hi")},
			option.WithJSONSet("structured_outputs", map[string]any{"json": map[string]any{"type": "object"}}),
			option.WithJSONSet("chat_template_kwargs", map[string]any{"enable_thinking": false}),
			option.WithJSONSet("vllm_xargs", map[string]any{"k": 1}),
			option.WithJSONSet("made_up_field", []int{1, 2}))
		if err != nil {
			t.Fatal(err)
		}
		var forwarded map[string]json.RawMessage
		_ = json.Unmarshal(g.model.Last.Load().([]byte), &forwarded)
		for key, want := range map[string]string{
			"structured_outputs": `{"json":{"type":"object"}}`, "chat_template_kwargs": `{"enable_thinking":false}`,
			"vllm_xargs": `{"k":1}`, "made_up_field": `[1,2]`,
		} {
			if string(forwarded[key]) != want {
				t.Errorf("upstream got %s = %s, want %s", key, forwarded[key], want)
			}
		}
	})

	t.Run("validators", func(t *testing.T) {
		const msgs = `"messages":[{"role":"user","content":"hi"}]`
		for _, tc := range []struct {
			body, param, message string
			status               int
		}{
			{`{"model":"test-model",` + msgs + `,"top_logprobs":2}`, "top_logprobs", "when using `top_logprobs`, `logprobs` must be set to true.", 400},
			{`{"model":"test-model",` + msgs + `,"logprobs":true,"top_logprobs":-5}`, "top_logprobs", "`top_logprobs` must be a positive value or -1.", 400},
			{`{"model":"test-model",` + msgs + `,"prompt_logprobs":1,"stream":true}`, "prompt_logprobs", "`prompt_logprobs` are not available when `stream=True`.", 400},
			{`{"model":"test-model",` + msgs + `,"logprob_token_ids":[]}`, "logprob_token_ids", "`logprob_token_ids` must not be an empty list.", 400},
			{`{"model":"test-model",` + msgs + `,"continue_final_message":true}`, "", "Cannot set both `continue_final_message` and `add_generation_prompt` to True.", 400},
			{`{"model":"test-model",` + msgs + `,"structured_outputs":{"json":{},"choice":["a"]}}`, "structured_outputs", "You can only use one kind of constraints for structured outputs ('json', 'regex' or 'choice').", 400},
			{`{"model":"test-model",` + msgs + `,"response_format":{"type":"json_object"},"structured_outputs":{"regex":"a"}}`, "structured_outputs", "You can only use one kind of structured outputs constraint but multiple are specified: {'json_object', 'regex'}", 400},
			{`{"model":"test-model",` + msgs + `,"response_format":{"type":"json_schema"}}`, "response_format", "When response_format type is 'json_schema', the 'json_schema' field must be provided.", 400},
			{`{"model":"test-model",` + msgs + `,"stream_options":{"include_usage":true}}`, "stream_options", "Stream options can only be defined when `stream=True`.", 400},
			{`{"model":"test-model",` + msgs + `,"tools":[]}`, "tools", "`tools` must not be an empty array. Either provide at least one tool or omit the field entirely.", 400},
			{`{"model":"test-model",` + msgs + `,"tool_choice":"required"}`, "tool_choice", "When using `tool_choice`, `tools` must be set.", 400},
			{`{"model":"test-model",` + msgs + `,"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":{"type":"function","function":{"name":"g"}}}`, "tool_choice", "The tool specified in `tool_choice` does not match any of the specified `tools`", 400},
			{`{"model":"test-model",` + msgs + `,"n":0}`, "n", "n must be at least 1, got 0.", 400},
			{`{"model":"test-model",` + msgs + `,"n":3,"temperature":0}`, "n", "n must be 1 when using greedy sampling, got 3.", 400},
			{`{"model":"test-model",` + msgs + `,"truncate_prompt_tokens":-2}`, "truncate_prompt_tokens", "Input should be greater than or equal to -1", 400},
			{`{"model":"test-model",` + msgs + `,"seed":9223372036854775808}`, "seed", "Input should be between -9223372036854775808 and 9223372036854775807", 400},
			{`{"model":"test-model",` + msgs + `,"logits_processors":[{"args":[]}]}`, "logits_processors.0.qualname", "Field required", 400},
			{`{"model":"test-model",` + msgs + `,"priority":1}`, "priority", "Got priority 1 but Priority scheduling is not enabled.", 400},
			{`{"model":"test-model",` + msgs + `,"cache_salt":""}`, "cache_salt", "Parameter 'cache_salt' must be a non-empty string if provided.", 400},
			{`{"model":"test-model",` + msgs + `,"logit_bias":{"40000":5}}`, "logit_bias", "token_id(s) [40000] in logit_bias contain out-of-vocab token ids. Vocabulary size: 32000", 400},
			{`{"model":"test-model",` + msgs + `,"max_tokens":5000}`, "max_tokens", "This model's maximum context length is 4096 tokens", 400},
			{`{"model":"no-such-model",` + msgs + `}`, "model", "The model `no-such-model` does not exist.", 404},
		} {
			_, err := g.client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{}, option.WithRequestBody("application/json", []byte(tc.body)))
			var apiErr *openai.Error
			if !errors.As(err, &apiErr) {
				t.Errorf("%s: want an API error, got %v", tc.body, err)
				continue
			}
			// The SDK unwraps vLLM's {"error": {...}} envelope.
			var body struct {
				Message string  `json:"message"`
				Type    string  `json:"type"`
				Param   *string `json:"param"`
				Code    int     `json:"code"`
			}
			_ = json.Unmarshal([]byte(apiErr.RawJSON()), &body)
			param := ""
			if body.Param != nil {
				param = *body.Param
			}
			if apiErr.StatusCode != tc.status || body.Code != tc.status || param != tc.param || !strings.Contains(body.Message, tc.message) || body.Type == "" {
				t.Errorf("%s:\n got %d %s\nwant %d param %q message %q", tc.body, apiErr.StatusCode, apiErr.RawJSON(), tc.status, tc.param, tc.message)
			}
		}
		bad := openai.NewClient(option.WithBaseURL(g.srv.URL+"/v1/"), option.WithAPIKey("wf_bad"), option.WithMaxRetries(0))
		_, err := bad.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "test-model", Messages: userMessage("hi")})
		var apiErr *openai.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != 401 || apiErr.Message == "" {
			t.Errorf("bad key: %v", err)
		}
	})

	t.Run("fallback on upstream 500", func(t *testing.T) {
		res, err := g.client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "flaky", Messages: userMessage("hi")})
		if err != nil {
			t.Fatal(err)
		}
		if g.failedHits.Load() == 0 || res.Choices[0].Message.Content != "Hello from the model" {
			t.Fatalf("failing upstream hit %d times, answer %s", g.failedHits.Load(), res.RawJSON())
		}
	})

	t.Run("client disconnect mid-stream", func(t *testing.T) {
		sctx, cancel := context.WithCancel(ctx)
		stream := g.client.Chat.Completions.NewStreaming(sctx, openai.ChatCompletionNewParams{Model: "slow", Messages: userMessage("hi")})
		if !stream.Next() {
			t.Fatalf("no first chunk: %v", stream.Err())
		}
		cancel()
		_ = stream.Close()
		select {
		case <-g.model.Cancelled:
		case <-time.After(10 * time.Second):
			t.Fatal("the upstream request was not cancelled")
		}
	})

	t.Run("usage in /calls/usage", func(t *testing.T) {
		var plain, streamed *http.Response
		_, err := g.client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "test-model", Messages: userMessage("hi"), N: openai.Int(2)},
			option.WithProject("admin/usage-project"), option.WithResponseInto(&plain))
		if err != nil {
			t.Fatal(err)
		}
		stream := g.client.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{
			Model: "test-model", Messages: userMessage("hi"), StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
		}, option.WithProject("admin/usage-project"), option.WithResponseInto(&streamed))
		for stream.Next() {
		}
		if err := stream.Err(); err != nil {
			t.Fatal(err)
		}
		want := map[string]int64{ // call id → total tokens
			plain.Header.Get("Weft-Call-Id"):    modelserver.PromptTokens + 8,
			streamed.Header.Get("Weft-Call-Id"): modelserver.PromptTokens + 4,
		}
		ids, _ := json.Marshal([]string{plain.Header.Get("Weft-Call-Id"), streamed.Header.Get("Weft-Call-Id")})
		// Calls are written in the background: poll until both are there.
		deadline := time.Now().Add(30 * time.Second)
		for {
			var usage struct {
				CallUsage map[string]map[string]struct {
					Requests    int64 `json:"requests"`
					TotalTokens int64 `json:"total_tokens"`
				} `json:"call_usage"`
			}
			g.weave().Call(t, http.MethodPost, "/calls/usage", fmt.Sprintf(`{"project_id":"admin/usage-project","call_ids":%s}`, ids), &usage)
			found := 0
			for id, total := range want {
				if u, ok := usage.CallUsage[id]["test-model"]; ok && u.TotalTokens == total && u.Requests == 1 {
					found++
				}
			}
			if found == len(want) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("usage %+v, want totals %v", usage.CallUsage, want)
			}
			time.Sleep(50 * time.Millisecond)
		}
	})

	t.Run("image create", func(t *testing.T) {
		var out struct {
			Response struct {
				Model string `json:"model"`
				Data  []struct {
					RevisedPrompt string `json:"revised_prompt"`
					Content       struct {
						Files    map[string]string `json:"files"`
						Mimetype string            `json:"mimetype"`
					} `json:"content"`
				} `json:"data"`
				Usage map[string]float64 `json:"usage"`
				Error string             `json:"error"`
			} `json:"response"`
			TraceCallID *string `json:"trace_call_id"`
		}
		g.weave().Call(t, http.MethodPost, "/image/create", `{"project_id":"admin/images","inputs":{"model":"test-model","prompt":"a lighthouse","n":1},"track_llm_call":true}`, &out)
		if out.Response.Model != "test-model" || len(out.Response.Data) != 1 || out.TraceCallID == nil || out.Response.Usage["total_tokens"] != 105 {
			t.Fatalf("got %+v", out)
		}
		digest := out.Response.Data[0].Content.Files["image-0.png"]
		stored := g.weave().Call(t, http.MethodPost, "/file/content", fmt.Sprintf(`{"project_id":"admin/images","digest":%q}`, digest), nil)
		if string(stored) != modelserver.Image {
			t.Fatalf("stored file %q = %q", digest, stored)
		}
		// A provider refusal comes back in the body, as Weave returns it.
		out.Response.Error = ""
		g.weave().Call(t, http.MethodPost, "/image/create", `{"project_id":"admin/images","inputs":{"model":"test-model","prompt":"forbidden"}}`, &out)
		if out.Response.Error != "Your request was rejected by the safety system." {
			t.Fatalf("provider error: %+v", out.Response)
		}
	})

	t.Run("models and trailing slash", func(t *testing.T) {
		page, err := g.client.Models.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, m := range page.Data {
			ids = append(ids, m.ID)
		}
		if strings.Join(ids, ",") != "test-model,slow,flaky,embedder,flaky-embedder" {
			t.Fatalf("models %v", ids)
		}
		openAI := e2e.Client{URL: g.srv.URL, Auth: e2e.Bearer(g.srv.Key)}
		if status, _ := openAI.Post(t, "/v1/chat/completions/", `{"model":"test-model","messages":[{"role":"user","content":"hi"}]}`); status != 200 {
			t.Fatalf("trailing slash: %d", status)
		}
	})
}

// A server started without a routing file serves no models: the official
// client lists none and gets vLLM's unknown-model 404 for a completion, and a
// call without a key is refused like on every other route.
func TestNoModels(t *testing.T) {
	t.Parallel()
	for _, db := range testdb.Backends {
		t.Run(db.Name, func(t *testing.T) {
			t.Parallel()
			srv := serverproc.Start(t, serverproc.Options{DatabaseURL: db.URL(t)})
			client := openai.NewClient(option.WithBaseURL(srv.URL+"/v1/"), option.WithAPIKey(srv.Key), option.WithMaxRetries(0))
			ctx := context.Background()

			models, err := client.Models.List(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(models.Data) != 0 || models.Object != "list" {
				t.Fatalf("models: %s", models.RawJSON())
			}

			_, err = client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "llama-x", Messages: userMessage("hi")})
			var apiErr *openai.Error
			if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusNotFound || apiErr.Type != "NotFoundError" ||
				apiErr.Message != "The model `llama-x` does not exist." || apiErr.Param != "model" {
				t.Fatalf("completion: %v", err)
			}

			anonymous := openai.NewClient(option.WithBaseURL(srv.URL+"/v1/"), option.WithAPIKey("wf_not-a-key"), option.WithMaxRetries(0))
			_, err = anonymous.Models.List(ctx)
			if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusUnauthorized {
				t.Fatalf("bad key: %v", err)
			}
		})
	}
}
