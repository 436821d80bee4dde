package otlp

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// spanIn adds a span with fresh ids to a new request under resource attrs.
func spanIn(resource map[string]any) (ptrace.Traces, ptrace.Span) {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	_ = rs.Resource().Attributes().FromRaw(resource)
	s := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	s.SetTraceID(pcommon.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
	s.SetSpanID(pcommon.SpanID{0xab, 2, 3, 4, 5, 6, 7, 8})
	s.SetName("op")
	s.SetStartTimestamp(pcommon.NewTimestampFromTime(time.Unix(100, 0)))
	s.SetEndTimestamp(pcommon.NewTimestampFromTime(time.Unix(101, 0)))
	return td, s
}

var project = map[string]any{"wandb.entity": "e", "wandb.project": "p"}

// convertOne converts a request holding one span.
func convertOne(t *testing.T, td ptrace.Traces, def string) Span {
	t.Helper()
	spans, dropped := New(Config{}).Convert(td, def)
	if len(spans) != 1 || dropped != 0 {
		t.Fatalf("%d spans, %d dropped", len(spans), dropped)
	}
	return spans[0]
}

func decode(t *testing.T, raw json.RawMessage) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	return v
}

func TestIDsTimesAndProject(t *testing.T) {
	td, s := spanIn(project)
	s.SetParentSpanID(pcommon.SpanID{9, 9, 9, 9, 9, 9, 9, 9})
	got := convertOne(t, td, "x/y")
	if got.Err != nil || got.ProjectID != "e/p" || got.Call.ID != "ab02030405060708" || got.Call.TraceID != "0102030405060708090a0b0c0d0e0f10" ||
		*got.Call.ParentID != "0909090909090909" || got.Call.OpName != "op" {
		t.Fatalf("%+v %+v", got, got.Call)
	}
	if !got.Call.StartedAt.Equal(time.Unix(100, 0)) || got.Call.StartedAt.Location() != time.UTC || !got.Call.EndedAt.Equal(time.Unix(101, 0)) {
		t.Fatalf("times %v %v", got.Call.StartedAt, got.Call.EndedAt)
	}

	for _, tc := range []struct {
		name       string
		start, end uint64
		wantStart  time.Time
		wantEnd    time.Time
	}{
		{"end before start", 200e9, 100e9, time.Unix(200, 0), time.Unix(200, 0)},
		{"no end", 200e9, 0, time.Unix(200, 0), time.Unix(200, 0)},
		{"no start", 0, 300e9, time.Unix(300, 0), time.Unix(300, 0)},
		{"beyond int64", math.MaxUint64, math.MaxUint64, time.Unix(0, math.MaxInt64), time.Unix(0, math.MaxInt64)},
	} {
		td, s := spanIn(project)
		s.SetStartTimestamp(pcommon.Timestamp(tc.start))
		s.SetEndTimestamp(pcommon.Timestamp(tc.end))
		got := convertOne(t, td, "")
		if got.Err != nil || !got.Call.StartedAt.Equal(tc.wantStart) || !got.Call.EndedAt.Equal(tc.wantEnd) {
			t.Fatalf("%s: %v, %v..%v", tc.name, got.Err, got.Call.StartedAt, got.Call.EndedAt)
		}
	}

	for _, tc := range []struct {
		name     string
		mutate   func(ptrace.Span)
		resource map[string]any
		def      string
		want     error
		project  string
	}{
		{"no span id", func(s ptrace.Span) { s.SetSpanID(pcommon.SpanID{}) }, project, "", ErrInvalidSpan, ""},
		{"no trace id", func(s ptrace.Span) { s.SetTraceID(pcommon.TraceID{}) }, project, "", ErrInvalidSpan, ""},
		{"no times", func(s ptrace.Span) { s.SetStartTimestamp(0); s.SetEndTimestamp(0) }, project, "", ErrInvalidSpan, ""},
		{"no project", func(ptrace.Span) {}, map[string]any{"service.name": "x"}, "", ErrNoProject, ""},
		{"default project", func(ptrace.Span) {}, map[string]any{"wandb.entity": "only"}, "d/q", nil, "d/q"},
		{"project with entity", func(ptrace.Span) {}, map[string]any{"wandb.project": "e2/p2"}, "d/q", nil, "e2/p2"},
	} {
		td, s := spanIn(tc.resource)
		tc.mutate(s)
		got := convertOne(t, td, tc.def)
		if !errors.Is(got.Err, tc.want) || got.ProjectID != tc.project && tc.want == nil {
			t.Fatalf("%s: %v, project %q", tc.name, got.Err, got.ProjectID)
		}
		if tc.want != nil && got.Call != nil {
			t.Fatalf("%s: a failed span has a call", tc.name)
		}
	}
}

func TestPendingSpansDropped(t *testing.T) {
	td, s := spanIn(project)
	s.Attributes().PutStr("logfire.span_type", "pending_span")
	spans, dropped := New(Config{}).Convert(td, "")
	if len(spans) != 0 || dropped != 1 {
		t.Fatalf("%d spans, %d dropped", len(spans), dropped)
	}
}

func TestValuesTruncatedAndKept(t *testing.T) {
	td, s := spanIn(project)
	a := s.Attributes()
	a.PutStr("input.value", strings.Repeat("é", 10)) // 20 bytes
	a.PutEmptyBytes("blob").FromRaw([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	a.PutDouble("nan", math.NaN())
	a.PutDouble("inf", math.Inf(1))
	a.PutStr("bad utf8", "a\xffb")
	spans, _ := New(Config{MaxValueBytes: 7}).Convert(td, "")
	got := spans[0]
	if got.Err != nil {
		t.Fatal(got.Err)
	}
	inputs := decode(t, got.Call.Inputs).(map[string]any)
	if inputs["input"] != "ééé"+TruncationMarker+"14 bytes]" {
		t.Fatalf("truncated input %q", inputs["input"])
	}
	attrs := decode(t, got.Call.Attributes).(map[string]any)["otel_span"].(map[string]any)["attributes"].(map[string]any)
	if attrs["blob"] != "AAECAwQ"+TruncationMarker+"9 bytes]" || attrs["nan"] != "NaN" || attrs["inf"] != "+Inf" || attrs["bad utf8"] != "a\ufffdb" {
		t.Fatalf("attributes %v", attrs)
	}
	if !utf8.Valid(got.Call.Attributes) {
		t.Fatal("invalid UTF-8 stored")
	}
}

func TestOpName(t *testing.T) {
	long := strings.Repeat("ж", 200)
	a, b := opName(long), opName(long+"x")
	if utf8.RuneCountInString(a) != maxOpName || a == b || !strings.HasPrefix(a, strings.Repeat("ж", 100)) {
		t.Fatalf("%q %q", a, b)
	}
	if opName("") != unnamedSpan || opName("short") != "short" {
		t.Fatal("short names")
	}
}

func TestModelRequests(t *testing.T) {
	for _, tc := range []struct {
		name  string
		attrs map[string]any
		want  bool
	}{
		{"openinference LLM", map[string]any{"openinference.span.kind": "LLM"}, true},
		{"openinference chain", map[string]any{"openinference.span.kind": "CHAIN", "llm.token_count.prompt": 3, "llm.model_name": "m"}, false},
		{"ai doGenerate", map[string]any{"ai.operationId": "ai.generateText.doGenerate", "gen_ai.operation.name": "invoke_agent"}, true},
		{"ai doStream", map[string]any{"ai.operationId": "ai.streamText.doStream"}, true},
		{"ai generateText", map[string]any{"ai.operationId": "ai.generateText", "ai.usage.inputTokens": 3}, false},
		{"genai chat", map[string]any{"gen_ai.operation.name": "chat"}, true},
		{"genai agent", map[string]any{"gen_ai.operation.name": "invoke_agent", "gen_ai.usage.input_tokens": 3}, false},
		{"openllmetry chat", map[string]any{"llm.request.type": "chat"}, true},
		{"traceloop task", map[string]any{"traceloop.span.kind": "task", "gen_ai.usage.input_tokens": 3, "gen_ai.request.model": "m"}, false},
		{"no convention, model and tokens", map[string]any{"gen_ai.usage.input_tokens": 3, "gen_ai.request.model": "m"}, true},
		{"no convention, an agent", map[string]any{"gen_ai.usage.input_tokens": 3, "gen_ai.request.model": "m", "gen_ai.agent.name": "a"}, false},
		{"no convention, no tokens", map[string]any{"gen_ai.request.model": "m"}, false},
	} {
		if got := isModelRequest(attrs(tc.attrs), "x"); got != tc.want {
			t.Fatalf("%s: %v", tc.name, got)
		}
	}
}

func TestUsageCounters(t *testing.T) {
	td, s := spanIn(project)
	_ = s.Attributes().FromRaw(map[string]any{
		"ai.operationId": "ai.streamText.doStream", "ai.model.id": "m-1",
		"ai.usage.inputTokens": "12", "ai.usage.outputTokens": 5.0, "ai.usage.cachedInputTokens": 4,
		"ai.usage.reasoningTokens": 2,
	})
	got := convertOne(t, td, "")
	want := `{"usage":{"m-1":{"cache_read_input_tokens":4,"completion_tokens":5,"prompt_tokens":12,"reasoning_tokens":2,"requests":1,"total_tokens":17}}}`
	if string(got.Call.Summary) != want {
		t.Fatalf("summary %s", got.Call.Summary)
	}
}

func TestExceptions(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(ptrace.Span)
		want   *string
	}{
		{"none", func(ptrace.Span) {}, nil},
		{"event without error status", func(s ptrace.Span) {
			e := s.Events().AppendEmpty()
			e.SetName("exception")
			e.Attributes().PutStr("exception.type", "ValueError")
			e.Attributes().PutStr("exception.message", "bad")
		}, ptr("ValueError: bad")},
		{"python stack", func(s ptrace.Span) {
			e := s.Events().AppendEmpty()
			e.SetName("exception")
			e.Attributes().PutStr("exception.type", "ValueError")
			e.Attributes().PutStr("exception.message", "bad")
			e.Attributes().PutStr("exception.stacktrace", "Traceback (most recent call last):\n  File \"x.py\"\nValueError: bad")
		}, ptr("ValueError: bad\nTraceback (most recent call last):\n  File \"x.py\"\nValueError: bad")},
		{"status message", func(s ptrace.Span) { s.Status().SetCode(ptrace.StatusCodeError); s.Status().SetMessage("down") }, ptr("down")},
		{"error.type", func(s ptrace.Span) {
			s.Status().SetCode(ptrace.StatusCodeError)
			s.Attributes().PutStr("error.type", "timeout")
		}, ptr("timeout")},
		{"bare error", func(s ptrace.Span) { s.Status().SetCode(ptrace.StatusCodeError) }, ptr("error")},
	} {
		td, s := spanIn(project)
		tc.mutate(s)
		got := convertOne(t, td, "").Call.Exception
		if (got == nil) != (tc.want == nil) || got != nil && *got != *tc.want {
			t.Fatalf("%s: %v", tc.name, got)
		}
	}
}

func ptr(s string) *string { return &s }

func TestThreadsAndTurns(t *testing.T) {
	td, s := spanIn(project)
	s.Attributes().PutStr("wandb.thread_id", "t-1")
	s.Attributes().PutBool("wandb.is_turn", true)
	got := convertOne(t, td, "")
	if *got.Call.ThreadID != "t-1" || *got.Call.TurnID != got.Call.ID {
		t.Fatalf("%v %v", got.Call.ThreadID, got.Call.TurnID)
	}
}

// Flattened messages with tool calls and non-text parts, as OpenInference
// and OpenLLMetry write them.
func TestFlattenedMessages(t *testing.T) {
	td, s := spanIn(project)
	_ = s.Attributes().FromRaw(map[string]any{
		"openinference.span.kind":                                                 "LLM",
		"llm.input_messages.0.message.role":                                       "user",
		"llm.input_messages.0.message.contents.0.message_content.type":            "text",
		"llm.input_messages.0.message.contents.0.message_content.text":            "what is this?",
		"llm.input_messages.0.message.contents.1.message_content.type":            "image",
		"llm.input_messages.0.message.contents.1.message_content.image.image.url": "https://x/y.png",
		"llm.input_messages.10.message.role":                                      "tool",
		"llm.input_messages.10.message.content":                                   "42",
		"llm.input_messages.10.message.tool_call_id":                              "c1",
		"llm.input_messages.2.message.role":                                       "assistant",
		"llm.input_messages.2.message.tool_calls.0.tool_call.id":                  "c1",
		"llm.input_messages.2.message.tool_calls.0.tool_call.function.name":       "calc",
		"llm.input_messages.2.message.tool_calls.0.tool_call.function.arguments":  `{"x":1}`,
		"llm.input_messages.3.message.role":                                       "user",
		"llm.input_messages.3.message.content":                                    "[1, 2]",
		"llm.input_messages.4.message.role":                                       "user",
		"llm.input_messages.4.message.content":                                    `[{"type":"text","text":"parts as text"}]`,
	})
	got := convertOne(t, td, "")
	want := `{"messages":[{"content":[{"text":"what is this?","type":"text"},{"image_url":{"url":"https://x/y.png"},"type":"image_url"}],"role":"user"},` +
		`{"content":null,"role":"assistant","tool_calls":[{"function":{"arguments":"{\"x\":1}","name":"calc"},"id":"c1","type":"function"}]},` +
		`{"content":"[1, 2]","role":"user"},{"content":[{"text":"parts as text","type":"text"}],"role":"user"},` +
		`{"content":"42","role":"tool","tool_call_id":"c1"}]}`
	if string(got.Call.Inputs) != want {
		t.Fatalf("inputs\n got %s\nwant %s", got.Call.Inputs, want)
	}

	td, s = spanIn(project)
	_ = s.Attributes().FromRaw(map[string]any{
		"gen_ai.completion.0.role":                   "assistant",
		"gen_ai.completion.0.finish_reason":          "tool_calls",
		"gen_ai.completion.0.tool_calls.0.id":        "c2",
		"gen_ai.completion.0.tool_calls.0.name":      "calc",
		"gen_ai.completion.0.tool_calls.0.arguments": `{"x":2}`,
	})
	got = convertOne(t, td, "")
	want = `{"choices":[{"finish_reason":"tool_calls","index":0,"message":{"content":null,"role":"assistant",` +
		`"tool_calls":[{"function":{"arguments":"{\"x\":2}","name":"calc"},"id":"c2","type":"function"}]}}],"object":"chat.completion"}`
	if string(got.Call.Output) != want {
		t.Fatalf("output\n got %s\nwant %s", got.Call.Output, want)
	}
}
