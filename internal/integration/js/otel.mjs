// OpenTelemetry producers under Node, exporting to weft's /otel/v1/traces.
// Run by internal/integration/otel (js_test.go) as `node otel.mjs <scenario>`
// with WEFT_URL, WEFT_KEY, WEFT_ENTITY and, for the OpenAI scenarios,
// UPSTREAM_URL (an OpenAI-compatible test server) set. Each span is exported
// on its own as it ends (children before parents). Prints one JSON line with
// the ids the Go test checks the stored calls against, and exits non-zero if
// an export failed.
import { context, trace, SpanStatusCode } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { SimpleSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";
import { OTLPTraceExporter as JSONExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPTraceExporter as ProtoExporter } from "@opentelemetry/exporter-trace-otlp-proto";

const scenario = process.argv[2];
const headers = { Authorization: "Basic " + Buffer.from(`api:${process.env.WEFT_KEY}`).toString("base64") };
const url = `${process.env.WEFT_URL}/otel/v1/traces`;
const failures = [];

context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());

// provider exports through the JSON (default) or protobuf exporter into
// WEFT_ENTITY/<project>, counting failed exports.
function provider(project, encoding = "json") {
  const exporter = encoding === "proto" ? new ProtoExporter({ url, headers }) : new JSONExporter({ url, headers });
  const exportSpans = exporter.export.bind(exporter);
  exporter.export = (spans, done) =>
    exportSpans(spans, (result) => {
      if (result.code !== 0) failures.push(String(result.error));
      done(result);
    });
  const tp = new TracerProvider({
    resource: resourceFromAttributes({ "wandb.entity": process.env.WEFT_ENTITY, "wandb.project": project, "service.name": "otel-js" }),
    spanProcessors: [new SimpleSpanProcessor({ exporter })],
  });
  trace.setGlobalTracerProvider(tp);
  return tp;
}

const ids = (span) => ({ spanId: span.spanContext().spanId, traceId: span.spanContext().traceId });

async function manual(encoding) {
  const tp = provider(`js-${encoding}`, encoding);
  const tracer = tp.getTracer("weft-js-test", "1.0.0");
  const out = {};
  await tracer.startActiveSpan("js-root", { attributes: { "input.value": '{"q":"2+2?"}', "input.mime_type": "application/json" } }, async (root) => {
    await tracer.startActiveSpan("js-child", async (child) => {
      child.setAttributes({ str: "s", int: 42, float: 1.5, bool: true, list: ["a", "b"], "output.value": "4" });
      child.addEvent("note", { detail: "hello" });
      child.end();
      out.child = ids(child);
    });
    await tracer.startActiveSpan("js-fails", async (failed) => {
      failed.recordException(new TypeError("js boom"));
      failed.setStatus({ code: SpanStatusCode.ERROR, message: "js failed" });
      failed.end();
      out.failed = ids(failed);
    });
    root.end();
    out.root = ids(root);
  });
  await tp.shutdown();
  return out;
}

async function vercel(legacy) {
  const { generateText, registerTelemetry, stepCountIs, tool } = await import("ai");
  const { MockLanguageModelV4 } = await import("ai/test");
  const { OpenTelemetry, LegacyOpenTelemetry } = await import("@ai-sdk/otel");
  const { z } = await import("zod");
  const tp = provider(legacy ? "vercel-legacy" : "vercel");
  const tracer = tp.getTracer("ai");
  registerTelemetry(legacy ? new LegacyOpenTelemetry({ tracer }) : new OpenTelemetry({ tracer }));
  const usage = (input, output) => ({
    inputTokens: { total: input, noCache: input, cacheRead: undefined, cacheWrite: undefined },
    outputTokens: { total: output, text: output, reasoning: undefined },
  });
  const response = (id) => ({ id, modelId: "mock-model-2026", timestamp: new Date(0) });
  const model = new MockLanguageModelV4({
    provider: "mock-provider",
    modelId: "mock-model",
    doGenerate: [
      {
        content: [{ type: "tool-call", toolCallId: "call-1", toolName: "weather", input: '{"city":"Paris"}' }],
        finishReason: { unified: "tool-calls", raw: "tool_calls" },
        usage: usage(20, 6),
        warnings: [],
        response: response("resp-1"),
      },
      {
        content: [{ type: "text", text: "Sunny in Paris." }],
        finishReason: { unified: "stop", raw: "stop" },
        usage: usage(31, 4),
        warnings: [],
        response: response("resp-2"),
      },
    ],
  });
  const result = await generateText({
    model,
    system: "You are terse.",
    prompt: "Weather in Paris?",
    tools: {
      weather: tool({
        description: "Current weather",
        inputSchema: z.object({ city: z.string() }),
        execute: async ({ city }) => ({ city, temperature: 21 }),
      }),
    },
    stopWhen: stepCountIs(3),
    telemetry: { functionId: "weather-fn" },
  });
  await tp.shutdown();
  return { text: result.text };
}

async function openaiClient(instrument) {
  const { default: OpenAI } = await import("openai");
  const tp = provider(instrument);
  if (instrument === "openinference") {
    const { OpenAIInstrumentation } = await import("@arizeai/openinference-instrumentation-openai");
    const inst = new OpenAIInstrumentation({ tracerProvider: tp });
    inst.manuallyInstrument(OpenAI);
  } else {
    const { OpenAIInstrumentation } = await import("@traceloop/instrumentation-openai");
    const inst = new OpenAIInstrumentation({ enrichTokens: false });
    inst.setTracerProvider(tp);
    inst.manuallyInstrument(OpenAI);
  }
  const client = new OpenAI({ baseURL: `${process.env.UPSTREAM_URL}/v1`, apiKey: "test-key", maxRetries: 0 });
  const messages = [
    { role: "system", content: "Be brief." },
    { role: "user", content: "hi" },
  ];
  const plain = await client.chat.completions.create({ model: "test-model", messages });
  const stream = await client.chat.completions.create({ model: "test-model", messages, stream: true, stream_options: { include_usage: true } });
  let streamed = "";
  for await (const chunk of stream) streamed += chunk.choices[0]?.delta?.content ?? "";
  await tp.shutdown();
  return { plain: plain.choices[0].message.content, streamed };
}

async function langchain() {
  const tp = provider("langchain");
  const { LangChainInstrumentation } = await import("@arizeai/openinference-instrumentation-langchain");
  const CallbackManagerModule = await import("@langchain/core/callbacks/manager");
  const inst = new LangChainInstrumentation({ tracerProvider: tp });
  inst.manuallyInstrument(CallbackManagerModule);
  const { FakeListChatModel } = await import("@langchain/core/utils/testing");
  const { HumanMessage, SystemMessage } = await import("@langchain/core/messages");
  const model = new FakeListChatModel({ responses: ["Hello from LangChain"] });
  const reply = await model.invoke([new SystemMessage("Be brief."), new HumanMessage("hi")]);
  await tp.shutdown();
  return { reply: reply.content };
}

const scenarios = {
  json: () => manual("json"),
  proto: () => manual("proto"),
  vercel: () => vercel(false),
  "vercel-legacy": () => vercel(true),
  openinference: () => openaiClient("openinference"),
  openllmetry: () => openaiClient("openllmetry"),
  langchain,
};
if (!scenarios[scenario]) {
  console.error(`unknown scenario ${scenario}`);
  process.exit(2);
}
const out = await scenarios[scenario]();
if (failures.length > 0) {
  console.error(`export failed: ${failures.join("; ")}`);
  process.exit(1);
}
console.log(JSON.stringify({ ok: true, ...out }));
