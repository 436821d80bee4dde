package chat_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/weftlabs/weft/internal/integration/e2e"
	"github.com/weftlabs/weft/internal/integration/modelserver"
)

// tracedCall waits until the call id of project is stored with its end
// (tracing is asynchronous) and returns it.
func (g *gateway) tracedCall(t *testing.T, project, id string) map[string]json.RawMessage {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute) // a loaded machine's trace writer may retry
	for {
		var res struct {
			Call map[string]json.RawMessage `json:"call"`
		}
		g.weave().Call(t, http.MethodPost, "/call/read", map[string]any{"project_id": project, "id": id}, &res)
		if res.Call != nil && res.Call["ended_at"] != nil && string(res.Call["ended_at"]) != "null" {
			return res.Call
		}
		if time.Now().After(deadline) {
			t.Fatalf("call %s was not traced", id)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// projectOps are the op names of the calls of project, oldest first.
func (g *gateway) projectOps(t *testing.T, project string) []string {
	t.Helper()
	_, b := g.weave().Post(t, "/calls/stream_query", fmt.Sprintf(`{"project_id":%q,"sort_by":[{"field":"started_at","direction":"asc"}]}`, project))
	var ops []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var c struct {
			OpName string `json:"op_name"`
		}
		if line != "" && json.Unmarshal([]byte(line), &c) == nil {
			ops = append(ops, c.OpName)
		}
	}
	return ops
}

func jsonPath(t *testing.T, raw json.RawMessage, path ...string) json.RawMessage {
	t.Helper()
	for _, key := range path {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatalf("%s at %s: %v", raw, key, err)
		}
		raw = m[key]
	}
	return raw
}

// The routing file's endpoints with openai-go and the openai npm client:
// /v1/models says which APIs serve each model; an embedding model of a
// remote upstream is forwarded (the upstream's model name, retries and
// fallbacks over the routes that serve embeddings) and traced as one call
// with its inputs and usage; a model asked through an API it does not
// serve is a 400 naming that API.
func TestRoutedEndpointsWithOpenAIClients(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	ctx := context.Background()

	page, err := g.client.Models.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	endpoints := map[string][]string{}
	for _, m := range page.Data {
		var card struct {
			Endpoints []string `json:"endpoints"`
		}
		_ = json.Unmarshal([]byte(m.RawJSON()), &card)
		endpoints[m.ID] = card.Endpoints
	}
	if !slices.Equal(endpoints["test-model"], []string{"chat", "completions", "responses"}) || !slices.Equal(endpoints["embedder"], []string{"embeddings"}) {
		t.Errorf("endpoints %v", endpoints)
	}

	project := "admin/embed"
	var res *http.Response
	embedded, err := g.client.Embeddings.New(ctx, openai.EmbeddingNewParams{
		Model: "embedder", Input: openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: []string{"one two", "three"}},
		EncodingFormat: openai.EmbeddingNewParamsEncodingFormatFloat,
	}, option.WithProject(project), option.WithResponseInto(&res))
	if err != nil {
		t.Fatal(err)
	}
	var forwarded struct {
		Model string `json:"model"`
	}
	_ = json.Unmarshal(g.model.Last.Load().([]byte), &forwarded)
	if len(embedded.Data) != 2 || embedded.Usage.PromptTokens != 3 || forwarded.Model != "upstream-embedder" {
		t.Fatalf("embeddings %s, upstream model %q", embedded.RawJSON(), forwarded.Model)
	}
	for i, words := range []int{2, 1} {
		if got, want := embedded.Data[i].Embedding, modelserver.Vector(i, words); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("vector %d: %v, want %v", i, got, want)
		}
	}
	call := g.tracedCall(t, project, res.Header.Get("Weft-Call-Id"))
	if op := string(call["op_name"]); op != `"embeddings.create"` ||
		string(jsonPath(t, call["inputs"], "model")) != `"embedder"` ||
		string(jsonPath(t, call["output"], "data")) != `[{"object":"embedding","index":0,"dimensions":4},{"object":"embedding","index":1,"dimensions":4}]` ||
		string(jsonPath(t, call["summary"], "usage", "embedder", "prompt_tokens")) != "3" {
		t.Errorf("traced call: %s %s %s %s", op, call["inputs"], call["output"], call["summary"])
	}

	// The failing upstream's fallbacks: test-model serves no embeddings
	// and is passed over for embedder.
	before := g.failedHits.Load()
	if _, err := g.client.Embeddings.New(ctx, openai.EmbeddingNewParams{
		Model: "flaky-embedder", Input: openai.EmbeddingNewParamsInputUnion{OfString: openai.String("hi")},
	}); err != nil || g.failedHits.Load() == before {
		t.Fatalf("fallback: %v (failing upstream hit %d times)", err, g.failedHits.Load()-before)
	}

	// A model through an API it does not serve: 400 naming the API.
	_, err = g.client.Embeddings.New(ctx, openai.EmbeddingNewParams{Model: "test-model", Input: openai.EmbeddingNewParamsInputUnion{OfString: openai.String("hi")}})
	refused(t, err, "Embeddings API (/v1/embeddings)")
	_, err = g.client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "embedder", Messages: userMessage("hi")})
	refused(t, err, "Chat Completions API (/v1/chat/completions)")
	_, err = g.client.Responses.New(ctx, responses.ResponseNewParams{Model: "embedder", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("hi")}})
	refused(t, err, "Responses API (/v1/responses)")

	// The npm client asks for base64 and decodes it; it lists the
	// endpoints too.
	e2e.NodeModule(t, `import OpenAI from "openai";
const client = new OpenAI({ baseURL: process.env.WEFT_URL + "/v1", apiKey: process.env.WEFT_KEY, maxRetries: 0 });
const res = await client.embeddings.create({ model: "embedder", input: ["one two", "three"] });
const want = [[1, 0.5, -0.25, 2], [2, 0.5, -0.25, 1]];
if (JSON.stringify(res.data.map((d) => Array.from(d.embedding))) !== JSON.stringify(want) || res.usage.prompt_tokens !== 3) { console.error(JSON.stringify(res)); process.exit(1); }
const models = [];
for await (const m of client.models.list()) models.push(m);
if (JSON.stringify(models.find((m) => m.id === "embedder").endpoints) !== '["embeddings"]') { console.error(JSON.stringify(models)); process.exit(1); }
try {
  await client.embeddings.create({ model: "test-model", input: "hi" });
  process.exit(1);
} catch (e) {
  if (e.status !== 400 || !e.message.includes("Embeddings API")) { console.error(e); process.exit(1); }
}
console.log(JSON.stringify({ ok: true }));
`, "WEFT_URL="+g.srv.URL, "WEFT_KEY="+g.srv.Key)
}

// refused checks err is the 400 naming the API the model does not serve.
func refused(t *testing.T, err error, api string) {
	t.Helper()
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest || !strings.Contains(apiErr.Message, api) || apiErr.Param != "model" {
		t.Errorf("want a 400 naming the %s, got %v", api, err)
	}
}

// A response is traced as one call (no chat completion of its own): op
// responses.create, the request as inputs, the Response as output, its
// usage; a response continuing another is a turn of the thread of the
// chain's first response, naming the previous response and its call.
func TestResponsesTracedAsOneCall(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	ctx := context.Background()
	project := "admin/responses-traced"
	var firstRes, secondRes *http.Response
	first, err := g.client.Responses.New(ctx, responses.ResponseNewParams{
		Model: "test-model", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Hi")},
	}, option.WithProject(project), option.WithResponseInto(&firstRes))
	if err != nil {
		t.Fatal(err)
	}
	stream := g.client.Responses.NewStreaming(ctx, responses.ResponseNewParams{
		Model: "test-model", PreviousResponseID: openai.String(first.ID), Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Again")},
	}, option.WithProject(project), option.WithResponseInto(&secondRes))
	var second responses.Response
	for stream.Next() {
		if ev := stream.Current(); ev.Type == "response.completed" {
			second = ev.Response
		}
	}
	if err := stream.Err(); err != nil || second.ID == "" {
		t.Fatalf("stream: %v", err)
	}

	firstCall := g.tracedCall(t, project, firstRes.Header.Get("Weft-Call-Id"))
	secondCall := g.tracedCall(t, project, secondRes.Header.Get("Weft-Call-Id"))
	for _, c := range []struct {
		call      map[string]json.RawMessage
		id, input string
	}{{firstCall, first.ID, `"Hi"`}, {secondCall, second.ID, `"Again"`}} {
		if string(c.call["op_name"]) != `"responses.create"` || string(jsonPath(t, c.call["inputs"], "input")) != c.input ||
			string(jsonPath(t, c.call["output"], "id")) != `"`+c.id+`"` || string(jsonPath(t, c.call["output"], "status")) != `"completed"` ||
			string(c.call["thread_id"]) != `"`+first.ID+`"` || string(c.call["turn_id"]) != string(c.call["id"]) ||
			string(jsonPath(t, c.call["summary"], "usage", "test-model", "output_tokens")) != "4" {
			t.Errorf("call of %s: %s", c.id, mustJSON(c.call))
		}
	}
	if string(jsonPath(t, secondCall["attributes"], "previous_call_id")) != string(firstCall["id"]) ||
		string(jsonPath(t, secondCall["attributes"], "previous_response_id")) != `"`+first.ID+`"` ||
		string(jsonPath(t, secondCall["inputs"], "previous_response_id")) != `"`+first.ID+`"` {
		t.Errorf("the second call names no previous call: %s", secondCall["attributes"])
	}
	if ops := g.projectOps(t, project); !slices.Equal(ops, []string{"responses.create", "responses.create"}) {
		t.Errorf("calls of the project: %v", ops)
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
