package inprocess

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/weftlabs/weft/internal/llm/llmtest"
	"github.com/weftlabs/weft/internal/llm/tokenizer"
)

// Tools of the tool-call tests: strings, an enum, a pattern, an optional
// member, and a tool taking nothing (an empty object has a gap of its own).
const (
	toolsWeatherTime = `[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string","minLength":1},"unit":{"enum":["celsius","fahrenheit"]}},"required":["city","unit"]}}},` +
		`{"type":"function","function":{"name":"get_time","parameters":{"type":"object","properties":{"zone":{"type":"string","pattern":"^[A-Z]{3}$"},"precise":{"type":"boolean"}},"required":["zone"]}}},` +
		`{"type":"function","function":{"name":"ping","parameters":{"type":"object","properties":{},"additionalProperties":false}}}]`
	// plainTemplate gives the Llama 2 tokenizer, which has none, a chat
	// template.
	plainTemplate = `{% for m in messages %}{{ m.role + ': ' + m.content + '\n' }}{% endfor %}{% if add_generation_prompt %}{{ 'assistant: ' }}{% endif %}`
)

// toolModels serves tiny random models with the real Qwen3, Llama 3 and
// Llama 2 tokenizers under the default white-space bound of JSON (8
// bytes), strings bounded as a random model closes one only by chance.
func toolModels(t *testing.T) (*served, []string) {
	t.Helper()
	tiny := func(vocab int, theta float64) llmtest.Dims {
		return llmtest.Dims{Architecture: llmtest.Llama, VocabSize: vocab, HiddenSize: 16, IntermediateSize: 32,
			Layers: 2, Heads: 2, KVHeads: 1, HeadDim: 8, MaxPositions: 1024, RMSNormEps: 1e-5, RopeTheta: theta, TiedEmbedding: true}
	}
	dirs := map[string]string{
		"qwen3":  llmtest.ModelDir{Dims: llmtest.TinyQwen3, Tokenizer: llmtest.TokenizerQwen3}.Write(t),
		"llama3": llmtest.ModelDir{Dims: tiny(128256, 5e5), Tokenizer: llmtest.TokenizerLlama3}.Write(t),
		"llama2": llmtest.ModelDir{Dims: tiny(32000, 1e4), Tokenizer: llmtest.TokenizerLlama2,
			Files: map[string][]byte{"chat_template.jinja": []byte(plainTemplate)}}.Write(t),
	}
	names := []string{"qwen3", "llama3", "llama2"}
	var routing strings.Builder
	routing.WriteString("models:\n")
	for _, name := range names {
		fmt.Fprintf(&routing, "  - name: %s\n    upstreams: [{kind: local, path: %q, threads: 1, kv_cache_bytes: 64MiB, structured_outputs: {max_string_length: 8}}]\n", name, dirs[name])
	}
	return newTestService(t, routing.String(), &memoryRecorder{}), names
}

// wholeChoice is a choice of a whole answer as a client reads it.
type wholeChoice struct {
	FinishReason string `json:"finish_reason"`
	TokenIDs     []int  `json:"token_ids"`
	Message      struct {
		Content   *string        `json:"content"`
		ToolCalls []wireToolCall `json:"tool_calls"`
	} `json:"message"`
}

func wholeChoices(t *testing.T, s *served, body string) []wholeChoice {
	t.Helper()
	rec, err := complete(t, s, body)
	if err != nil {
		t.Fatal(err)
	}
	var resp struct{ Choices []wholeChoice }
	if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil || len(resp.Choices) == 0 {
		t.Fatalf("%d %s: %v", rec.Code, rec.Body, err)
	}
	return resp.Choices
}

// longestGap is the longest run of white space between JSON tokens of
// text, strings left out.
func longestGap(text string) int {
	longest, run, inString := 0, 0, false
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case inString:
			if c == '\\' {
				i++
			} else if c == '"' {
				inString = false
			}
			continue
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			run++
			longest = max(longest, run)
			continue
		case c == '"':
			inString = true
		}
		run = 0
	}
	return longest
}

// tool_choice required and named bound the white space of the calls they
// constrain to what a chat template writes (toolCallWhitespace), whatever
// JSON in general may have: seeded runs at temperature 1 never write a
// gap past it, and every one ends by itself (at 8 bytes a gap, random
// models ran to max_tokens in the array of calls). The array has no end
// but the model's will to close it: a bias on "]" lends the random models
// one.
func TestLocalToolCallWhitespaceIsBounded(t *testing.T) {
	t.Parallel()
	s, models := toolModels(t)
	for _, model := range models {
		tok := s.server.models[model].engine.Tokenizer()
		closeArray, ok := tok.TokenToID("]")
		if !ok {
			t.Fatalf("%s: no token ]", model)
		}
		for _, tc := range []struct{ choice, finish string }{
			{`"required"`, "tool_calls"},
			{`{"type":"function","function":{"name":"get_weather"}}`, "stop"},
		} {
			for _, seed := range []int{0, 100} {
				body := fmt.Sprintf(`{"model":%q,"messages":[{"role":"user","content":"The weather in Paris?"}],"tools":%s,"tool_choice":%s,`+
					`"chat_template_kwargs":{"enable_thinking":false},"logit_bias":{"%d":8},"n":4,"seed":%d,"temperature":1,"max_tokens":300,"return_token_ids":true}`,
					model, toolsWeatherTime, tc.choice, closeArray, seed)
				for i, c := range wholeChoices(t, s, body) {
					text := tok.Decode(c.TokenIDs, tokenizer.DecodeOptions{SkipSpecialTokens: true, KeepTokenizationSpaces: true})
					if gap := longestGap(text); gap > toolCallWhitespace || c.FinishReason != tc.finish || len(c.Message.ToolCalls) == 0 {
						t.Errorf("%s, %s, seed %d, choice %d: finish %q, %d calls, a gap of %d bytes: %q",
							model, tc.choice, seed, i, c.FinishReason, len(c.Message.ToolCalls), gap, text)
					}
					for _, call := range c.Message.ToolCalls {
						if !json.Valid([]byte(call.Function.Arguments)) {
							t.Errorf("%s, seed %d, choice %d: arguments %q", model, seed, i, call.Function.Arguments)
						}
					}
				}
			}
		}
	}
}
