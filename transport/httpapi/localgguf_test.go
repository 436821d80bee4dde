package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/weftlabs/weft/chat"
	"github.com/weftlabs/weft/chat/inprocess"
	"github.com/weftlabs/weft/internal/llm/llmtest"
	"github.com/weftlabs/weft/internal/testdb"
	"github.com/weftlabs/weft/training"
)

// GGUF models over real HTTP: the tiny Qwen3 with the real Qwen3
// vocabulary written as a GGUF file (the layout of llama.cpp's converter,
// F32 weights) is served beside the same model as a Hugging Face
// directory, and every feature of the engine answers the same on both:
// sampling with logprobs, structured outputs, tool calls, reasoning, the
// prefix cache. The two differ only in file format, so the answers must be
// the same bytes but for the model's name and the request's ids.
func TestLocalGGUFServesLikeSafetensors(t *testing.T) {
	dims := llmtest.TinyQwen3
	weights := llmtest.RandomWeights(dims, 1)
	dir := llmtest.ModelDir{Dims: dims, Weights: weights, Tokenizer: llmtest.TokenizerQwen3}.Write(t)
	file := llmtest.GGUFModel{Dims: dims, Weights: weights, Tokenizer: llmtest.TokenizerQwen3}.Write(t, "tiny-qwen3")
	routing, err := chat.ParseRouting(fmt.Appendf(nil, `models:
  - {name: hf, max_model_len: 256, upstreams: [{kind: local, path: %q, threads: 1, kv_cache_bytes: 64MiB, prompt_tokens_details: true}]}
  - {name: gguf, max_model_len: 256, upstreams: [{kind: local, path: %q, threads: 1, kv_cache_bytes: 64MiB, prompt_tokens_details: true}]}
`, dir, file), nil, inprocess.Kind)
	if err != nil {
		t.Fatal(err)
	}
	gateway := openLocalGateway(t, chat.Config{Routing: routing, Logger: slog.New(slog.DiscardHandler)})
	t.Cleanup(func() { _ = gateway.Close(context.Background()) })
	s := &localServer{fixture: newFixture(t, testdb.SQLite(t), 1<<20, func(cfg *Config) { cfg.Chat = gateway })}

	tools := `"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string","maxLength":8}},"required":["city"],"additionalProperties":false}}}]`
	schema := `"response_format":{"type":"json_schema","json_schema":{"name":"r","strict":true,"schema":{"type":"object","properties":{"ok":{"type":"boolean"},"n":{"type":"integer"}},"required":["ok","n"],"additionalProperties":false}}}`
	for _, c := range []struct{ name, body string }{
		{"sampling and logprobs", `"messages":[{"role":"user","content":"Tell me a story."}],"max_tokens":12,"seed":7,"logprobs":true,"top_logprobs":3,"n":2`},
		{"greedy", `"messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"naïve café 日本語 🙂"}],"max_tokens":12,"temperature":0`},
		{"tool call", `"messages":[{"role":"user","content":"Weather in Paris?"}],` + tools + `,"tool_choice":"required","max_tokens":40,"seed":3`},
		{"structured output", `"messages":[{"role":"user","content":"Answer in JSON."}],` + schema + `,"max_tokens":40,"seed":5`},
		{"reasoning", `"messages":[{"role":"user","content":"Think first."}],"max_tokens":16,"seed":11,"chat_template_kwargs":{"enable_thinking":true}`},
		{"prompt logprobs", `"messages":[{"role":"user","content":"Hi"}],"max_tokens":2,"prompt_logprobs":1,"temperature":0`},
	} {
		t.Run(c.name, func(t *testing.T) {
			answers := map[string]string{}
			for _, model := range []string{"hf", "gguf"} {
				_, raw := s.complete(t, fmt.Sprintf(`{"model":%q,%s}`, model, c.body))
				answers[model] = comparable(t, raw)
			}
			if answers["hf"] != answers["gguf"] {
				t.Errorf("the GGUF model answers\n%s\nthe safetensors model\n%s", answers["gguf"], answers["hf"])
			}
		})
	}
	t.Run("prefix cache", func(t *testing.T) {
		body := `"messages":[{"role":"user","content":"The same long question, asked twice over, to reuse the cache."}],"max_tokens":2,"temperature":0`
		for _, model := range []string{"hf", "gguf"} {
			s.complete(t, fmt.Sprintf(`{"model":%q,%s}`, model, body))
			c, _ := s.complete(t, fmt.Sprintf(`{"model":%q,%s}`, model, body))
			if d := c.Usage.PromptTokensDetails; d == nil || d.CachedTokens == 0 {
				t.Errorf("%s: the repeated prompt reused no cached tokens: %+v", model, c.Usage)
			}
		}
	})
}

// comparable is a chat completion without the fields that name the request
// or the model.
func comparable(t *testing.T, raw []byte) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"id", "created", "model", "system_fingerprint"} {
		delete(m, k)
	}
	out, err := json.MarshalIndent(m, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "choices") {
		t.Fatalf("no choices: %s", raw)
	}
	// A tool call's id is drawn for each answer, like the answer's own.
	return regexp.MustCompile(`"chatcmpl-tool-[0-9a-f]+"`).ReplaceAllString(string(out), `"chatcmpl-tool-…"`)
}

// TestLocalGGUFTrains runs an SFT job of a few LoRA steps on a GGUF model
// served in-process, as on any other, and serves its checkpoint: the
// adapter applies on top of the GGUF weights.
func TestLocalGGUFTrains(t *testing.T) {
	lt := newLocalTrainingOn(t, llmtest.GGUFModel{Dims: llmtest.TinyQwen3, Tokenizer: llmtest.TokenizerQwen3}.Write(t, "tiny"))
	var m struct {
		ID string `json:"id"`
	}
	lt.tf.call(t, lt.aliceKey, http.MethodPost, "/v1/preview/models", map[string]any{"project": "loop", "name": "sft", "base_model": "tiny"}, &m)
	const question, answer = "What is the password?", "The password is swordfish."
	line, _ := json.Marshal(map[string]any{"messages": []any{map[string]any{"role": "user", "content": question},
		map[string]any{"role": "assistant", "content": answer}}})
	const steps = 3
	files := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		for range steps {
			_, _ = w.Write(append(line, '\n'))
		}
	}))
	defer files.Close()
	var job struct {
		ID string `json:"id"`
	}
	lt.tf.call(t, lt.aliceKey, http.MethodPost, "/v1/preview/sft-training-jobs", map[string]any{"model_id": m.ID,
		"training_data_url": files.URL + "/train.jsonl", "config": map[string]any{"batch_size": 1, "learning_rate": 0.02}}, &job)
	events := pollEvents(t, lt.tf, job.ID, time.Minute)
	if events[len(events)-1].Type != training.EventTrainingEnded || len(events) != 2+steps {
		t.Fatalf("events %+v", events)
	}
	var first, last map[string]float64
	_ = json.Unmarshal(events[1].Data, &first)
	_ = json.Unmarshal(events[len(events)-2].Data, &last)
	if !(last["loss"] < first["loss"]) {
		t.Errorf("loss %v at the first step, %v at the last", first["loss"], last["loss"])
	}
	body := fmt.Sprintf(`"messages":[{"role":"user","content":%q}],"max_tokens":4,"temperature":0,"logprobs":true`, question)
	tuned, _ := lt.complete(t, `{"model":"alice/loop/sft:step1",`+body+`}`)
	base, _ := lt.complete(t, `{"model":"tiny",`+body+`}`)
	if tuned.Choices[0].Logprobs == nil || base.Choices[0].Logprobs == nil ||
		tuned.Choices[0].Logprobs.Content[0].Logprob == base.Choices[0].Logprobs.Content[0].Logprob {
		t.Errorf("the checkpoint answers as the base model does: %+v", tuned.Choices[0])
	}
}
