package otel_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	oteltrace "go.opentelemetry.io/otel/trace"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/testdb"
)

// exporter is the real OTLP/HTTP exporter aimed at the server, without
// retries unless opts turn them on.
func exporter(t *testing.T, s *server, headers map[string]string, opts ...otlptracehttp.Option) *otlptrace.Exporter {
	t.Helper()
	opts = append([]otlptracehttp.Option{
		otlptracehttp.WithEndpointURL(s.URL + "/otel/v1/traces"),
		otlptracehttp.WithHeaders(headers),
		otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false}),
	}, opts...)
	exp, err := otlptracehttp.New(context.Background(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = exp.Shutdown(context.Background()) })
	return exp
}

func basic(key string) map[string]string {
	return map[string]string{"Authorization": "Basic " + b64("api:"+key)}
}

// projectResource names entity/project the way Weave's docs say.
func projectResource(entity, project string) *resource.Resource {
	return resource.NewSchemaless(attribute.String("wandb.entity", entity), attribute.String("wandb.project", project),
		attribute.String("service.name", "otel-test"))
}

// providerOf exports one span per request, so that children (which end
// first) arrive before their parents, in other requests.
func providerOf(exp sdktrace.SpanExporter, res *resource.Resource) *sdktrace.TracerProvider {
	return sdktrace.NewTracerProvider(sdktrace.WithResource(res),
		sdktrace.WithBatcher(exp, sdktrace.WithMaxExportBatchSize(1), sdktrace.WithBatchTimeout(time.Millisecond)))
}

var base = time.Date(2026, 3, 4, 5, 6, 7, 123456000, time.UTC)

func at(ms int) oteltrace.SpanStartEventOption {
	return oteltrace.WithTimestamp(base.Add(time.Duration(ms) * time.Millisecond))
}

func ts(ms int) string {
	return base.Add(time.Duration(ms) * time.Millisecond).Format("2006-01-02T15:04:05.000000Z")
}

// A three-level trace sent one span per request, children first, through
// protobuf, gzipped protobuf and JSON: every call keeps its span's ids,
// parent, name, times and attributes.
func TestNestedTraceOutOfOrder(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		s := newServer(t, db, nil)
		for _, tc := range []struct {
			name string
			opts []otlptracehttp.Option
		}{
			{"protobuf", nil},
			{"gzip", []otlptracehttp.Option{otlptracehttp.WithCompression(otlptracehttp.GzipCompression)}},
			{"json", []otlptracehttp.Option{otlptracehttp.WithEncoding(otlptracehttp.EncodingJSON)}},
		} {
			var requests atomic.Int64
			project := "alice/nested-" + tc.name
			exp := exporter(t, s, basic(s.aliceKey), tc.opts...)
			counting := &countingExporter{SpanExporter: exp, n: &requests}
			tp := providerOf(counting, projectResource("alice", "nested-"+tc.name))
			tr := tp.Tracer("weft-test")
			ctx, root := tr.Start(context.Background(), "pipeline", at(0),
				oteltrace.WithAttributes(attribute.String("wandb.display_name", "My pipeline"), attribute.String("input.value", `{"question":"2+2?"}`),
					attribute.String("input.mime_type", "application/json"), attribute.String("output.value", "4")))
			ctx, mid := tr.Start(ctx, "retrieve", at(10), oteltrace.WithAttributes(attribute.Int64("k", 3)))
			_, leaf := tr.Start(ctx, "embed", at(20), oteltrace.WithSpanKind(oteltrace.SpanKindClient))
			leaf.End(oteltrace.WithTimestamp(base.Add(30 * time.Millisecond)))
			mid.End(oteltrace.WithTimestamp(base.Add(5 * time.Millisecond))) // ends before it starts: clamped
			root.End(oteltrace.WithTimestamp(base.Add(100 * time.Millisecond)))
			if err := tp.ForceFlush(context.Background()); err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			if err := tp.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
			if requests.Load() != 3 {
				t.Fatalf("%s: %d export requests, want one per span", tc.name, requests.Load())
			}
			calls := s.calls(t, s.aliceKey, project)
			if len(calls) != 3 {
				t.Fatalf("%s: %d calls", tc.name, len(calls))
			}
			traceID := root.SpanContext().TraceID().String()
			for _, want := range []struct {
				span           oteltrace.Span
				parent         string
				op, start, end string
			}{
				{root, "", "pipeline", ts(0), ts(100)},
				{mid, root.SpanContext().SpanID().String(), "retrieve", ts(10), ts(10)},
				{leaf, mid.SpanContext().SpanID().String(), "embed", ts(20), ts(30)},
			} {
				id := want.span.SpanContext().SpanID().String()
				c, ok := calls[id]
				if !ok {
					t.Fatalf("%s: no call %s", tc.name, id)
				}
				if c.TraceID != traceID || c.OpName != want.op || c.StartedAt != want.start || str(c.EndedAt) != want.end ||
					(want.parent == "" && c.ParentID != nil) || (want.parent != "" && str(c.ParentID) != want.parent) || c.Exception != nil {
					t.Fatalf("%s: call %s: %+v", tc.name, want.op, c)
				}
				if got := jsonPath(t, c.Attributes, "otel_span", "name"); got != want.op {
					t.Fatalf("%s: otel_span.name %v", tc.name, got)
				}
				if got := jsonPath(t, c.Attributes, "otel_span", "resource", "attributes", "service.name"); got != "otel-test" {
					t.Fatalf("%s: resource %v", tc.name, got)
				}
				if got := jsonPath(t, c.Attributes, "otel_span", "scope", "name"); got != "weft-test" {
					t.Fatalf("%s: scope %v", tc.name, got)
				}
				if got := jsonPath(t, c.Summary, "weave", "status"); got != "success" {
					t.Fatalf("%s: status %v", tc.name, got)
				}
			}
			rootCall := calls[root.SpanContext().SpanID().String()]
			if str(rootCall.DisplayName) != "My pipeline" {
				t.Fatalf("%s: display name %v", tc.name, str(rootCall.DisplayName))
			}
			mustEqualJSON(t, "root inputs", rootCall.Inputs, `{"question":"2+2?"}`)
			mustEqualJSON(t, "root output", rootCall.Output, `"4"`)
			if got := jsonPath(t, calls[mid.SpanContext().SpanID().String()].Attributes, "otel_span", "attributes", "k"); fmt.Sprint(got) != "3" {
				t.Fatalf("%s: attribute k %v", tc.name, got)
			}
			if got := jsonPath(t, calls[leaf.SpanContext().SpanID().String()].Attributes, "otel_span", "kind"); got != "Client" {
				t.Fatalf("%s: kind %v", tc.name, got)
			}
		}
	})
}

// countingExporter counts the export requests.
type countingExporter struct {
	sdktrace.SpanExporter
	n *atomic.Int64
}

func (c *countingExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	c.n.Add(1)
	return c.SpanExporter.ExportSpans(ctx, spans)
}

// An agent span repeating its children's usage, a GenAI chat span (current
// conventions), a tool span and an older-convention chat with events: the
// messages are the SDK chat shape, and usage counts the chat once, keyed by
// its response model, with requests: 1.
func TestGenAIConventions(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		s := newServer(t, db, nil)
		exp := exporter(t, s, basic(s.aliceKey))
		tp := providerOf(exp, projectResource("alice", "genai"))
		tr := tp.Tracer("genai")
		ctx, agent := tr.Start(context.Background(), "invoke_agent weather", at(0), oteltrace.WithAttributes(
			attribute.String("gen_ai.operation.name", "invoke_agent"), attribute.String("gen_ai.agent.name", "weather"),
			attribute.String("gen_ai.request.model", "gpt-4o"), attribute.Int("gen_ai.usage.input_tokens", 130), attribute.Int("gen_ai.usage.output_tokens", 17),
			attribute.String("gen_ai.conversation.id", "conv-1")))
		_, chat := tr.Start(ctx, "chat gpt-4o", at(1), oteltrace.WithSpanKind(oteltrace.SpanKindClient), oteltrace.WithAttributes(
			attribute.String("gen_ai.operation.name", "chat"), attribute.String("gen_ai.provider.name", "openai"),
			attribute.String("gen_ai.request.model", "gpt-4o"), attribute.String("gen_ai.response.model", "gpt-4o-2024-08-06"),
			attribute.Float64("gen_ai.request.temperature", 0.5),
			attribute.Int("gen_ai.usage.input_tokens", 100), attribute.Int("gen_ai.usage.output_tokens", 12),
			attribute.Int("gen_ai.usage.cache_read.input_tokens", 40),
			attribute.String("gen_ai.system_instructions", `[{"type":"text","content":"You are terse."}]`),
			attribute.String("gen_ai.input.messages", `[{"role":"user","parts":[{"type":"text","content":"Weather in Paris?"}]}]`),
			attribute.String("gen_ai.output.messages", `[{"role":"assistant","parts":[{"type":"tool_call","id":"call_1","name":"get_weather","arguments":{"city":"Paris"}}],"finish_reason":"tool_calls"}]`)))
		chat.End(oteltrace.WithTimestamp(base.Add(50 * time.Millisecond)))
		_, tool := tr.Start(ctx, "execute_tool get_weather", at(51), oteltrace.WithAttributes(
			attribute.String("gen_ai.operation.name", "execute_tool"), attribute.String("gen_ai.tool.name", "get_weather"),
			attribute.String("gen_ai.tool.call.arguments", `{"city":"Paris"}`), attribute.String("gen_ai.tool.call.result", `{"temp_c":21}`)))
		tool.End(oteltrace.WithTimestamp(base.Add(60 * time.Millisecond)))
		// The older conventions: gen_ai.system, prompt_tokens, message events.
		_, old := tr.Start(ctx, "chat gpt-4o-mini", at(61), oteltrace.WithAttributes(
			attribute.String("gen_ai.system", "openai"), attribute.String("gen_ai.request.model", "gpt-4o-mini"),
			attribute.Int("gen_ai.usage.prompt_tokens", 30), attribute.Int("gen_ai.usage.completion_tokens", 5)))
		old.AddEvent("gen_ai.system.message", oteltrace.WithAttributes(attribute.String("content", "Be brief.")))
		old.AddEvent("gen_ai.user.message", oteltrace.WithAttributes(attribute.String("content", "It is 21°C. Summarise.")))
		old.AddEvent("gen_ai.choice", oteltrace.WithAttributes(attribute.Int("index", 0), attribute.String("finish_reason", "stop"),
			attribute.String("message", `{"role":"assistant","content":"Sunny, 21°C."}`)))
		old.End(oteltrace.WithTimestamp(base.Add(80 * time.Millisecond)))
		agent.End(oteltrace.WithTimestamp(base.Add(90 * time.Millisecond)))
		if err := tp.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		calls := s.calls(t, s.aliceKey, "alice/genai")
		if len(calls) != 4 {
			t.Fatalf("%d calls", len(calls))
		}
		a := calls[agent.SpanContext().SpanID().String()]
		c := calls[chat.SpanContext().SpanID().String()]
		tl := calls[tool.SpanContext().SpanID().String()]
		o := calls[old.SpanContext().SpanID().String()]

		mustEqualJSON(t, "chat inputs", c.Inputs, `{"model":"gpt-4o","messages":[{"role":"system","content":"You are terse."},{"role":"user","content":"Weather in Paris?"}]}`)
		mustEqualJSON(t, "chat output", c.Output, `{"object":"chat.completion","model":"gpt-4o-2024-08-06","choices":[{"index":0,"finish_reason":"tool_calls",
			"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]}}]}`)
		mustEqualJSON(t, "chat usage", jsonPath(t, c.Summary, "usage"), `{"gpt-4o-2024-08-06":{"requests":1,"prompt_tokens":100,"completion_tokens":12,"total_tokens":112,"cache_read_input_tokens":40}}`)
		if jsonPath(t, c.Attributes, "provider") != "openai" || jsonPath(t, c.Attributes, "kind") != "chat" ||
			fmt.Sprint(jsonPath(t, c.Attributes, "model_parameters", "temperature")) != "0.5" {
			t.Fatalf("chat attributes: %s", c.Attributes)
		}
		if str(c.ThreadID) != "<nil>" || str(a.ThreadID) != "conv-1" {
			t.Fatalf("thread ids: chat %s agent %s", str(c.ThreadID), str(a.ThreadID))
		}
		mustEqualJSON(t, "tool inputs", tl.Inputs, `{"city":"Paris"}`)
		mustEqualJSON(t, "tool output", tl.Output, `{"temp_c":21}`)
		if str(tl.DisplayName) != "get_weather" || jsonPath(t, tl.Summary, "usage") != nil {
			t.Fatalf("tool call: %+v", tl)
		}
		mustEqualJSON(t, "old inputs", o.Inputs, `{"model":"gpt-4o-mini","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"It is 21°C. Summarise."}]}`)
		mustEqualJSON(t, "old output", o.Output, `{"object":"chat.completion","model":"gpt-4o-mini","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"Sunny, 21°C."}}]}`)
		if jsonPath(t, a.Summary, "usage") != nil {
			t.Fatalf("the agent's repeated totals were counted: %s", a.Summary)
		}
		// The roll-up counts each chat once.
		u := s.usage(t, s.aliceKey, "alice/genai", a.ID)[a.ID]
		mustEqualJSON(t, "rolled-up usage", u, `{
			"gpt-4o-2024-08-06":{"requests":1,"prompt_tokens":100,"completion_tokens":12,"total_tokens":112,"cache_read_input_tokens":40,"cache_creation_input_tokens":0,
				"prompt_tokens_total_cost":null,"completion_tokens_total_cost":null,"cache_read_input_tokens_total_cost":null,"cache_creation_input_tokens_total_cost":null},
			"gpt-4o-mini":{"requests":1,"prompt_tokens":30,"completion_tokens":5,"total_tokens":35,"cache_read_input_tokens":0,"cache_creation_input_tokens":0,
				"prompt_tokens_total_cost":null,"completion_tokens_total_cost":null,"cache_read_input_tokens_total_cost":null,"cache_creation_input_tokens_total_cost":null}}`)
	})
}

// Shapes of producers that have no Go or JS SDK (pydantic-ai and Logfire,
// OpenLLMetry's Python instrumentations) sent through the Go SDK: the
// agent run's messages and final result, its aggregated usage not counted,
// Logfire's pending span dropped, OpenLLMetry's flattened prompts.
func TestPythonProducerShapes(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		s := newServer(t, db, nil)
		exp := exporter(t, s, basic(s.aliceKey))
		tp := sdktrace.NewTracerProvider(sdktrace.WithResource(projectResource("alice", "py")), sdktrace.WithSyncer(exp))
		tr := tp.Tracer("pydantic-ai")
		ctx, run := tr.Start(context.Background(), "agent run", at(0), oteltrace.WithAttributes(
			attribute.String("logfire.msg", "weather_agent run"), attribute.String("logfire.span_type", "span"),
			attribute.String("gen_ai.agent.name", "weather_agent"), attribute.String("model_name", "gpt-4o"),
			attribute.Int("gen_ai.usage.input_tokens", 50), attribute.Int("gen_ai.usage.output_tokens", 9),
			attribute.String("pydantic_ai.all_messages", `[{"role":"system","parts":[{"type":"text","content":"Be kind."}]},{"role":"user","parts":[{"type":"text","content":"Hi"}]},{"role":"assistant","parts":[{"type":"text","content":"Hello!"}]}]`),
			attribute.String("final_result", "Hello!")))
		_, pending := tr.Start(ctx, "chat gpt-4o (pending)", at(1), oteltrace.WithAttributes(attribute.String("logfire.span_type", "pending_span")))
		pending.End()
		_, chat := tr.Start(ctx, "openai.chat", at(2), oteltrace.WithAttributes(
			attribute.String("gen_ai.system", "openai"), attribute.String("llm.request.type", "chat"), attribute.String("gen_ai.request.model", "gpt-4o"),
			attribute.String("gen_ai.response.model", "gpt-4o-2024-08-06"),
			attribute.String("gen_ai.prompt.0.role", "user"), attribute.String("gen_ai.prompt.0.content", "Hi"),
			attribute.String("gen_ai.completion.0.role", "assistant"), attribute.String("gen_ai.completion.0.content", "Hello!"),
			attribute.String("gen_ai.completion.0.finish_reason", "stop"),
			attribute.Int("gen_ai.usage.prompt_tokens", 50), attribute.Int("gen_ai.usage.completion_tokens", 9), attribute.Int("llm.usage.total_tokens", 59),
			attribute.Int("gen_ai.usage.cache_read_input_tokens", 8)))
		chat.End()
		run.End()
		if err := tp.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		calls := s.calls(t, s.aliceKey, "alice/py")
		if len(calls) != 2 {
			t.Fatalf("%d calls (the pending span must be dropped)", len(calls))
		}
		r := calls[run.SpanContext().SpanID().String()]
		c := calls[chat.SpanContext().SpanID().String()]
		if str(r.DisplayName) != "weather_agent run" || jsonPath(t, r.Summary, "usage") != nil {
			t.Fatalf("agent run: %+v", r)
		}
		mustEqualJSON(t, "run inputs", r.Inputs, `{"messages":[{"role":"system","content":"Be kind."},{"role":"user","content":"Hi"},{"role":"assistant","content":"Hello!"}]}`)
		mustEqualJSON(t, "run output", r.Output, `"Hello!"`)
		mustEqualJSON(t, "chat inputs", c.Inputs, `{"model":"gpt-4o","messages":[{"role":"user","content":"Hi"}]}`)
		mustEqualJSON(t, "chat output", c.Output, `{"object":"chat.completion","model":"gpt-4o-2024-08-06","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"Hello!"}}]}`)
		mustEqualJSON(t, "chat usage", jsonPath(t, c.Summary, "usage"), `{"gpt-4o-2024-08-06":{"requests":1,"prompt_tokens":50,"completion_tokens":9,"total_tokens":59,"cache_read_input_tokens":8}}`)
	})
}

// RecordError with a stack and an ERROR status: the call's exception is the
// exception event (type, message, stack) and its status "error"; a status
// message alone is the exception too.
func TestErrorSpans(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		s := newServer(t, db, nil)
		exp := exporter(t, s, basic(s.aliceKey))
		tp := sdktrace.NewTracerProvider(sdktrace.WithResource(projectResource("alice", "errors")), sdktrace.WithSyncer(exp))
		tr := tp.Tracer("errors")
		_, failed := tr.Start(context.Background(), "fails")
		failed.RecordError(errors.New("boom"), oteltrace.WithStackTrace(true))
		failed.SetStatus(codes.Error, "it failed")
		failed.End()
		_, statusOnly := tr.Start(context.Background(), "status only")
		statusOnly.SetStatus(codes.Error, "upstream refused")
		statusOnly.End()
		if err := tp.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		calls := s.calls(t, s.aliceKey, "alice/errors")
		f := calls[failed.SpanContext().SpanID().String()]
		if !strings.HasPrefix(str(f.Exception), "*errors.errorString: boom\n") || !strings.Contains(str(f.Exception), "TestErrorSpans") {
			t.Fatalf("exception %q", str(f.Exception))
		}
		if jsonPath(t, f.Summary, "weave", "status") != "error" || jsonPath(t, f.Attributes, "otel_span", "status", "message") != "it failed" {
			t.Fatalf("summary %s attributes %s", f.Summary, f.Attributes)
		}
		if got := calls[statusOnly.SpanContext().SpanID().String()]; str(got.Exception) != "upstream refused" {
			t.Fatalf("status-only exception %q", str(got.Exception))
		}
	})
}

// An exporter retrying a request sends the same spans again: each stays one
// call, updated in place. A child sent alone links up with its parent sent
// later.
func TestDuplicatesAndLateParents(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		s := newServer(t, db, nil)
		exp := exporter(t, s, basic(s.aliceKey))
		rec := tracetest.NewSpanRecorder()
		tp := sdktrace.NewTracerProvider(sdktrace.WithResource(projectResource("alice", "dups")), sdktrace.WithSpanProcessor(rec))
		tr := tp.Tracer("dups")
		ctx, parent := tr.Start(context.Background(), "parent")
		_, child := tr.Start(ctx, "child", oteltrace.WithAttributes(attribute.String("input.value", "first")))
		child.End()
		parent.End()
		ended := rec.Ended() // child, parent
		ctx = context.Background()
		if err := exp.ExportSpans(ctx, ended[:1]); err != nil {
			t.Fatal(err)
		}
		calls := s.calls(t, s.aliceKey, "alice/dups")
		if len(calls) != 1 {
			t.Fatalf("%d calls after the child", len(calls))
		}
		for range 2 {
			if err := exp.ExportSpans(ctx, ended); err != nil {
				t.Fatal(err)
			}
		}
		stubs := tracetest.SpanStubsFromReadOnlySpans(ended[:1])
		stubs[0].Attributes = []attribute.KeyValue{attribute.String("input.value", "second")}
		if err := exp.ExportSpans(ctx, stubs.Snapshots()); err != nil {
			t.Fatal(err)
		}
		calls = s.calls(t, s.aliceKey, "alice/dups")
		if len(calls) != 2 {
			t.Fatalf("%d calls, want one per span", len(calls))
		}
		c := calls[child.SpanContext().SpanID().String()]
		if str(c.ParentID) != parent.SpanContext().SpanID().String() {
			t.Fatalf("child's parent %s", str(c.ParentID))
		}
		mustEqualJSON(t, "updated inputs", c.Inputs, `{"input":"second"}`)
		// The parent roots the trace: querying roots finds it alone.
		status, b := s.post(t, s.aliceKey, "/calls/query_stats", map[string]any{"project_id": "alice/dups", "filter": map[string]any{"trace_roots_only": true}})
		if status != http.StatusOK || strings.TrimSpace(string(b)) != `{"count":1}` {
			t.Fatalf("roots: %d %s", status, b)
		}
	})
}

// Spans that cannot be stored are counted in partial_success with a message
// while the others are stored; the header names the project of resources
// that name none; the resource wins over the header.
func TestPartialSuccessAndProjects(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		s := newServer(t, db, nil)
		ctx := context.Background()
		rec := tracetest.NewSpanRecorder()
		named := sdktrace.NewTracerProvider(sdktrace.WithResource(projectResource("alice", "named")), sdktrace.WithSpanProcessor(rec))
		anonymous := sdktrace.NewTracerProvider(sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", "x"))), sdktrace.WithSpanProcessor(rec))
		_, a := named.Tracer("t").Start(ctx, "named")
		a.End()
		_, b := anonymous.Tracer("t").Start(ctx, "anonymous")
		b.End()
		err := exporter(t, s, basic(s.aliceKey)).ExportSpans(ctx, rec.Ended())
		if err == nil || !strings.Contains(err.Error(), "1 spans rejected") || !strings.Contains(err.Error(), "names no project") {
			t.Fatalf("partial success: %v", err)
		}
		if calls := s.calls(t, s.aliceKey, "alice/named"); len(calls) != 1 {
			t.Fatalf("%d calls stored", len(calls))
		}
		// With a project_id header both are stored: the named one in its own
		// project, the other in the header's.
		headers := basic(s.aliceKey)
		headers["project_id"] = "alice/fallback"
		if err := exporter(t, s, headers).ExportSpans(ctx, rec.Ended()); err != nil {
			t.Fatal(err)
		}
		if calls := s.calls(t, s.aliceKey, "alice/fallback"); len(calls) != 1 || calls[b.SpanContext().SpanID().String()].OpName != "anonymous" {
			t.Fatalf("fallback project: %v", calls)
		}
		// A malformed project fails its spans alone.
		headers["project_id"] = "not a project"
		err = exporter(t, s, headers).ExportSpans(ctx, rec.Ended())
		if err == nil || !strings.Contains(err.Error(), "1 spans rejected") || !strings.Contains(err.Error(), "<entity>/<project>") {
			t.Fatalf("malformed project: %v", err)
		}
	})
}
