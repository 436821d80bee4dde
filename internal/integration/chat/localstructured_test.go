package chat_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// weatherSchema bounds what a random model may wander through: strings
// by maxLength, integers by a range.
var weatherSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"city": map[string]any{"type": "string", "maxLength": 6},
		"days": map[string]any{"type": "integer", "minimum": 1, "maximum": 7},
		"unit": map[string]any{"enum": []any{"celsius", "fahrenheit"}},
	},
	"required": []any{"city", "days", "unit"}, "additionalProperties": false,
}

func compiledSchema(t *testing.T, schema any) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	b, _ := json.Marshal(schema)
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.AddResource("schema.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("schema.json")
	if err != nil {
		t.Fatal(err)
	}
	return sch
}

func mustValidate(t *testing.T, sch *jsonschema.Schema, what, text string) {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(text))
	if err == nil {
		err = sch.Validate(inst)
	}
	if err != nil {
		t.Errorf("%s: %q: %v", what, text, err)
	}
}

// extraString reads a member openai-go keeps among a message's extra
// fields (reasoning_content); ok is false when it is absent or null.
func extraString(fields map[string]jsonRaw, key string) (string, bool) {
	f, ok := fields[key]
	if !ok || f.Raw() == "null" {
		return "", false
	}
	var s string
	return s, json.Unmarshal([]byte(f.Raw()), &s) == nil
}

type jsonRaw interface{ Raw() string }

// checkStructuredWithOpenAIGo has openai-go read back what structured
// outputs, tool calls and reasoning give on the served tiny Qwen3: a
// response_format json_schema answer that validates (a JSON Schema
// validator library checks it) for each of several seeds at temperature
// 1, a named tool's calls whole and streamed, and reasoning_content.
func checkStructuredWithOpenAIGo(ctx context.Context, t *testing.T, client openai.Client) {
	sch := compiledSchema(t, weatherSchema)
	noThinking := option.WithJSONSet("chat_template_kwargs", map[string]any{"enable_thinking": false})
	messages := userMessage("What is the weather in Paris?")
	base := openai.ChatCompletionNewParams{Model: localModel, Messages: messages, N: openai.Int(4), Seed: openai.Int(9), Temperature: openai.Float(1), MaxTokens: openai.Int(300)}

	formatted := base
	formatted.ResponseFormat = openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
		JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: "weather", Schema: weatherSchema, Strict: openai.Bool(true)},
	}}
	res, err := client.Chat.Completions.New(ctx, formatted, noThinking)
	if err != nil {
		t.Fatal(err)
	}
	for _, ch := range res.Choices {
		if ch.FinishReason != "stop" {
			t.Fatalf("json_schema choice %d: %s", ch.Index, ch.RawJSON())
		}
		mustValidate(t, sch, "response_format json_schema", ch.Message.Content)
	}

	named := base
	named.Tools = []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
		Name: "get_weather", Parameters: shared.FunctionParameters(weatherSchema),
	})}
	named.ToolChoice = openai.ChatCompletionToolChoiceOptionUnionParam{OfFunctionToolChoice: &openai.ChatCompletionNamedToolChoiceParam{
		Function: openai.ChatCompletionNamedToolChoiceFunctionParam{Name: "get_weather"},
	}}
	whole, err := client.Chat.Completions.New(ctx, named, noThinking)
	if err != nil {
		t.Fatal(err)
	}
	for _, ch := range whole.Choices {
		if len(ch.Message.ToolCalls) != 1 || ch.Message.ToolCalls[0].Function.Name != "get_weather" || !strings.HasPrefix(ch.Message.ToolCalls[0].ID, "chatcmpl-tool-") {
			t.Fatalf("named tool choice %d: %s", ch.Index, ch.RawJSON())
		}
		mustValidate(t, sch, "get_weather arguments", ch.Message.ToolCalls[0].Function.Arguments)
	}
	stream := client.Chat.Completions.NewStreaming(ctx, named, noThinking)
	acc := openai.ChatCompletionAccumulator{}
	for stream.Next() {
		acc.AddChunk(stream.Current())
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	for i, ch := range whole.Choices {
		got := acc.Choices[i].Message.ToolCalls
		if len(got) != 1 || got[0].Function.Name != "get_weather" || got[0].Function.Arguments != ch.Message.ToolCalls[0].Function.Arguments {
			t.Errorf("streamed tool calls of choice %d: %+v, whole %s", i, got, ch.RawJSON())
		}
	}

	// Thinking on (the template's default): a model that opens a think
	// block (a bias on <think>, 151667, makes its first token one; one on
	// </think>, 151668, closes it) has reasoning_content, and the answer
	// after it is constrained; one that opens none answers from its first
	// token, with no reasoning.
	for _, opens := range []bool{true, false} {
		bias := map[string]int64{"151668": 16}
		if opens {
			bias = map[string]int64{"151667": 40, "151668": 80}
		}
		reasoned, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
			Model: localModel, Messages: userMessage("Hello!"), N: openai.Int(6), Seed: openai.Int(5), Temperature: openai.Float(1), MaxTokens: openai.Int(60),
			LogitBias: bias,
		}, option.WithJSONSet("structured_outputs", map[string]any{"choice": []string{"sunny", "rainy"}}))
		if err != nil {
			t.Fatal(err)
		}
		for _, ch := range reasoned.Choices {
			fields := map[string]jsonRaw{}
			for k, v := range ch.Message.JSON.ExtraFields {
				fields[k] = v
			}
			_, thought := extraString(fields, "reasoning_content")
			if thought != opens || !slices.Contains([]string{"sunny", "rainy"}, ch.Message.Content) {
				t.Fatalf("opens a block %v, choice %d: %s", opens, ch.Index, ch.RawJSON())
			}
		}
	}
}
