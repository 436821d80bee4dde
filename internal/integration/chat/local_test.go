package chat_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/weftlabs/weft/internal/integration/e2e"
	"github.com/weftlabs/weft/internal/integration/serverproc"
	"github.com/weftlabs/weft/internal/llm/llmtest"
	"github.com/weftlabs/weft/internal/testdb"
)

// localModel is the name the tiny model is served under: its folder's name.
const localModel = e2e.TinyModelName

// startLocal runs the real server with -model serving a tiny random-weight
// Qwen3 (the real Qwen3 tokenizer and chat template) and no routing file.
func startLocal(t *testing.T) (*serverproc.Server, openai.Client) {
	t.Helper()
	srv := serverproc.Start(t, serverproc.Options{DatabaseURL: testdb.SQLiteURL(t), Args: []string{"-model", e2e.TinyModel(t)}})
	return srv, openai.NewClient(option.WithBaseURL(srv.URL+"/v1/"), option.WithAPIKey(srv.Key), option.WithMaxRetries(0))
}

// openai-go against a model weft serves itself: completions whole and
// streamed (the same text for a seed), n, logprobs, stop, usage, vLLM's
// /tokenize and /detokenize, and the calls traced into the project.
func TestLocalModelWithOpenAIGo(t *testing.T) {
	t.Parallel()
	srv, client := startLocal(t)
	ctx := context.Background()
	messages := userMessage("Hello!")

	var models struct {
		Data []struct {
			ID          string `json:"id"`
			MaxModelLen int    `json:"max_model_len"`
		} `json:"data"`
	}
	e2e.Admin(srv).Call(t, http.MethodGet, "/v1/models", nil, &models)
	if len(models.Data) != 1 || models.Data[0].ID != localModel || models.Data[0].MaxModelLen != llmtest.TinyQwen3.MaxPositions {
		t.Fatalf("models %+v", models)
	}

	var whole *http.Response
	params := openai.ChatCompletionNewParams{
		Model: localModel, Messages: messages, MaxTokens: openai.Int(12), Seed: openai.Int(11), N: openai.Int(2),
		Temperature: openai.Float(1), Logprobs: openai.Bool(true), TopLogprobs: openai.Int(2),
	}
	res, err := client.Chat.Completions.New(ctx, params, option.WithProject("admin/local"), option.WithResponseInto(&whole))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Choices) != 2 || res.Usage.CompletionTokens != 24 || res.Usage.PromptTokens != 10 || res.Model != localModel {
		t.Fatalf("whole: %s", res.RawJSON())
	}
	// Thinking is on (the template's default), but the tiny Qwen3 never
	// opens a think block: its text, cut at 12 tokens, is all content.
	for _, ch := range res.Choices {
		fields := map[string]jsonRaw{}
		for k, v := range ch.Message.JSON.ExtraFields {
			fields[k] = v
		}
		if _, ok := extraString(fields, "reasoning_content"); ok || ch.Message.Content == "" ||
			len(ch.Logprobs.Content) != 12 || len(ch.Logprobs.Content[0].TopLogprobs) != 2 || ch.FinishReason != "length" {
			t.Fatalf("choice %d: %s", ch.Index, ch.RawJSON())
		}
	}

	var streamed *http.Response
	params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	stream := client.Chat.Completions.NewStreaming(ctx, params, option.WithProject("admin/local"), option.WithResponseInto(&streamed))
	acc := openai.ChatCompletionAccumulator{}
	first := true
	for stream.Next() {
		chunk := stream.Current()
		if first && (len(chunk.Choices) != 1 || chunk.Choices[0].Delta.Role != "assistant") {
			t.Fatalf("first chunk %s", chunk.RawJSON())
		}
		first = false
		acc.AddChunk(chunk)
		for _, ch := range chunk.Choices {
			if f, ok := ch.Delta.JSON.ExtraFields["reasoning_content"]; ok && f.Raw() != "null" {
				t.Fatalf("a reasoning delta from a model that never thought: %s", chunk.RawJSON())
			}
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	for i := range res.Choices {
		if acc.Choices[i].Message.Content != res.Choices[i].Message.Content || acc.Choices[i].FinishReason != "length" {
			t.Errorf("choice %d streamed %q, whole %q", i, acc.Choices[i].Message.Content, res.Choices[i].Message.Content)
		}
	}
	if acc.Usage.TotalTokens != res.Usage.TotalTokens {
		t.Errorf("streamed usage %+v, whole %+v", acc.Usage, res.Usage)
	}

	// A stop string taken from the greedy text ends it there (thinking
	// off, so that the text is content).
	noThinking := option.WithJSONSet("chat_template_kwargs", map[string]any{"enable_thinking": false})
	greedy, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: localModel, Messages: messages, MaxTokens: openai.Int(8), Temperature: openai.Float(0)}, noThinking)
	if err != nil {
		t.Fatal(err)
	}
	text := greedy.Choices[0].Message.Content
	stop := string([]rune(text)[len([]rune(text))/2:])
	stopped, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
		Model: localModel, Messages: messages, MaxTokens: openai.Int(8), Temperature: openai.Float(0),
		Stop: openai.ChatCompletionNewParamsStopUnion{OfStringArray: []string{stop}},
	}, noThinking)
	if err != nil {
		t.Fatal(err)
	}
	if want := text[:strings.Index(text, stop)]; stopped.Choices[0].Message.Content != want || stopped.Choices[0].FinishReason != "stop" {
		t.Errorf("stop %q in %q: %s", stop, text, stopped.RawJSON())
	}

	checkStructuredWithOpenAIGo(ctx, t, client)

	// /tokenize gives the completion's prompt tokens; /detokenize reads them back.
	var tokens struct {
		Count  int   `json:"count"`
		Tokens []int `json:"tokens"`
	}
	e2e.Admin(srv).Call(t, http.MethodPost, "/tokenize", map[string]any{"model": localModel, "messages": []map[string]string{{"role": "user", "content": "Hello!"}}}, &tokens)
	var detok struct{ Prompt string }
	e2e.Admin(srv).Call(t, http.MethodPost, "/detokenize", map[string]any{"model": localModel, "tokens": tokens.Tokens}, &detok)
	if tokens.Count != int(res.Usage.PromptTokens) || detok.Prompt != "<|im_start|>user\nHello!<|im_end|>\n<|im_start|>assistant\n" {
		t.Errorf("tokenize %+v, detokenize %q", tokens, detok.Prompt)
	}

	// Both completions are traced into the project with their usage.
	want := map[string]int64{whole.Header.Get("Weft-Call-Id"): res.Usage.TotalTokens, streamed.Header.Get("Weft-Call-Id"): res.Usage.TotalTokens}
	ids, _ := json.Marshal([]string{whole.Header.Get("Weft-Call-Id"), streamed.Header.Get("Weft-Call-Id")})
	deadline := time.Now().Add(30 * time.Second)
	for {
		var usage struct {
			CallUsage map[string]map[string]struct {
				Requests    int64 `json:"requests"`
				TotalTokens int64 `json:"total_tokens"`
			} `json:"call_usage"`
		}
		e2e.Admin(srv).Call(t, http.MethodPost, "/calls/usage", fmt.Sprintf(`{"project_id":"admin/local","call_ids":%s}`, ids), &usage)
		found := 0
		for id, total := range want {
			if u, ok := usage.CallUsage[id][localModel]; ok && u.TotalTokens == total && u.Requests == 1 {
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
}

// The official openai npm client, under Node, against a model weft serves
// itself.
func TestLocalModelWithOpenAINode(t *testing.T) {
	t.Parallel()
	srv, _ := startLocal(t)
	e2e.NodeScript(t, "local.mjs", "WEFT_URL="+srv.URL, "WEFT_KEY="+srv.Key, "WEFT_MODEL="+localModel)
}

// openai-go and the openai npm client against text completions of a model
// weft serves itself: a batch with n, echo and logprobs whole, the same
// request streamed (the SDKs' own types parse every chunk, and the texts
// agree for a seed), token ids and a suffix, and a 400 the SDKs read.
func TestLocalTextCompletionsWithOpenAIClients(t *testing.T) {
	t.Parallel()
	srv, client := startLocal(t)
	ctx := context.Background()
	params := openai.CompletionNewParams{
		Model: localModel, Prompt: openai.CompletionNewParamsPromptUnion{OfArrayOfStrings: []string{"Once upon", "a time"}},
		N: openai.Int(2), MaxTokens: openai.Int(6), Seed: openai.Int(5), Temperature: openai.Float(1), Echo: openai.Bool(true), Logprobs: openai.Int(1),
	}
	whole, err := client.Completions.New(ctx, params, option.WithJSONSet("ignore_eos", true))
	if err != nil {
		t.Fatal(err)
	}
	if len(whole.Choices) != 4 || whole.Object != "text_completion" || whole.Usage.CompletionTokens != 24 ||
		!strings.HasPrefix(whole.Choices[2].Text, "a time") || whole.Choices[3].Index != 3 || whole.Choices[0].Logprobs.TokenLogprobs[0] != 0 {
		t.Fatalf("whole: %s", whole.RawJSON())
	}
	stream := client.Completions.NewStreaming(ctx, params, option.WithJSONSet("ignore_eos", true))
	texts := map[int64]string{}
	for stream.Next() {
		for _, c := range stream.Current().Choices {
			texts[c.Index] += c.Text
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	for _, c := range whole.Choices {
		if texts[c.Index] != c.Text {
			t.Errorf("choice %d streamed %q, whole %q", c.Index, texts[c.Index], c.Text)
		}
	}
	_, err = client.Completions.New(ctx, openai.CompletionNewParams{Model: localModel,
		Prompt: openai.CompletionNewParamsPromptUnion{OfArrayOfTokens: []int64{1 << 30}}})
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Param != "prompt" {
		t.Errorf("a token id out of the vocabulary: %v", err)
	}

	e2e.NodeModule(t, `import OpenAI from "openai";
const client = new OpenAI({ baseURL: process.env.WEFT_URL + "/v1", apiKey: process.env.WEFT_KEY, maxRetries: 0 });
const model = process.env.WEFT_MODEL;
const whole = await client.completions.create({ model, prompt: [[9707, 11], [785]], max_tokens: 4, temperature: 0, ignore_eos: true });
if (whole.choices.length !== 2 || whole.usage.prompt_tokens !== 3 || whole.usage.completion_tokens !== 8) { console.error(JSON.stringify(whole)); process.exit(1); }
let text = "";
for await (const chunk of await client.completions.create({ model, prompt: [[9707, 11], [785]], max_tokens: 4, temperature: 0, ignore_eos: true, stream: true }))
  text += chunk.choices.filter((c) => c.index === 1).map((c) => c.text).join("");
if (text !== whole.choices[1].text) { console.error(text, JSON.stringify(whole)); process.exit(1); }
const fim = await client.completions.create({ model, prompt: "def add(a, b):\n    return ", suffix: "\n", max_tokens: 3 });
if (fim.choices.length !== 1 || fim.usage.completion_tokens < 1) { console.error(JSON.stringify(fim)); process.exit(1); }
console.log(JSON.stringify({ ok: true }));
`, "WEFT_URL="+srv.URL, "WEFT_KEY="+srv.Key, "WEFT_MODEL="+localModel)
}
