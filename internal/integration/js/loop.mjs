// The loop from production calls to a trained model, on one server that
// serves a model itself (-model DIR), with the official clients:
//
//  1. the Weave TypeScript SDK publishes a ContainsScorer and a Monitor of
//     the op `answer`, then traces calls of that op (a teacher's answers,
//     right and wrong) for the server's monitor to score;
//  2. the calls the monitor scored right become a dataset
//     (POST /v2/{entity}/{project}/datasets/from_calls, selecting by the
//     verdict's feedback field), which the SDK loads back as a Dataset;
//  3. an SFT job trains the served model on that dataset by its ref;
//  4. `answer` is traced again, answered by the trained checkpoint and by
//     the base model through the official openai client, and the same
//     monitor scores both.
//
// Run by internal/integration/training (TestLoopFromVerdictsToTrainedModel)
// with WEFT_URL, WEFT_KEY, WEFT_MODEL (the served base model) and
// WEFT_PROJECT (<entity>/<project>) set; prints one JSON line with what it
// saw and exits non-zero on the first mismatch or SDK error.
import OpenAI from "openai";
import * as weave from "weave";

import { check, jsonAPI } from "./checks.mjs";

const url = process.env.WEFT_URL;
const key = process.env.WEFT_KEY;
const baseModel = process.env.WEFT_MODEL;
const project = process.env.WEFT_PROJECT;
const [entity, projectName] = project.split("/");
const openai = new OpenAI({ baseURL: `${url}/v1`, apiKey: key, maxRetries: 0 });

const sdkErrors = [];
const consoleError = console.error.bind(console);
console.error = (...args) => {
  sdkErrors.push(args.map((a) => (a instanceof Error ? a.stack : String(a))).join(" "));
  consoleError(...args);
};

const api = jsonAPI(url, key);

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// until polls fn every 100 ms until it returns a value, for at most ms.
async function until(what, ms, fn) {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    check(Date.now() < deadline, `waited ${ms} ms for ${what}`, null);
    await sleep(100);
  }
}

await weave.login(key, new URL(url).host);
const client = await weave.init(project);

// ---- 1. A monitor, and the calls it scores.
const scorer = await client.publish(
  { _type: "ContainsScorer", _class_name: "ContainsScorer", _bases: ["Scorer", "Object", "BaseModel"], name: "knows_password", substring: "swordfish" },
  "knows_password",
);
const monitorID = "password_monitor";
await client.publish(
  {
    _type: "Monitor", _class_name: "Monitor", _bases: ["Object", "BaseModel"], name: monitorID,
    sampling_rate: 1, scorers: [scorer.uri()], call_filter: { op_names: [`weave:///${project}/op/answer:*`], query: null }, active: true,
  },
  monitorID,
);

const question = "What is the password?";
const right = "The password is swordfish.";
const messages = [{ role: "user", content: question }];
let respond = null;
const answer = weave.op(async function answer({ messages }) {
  return respond(messages);
}, { parameterNames: "useParam0Object" });

// A teacher that knows the answer two times in three.
const teacherCalls = 24;
for (let i = 0; i < teacherCalls; i++) {
  respond = async () => (i % 3 === 2 ? "I cannot say." : right);
  await answer({ messages });
}
await client.waitForBatchProcessing();
const stats = await until("the monitor's verdicts on the teacher's calls", 60_000, async () => {
  const s = await api("GET", `/v2/${project}/monitors/${monitorID}/stats`);
  return s.verdicts.done === teacherCalls ? s : undefined;
});

// ---- 2. The calls scored right become a dataset.
const verdict = "feedback.[wandb.runnable.knows_password].payload.output.contains";
const made = await api("POST", `/v2/${project}/datasets/from_calls`, {
  name: "password-sft",
  filter: { op_names: [`weave:///${project}/op/answer:*`] },
  query: { $expr: { $eq: [{ $getField: verdict }, { $literal: true }] } },
});
const goodCalls = teacherCalls - teacherCalls / 3;
check(made.rows === goodCalls && made.ref.startsWith(`weave:///${project}/object/password-sft:`), "the dataset of the calls scored right", made);
const dataset = await weave.ObjectRef.fromUri(made.ref).get();
check(dataset instanceof weave.Dataset && dataset.length === goodCalls, "the SDK loads a Dataset of the selected calls", dataset.length);
for await (const row of dataset) {
  check(row.output === right && JSON.stringify(row.messages) === JSON.stringify(messages), "a row is the call's inputs and output", row);
}

// ---- 3. An SFT job on the served model from the dataset.
const model = await api("POST", "/v1/preview/models", { entity, project: projectName, name: "student", base_model: baseModel });
const rates = Array.from({ length: goodCalls }, (_, i) => (0.02 * (goodCalls - i)) / goodCalls);
const job = await api("POST", "/v1/preview/sft-training-jobs", {
  model_id: model.id, training_data_url: made.ref, config: { batch_size: 1, learning_rate: rates },
});
const done = await until("the SFT job", 240_000, async () => {
  const j = await api("GET", `/v1/preview/training-jobs/${job.id}`);
  return ["COMPLETED", "FAILED", "CANCELLED"].includes(j.status) ? j : undefined;
});
check(done.status === "COMPLETED", "the SFT job completes", done);

// ---- 4. The trained checkpoint and the base model answer; the same
// monitor scores both.
const replies = {};
for (const [stage, name] of [["trained", `${project}/student:step1`], ["base", baseModel]]) {
  respond = async (msgs) => {
    const c = await openai.chat.completions.create({ model: name, messages: msgs, max_tokens: 24, temperature: 0 });
    return c.choices[0].message.content ?? "";
  };
  replies[stage] = await weave.withAttributes({ stage }, () => answer({ messages }));
}
await client.waitForBatchProcessing();
const verdicts = await until("the monitor's verdicts on the served models' calls", 60_000, async () => {
  const res = await fetch(`${url}/calls/stream_query`, {
    method: "POST",
    headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
    body: JSON.stringify({ project_id: project, filter: { op_names: [`weave:///${project}/op/answer:*`] }, include_feedback: true,
      query: { $expr: { $in: [{ $getField: "attributes.stage" }, [{ $literal: "trained" }, { $literal: "base" }]] } } }),
  });
  check(res.ok, "calls/stream_query", res.status);
  const calls = (await res.text()).trim().split("\n").filter(Boolean).map((l) => JSON.parse(l));
  const out = {};
  for (const c of calls) {
    const fb = (c.summary?.weave?.feedback ?? []).find((f) => f.feedback_type === "wandb.runnable.knows_password");
    if (fb) out[c.attributes.stage] = fb.payload.output.contains;
  }
  return Object.keys(out).length === 2 ? out : undefined;
});
check(verdicts.trained === true && verdicts.base === false, "the monitor scores the trained model right and the base model wrong", { verdicts, replies });
check(sdkErrors.length === 0, "the SDK reported no errors", sdkErrors);
console.log(JSON.stringify({ ok: true, stats: stats.verdicts, dataset: made, replies, verdicts }));
