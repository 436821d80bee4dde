package otel_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/integration/modelserver"
	"github.com/weftlabs/weft/internal/testdb"
)

// jsResult is the JSON line otel.mjs prints.
type jsResult struct {
	OK bool `json:"ok"`
	// ids of the manual scenarios' spans
	Root, Child, Failed struct {
		SpanID  string `json:"spanId"`
		TraceID string `json:"traceId"`
	}
	Text     string `json:"text"`
	Plain    string `json:"plain"`
	Streamed string `json:"streamed"`
	Reply    string `json:"reply"`
}

// runNode runs one scenario of js/otel.mjs against s as alice.
func runNode(t *testing.T, s *server, scenario string, env ...string) jsResult {
	t.Helper()
	js, err := filepath.Abs("../js")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(js, "node_modules", "@opentelemetry", "exporter-trace-otlp-http")); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("node packages missing (npm ci in internal/integration/js): %v", err)
		}
		t.Skipf("node packages missing (npm ci in internal/integration/js): %v", err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("node not found")
		}
		t.Skip("node not found")
	}
	cmd := exec.Command(node, "otel.mjs", scenario)
	cmd.Dir = js
	cmd.Env = append(os.Environ(), append([]string{"WEFT_URL=" + s.URL, "WEFT_KEY=" + s.aliceKey, "WEFT_ENTITY=alice"}, env...)...)
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("node otel.mjs %s: %v\n%s\n%s", scenario, err, out, stderr)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	var res jsResult
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &res); err != nil || !res.OK {
		t.Fatalf("node otel.mjs %s: %v\n%s", scenario, err, out)
	}
	return res
}

func parseTime(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// byOp groups calls by op name, each group in start order.
func byOp(calls map[string]call) map[string][]call {
	out := map[string][]call{}
	for _, c := range calls {
		out[c.OpName] = append(out[c.OpName], c)
	}
	for _, group := range out {
		slices.SortFunc(group, func(a, b call) int {
			ta, _ := time.Parse(time.RFC3339Nano, a.StartedAt)
			tb, _ := time.Parse(time.RFC3339Nano, b.StartedAt)
			if c := ta.Compare(tb); c != 0 {
				return c
			}
			return strings.Compare(a.ID, b.ID)
		})
	}
	return out
}

// one is the only call named op.
func one(t *testing.T, ops map[string][]call, op string) call {
	t.Helper()
	if len(ops[op]) != 1 {
		t.Fatalf("%d calls named %q", len(ops[op]), op)
	}
	return ops[op][0]
}

const noCosts = `"prompt_tokens_total_cost":null,"completion_tokens_total_cost":null,"cache_read_input_tokens_total_cost":null,"cache_creation_input_tokens_total_cost":null`

// The JavaScript SDK's exporters and instrumentations under Node, each
// stored call checked field by field.
func TestJavaScriptProducers(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		s := newServer(t, db, nil)
		up := modelserver.New(t)
		t.Run("exporters", func(t *testing.T) { testJSExporters(t, s) })
		t.Run("vercel", func(t *testing.T) { testVercel(t, s) })
		t.Run("vercel-legacy", func(t *testing.T) { testVercelLegacy(t, s) })
		t.Run("openai", func(t *testing.T) { testOpenAIInstrumentations(t, s, up) })
		t.Run("langchain", func(t *testing.T) { testLangChain(t, s) })
	})
}

// OTLP/JSON (hex ids) and OTLP/protobuf from the JS exporters: ids as the
// SDK made them, nesting, attribute types, events, exceptions.
func testJSExporters(t *testing.T, s *server) {
	for _, encoding := range []string{"json", "proto"} {
		res := runNode(t, s, encoding)
		calls := s.calls(t, s.aliceKey, "alice/js-"+encoding)
		if len(calls) != 3 {
			t.Fatalf("%s: %d calls", encoding, len(calls))
		}
		root, child, failed := calls[res.Root.SpanID], calls[res.Child.SpanID], calls[res.Failed.SpanID]
		for _, c := range []call{root, child, failed} {
			if c.TraceID != res.Root.TraceID || len(c.ID) != 16 || len(c.TraceID) != 32 || c.ProjectID != "alice/js-"+encoding {
				t.Fatalf("%s: ids of %+v, want trace %s", encoding, c, res.Root.TraceID)
			}
		}
		if root.OpName != "js-root" || root.ParentID != nil || str(child.ParentID) != root.ID || str(failed.ParentID) != root.ID ||
			child.OpName != "js-child" || failed.OpName != "js-fails" {
			t.Fatalf("%s: tree %+v %+v %+v", encoding, root, child, failed)
		}
		mustEqualJSON(t, "root inputs", root.Inputs, `{"q":"2+2?"}`)
		mustEqualJSON(t, "child output", child.Output, `"4"`)
		mustEqualJSON(t, "child attributes", jsonPath(t, child.Attributes, "otel_span", "attributes"),
			`{"bool":true,"float":1.5,"int":42,"list":["a","b"],"output.value":"4","str":"s"}`)
		mustEqualJSON(t, "child event", jsonPath(t, child.Attributes, "otel_span", "events", 0, "attributes"), `{"detail":"hello"}`)
		if !strings.HasPrefix(str(failed.Exception), "TypeError: js boom\n    at ") || strings.Count(str(failed.Exception), "js boom") != 1 ||
			jsonPath(t, failed.Summary, "weave", "status") != "error" || jsonPath(t, root.Summary, "weave", "status") != "success" {
			t.Fatalf("%s: failed call %+v", encoding, failed)
		}
		// The JS SDK anchors each trace's clock on its own, so only each
		// call's own order is checked.
		for _, c := range []call{root, child, failed} {
			if parseTime(t, str(c.EndedAt)).Before(parseTime(t, c.StartedAt)) {
				t.Fatalf("%s: %s ends before it starts: %s..%s", encoding, c.OpName, c.StartedAt, str(c.EndedAt))
			}
		}
	}
}

// The AI SDK's GenAI spans (invoke_agent, step, chat, execute_tool) of a
// two-step tool-calling generateText with the mock model.
func testVercel(t *testing.T, s *server) {
	res := runNode(t, s, "vercel")
	if res.Text != "Sunny in Paris." {
		t.Fatalf("text %q", res.Text)
	}
	calls := s.calls(t, s.aliceKey, "alice/vercel")
	ops := byOp(calls)
	if len(calls) != 6 || len(ops["chat mock-model"]) != 2 {
		t.Fatalf("%d calls: %v", len(calls), ops)
	}
	root := one(t, ops, "invoke_agent mock-model")
	step1, step2, tool := one(t, ops, "step 1"), one(t, ops, "step 2"), one(t, ops, "execute_tool weather")
	chat1, chat2 := ops["chat mock-model"][0], ops["chat mock-model"][1]
	if root.ParentID != nil || str(step1.ParentID) != root.ID || str(step2.ParentID) != root.ID ||
		str(chat1.ParentID) != step1.ID || str(tool.ParentID) != step1.ID || str(chat2.ParentID) != step2.ID {
		t.Fatal("tree")
	}
	if str(root.DisplayName) != "weather-fn" || str(tool.DisplayName) != "weather" || jsonPath(t, root.Summary, "usage") != nil ||
		jsonPath(t, step1.Summary, "usage") != nil || jsonPath(t, tool.Summary, "usage") != nil {
		t.Fatalf("root %+v tool %+v", root, tool)
	}
	tools := `[{"type":"function","name":"weather","description":"Current weather","inputSchema":{"$schema":"http://json-schema.org/draft-07/schema#","type":"object",
		"properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}}]`
	mustEqualJSON(t, "chat 1 inputs", chat1.Inputs, `{"model":"mock-model","tools":`+tools+`,
		"messages":[{"role":"system","content":"You are terse."},{"role":"user","content":"Weather in Paris?"}]}`)
	mustEqualJSON(t, "chat 1 output", chat1.Output, `{"object":"chat.completion","model":"mock-model-2026","choices":[{"index":0,"finish_reason":"tool_call",
		"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call-1","type":"function","function":{"name":"weather","arguments":"{\"city\":\"Paris\"}"}}]}}]}`)
	mustEqualJSON(t, "chat 2 inputs", chat2.Inputs, `{"model":"mock-model","tools":`+tools+`,
		"messages":[{"role":"system","content":"You are terse."},{"role":"user","content":"Weather in Paris?"},
		{"role":"assistant","content":null,"tool_calls":[{"id":"call-1","type":"function","function":{"name":"weather","arguments":"{\"city\":\"Paris\"}"}}]},
		{"role":"tool","tool_call_id":"call-1","content":"{\"city\":\"Paris\",\"temperature\":21}"}]}`)
	mustEqualJSON(t, "chat 2 output", chat2.Output, `{"object":"chat.completion","model":"mock-model-2026","choices":[{"index":0,"finish_reason":"stop",
		"message":{"role":"assistant","content":"Sunny in Paris."}}]}`)
	mustEqualJSON(t, "chat 1 usage", jsonPath(t, chat1.Summary, "usage"), `{"mock-model-2026":{"requests":1,"prompt_tokens":20,"completion_tokens":6,"total_tokens":26}}`)
	mustEqualJSON(t, "chat 2 usage", jsonPath(t, chat2.Summary, "usage"), `{"mock-model-2026":{"requests":1,"prompt_tokens":31,"completion_tokens":4,"total_tokens":35}}`)
	mustEqualJSON(t, "tool inputs", tool.Inputs, `{"city":"Paris"}`)
	mustEqualJSON(t, "tool output", tool.Output, `{"city":"Paris","temperature":21}`)
	if jsonPath(t, chat1.Attributes, "provider") != "mock-provider" || jsonPath(t, chat1.Attributes, "kind") != "chat" {
		t.Fatalf("chat attributes %s", chat1.Attributes)
	}
	// The agent's totals (51 in, 10 out) are its chats' and are counted once.
	mustEqualJSON(t, "roll-up", s.usage(t, s.aliceKey, "alice/vercel", root.ID)[root.ID],
		`{"mock-model-2026":{"requests":2,"prompt_tokens":51,"completion_tokens":10,"total_tokens":61,"cache_read_input_tokens":0,"cache_creation_input_tokens":0,`+noCosts+`}}`)
}

// The AI SDK's legacy ai.* spans of the same call.
func testVercelLegacy(t *testing.T, s *server) {
	runNode(t, s, "vercel-legacy")
	calls := s.calls(t, s.aliceKey, "alice/vercel-legacy")
	ops := byOp(calls)
	if len(calls) != 4 || len(ops["ai.generateText.doGenerate"]) != 2 {
		t.Fatalf("%d calls: %v", len(calls), ops)
	}
	root, tool := one(t, ops, "ai.generateText"), one(t, ops, "ai.toolCall")
	gen1, gen2 := ops["ai.generateText.doGenerate"][0], ops["ai.generateText.doGenerate"][1]
	if root.ParentID != nil || str(gen1.ParentID) != root.ID || str(gen2.ParentID) != root.ID || str(tool.ParentID) != gen1.ID {
		t.Fatal("tree")
	}
	if str(root.DisplayName) != "weather-fn" || str(tool.DisplayName) != "weather" || jsonPath(t, root.Summary, "usage") != nil {
		t.Fatalf("root %+v tool %+v", root, tool)
	}
	mustEqualJSON(t, "root inputs", root.Inputs, `{"model":"mock-model","messages":[{"role":"system","content":"You are terse."},{"role":"user","content":"Weather in Paris?"}]}`)
	mustEqualJSON(t, "root output", root.Output, `{"object":"chat.completion","model":"mock-model","choices":[{"index":0,"finish_reason":"stop",
		"message":{"role":"assistant","content":"Sunny in Paris.","tool_calls":[{"id":"call-1","type":"function","function":{"name":"weather","arguments":"{\"city\":\"Paris\"}"}}]}}]}`)
	mustEqualJSON(t, "doGenerate 1 output", gen1.Output, `{"object":"chat.completion","model":"mock-model-2026","choices":[{"index":0,"finish_reason":"tool-calls",
		"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call-1","type":"function","function":{"name":"weather","arguments":"{\"city\":\"Paris\"}"}}]}}]}`)
	mustEqualJSON(t, "doGenerate 2 messages", jsonPath(t, gen2.Inputs, "messages"), `[{"role":"system","content":"You are terse."},
		{"role":"user","content":[{"type":"text","text":"Weather in Paris?"}]},
		{"role":"assistant","content":null,"tool_calls":[{"id":"call-1","type":"function","function":{"name":"weather","arguments":"{\"city\":\"Paris\"}"}}]},
		{"role":"tool","tool_call_id":"call-1","content":"{\"city\":\"Paris\",\"temperature\":21}"}]`)
	mustEqualJSON(t, "doGenerate 2 usage", jsonPath(t, gen2.Summary, "usage"), `{"mock-model-2026":{"requests":1,"prompt_tokens":31,"completion_tokens":4,"total_tokens":35}}`)
	mustEqualJSON(t, "tool inputs", tool.Inputs, `{"city":"Paris"}`)
	mustEqualJSON(t, "tool output", tool.Output, `{"city":"Paris","temperature":21}`)
	if jsonPath(t, gen1.Attributes, "kind") != "ai.generateText.doGenerate" || jsonPath(t, gen1.Attributes, "model_parameters", "maxRetries") == nil {
		t.Fatalf("doGenerate attributes %s", gen1.Attributes)
	}
	mustEqualJSON(t, "roll-up", s.usage(t, s.aliceKey, "alice/vercel-legacy", root.ID)[root.ID],
		`{"mock-model-2026":{"requests":2,"prompt_tokens":51,"completion_tokens":10,"total_tokens":61,"cache_read_input_tokens":0,"cache_creation_input_tokens":0,`+noCosts+`}}`)
}

// The openai npm client against the test model server, instrumented by
// OpenInference and, separately, by OpenLLMetry: a completion and a
// stream each.
func testOpenAIInstrumentations(t *testing.T, s *server, up *modelserver.Server) {
	for _, tc := range []struct {
		scenario, op, kind string
		finish             string
	}{
		{"openinference", "OpenAI Chat Completions", "LLM", "stop"},
		{"openllmetry", "chat test-model", "chat", "stop"},
	} {
		res := runNode(t, s, tc.scenario, "UPSTREAM_URL="+up.URL)
		if res.Plain != "Hello from the model" || res.Streamed != "Hello from the model" {
			t.Fatalf("%s: %+v", tc.scenario, res)
		}
		calls := s.calls(t, s.aliceKey, "alice/"+tc.scenario)
		ops := byOp(calls)
		if len(calls) != 2 || len(ops[tc.op]) != 2 {
			t.Fatalf("%s: %d calls %v", tc.scenario, len(calls), ops)
		}
		var ids []string
		for _, c := range ops[tc.op] {
			ids = append(ids, c.ID)
			if c.ParentID != nil || jsonPath(t, c.Attributes, "provider") != "openai" || jsonPath(t, c.Attributes, "kind") != tc.kind {
				t.Fatalf("%s: %+v", tc.scenario, c)
			}
			mustEqualJSON(t, tc.scenario+" inputs", c.Inputs, `{"model":"test-model","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"hi"}]}`)
			mustEqualJSON(t, tc.scenario+" output", c.Output, `{"object":"chat.completion","model":"test-model","choices":[{"index":0,"finish_reason":"stop",
				"message":{"role":"assistant","content":"Hello from the model"}}]}`)
		}
		// The completion's usage is counted; the stream's, which these
		// instrumentations read only in part, counts its request.
		usage := s.usage(t, s.aliceKey, "alice/"+tc.scenario, ids...)
		var got []string
		for _, id := range ids {
			got = append(got, canon(t, usage[id]))
		}
		slices.Sort(got)
		full := canon(t, json.RawMessage(`{"test-model":{"requests":1,"prompt_tokens":7,"completion_tokens":4,"total_tokens":11,"cache_read_input_tokens":0,"cache_creation_input_tokens":0,`+noCosts+`}}`))
		if !slices.Contains(got, full) {
			t.Fatalf("%s: usage %v", tc.scenario, got)
		}
		for _, u := range got {
			if !strings.Contains(u, `"requests":1,`) {
				t.Fatalf("%s: usage %v", tc.scenario, got)
			}
		}
	}
}

// LangChain's fake chat model instrumented by OpenInference.
func testLangChain(t *testing.T, s *server) {
	res := runNode(t, s, "langchain")
	if res.Reply != "Hello from LangChain" {
		t.Fatalf("reply %q", res.Reply)
	}
	calls := s.calls(t, s.aliceKey, "alice/langchain")
	c := one(t, byOp(calls), "FakeListChatModel")
	if len(calls) != 1 || jsonPath(t, c.Attributes, "kind") != "LLM" {
		t.Fatalf("%+v", c)
	}
	mustEqualJSON(t, "inputs", c.Inputs, `{"messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"hi"}]}`)
	mustEqualJSON(t, "output", c.Output, `{"object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"Hello from LangChain"}}]}`)
	mustEqualJSON(t, "usage", jsonPath(t, c.Summary, "usage"), `{"usage":{"requests":1}}`)
}
