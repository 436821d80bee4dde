package chat_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
)

// lastChat is the chat request the model server received last.
func lastChat(t *testing.T, g *gateway) (req struct {
	Model    string `json:"model"`
	Messages []struct {
		Role       string          `json:"role"`
		Content    json.RawMessage `json:"content"`
		ToolCallID string          `json:"tool_call_id"`
		ToolCalls  []struct {
			ID string `json:"id"`
		} `json:"tool_calls"`
	} `json:"messages"`
	ResponseFormat json.RawMessage `json:"response_format"`
}) {
	t.Helper()
	raw, _ := g.model.Last.Load().([]byte)
	if err := json.Unmarshal(raw, &req); err != nil {
		t.Fatal(err)
	}
	return req
}

func roles(t *testing.T, g *gateway) string {
	var rs []string
	for _, m := range lastChat(t, g).Messages {
		rs = append(rs, m.Role)
	}
	return strings.Join(rs, " ")
}

// openai-go's Responses API against the gateway routing to a model server
// that speaks chat completions: whole and streamed (the SDK's own event
// types, in order), previous_response_id chains, function tools and their
// outputs, text.format, fallbacks, the stored responses (get, input
// items, delete) seen only from the caller's project, and 4xx for bad
// requests.
func TestResponsesGatewayWithOpenAIGo(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	ctx := context.Background()
	project := option.WithProject("admin/responses")
	client := g.client

	first, err := client.Responses.New(ctx, responses.ResponseNewParams{
		Model: "test-model", Instructions: openai.String("Be brief."),
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Hi")},
	}, project)
	if err != nil {
		t.Fatal(err)
	}
	if first.OutputText() != "Hello from the model" || first.Status != responses.ResponseStatusCompleted ||
		!strings.HasPrefix(first.ID, "resp_") || first.Usage.InputTokens == 0 || first.Usage.OutputTokens != 4 {
		t.Fatalf("first response: %s", first.RawJSON())
	}
	if r := roles(t, g); r != "system user" {
		t.Errorf("chat roles %q", r)
	}

	// The chain: the previous response's input and output come first
	// (not its instructions, which are per response).
	second, err := client.Responses.New(ctx, responses.ResponseNewParams{
		Model: "test-model", PreviousResponseID: openai.String(first.ID),
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Again")},
	}, project)
	if err != nil {
		t.Fatal(err)
	}
	if r := roles(t, g); r != "user assistant user" || second.PreviousResponseID != first.ID {
		t.Errorf("chained chat roles %q, previous %q", r, second.PreviousResponseID)
	}

	// A function tool: the model calls it; its output goes back in the
	// next response of the chain as a tool message.
	tools := []responses.ToolUnionParam{responses.ToolParamOfFunction("get_weather", map[string]any{"type": "object"}, false)}
	called, err := client.Responses.New(ctx, responses.ResponseNewParams{
		Model: "test-model", Tools: tools, PreviousResponseID: openai.String(second.ID),
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Weather in Paris?")},
	}, project)
	if err != nil {
		t.Fatal(err)
	}
	call := called.Output[len(called.Output)-1]
	if call.Type != "function_call" || call.Name != "get_weather" || call.Arguments.OfString != `{"location":"Paris"}` || call.CallID == "" {
		t.Fatalf("function call: %s", called.RawJSON())
	}
	output := responses.ResponseInputItemParamOfFunctionCallOutput("sunny")
	output.OfFunctionCallOutput.CallID = openai.String(call.CallID)
	_, err = client.Responses.New(ctx, responses.ResponseNewParams{
		Model: "test-model", PreviousResponseID: openai.String(called.ID),
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{output}},
	}, project)
	if err != nil {
		t.Fatal(err)
	}
	msgs := lastChat(t, g).Messages
	if r := roles(t, g); r != "user assistant user assistant user assistant tool" ||
		msgs[5].ToolCalls[0].ID != call.CallID || msgs[6].ToolCallID != call.CallID || string(msgs[6].Content) != `"sunny"` {
		t.Errorf("tool round trip: roles %q, %+v", r, msgs)
	}

	// text.format JSON schema is chat's response_format.
	format := responses.ResponseTextConfigParam{Format: responses.ResponseFormatTextConfigParamOfJSONSchema("city", map[string]any{"type": "object"})}
	structured, err := client.Responses.New(ctx, responses.ResponseNewParams{
		Model: "test-model", Text: format, Store: openai.Bool(false),
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("City?")},
	}, project)
	if err != nil {
		t.Fatal(err)
	}
	if structured.OutputText() != `{"city":"Paris"}` || !strings.Contains(string(lastChat(t, g).ResponseFormat), `"json_schema"`) {
		t.Errorf("structured: %s", structured.RawJSON())
	}
	if _, err := client.Responses.Get(ctx, structured.ID, responses.ResponseGetParams{}, project); statusOf(err) != 404 {
		t.Errorf("a response with store false was stored: %v", err)
	}

	// Streamed: the SDK parses every event; the order is the Responses
	// API's, and the completed response equals the whole one's output.
	stream := client.Responses.NewStreaming(ctx, responses.ResponseNewParams{
		Model: "test-model", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Hi")},
	}, project)
	var types []string
	var text strings.Builder
	var completed responses.Response
	for stream.Next() {
		ev := stream.Current()
		types = append(types, strings.TrimPrefix(ev.Type, "response."))
		switch e := ev.AsAny().(type) {
		case responses.ResponseTextDeltaEvent:
			text.WriteString(e.Delta)
		case responses.ResponseCompletedEvent:
			completed = e.Response
		}
		if int(ev.SequenceNumber) != len(types)-1 {
			t.Errorf("event %d has sequence number %d", len(types)-1, ev.SequenceNumber)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	want := "created in_progress output_item.added content_part.added output_text.delta output_text.delta output_text.delta output_text.delta " +
		"output_text.done content_part.done output_item.done completed"
	if got := strings.Join(types, " "); got != want {
		t.Errorf("events\n got %s\nwant %s", got, want)
	}
	if text.String() != "Hello from the model" || completed.OutputText() != text.String() || completed.Usage.OutputTokens != 4 {
		t.Errorf("streamed %q, completed %s", text.String(), completed.RawJSON())
	}

	// Stored: get, input items, and nothing from another project.
	got, err := client.Responses.Get(ctx, completed.ID, responses.ResponseGetParams{}, project)
	if err != nil || got.OutputText() != "Hello from the model" || got.ID != completed.ID {
		t.Fatalf("get: %v %s", err, got.RawJSON())
	}
	items, err := client.Responses.InputItems.List(ctx, second.ID, responses.InputItemListParams{}, project)
	if err != nil || len(items.Data) != 1 || items.Data[0].Role != "user" || items.Data[0].Type != "message" {
		t.Fatalf("input items: %v %+v", err, items)
	}
	other := option.WithProject("admin/elsewhere")
	if _, err := client.Responses.Get(ctx, completed.ID, responses.ResponseGetParams{}, other); statusOf(err) != 404 {
		t.Errorf("another project's get: %v", err)
	}
	if _, err := client.Responses.New(ctx, responses.ResponseNewParams{Model: "test-model", PreviousResponseID: openai.String(first.ID),
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("x")}}, other); statusOf(err) != 404 {
		t.Errorf("continuing another project's response: %v", err)
	}
	if err := client.Responses.Delete(ctx, completed.ID, other); statusOf(err) != 404 {
		t.Errorf("another project's delete: %v", err)
	}
	if err := client.Responses.Delete(ctx, completed.ID, project); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Responses.Get(ctx, completed.ID, responses.ResponseGetParams{}, project); statusOf(err) != 404 {
		t.Errorf("get after delete: %v", err)
	}

	// A route whose upstream fails falls back, as chat completions do.
	fell, err := client.Responses.New(ctx, responses.ResponseNewParams{
		Model: "flaky", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Hi")},
	}, project)
	if err != nil || fell.OutputText() != "Hello from the model" {
		t.Errorf("fallback: %v", err)
	}

	for _, bad := range []struct {
		params responses.ResponseNewParams
		status int
	}{
		{responses.ResponseNewParams{Model: "nope", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("x")}}, 404},
		{responses.ResponseNewParams{Model: "test-model"}, 400},
		{responses.ResponseNewParams{Model: "test-model", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("x")},
			Background: openai.Bool(true)}, 400},
		{responses.ResponseNewParams{Model: "test-model", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("x")},
			Tools: []responses.ToolUnionParam{{OfWebSearch: &responses.WebSearchToolParam{Type: responses.WebSearchToolTypeWebSearch}}}}, 400},
		{responses.ResponseNewParams{Model: "test-model", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("x")},
			PreviousResponseID: openai.String("resp_missing")}, 404},
	} {
		if _, err := client.Responses.New(ctx, bad.params, project); statusOf(err) != bad.status {
			t.Errorf("%+v: %v, want %d", bad.params, err, bad.status)
		}
	}
}

func statusOf(err error) int {
	var apiErr *openai.Error
	if errors.As(err, &apiErr) {
		return apiErr.StatusCode
	}
	return 0
}

// The official openai npm client's Responses API against a model weft
// serves itself (responses.mjs): whole and streamed through the SDK's own
// stream helper, stored responses, a chain, a refused hosted tool.
func TestResponsesWithOpenAINode(t *testing.T) {
	t.Parallel()
	js, err := filepath.Abs("../js")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(js, "node_modules", "openai")); err != nil {
		t.Fatalf("run `npm ci` in internal/integration/js first (scripts/test does): %v", err)
	}
	srv, _ := startLocal(t)
	cmd := exec.Command("node", "responses.mjs")
	cmd.Dir = js
	cmd.Env = append(os.Environ(), "WEFT_URL="+srv.URL, "WEFT_KEY="+srv.Key, "WEFT_MODEL="+localModel)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), `"ok":true`) {
		t.Fatalf("node responses.mjs: %v\n%s", err, out)
	}
}

// openai-go's Responses API against a model weft serves itself: greedy
// whole and streamed answers are the same text, max_output_tokens ends a
// response incomplete, and tool_choice required makes a function call
// whose arguments are in the tool's schema.
func TestLocalModelResponsesWithOpenAIGo(t *testing.T) {
	t.Parallel()
	_, client := startLocal(t)
	ctx := context.Background()
	params := responses.ResponseNewParams{
		Model: localModel, Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Hello!")},
		MaxOutputTokens: openai.Int(10), Temperature: openai.Float(0),
	}
	whole, err := client.Responses.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if whole.Status != responses.ResponseStatusIncomplete || whole.IncompleteDetails.Reason != "max_output_tokens" ||
		whole.Usage.OutputTokens != 10 || whole.OutputText() == "" {
		t.Fatalf("whole: %s", whole.RawJSON())
	}
	stream := client.Responses.NewStreaming(ctx, params)
	var last responses.ResponseStreamEventUnion
	var text strings.Builder
	for stream.Next() {
		last = stream.Current()
		if d, ok := last.AsAny().(responses.ResponseTextDeltaEvent); ok {
			text.WriteString(d.Delta)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	incomplete, ok := last.AsAny().(responses.ResponseIncompleteEvent)
	if !ok || text.String() != whole.OutputText() || incomplete.Response.OutputText() != whole.OutputText() {
		t.Fatalf("streamed %q (last event %s), whole %q", text.String(), last.Type, whole.OutputText())
	}

	weather := map[string]any{
		"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string", "maxLength": 6}},
		"required": []string{"city"}, "additionalProperties": false,
	}
	called, err := client.Responses.New(ctx, responses.ResponseNewParams{
		Model: localModel, Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Weather?")},
		Tools:           []responses.ToolUnionParam{responses.ToolParamOfFunction("get_weather", weather, true)},
		ToolChoice:      responses.ResponseNewParamsToolChoiceUnion{OfToolChoiceMode: openai.Opt(responses.ToolChoiceOptionsRequired)},
		MaxOutputTokens: openai.Int(200), Temperature: openai.Float(1),
	}, option.WithJSONSet("parallel_tool_calls", false))
	if err != nil {
		t.Fatal(err)
	}
	var args struct {
		City *string `json:"city"`
	}
	call := called.Output[len(called.Output)-1]
	if call.Type != "function_call" || call.Name != "get_weather" || json.Unmarshal([]byte(call.Arguments.OfString), &args) != nil || args.City == nil {
		t.Fatalf("required tool call: %s", called.RawJSON())
	}
}
