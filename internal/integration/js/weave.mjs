// End-to-end check of weft's trace, object, table and feedback routes with the
// official Weave TypeScript SDK, and of a traced completion through the chat
// gateway with the official openai client wrapped by wrapOpenAI.
//
// Run by internal/integration/tssdk (TestWeaveSDK) with WF_TRACE_SERVER_URL,
// WANDB_API_KEY, WEFT_PROJECT (entity/project) and WEFT_MODEL set. It prints one
// JSON line with the ids and refs it produced for the server-side checks, and
// exits non-zero on the first mismatch or on anything the SDK reports: the SDK
// logs and swallows some failures (console.error, unhandled rejections), so
// those count as failures too.
import OpenAI from "openai";
import * as weave from "weave";

const sdkErrors = [];
const consoleError = console.error.bind(console);
console.error = (...args) => {
  sdkErrors.push(args.map((a) => (a instanceof Error ? a.stack : typeof a === "string" ? a : JSON.stringify(a))).join(" "));
  consoleError(...args);
};
process.on("unhandledRejection", (reason) => fail("unhandled rejection", reason instanceof Error ? reason.stack : String(reason?.status ?? reason)));

function fail(what, value) {
  consoleError(`mismatch: ${what}: ${typeof value === "string" ? value : JSON.stringify(value)}`);
  process.exit(1);
}

function check(condition, what, value) {
  if (!condition) fail(what, value);
}

// withTimeout guards promises the SDK may leave unsettled when a request fails.
function withTimeout(promise, what, ms = 30000) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not settle in ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

const project = process.env.WEFT_PROJECT;
const model = process.env.WEFT_MODEL;
// login checks the key against GET /health (and writes ~/.netrc, a throwaway
// home here) before init.
await weave.login(process.env.WANDB_API_KEY, new URL(process.env.WF_TRACE_SERVER_URL).host);
const client = await weave.init(project);

// A parent op with nested children, one of them nested twice.
const double = weave.op(async function double(x) {
  return x * 2;
});
const addOne = weave.op(async function addOne(x) {
  return (await double(x)) / 2 + 1;
});
const pipeline = weave.op(
  async function pipeline(x, label) {
    const a = await double(x);
    const b = await addOne(a);
    return { a, b, label };
  },
  { callDisplayName: (x, label) => `pipeline of ${label}`, parameterNames: ["x", "label"] },
);

// An op that throws.
const explode = weave.op(async function explode(reason) {
  throw new Error(`exploded: ${reason}`);
});

// A traced completion: the openai client pointed at weft's /v1, wrapped
// explicitly (ESM is not auto-instrumented).
const openai = weave.wrapOpenAI(new OpenAI({ baseURL: `${process.env.WF_TRACE_SERVER_URL}/v1`, apiKey: process.env.WANDB_API_KEY, maxRetries: 0 }));
const ask = weave.op(async function ask(question) {
  const messages = [{ role: "user", content: question }];
  const res = await openai.chat.completions.create({ model, messages });
  // Streamed: the SDK asks for the usage chunk and records it.
  let streamed = "";
  for await (const chunk of await openai.chat.completions.create({ model, messages, stream: true })) {
    streamed += chunk.choices[0]?.delta?.content ?? "";
  }
  return { plain: res.choices[0].message.content, streamed };
});

const [pipelineOut, pipelineCall] = await pipeline.invoke(3, "three");
check(pipelineOut.a === 6 && pipelineOut.b === 7 && pipelineOut.label === "three", "pipeline output", pipelineOut);

let thrown = null;
try {
  await explode("on purpose");
} catch (err) {
  thrown = err;
}
check(thrown instanceof Error && thrown.message === "exploded: on purpose", "exception passes through the op", String(thrown));

const [answer, askCall] = await ask.invoke("hi");
check(answer.plain === "Hello from the model" && answer.streamed === answer.plain, "completion content", answer);

// A display name set after the call finished goes through /call/update.
const [, renamedCall] = await double.invoke(21);
await renamedCall.setDisplayName("renamed double");

// An op returning an image: its bytes go through /file/create.
const png = Buffer.from(process.env.WEFT_PNG_BASE64, "base64");
const draw = weave.op(async function draw() {
  return weave.weaveImage({ data: png });
});
const [, drawCall] = await draw.invoke();

// A prompt object, read back as a prompt.
const promptRef = await client.publish(new weave.StringPrompt({ name: "tssdk-prompt", content: "Answer: {question}" }));
const prompt = await weave.StringPrompt.get(client, promptRef.uri());
check(prompt instanceof weave.StringPrompt && prompt.format({ question: "2+2" }) === "Answer: 2+2", "prompt read back", prompt);

// A plain object and a Dataset (table/create + table/query + obj/create), read back.
const configRef = await client.publish({ temperature: 0.25, tags: ["e2e", "sdk"], nested: { depth: 2 } }, "tssdk-config");
const config = await configRef.get();
check(config.temperature === 0.25 && config.nested?.depth === 2 && config.tags?.[1] === "sdk", "published object read back", config);

const rows = [
  { question: "2+2", expected: "4" },
  { question: "capital of France", expected: "Paris" },
  { question: "unicode ✓ \"quoted\"", expected: "yes" },
];
const dataset = new weave.Dataset({ name: "tssdk-dataset", description: "e2e rows", rows });
const datasetRef = await dataset.save();
const loaded = await datasetRef.get();
check(loaded instanceof weave.Dataset && loaded.length === rows.length, "dataset read back", { length: loaded?.length });
for (let i = 0; i < rows.length; i++) {
  const row = loaded.getRow(i);
  check(row.question === rows[i].question && row.expected === rows[i].expected, `dataset row ${i}`, row);
}

// An evaluation logged imperatively: its score is feedback on the predict call.
const evaluation = new weave.EvaluationLogger({ name: "tssdk-eval", model: { name: "tssdk-model" }, dataset });
const prediction = evaluation.logPrediction({ question: rows[1].question }, "Paris");
await withTimeout(prediction.logScore("exact_match", true), "logScore");
await withTimeout(prediction.finish(), "prediction.finish");
await withTimeout(evaluation.logSummary({ note: "e2e" }), "logSummary");

// Flush every queued call start/end before reading back.
await client.waitForBatchProcessing();

// Read the calls back through the SDK.
const root = await client.getCall(pipelineCall.id);
check(root.id === pipelineCall.id && root.display_name === "pipeline of three", "getCall root", root);
check(root.output?.b === 7 && root.inputs?.x === 3 && root.inputs?.label === "three", "getCall root inputs/output", { inputs: root.inputs, output: root.output });
check(typeof root.op_name === "string" && root.op_name.startsWith(`weave:///${project}/op/pipeline:`), "root op ref", root.op_name);
check(root.parent_id == null && root.ended_at, "root finished without parent", root);

const children = await client.getCalls({ parent_ids: [pipelineCall.id] });
check(children.length === 2, "pipeline children", children.map((c) => c.op_name));
const grandchildren = await client.getCalls({ parent_ids: children.map((c) => c.id) });
check(grandchildren.length === 1 && grandchildren[0].op_name.includes("/op/double:"), "grandchild", grandchildren.map((c) => c.op_name));
const trace = await client.getCalls({ trace_ids: [root.trace_id] });
check(trace.length === 4, "calls in the pipeline trace", trace.length);

const roots = await client.getCalls({ trace_roots_only: true });
const explodeCall = roots.find((c) => c.op_name.includes("/op/explode:"));
check(explodeCall && explodeCall.exception === "exploded: on purpose" && explodeCall.output == null, "failed call", explodeCall);
const byOpName = await client.getCalls({ op_names: [explodeCall.op_name] });
check(byOpName.length === 1 && byOpName[0].id === explodeCall.id, "op_names filter", byOpName.map((c) => c.id));

// Weave's calls query language and a sort, sent through the SDK's own
// generated client as getCalls sends its filter: a case-insensitive
// $contains on the display name and a $gt on a converted input.
const queried = await client.traceServerApi.calls.callsQueryStreamCallsStreamQueryPost({
  project_id: project,
  query: {
    $expr: {
      $and: [
        { $contains: { input: { $getField: "display_name" }, substr: { $literal: "PIPELINE OF" }, case_insensitive: true } },
        { $gt: [{ $convert: { input: { $getField: "inputs.x" }, to: "int" } }, { $literal: 2 }] },
      ],
    },
  },
  sort_by: [{ field: "started_at", direction: "desc" }],
  limit: 10,
});
const queriedIds = (await new Response(queried.body).text()).split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l).id);
check(queriedIds.length === 1 && queriedIds[0] === pipelineCall.id, "query language through the SDK client", queriedIds);

const askRead = await client.getCall(askCall.id, true);
const completions = await client.getCalls({ parent_ids: [askCall.id] });
check(completions.length === 2 && completions.every((c) => c.op_name.includes("/op/openai.chat.completions.create:")), "two traced completions under ask", completions.map((c) => c.op_name));
check(completions.every((c) => c.summary?.usage?.[model]?.total_tokens > 0), "completion usage", completions.map((c) => c.summary));
check(askRead.output?.plain === "Hello from the model" && askRead.output?.streamed === "Hello from the model", "ask output", askRead.output);

const renamed = await client.getCall(renamedCall.id);
check(renamed.display_name === "renamed double", "display name set after the call", renamed.display_name);

check(sdkErrors.length === 0, "the SDK reported errors", sdkErrors);

console.log(
  JSON.stringify({
    ok: true,
    root: pipelineCall.id,
    traceId: root.trace_id,
    explode: explodeCall.id,
    ask: askCall.id,
    completions: completions.map((c) => c.id),
    renamed: renamedCall.id,
    draw: drawCall.id,
    promptRef: promptRef.uri(),
    configRef: configRef.uri(),
    datasetRef: datasetRef.uri(),
    predictCalls: roots.filter((c) => c.op_name.includes("/op/Evaluation.evaluate:")).map((c) => c.id),
  }),
);
