// Seed data of the web UI's browser tests, written with the official Weave
// TypeScript SDK as a user's program would: ops with nested calls (one child
// failing inside a parent that recovers), a failing root, annotation specs
// published as AnnotationSpec objects, reactions and notes on calls, and the
// objects of the object and evaluation pages: a dataset and a prompt in two
// versions each, an op in two versions, and an evaluation with two scorers
// run for two models.
//
// Run by internal/integration/webui with WF_TRACE_SERVER_URL, WANDB_API_KEY,
// WEFT_PROJECT and WEFT_EVAL_PROJECT (entity/project) set. It prints one JSON line with the ids
// and refs it made, and exits non-zero on anything the SDK reports (it logs
// and swallows some failures).
import * as weave from "weave";

const sdkErrors = [];
const consoleError = console.error.bind(console);
console.error = (...args) => {
  sdkErrors.push(args.map((a) => (a instanceof Error ? a.stack : typeof a === "string" ? a : JSON.stringify(a))).join(" "));
  consoleError(...args);
};
process.on("unhandledRejection", (reason) => {
  consoleError("unhandled rejection", reason instanceof Error ? reason.stack : String(reason?.status ?? reason));
  process.exit(1);
});

const project = process.env.WEFT_PROJECT;
const evalProject = process.env.WEFT_EVAL_PROJECT;
await weave.login(process.env.WANDB_API_KEY, new URL(process.env.WF_TRACE_SERVER_URL).host);
const client = await weave.init(project);

// An annotation spec, as Weave's AnnotationSpec object class: its name and
// description for people, field_schema the JSON schema of its values.
class AnnotationSpec extends weave.WeaveObject {
  constructor({ name, description, fieldSchema }) {
    super({ name, description });
    this.field_schema = fieldSchema;
  }
}

// An agent that runs three steps; the second fails and the agent carries on.
const lookup = weave.op(async function lookup(query) {
  return { query, hits: 3 };
});
const flakyTool = weave.op(async function flakyTool(input) {
  throw new Error(`tool failed on ${input}`);
});
const countWords = weave.op(async function countWords(text) {
  return text.split(/\s+/).length;
});
const summarize = weave.op(async function summarize(text) {
  return `summary of ${text} in ${await countWords(text)} words`;
});
const agent = weave.op(
  async function agent(question) {
    const found = await lookup(question);
    let tool = null;
    try {
      await flakyTool(question);
    } catch (err) {
      tool = err.message;
    }
    const answer = await summarize(`${question} (${found.hits} hits)`);
    return { answer, tool };
  },
  { callDisplayName: (question) => `agent: ${question}` },
);
const explode = weave.op(async function explode(reason) {
  throw new Error(`exploded: ${reason}`);
});

const agentCalls = [];
for (const question of ["weather in Paris", "capital of Peru", "tallest mountain"]) {
  const [, call] = await agent.invoke(question);
  agentCalls.push(call.id);
}
let explodeID = null;
try {
  await explode("on purpose");
} catch {
  // expected: the failed call is recorded
}

// The specs a queue will list.
const quality = await client.publish(
  new AnnotationSpec({ name: "Quality", description: "Is the answer right?", fieldSchema: { type: "string", enum: ["good", "acceptable", "bad"] } }),
  "quality",
);
const score = await client.publish(
  new AnnotationSpec({ name: "Score", description: "1 is poor, 5 is perfect", fieldSchema: { type: "integer", minimum: 1, maximum: 5 } }),
  "score",
);
const comment = await client.publish(
  new AnnotationSpec({ name: "Comment", description: "Anything to add", fieldSchema: { type: "string", maxLength: 200 } }),
  "comment",
);

await client.waitForBatchProcessing();

// Reactions and notes on the first agent call, through the SDK's own client.
const callRef = `weave:///${project}/call/${agentCalls[0]}`;
for (const [type, payload] of [["wandb.reaction.1", { emoji: "👍" }], ["wandb.note.1", { note: "checked by hand" }]]) {
  const res = await client.traceServerApi.feedback.feedbackCreateFeedbackCreatePost({
    project_id: project, weave_ref: callRef, feedback_type: type, payload,
  });
  if (!res.ok) {
    consoleError(`feedback ${type}: ${res.status}`);
    process.exit(1);
  }
}

const roots = await client.getCalls({ trace_roots_only: true });
explodeID = roots.find((c) => c.op_name.includes("/op/explode:"))?.id;
const agents = await client.getCalls({ call_ids: agentCalls });
const children = await client.getCalls({ parent_ids: [agentCalls[0]] });
if (!explodeID || agents.length !== 3 || children.length !== 3) {
  consoleError(`unexpected calls: explode ${explodeID}, ${agents.length} agents, ${children.length} children`);
  process.exit(1);
}
// The objects and evaluations, in a project of their own: the trace list
// tests count the roots above.
const evalClient = await weave.init(evalProject);
// Two versions of an op: the same name, another body.
const greetV0 = weave.op(async function greet(name) {
  return `hi ${name}`;
});
await greetV0("Ada");
const greetV1 = weave.op(async function greet(name) {
  const polite = `hello ${name}`;
  return polite;
});
await greetV1("Ada");

// A prompt in two versions.
await evalClient.publish(new weave.StringPrompt({ name: "greeting", content: "Hello {name}" }), "greeting");
await evalClient.publish(new weave.StringPrompt({ name: "greeting", content: "Good morning {name}" }), "greeting");

// A dataset, evaluated by two models with two scorers; then its second version.
const rows = [
  { id: "q1", question: "2 + 2", expected: "4" },
  { id: "q2", question: "capital of France", expected: "Paris" },
  { id: "q3", question: "colour of the sky", expected: "blue" },
];
const dataset = new weave.Dataset({ name: "qa", rows });
// A scorer returning an object, as scorers often do: its summary is one
// level deeper ({correct: {true_count, true_fraction}}).
const exactMatch = weave.op(function exactMatch({ modelOutput, datasetRow }) {
  return { correct: modelOutput === datasetRow.expected };
});
const closeness = weave.op(function closeness({ modelOutput, datasetRow }) {
  return 1 / (1 + Math.abs(String(modelOutput).length - datasetRow.expected.length));
});
const evaluation = new weave.Evaluation({ name: "qa-eval", dataset, scorers: [exactMatch, closeness] });
const oracleModel = weave.op(async function oracleModel({ datasetRow }) {
  return datasetRow.expected;
});
// It gets q2 wrong: the regression the comparison finds.
const guessModel = weave.op(async function guessModel({ datasetRow }) {
  return datasetRow.id === "q2" ? "Lyon" : datasetRow.expected;
});
const log = console.log;
console.log = () => {}; // the evaluation prints its progress
await evaluation.evaluate({ model: oracleModel });
await evaluation.evaluate({ model: guessModel });
console.log = log;
const datasetV1 = await dataset.save();
const datasetV2 = await evalClient.publish(
  new weave.Dataset({ name: "qa", rows: [rows[0], { ...rows[1], expected: "Paris, France" }, { id: "q4", question: "3 * 3", expected: "9" }] }),
);

await evalClient.waitForBatchProcessing();
const evalRuns = (await evalClient.getCalls({ trace_roots_only: true })).filter((c) => c.op_name.includes("/op/Evaluation.evaluate:"));
const runOf = (model) => evalRuns.find((c) => JSON.stringify(c.inputs.model ?? "").includes(model))?.id;
const runs = [runOf("oracleModel"), runOf("guessModel")];
if (evalRuns.length !== 2 || runs.includes(undefined)) {
  consoleError(`unexpected evaluation runs: ${JSON.stringify(evalRuns.map((c) => [c.id, c.inputs]))}`);
  process.exit(1);
}

if (sdkErrors.length) {
  consoleError(`the SDK reported errors: ${JSON.stringify(sdkErrors)}`);
  process.exit(1);
}
const failed = children.find((c) => c.op_name.includes("/op/flakyTool:"));

console.log(JSON.stringify({
  ok: true,
  agents: agentCalls,
  traces: agentCalls.map((id) => agents.find((c) => c.id === id).trace_id),
  children: ["lookup", "flakyTool", "summarize"].map((name) => children.find((c) => c.op_name.includes(`/op/${name}:`)).id),
  grandchild: (await client.getCalls({ parent_ids: [children.find((c) => c.op_name.includes("/op/summarize:")).id] }))[0]?.id,
  failedChild: failed.id,
  explode: explodeID,
  specs: [quality.uri(), score.uri(), comment.uri()],
  datasets: [datasetV1.uri(), datasetV2.uri()],
  evalRuns: runs,
}));
