package httpapi

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/weftlabs/weft/chat"
	"github.com/weftlabs/weft/chat/inprocess"
	"github.com/weftlabs/weft/internal/llm/llmtest"
	"github.com/weftlabs/weft/internal/llm/llmtest/llmcheck"
	"github.com/weftlabs/weft/internal/testdb"
)

// Structured outputs, tool calls and reasoning of local models over real
// HTTP. Tiny random-weight models with the real Qwen3 and Llama 3
// tokenizers sample at temperature 1; every output is checked by an oracle
// independent of the code under test — a JSON Schema validator library,
// Go's regexp, the list of choices — which random text would fail.

// sharedStructured serves "qwen" (tiny Qwen3, reasoning parser on, the
// Hermes tool format) and "llama" (tiny Llama 3, its JSON tool format),
// with JSON strings bounded to 8 characters and no white space between
// JSON tokens: a random model closes a string, or stops adding space,
// only by chance. "qwen-thinking" is qwen with a template whose
// generation prompt leaves a think block open, as Qwen3-Thinking-2507's
// does; "qwen2" a tiny Qwen2 with the Qwen3 tokenizer and template.
var sharedStructured sharedModels

func newStructuredServer(t *testing.T) *localServer {
	t.Helper()
	gateway := sharedStructured.get(t, func() *localGateway {
		llama := llmtest.Dims{Architecture: llmtest.Llama, VocabSize: 128256, HiddenSize: 16, IntermediateSize: 32,
			Layers: 2, Heads: 2, KVHeads: 1, HeadDim: 8, MaxPositions: 1024, RMSNormEps: 1e-5, RopeTheta: 5e5, TiedEmbedding: true}
		qwen2 := llmtest.TinyQwen3
		qwen2.Architecture = llmtest.Qwen2
		qwenDir := llmtest.ModelDir{Dims: llmtest.TinyQwen3, Tokenizer: llmtest.TokenizerQwen3}.Write(t)
		thinkingDir := llmtest.ModelDir{Dims: llmtest.TinyQwen3, Tokenizer: llmtest.TokenizerQwen3,
			Files: map[string][]byte{"chat_template.jinja": []byte(thinkingTemplate)}}.Write(t)
		qwen2Dir := llmtest.ModelDir{Dims: qwen2, Tokenizer: llmtest.TokenizerQwen3}.Write(t)
		llamaDir := llmtest.ModelDir{Dims: llama, Tokenizer: llmtest.TokenizerLlama3}.Write(t)
		options := "threads: 1, kv_cache_bytes: 64MiB, max_sequences: 8, structured_outputs: {max_string_length: 8, max_nesting: 4, max_whitespace: -1}"
		routing, err := chat.ParseRouting([]byte(fmt.Sprintf(`models:
  - name: qwen
    upstreams: [{kind: local, path: %[1]q, %[5]s}]
  - name: qwen-thinking
    upstreams: [{kind: local, path: %[2]q, %[5]s}]
  - name: qwen2
    upstreams: [{kind: local, path: %[3]q, %[5]s}]
  - name: llama
    upstreams: [{kind: local, path: %[4]q, %[5]s}]
`, qwenDir, thinkingDir, qwen2Dir, llamaDir, options)), nil, inprocess.Kind)
		if err != nil {
			t.Fatal(err)
		}
		return openLocalGateway(t, chat.Config{Routing: routing, Logger: slog.New(slog.DiscardHandler)})
	}, llmtest.TokenizerQwen3, llmtest.TokenizerLlama3)
	return &localServer{fixture: newFixture(t, testdb.SQLite(t), 1<<20, func(cfg *Config) { cfg.Chat = gateway })}
}

// thinkingTemplate renders a conversation as Qwen3-Thinking-2507's template
// does in the plain case: its generation prompt opens the think block.
const thinkingTemplate = `{%- for message in messages %}{{ '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>\n' }}{%- endfor %}
{%- if add_generation_prompt %}{{ '<|im_start|>assistant\n<think>\n' }}{%- endif %}`

// answer is one choice as a client reads it back, whole or accumulated
// from a stream.
type answer struct {
	Content          *string    `json:"content"`
	Reasoning        *string    `json:"reasoning"`
	ReasoningContent *string    `json:"reasoning_content"`
	ToolCalls        []toolCall `json:"tool_calls"`
	FinishReason     string     `json:"-"`
}

type toolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

func str(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}

// answers posts a non-streamed request and reads its choices.
func (s *localServer) answers(t *testing.T, body string) []answer {
	t.Helper()
	_, raw := s.complete(t, body)
	var c struct {
		Choices []struct {
			Message      answer `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	out := make([]answer, len(c.Choices))
	for i, ch := range c.Choices {
		out[i] = ch.Message
		out[i].FinishReason = ch.FinishReason
	}
	return out
}

// streamedAnswers posts the same request streamed and accumulates its
// chunks per choice as clients do, checking the tool-call delta rules:
// a call's first delta carries its id, type "function", name and empty
// arguments; later ones only arguments.
func (s *localServer) streamedAnswers(t *testing.T, body string, n int) []answer {
	t.Helper()
	body = strings.TrimSuffix(strings.TrimSpace(body), "}") + `,"stream":true}`
	out := make([]answer, n)
	for _, p := range s.stream(t, body) {
		if p == "[DONE]" {
			continue
		}
		var chunk struct {
			Choices []struct {
				Index int `json:"index"`
				Delta struct {
					Content          *string `json:"content"`
					Reasoning        *string `json:"reasoning"`
					ReasoningContent *string `json:"reasoning_content"`
					ToolCalls        []struct {
						Index    int     `json:"index"`
						ID       *string `json:"id"`
						Type     *string `json:"type"`
						Function struct {
							Name      *string `json:"name"`
							Arguments *string `json:"arguments"`
						} `json:"function"`
					} `json:"tool_calls"`
				} `json:"delta"`
				FinishReason *string `json:"finish_reason"`
			} `json:"choices"`
			Error json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal([]byte(p), &chunk); err != nil || chunk.Error != nil {
			t.Fatalf("chunk %s: %v", p, err)
		}
		for _, ch := range chunk.Choices {
			a := &out[ch.Index]
			appendTo := func(acc **string, s *string) {
				if s != nil {
					v := str(*acc)
					if *acc == nil {
						v = ""
					}
					v += *s
					*acc = &v
				}
			}
			appendTo(&a.Content, ch.Delta.Content)
			appendTo(&a.Reasoning, ch.Delta.Reasoning)
			appendTo(&a.ReasoningContent, ch.Delta.ReasoningContent)
			for _, tc := range ch.Delta.ToolCalls {
				if tc.ID != nil {
					if tc.Index != len(a.ToolCalls) || tc.Type == nil || *tc.Type != "function" || tc.Function.Name == nil ||
						tc.Function.Arguments == nil || *tc.Function.Arguments != "" {
						t.Fatalf("a call's first delta must carry index %d, id, type, name and empty arguments: %s", len(a.ToolCalls), p)
					}
					var c toolCall
					c.ID, c.Type, c.Function.Name = *tc.ID, *tc.Type, *tc.Function.Name
					a.ToolCalls = append(a.ToolCalls, c)
					continue
				}
				if tc.Index >= len(a.ToolCalls) || tc.Function.Name != nil || tc.Function.Arguments == nil {
					t.Fatalf("arguments before the call's opening delta: %s", p)
				}
				a.ToolCalls[tc.Index].Function.Arguments += *tc.Function.Arguments
			}
			if ch.FinishReason != nil {
				a.FinishReason = *ch.FinishReason
			}
		}
	}
	return out
}

// sameAnswers checks that streamed choices carry what the whole ones do
// (tool-call ids aside: each answer makes its own).
func sameAnswers(t *testing.T, whole, streamed []answer) {
	t.Helper()
	norm := func(a answer) string {
		if str(a.Reasoning) == "" && str(a.ReasoningContent) == "" {
			a.Reasoning, a.ReasoningContent = nil, nil // no reasoning: "" whole, no delta streamed
		}
		// Content null and "" read alike: a stream's role chunk opens
		// every choice's content with "".
		content := ""
		if a.Content != nil {
			content = *a.Content
		}
		var calls []string
		for _, c := range a.ToolCalls {
			calls = append(calls, c.Function.Name+c.Function.Arguments)
		}
		return fmt.Sprintf("content %q reasoning %q/%q calls %q finish %s", content, str(a.Reasoning), str(a.ReasoningContent), calls, a.FinishReason)
	}
	for i := range whole {
		if w, s := norm(whole[i]), norm(streamed[i]); w != s {
			t.Errorf("choice %d: whole %s; streamed %s", i, w, s)
		}
	}
}

const (
	// nestedSchema has nesting, arrays with bounds, enum, const, a
	// pattern, $defs/$ref and additionalProperties.
	nestedSchema = `{"type":"object","properties":{"user":{"type":"object","properties":{"id":{"type":"string","pattern":"^[a-z]{2}-[0-9]{3}$"},"tags":{"type":"array","items":{"type":"string","minLength":1},"minItems":1,"maxItems":3},"role":{"enum":["admin","guest"]}},"required":["id","tags","role"],"additionalProperties":false},"kind":{"const":"person"},"score":{"$ref":"#/$defs/score"}},"required":["user","kind","score"],"$defs":{"score":{"type":"integer","minimum":-5,"maximum":500}}}`
	weatherTool  = `{"type":"function","function":{"name":"get_weather","description":"The weather in a city","parameters":{"type":"object","properties":{"city":{"type":"string","minLength":1},"unit":{"enum":["celsius","fahrenheit"]}},"required":["city","unit"],"additionalProperties":false}}}`
	timeTool     = `{"type":"function","function":{"name":"get_time","parameters":{"type":"object","properties":{"zone":{"$ref":"#/$defs/zone"},"precise":{"type":"boolean"}},"required":["zone"],"$defs":{"zone":{"type":"string","pattern":"^[A-Z]{3}$"}}}}}`
	noThinking   = `"chat_template_kwargs":{"enable_thinking":false}`
)

// Every form of constraint (structured_outputs, the guided_* fields,
// response_format) yields valid output on every choice of many seeds, and
// the stream carries the same text.
func TestLocalStructuredOutputs(t *testing.T) {
	t.Parallel()
	s := newStructuredServer(t)
	nested := llmcheck.SchemaValidator(t, nestedSchema)
	anyObject := llmcheck.SchemaValidator(t, `{"type":"object"}`)
	quoted, _ := json.Marshal(nestedSchema)
	regex := `[a-z]{2,5}-\d{1,3}( [A-Z]{1,4})?`
	matches := regexp.MustCompile(`^(?:` + regex + `)$`)
	reJSON, _ := json.Marshal(regex)
	grammar := `root ::= "(" item ("," item)? ("," item)? ")"
item ::= [0-9] | "x" [a-c]`
	grammarJSON, _ := json.Marshal(grammar)
	sentence := regexp.MustCompile(`^\((?:[0-9]|x[a-c])(?:,(?:[0-9]|x[a-c])){0,2}\)$`)
	choices := []string{"yes", "no", "maybe later", "n/a"}
	choicesJSON, _ := json.Marshal(choices)
	isChoice := func(text string) error {
		if !slices.Contains(choices, text) {
			return fmt.Errorf("not one of the choices")
		}
		return nil
	}
	full := func(re *regexp.Regexp) func(string) error {
		return func(text string) error {
			if !re.MatchString(text) {
				return fmt.Errorf("does not fully match %s", re)
			}
			return nil
		}
	}
	// The first cases run many seeds on both models, whole and streamed;
	// the other spellings of a constraint (response_format, guided_*) a
	// few seeds on one model.
	both := []string{"qwen", "llama"}
	for _, tc := range []struct {
		name, fields string
		check        func(string) error
		models       []string
		n            int
		stream       bool
	}{
		{"structured_outputs.json", `"structured_outputs":{"json":` + nestedSchema + `}`, func(s string) error { return llmcheck.ValidJSON(nested, s) }, both, 6, true},
		{"structured_outputs.choice", `"structured_outputs":{"choice":` + string(choicesJSON) + `}`, isChoice, both, 6, true},
		{"structured_outputs.regex", `"structured_outputs":{"regex":` + string(reJSON) + `}`, full(matches), both, 6, true},
		{"structured_outputs.grammar", `"structured_outputs":{"grammar":` + string(grammarJSON) + `}`, full(sentence), both, 6, true},
		{"response_format json_schema", `"response_format":{"type":"json_schema","json_schema":{"name":"person","schema":` + nestedSchema + `,"strict":true}}`, func(s string) error { return llmcheck.ValidJSON(nested, s) }, []string{"qwen"}, 2, false},
		{"guided_json as a string", `"guided_json":` + string(quoted), func(s string) error { return llmcheck.ValidJSON(nested, s) }, []string{"llama"}, 2, false},
		// Generic JSON has unbounded arrays and objects: a bias on "]" and
		// "}" (ids 60 and 92 in both vocabularies) closes them soon.
		{"response_format json_object", `"response_format":{"type":"json_object"},"logit_bias":{"60":12,"92":12}`, func(s string) error { return llmcheck.ValidJSON(anyObject, s) }, []string{"llama"}, 3, false},
		{"structured_outputs.json_object", `"structured_outputs":{"json_object":true},"logit_bias":{"60":12,"92":12}`, func(s string) error { return llmcheck.ValidJSON(anyObject, s) }, []string{"llama"}, 3, true},
		{"guided_choice", `"guided_choice":` + string(choicesJSON), isChoice, []string{"qwen"}, 3, false},
		{"guided_regex", `"guided_regex":` + string(reJSON) + `,"guided_decoding_backend":"xgrammar"`, full(matches), []string{"llama"}, 3, false},
		{"guided_grammar", `"guided_grammar":` + string(grammarJSON), full(sentence), []string{"qwen"}, 3, false},
	} {
		for _, model := range tc.models {
			body := fmt.Sprintf(`{"model":%q,%s,%s,%s,"n":%d,"seed":%d,"temperature":1,"max_tokens":300}`, model, hello, noThinking, tc.fields, tc.n, len(tc.name))
			whole := s.answers(t, body)
			for i, a := range whole {
				if a.Content == nil || a.ToolCalls != nil || a.Reasoning != nil || a.FinishReason != "stop" {
					t.Fatalf("%s on %s, choice %d: %+v %q", tc.name, model, i, a, str(a.Content))
				}
				if err := tc.check(*a.Content); err != nil {
					t.Errorf("%s on %s, choice %d: %q: %v", tc.name, model, i, *a.Content, err)
				}
			}
			if tc.stream {
				sameAnswers(t, whole, s.streamedAnswers(t, body, tc.n))
			}
		}
	}
}

// tool_choice required and named constrain the output to calls whose
// arguments validate under the declared function's schema.
func TestLocalToolChoiceConstrained(t *testing.T) {
	t.Parallel()
	s := newStructuredServer(t)
	params := map[string]*jsonschema.Schema{
		"get_weather": llmcheck.SchemaValidator(t, `{"type":"object","properties":{"city":{"type":"string","minLength":1},"unit":{"enum":["celsius","fahrenheit"]}},"required":["city","unit"],"additionalProperties":false}`),
		"get_time":    llmcheck.SchemaValidator(t, `{"type":"object","properties":{"zone":{"type":"string","pattern":"^[A-Z]{3}$"},"precise":{"type":"boolean"}},"required":["zone"]}`),
	}
	tools := `"tools":[` + weatherTool + `,` + timeTool + `]`
	// The array of calls has no bound but the model's will to close it: a
	// bias on "]" (id 60 in both vocabularies) lends the random models one.
	for _, tc := range []struct {
		name, choice, parallel string
		finish                 string
		maxCalls               int
		only                   string
	}{
		{"required", `"required"`, "", "tool_calls", 1 << 10, ""},
		{"required, one call", `"required"`, `,"parallel_tool_calls":false`, "tool_calls", 1, ""},
		{"named", `{"type":"function","function":{"name":"get_time"}}`, "", "stop", 1, "get_time"},
	} {
		for _, model := range []string{"qwen", "llama"} {
			body := fmt.Sprintf(`{"model":%q,%s,%s,%s,"tool_choice":%s%s,"logit_bias":{"60":12},"n":4,"seed":2,"temperature":1,"max_tokens":400}`, model, hello, noThinking, tools, tc.choice, tc.parallel)
			whole := s.answers(t, body)
			for i, a := range whole {
				if len(a.ToolCalls) == 0 || len(a.ToolCalls) > tc.maxCalls || str(a.Content) != "" || a.FinishReason != tc.finish {
					t.Fatalf("%s on %s, choice %d: %+v %q", tc.name, model, i, a, str(a.Content))
				}
				for _, c := range a.ToolCalls {
					sch, ok := params[c.Function.Name]
					if !ok || tc.only != "" && c.Function.Name != tc.only || c.Type != "function" || !strings.HasPrefix(c.ID, "chatcmpl-tool-") {
						t.Fatalf("%s on %s, choice %d: call %+v", tc.name, model, i, c)
					}
					if err := llmcheck.ValidJSON(sch, c.Function.Arguments); err != nil {
						t.Errorf("%s on %s, choice %d: %s(%s): %v", tc.name, model, i, c.Function.Name, c.Function.Arguments, err)
					}
				}
			}
			sameAnswers(t, whole, s.streamedAnswers(t, body, 4))
		}
	}
}

// A required call cut short by max_tokens reads alike whole and streamed,
// at every length: as the reference server streams it, a call once its
// name is written and its parameters have begun, with its parameters as
// far as written, content "" and finish_reason length. (Whole, the cut
// output was content and no calls, while the stream sent the calls.)
func TestLocalToolChoiceRequiredCutShort(t *testing.T) {
	t.Parallel()
	s := newStructuredServer(t)
	tools := `"tools":[` + weatherTool + `,` + timeTool + `]`
	for _, model := range []string{"qwen", "llama"} {
		body := func(maxTokens int) string {
			return fmt.Sprintf(`{"model":%q,%s,%s,%s,"tool_choice":"required","logit_bias":{"60":12},"seed":3,"temperature":1,"max_tokens":%d}`,
				model, hello, noThinking, tools, maxTokens)
		}
		full, _ := s.complete(t, body(400))
		n := full.Usage.CompletionTokens
		if full.Choices[0].FinishReason != "tool_calls" || n < 10 {
			t.Fatalf("%s: the whole output ended %q after %d tokens", model, full.Choices[0].FinishReason, n)
		}
		t.Logf("%s: %d tokens", model, n)
		cutCalls := 0
		for maxTokens := 1; maxTokens <= n; maxTokens++ {
			whole := s.answers(t, body(maxTokens))
			sameAnswers(t, whole, s.streamedAnswers(t, body(maxTokens), 1))
			a := whole[0]
			if maxTokens < n && a.FinishReason != "length" || str(a.Content) != "" {
				t.Fatalf("%s, max_tokens %d: finish %q, content %q", model, maxTokens, a.FinishReason, str(a.Content))
			}
			if k := len(a.ToolCalls); k > 0 && !json.Valid([]byte(a.ToolCalls[k-1].Function.Arguments)) {
				cutCalls++
			}
		}
		if cutCalls == 0 {
			t.Errorf("%s: no length cut a call in its parameters", model)
		}
	}
}

// With tool_choice auto the model's own format is parsed into tool calls:
// Qwen3's <tool_call> blocks, Llama 3's JSON. A regular expression makes
// the random model write one; with tool_choice none the same text is
// content.
func TestLocalToolChoiceAuto(t *testing.T) {
	t.Parallel()
	s := newStructuredServer(t)
	tools := `"tools":[` + weatherTool + `,` + timeTool + `]`
	for _, tc := range []struct {
		model, regex string
		calls        int
	}{
		{"qwen", `<tool_call>\n\{"name": "get_weather", "arguments": \{"city": "[a-z]{1,6}", "unit": "celsius"\}\}\n</tool_call>(\n<tool_call>\n\{"name": "get_time", "arguments": \{"zone": "[A-Z]{3}"\}\}\n</tool_call>)?`, 2},
		{"llama", `\{"name": "get_weather", "parameters": \{"city": "[a-z]{1,6}", "unit": "celsius"\}\}(; \{"name": "get_time", "parameters": \{"zone": "[A-Z]{3}"\}\})?`, 2},
	} {
		re, _ := json.Marshal(tc.regex)
		body := fmt.Sprintf(`{"model":%q,%s,%s,%s,"structured_outputs":{"regex":%s},"n":4,"seed":3,"temperature":1,"max_tokens":200}`, tc.model, hello, noThinking, tools, re)
		whole := s.answers(t, body)
		for i, a := range whole {
			if len(a.ToolCalls) == 0 || len(a.ToolCalls) > tc.calls || a.Content != nil || a.FinishReason != "tool_calls" {
				t.Fatalf("%s choice %d: %+v", tc.model, i, a)
			}
			var args map[string]string
			if a.ToolCalls[0].Function.Name != "get_weather" || json.Unmarshal([]byte(a.ToolCalls[0].Function.Arguments), &args) != nil || args["unit"] != "celsius" {
				t.Errorf("%s choice %d: %+v", tc.model, i, a.ToolCalls[0])
			}
		}
		sameAnswers(t, whole, s.streamedAnswers(t, body, 4))

		one := s.answers(t, strings.Replace(body, `"n":4`, `"n":4,"parallel_tool_calls":false`, 1))
		none := s.answers(t, strings.Replace(body, `"n":4`, `"n":4,"tool_choice":"none"`, 1))
		for i := range whole {
			if len(one[i].ToolCalls) != 1 || one[i].ToolCalls[0].Function != whole[i].ToolCalls[0].Function {
				t.Errorf("%s parallel_tool_calls false, choice %d: %+v", tc.model, i, one[i])
			}
			if none[i].ToolCalls != nil || none[i].Content == nil || !regexp.MustCompile(`^(?:`+tc.regex+`)$`).MatchString(*none[i].Content) || none[i].FinishReason != "stop" {
				t.Errorf("%s tool_choice none, choice %d: %+v", tc.model, i, none[i])
			}
		}
	}
}

// Reasoning is the text of a think block — one the prompt left open, or
// one the model opened with <think> — up to </think>, and goes to
// reasoning and reasoning_content, whole and streamed alike; everything
// else is content. A model that never thought (Qwen3's template, where the
// model opens the block; a Qwen2) answers in content, a stray </think>
// included. A constraint applies to the answer after </think>, or from
// the first token when none opened; enable_thinking false leaves it all
// content, include_reasoning false drops the reasoning.
func TestLocalReasoning(t *testing.T) {
	t.Parallel()
	s := newStructuredServer(t)
	check := func(what, body string, n int, each func(i int, a answer) error) []answer {
		t.Helper()
		whole := s.answers(t, body)
		for i, a := range whole {
			if str(a.ReasoningContent) != str(a.Reasoning) || (a.Reasoning == nil) != (a.ReasoningContent == nil) {
				t.Errorf("%s, choice %d: reasoning %q and reasoning_content %q differ", what, i, str(a.Reasoning), str(a.ReasoningContent))
			}
			if err := each(i, a); err != nil {
				t.Errorf("%s, choice %d: %v: content %s, reasoning %s", what, i, err, show(a.Content), show(a.Reasoning))
			}
		}
		sameAnswers(t, whole, s.streamedAnswers(t, body, n))
		return whole
	}
	// A bias on </think> (id 151668) makes the random model write it
	// soon; one on <think> (151667) at once.
	const thinkEnd, thinkStart = `"151668":16`, `"151667":40,"151668":80`
	free := func(model, bias string) string {
		return `{"model":"` + model + `",` + hello + `,"logit_bias":{` + bias + `},"n":4,"seed":7,"temperature":1,"max_tokens":24}`
	}
	for _, model := range []string{"qwen", "qwen2"} {
		check(model+" never thinking", free(model, thinkEnd), 4, func(i int, a answer) error {
			if a.Reasoning != nil || a.Content == nil || *a.Content == "" {
				return fmt.Errorf("want content and no reasoning")
			}
			return nil
		})
	}
	strays := 0
	for _, a := range s.answers(t, free("qwen", thinkEnd)) {
		if strings.Contains(str(a.Content), "</think>") {
			strays++
		}
	}
	if strays == 0 {
		t.Error("no answer held a stray </think>: the bias did not reach the model")
	}

	choice := `"structured_outputs":{"choice":["sunny","rainy"]}`
	isChoice := func(c *string) bool { return c != nil && (*c == "sunny" || *c == "rainy") }
	constrained := func(model, bias string) string {
		return `{"model":"` + model + `",` + hello + `,` + choice + `,"logit_bias":{` + bias + `},"n":6,"seed":5,"temperature":1,"max_tokens":60}`
	}
	// A block never closed is all reasoning, cut off at max_tokens.
	reasoned := 0
	open := check("an open block", constrained("qwen-thinking", thinkEnd), 6, func(i int, a answer) error {
		switch {
		case a.FinishReason == "length" && a.Reasoning != nil && a.Content == nil:
		case a.FinishReason != "stop" || a.Reasoning == nil || !isChoice(a.Content):
			return fmt.Errorf("want reasoning, then a choice")
		case *a.Reasoning != "":
			reasoned++
		}
		return nil
	})
	if reasoned == 0 {
		t.Errorf("no choice reasoned before answering: %+v", open)
	}
	check("a block the model opened", constrained("qwen", thinkStart), 6, func(i int, a answer) error {
		if a.Reasoning == nil || !isChoice(a.Content) {
			return fmt.Errorf("want reasoning, then a choice")
		}
		return nil
	})
	check("no block opened", constrained("qwen", thinkEnd), 6, func(i int, a answer) error {
		if a.Reasoning != nil || !isChoice(a.Content) {
			return fmt.Errorf("want a choice from the first token and no reasoning")
		}
		return nil
	})

	hidden := s.answers(t, strings.Replace(constrained("qwen-thinking", thinkEnd), `"n":6`, `"n":6,"include_reasoning":false`, 1))
	for i, a := range hidden {
		if a.Reasoning != nil || a.ReasoningContent != nil || str(a.Content) != str(open[i].Content) {
			t.Errorf("include_reasoning false, choice %d: %+v", i, a)
		}
	}
	for _, model := range []string{"qwen", "qwen-thinking"} {
		off := s.answers(t, strings.Replace(constrained(model, thinkStart), `"n":6`, `"n":6,`+noThinking, 1))
		for i, a := range off {
			if a.Reasoning != nil || !isChoice(a.Content) {
				t.Errorf("%s enable_thinking false, choice %d: %+v", model, i, a)
			}
		}
	}
}

func show(s *string) string {
	if s == nil {
		return "null"
	}
	return fmt.Sprintf("%q", *s)
}

// A constraint the compiler cannot enforce, or a request combining
// constraints, is a 400 in vLLM's error shape naming what is wrong.
func TestLocalStructuredErrors(t *testing.T) {
	t.Parallel()
	s := newStructuredServer(t)
	tools := `"tools":[` + weatherTool + `]`
	for _, tc := range []struct{ fields, param, message string }{
		{`"structured_outputs":{"json":{"type":"array","uniqueItems":true}}`, "structured_outputs", `"uniqueItems"`},
		{`"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":{"type":"object","patternProperties":{"^a":{}}}}}`, "response_format", `"patternProperties"`},
		{`"guided_json":{"not":{"type":"string"}}`, "guided_json", `"not"`},
		{`"structured_outputs":{"json":{"oneOf":[{"type":"integer"},{"type":"number"}]}}`, "structured_outputs", `"oneOf"`},
		{`"structured_outputs":{"regex":"(a"}`, "structured_outputs", "regex"},
		{`"guided_json":{"type":"object"},"guided_regex":"a+"`, "guided_json", "You can only use one kind of guided decoding"},
		{`"guided_regex":"a+","structured_outputs":{"choice":["a"]}`, "structured_outputs", "multiple are specified: {'choice', 'regex'}"},
		{tools + `,"tool_choice":"required","guided_regex":"a+"`, "structured_outputs", "either use constraints for structured outputs or tools"},
		{`"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{"a":{"type":"array","uniqueItems":true}}}}}],"tool_choice":"required"`, "tools", `"uniqueItems"`},
		{`"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":{"type":"object","properties":{"a":{"$ref":"https://example.com/a.json"}}}}}`, "response_format", `"$ref"`},
	} {
		status, _, raw := s.post(t, "/v1/chat/completions", `{"model":"qwen",`+hello+`,"max_tokens":4,`+tc.fields+`}`)
		var body struct {
			Error struct {
				Message string `json:"message"`
				Type    string `json:"type"`
				Param   string `json:"param"`
				Code    int    `json:"code"`
			} `json:"error"`
		}
		if err := json.Unmarshal(raw, &body); err != nil || status != http.StatusBadRequest || body.Error.Type != "BadRequestError" ||
			body.Error.Code != 400 || body.Error.Param != tc.param || !strings.Contains(body.Error.Message, tc.message) {
			t.Errorf("%s: %d %s", tc.fields, status, raw)
		}
	}
}
