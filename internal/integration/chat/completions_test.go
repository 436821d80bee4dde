package chat_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/weftlabs/weft/internal/integration/e2e"
	"github.com/weftlabs/weft/internal/integration/modelserver"
)

// POST /v1/completions with openai-go and the openai npm client through a
// route to an upstream: whole (echo, logprobs, n, a batch of prompts,
// token ids) and streamed, forwarded with the upstream's model name,
// traced as one call (a stream assembled into one text_completion, with
// its usage), and vLLM's 400s for what it refuses (suffix, an empty
// prompt, logprobs out of range, best_of below n) and for a model that
// serves no completions.
func TestTextCompletionsWithOpenAIClients(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	ctx := context.Background()
	project := option.WithProject("admin/completions")

	var res *http.Response
	whole, err := g.client.Completions.New(ctx, openai.CompletionNewParams{
		Model: "test-model", Prompt: openai.CompletionNewParamsPromptUnion{OfString: openai.String("Say hi")},
		Echo: openai.Bool(true), Logprobs: openai.Int(2), N: openai.Int(2),
	}, project, option.WithResponseInto(&res))
	if err != nil {
		t.Fatal(err)
	}
	var forwarded struct {
		Model    string `json:"model"`
		Echo     bool   `json:"echo"`
		Logprobs int    `json:"logprobs"`
	}
	_ = json.Unmarshal(g.model.Last.Load().([]byte), &forwarded)
	if len(whole.Choices) != 2 || whole.Choices[1].Text != "Say hi"+modelserver.TextCompletion || len(whole.Choices[0].Logprobs.Tokens) != 4 ||
		whole.Usage.CompletionTokens != 8 || forwarded != (struct {
		Model    string `json:"model"`
		Echo     bool   `json:"echo"`
		Logprobs int    `json:"logprobs"`
	}{"upstream-model", true, 2}) {
		t.Fatalf("completion %s, forwarded %+v", whole.RawJSON(), forwarded)
	}
	call := g.tracedCall(t, "admin/completions", res.Header.Get("Weft-Call-Id"))
	if string(call["op_name"]) != `"completions.create"` || string(jsonPath(t, call["inputs"], "prompt")) != `"Say hi"` ||
		string(jsonPath(t, call["summary"], "usage", "test-model", "completion_tokens")) != "8" {
		t.Errorf("traced call %s", mustJSON(call))
	}

	for _, prompt := range []openai.CompletionNewParamsPromptUnion{
		{OfArrayOfStrings: []string{"a", "b"}}, {OfArrayOfTokens: []int64{1, 2, 3}}, {OfArrayOfTokenArrays: [][]int64{{1}, {2, 3}}},
	} {
		if _, err := g.client.Completions.New(ctx, openai.CompletionNewParams{Model: "test-model", Prompt: prompt}); err != nil {
			t.Errorf("prompt %+v: %v", prompt, err)
		}
	}

	var streamed *http.Response
	stream := g.client.Completions.NewStreaming(ctx, openai.CompletionNewParams{
		Model: "test-model", Prompt: openai.CompletionNewParamsPromptUnion{OfString: openai.String("Say hi")},
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}, project, option.WithResponseInto(&streamed))
	var text strings.Builder
	var last openai.Completion
	for stream.Next() {
		last = stream.Current()
		for _, c := range last.Choices {
			text.WriteString(c.Text)
		}
	}
	if err := stream.Err(); err != nil || text.String() != modelserver.TextCompletion || last.Usage.TotalTokens != modelserver.PromptTokens+4 {
		t.Fatalf("stream %q, last %s: %v", text.String(), last.RawJSON(), err)
	}
	call = g.tracedCall(t, "admin/completions", streamed.Header.Get("Weft-Call-Id"))
	if string(jsonPath(t, call["output"], "object")) != `"text_completion"` || !strings.Contains(string(call["output"]), `"text":"`+modelserver.TextCompletion+`","finish_reason":"length"`) ||
		string(jsonPath(t, call["summary"], "usage", "test-model", "total_tokens")) != "11" {
		t.Errorf("traced stream %s %s", call["output"], call["summary"])
	}

	for _, tc := range []struct {
		body, param string
		status      int
	}{
		{`{"model":"test-model","prompt":"hi","suffix":"end"}`, "suffix", 400},
		{`{"model":"test-model","prompt":[]}`, "prompt", 400},
		{`{"model":"test-model"}`, "prompt", 400},
		{`{"model":"test-model","prompt":{"a":1}}`, "prompt", 400},
		{`{"model":"test-model","prompt":"hi","logprobs":21}`, "logprobs", 400},
		{`{"model":"test-model","prompt":"hi","logprobs":-1}`, "logprobs", 400},
		{`{"model":"test-model","prompt":"hi","n":3,"best_of":2}`, "best_of", 400},
		{`{"model":"test-model","prompt":"hi","temperature":-1}`, "temperature", 400},
		{`{"model":"test-model","prompt":"hi","max_tokens":5000}`, "max_tokens", 400},
		{`{"model":"embedder","prompt":"hi"}`, "model", 400},
		{`{"model":"nope","prompt":"hi"}`, "model", 404},
	} {
		_, err := g.client.Completions.New(ctx, openai.CompletionNewParams{}, option.WithRequestBody("application/json", []byte(tc.body)))
		var apiErr *openai.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != tc.status || apiErr.Param != tc.param {
			t.Errorf("%s: %v, want %d naming %s", tc.body, err, tc.status, tc.param)
		}
	}

	e2e.NodeModule(t, `import OpenAI from "openai";
const client = new OpenAI({ baseURL: process.env.WEFT_URL + "/v1", apiKey: process.env.WEFT_KEY, maxRetries: 0 });
const whole = await client.completions.create({ model: "test-model", prompt: ["a", "b"], logprobs: 1 });
if (whole.choices.length !== 2 || whole.choices[1].text !== " Hello from the model" || whole.choices[0].logprobs.tokens.length !== 4) { console.error(JSON.stringify(whole)); process.exit(1); }
let text = "";
for await (const chunk of await client.completions.create({ model: "test-model", prompt: "Say hi", stream: true, echo: true })) text += chunk.choices.map((c) => c.text).join("");
if (text !== "Say hi Hello from the model") { console.error(text); process.exit(1); }
try {
  await client.completions.create({ model: "test-model", prompt: "hi", suffix: "end" });
  process.exit(1);
} catch (e) {
  if (e.status !== 400 || !e.message.includes("suffix")) { console.error(e); process.exit(1); }
}
console.log(JSON.stringify({ ok: true }));
`, "WEFT_URL="+g.srv.URL, "WEFT_KEY="+g.srv.Key)
}
