// ART's client flow against a server that serves a model itself (-model DIR)
// and trains it with its built-in trainer, with no other program: rollouts
// through the official openai npm client (logprobs on, token ids as the
// trainer reads them), trajectory groups as ART serialises them, the
// /v1/preview training routes called as ART's client calls them (ART uses
// plain HTTP for those), events polled with ART's cursor rules, then
// completions from the trained checkpoint by the names ART gives it.
//
// Run by internal/integration/training (TestARTFlowTrainsServedModel) with
// WEFT_URL, WEFT_KEY and WEFT_MODEL (the served base model) set; prints one
// JSON line with what it saw and exits non-zero on the first mismatch.
import OpenAI from "openai";

import { check, jsonAPI } from "./checks.mjs";

const url = process.env.WEFT_URL;
const key = process.env.WEFT_KEY;
const baseModel = process.env.WEFT_MODEL;
const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: key, maxRetries: 0 });

// api calls a training route as ART's client does: JSON with the bearer key.
const api = jsonAPI(url, key);

// register is ServerlessBackend.register: the model, created or returned,
// and the inference name it then completes with (its latest checkpoint).
async function register(project, name) {
  const m = await api("POST", "/v1/preview/models", { entity: null, project, name, base_model: baseModel, return_existing: true });
  check(typeof m.id === "string" && m.entity && m.base_model === baseModel, "registered model", m);
  return { ...m, inference: `wandb-artifact:///${m.entity}/${project}/${name}` };
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// follow polls a job's events as ART's backend does until its terminal
// event: pages auto-followed while has_more, the cursor not advanced past
// training_started, every gradient_step after a training_started and all
// numbers. (ART sleeps a second between polls; a tenth keeps this short.)
async function follow(jobID) {
  let after = null;
  let started = null;
  const steps = [];
  for (;;) {
    await sleep(100);
    let cursor = after;
    for (;;) {
      const page = await api("GET", `/v1/preview/training-jobs/${jobID}/events${cursor ? `?after=${cursor}` : ""}`);
      for (const e of page.data) {
        if (e.type === "training_started") {
          check(typeof e.data.num_sequences === "number", "training_started.num_sequences", e);
          started = e.data.num_sequences;
          continue;
        }
        after = e.id;
        if (e.type === "gradient_step") {
          check(started !== null, "gradient_step before training_started", e);
          check(Object.values(e.data).every((v) => typeof v === "number" && Number.isFinite(v)), "gradient_step values are numbers", e.data);
          steps.push(e.data);
        } else if (e.type === "training_ended") {
          check(steps.length === started, "one gradient_step per sequence", { started, steps: steps.length });
          return steps;
        } else if (e.type === "training_failed") {
          check(false, "training failed", e.data.error_message);
        }
      }
      if (page.has_more === false || page.data.length === 0) break;
      cursor = page.data[page.data.length - 1].id;
    }
  }
}

// latestStep is how ART reads a model's current step.
async function latestStep(modelID) {
  const page = await api("GET", `/v1/preview/models/${modelID}/checkpoints?limit=1&order=desc`);
  return page.data.length === 0 ? 0 : page.data[0].step;
}

// ---- RL: a graded reward the untrained model rarely earns.

const rl = await register("art", "agent-001");
const prompts = ["Name a colour.", "Name a fruit.", "Name a city."];
const ids = (choice) => choice.logprobs.content.map((e) => Number(e.token.slice("token_id:".length)));

// rollout samples one reply the way an ART rollout does (logprobs on; the
// sampled tokens as ids, so that the trainer reads exactly them).
async function rollout(model, prompt, seed) {
  const res = await client.chat.completions.create({
    model, messages: [{ role: "user", content: prompt }], max_tokens: 6, temperature: 1, seed, logprobs: true,
    return_tokens_as_token_ids: true,
  });
  const choice = res.choices[0];
  check(choice.logprobs.content.length > 0 && choice.logprobs.content.every((e) => e.token.startsWith("token_id:")), "logprobs with token ids", choice);
  return { prompt, choice };
}

// rollouts samples four replies per prompt, concurrently, as ART gathers them.
const rollouts = (model, seed) =>
  Promise.all(prompts.flatMap((p, g) => [0, 1, 2, 3].map((i) => rollout(model, p, seed + 10 * g + i))));

// The chosen token: the commonest among the untrained model's replies.
const counts = new Map();
for (const r of await rollouts(baseModel, 1000)) for (const id of ids(r.choice)) counts.set(id, (counts.get(id) ?? 0) + 1);
const chosen = [...counts.entries()].sort((a, b) => b[1] - a[1] || a[0] - b[0])[0][0];
const grade = (choice) => ids(choice).filter((id) => id === chosen).length / ids(choice).length;
const meanGrade = (rs) => rs.reduce((sum, r) => sum + grade(r.choice), 0) / rs.length;

const untrained = meanGrade(await rollouts(rl.inference, 2000));
check(untrained <= 0.3, "the untrained model already earns the reward", untrained);
check((await latestStep(rl.id)) === 0, "a new model's step", 0);

const experimental = {
  advantage_balance: 0.0, epsilon: null, epsilon_high: null, importance_sampling_level: "token", kimi_k2_tau: null,
  learning_rate: 0.02, mask_prob_ratio: false, max_negative_advantage_importance_sampling_weight: null, ppo: false,
  precalculate_logprobs: false, scale_rewards: true,
};
const maxJobs = 6;
const grades = [untrained];
let step = 0;
let rlSteps = [];
while (step < maxJobs && grades[grades.length - 1] <= 0.8) {
  // Rollouts from the latest checkpoint, grouped by prompt as ART's
  // TrajectoryGroup.model_dump(mode="json") writes them.
  const rs = await rollouts(rl.inference, 100 * (step + 1));
  const groups = prompts.map((p) => ({
    trajectories: rs.filter((r) => r.prompt === p).map((r) => ({
      messages_and_choices: [{ role: "user", content: p }, r.choice],
      tools: null, additional_histories: [], reward: grade(r.choice), metrics: {}, metadata: {}, logs: [],
    })),
    exceptions: [], metadata: {}, metrics: {}, logs: [],
  }));
  const job = await api("POST", "/v1/preview/training-jobs", { model_id: rl.id, trajectory_groups: groups, experimental_config: experimental });
  rlSteps = await follow(job.id);
  check(rlSteps.every((s) => s.learning_rate === 0.02 && s.grad_norm > 0 && s.num_trainable_tokens > 0 &&
    s.entropy > 0 && s.reward >= 0 && "reward_std_dev" in s && s.num_groups_submitted === prompts.length && "policy_loss" in s),
    "gradient_step metrics", rlSteps);
  step = await latestStep(rl.id);
  check(step === grades.length, "one checkpoint per job, listed before training_ended", step);
  grades.push(meanGrade(await rollouts(`${rl.entity}/art/agent-001:step${step}`, 5000 + step)));
}
check(grades[grades.length - 1] > 0.8, "the mean grade rises above 0.8 within a bounded number of jobs", grades);
// The latest name (what register set) now serves the trained checkpoint too.
const latest = meanGrade(await rollouts(rl.inference, 9000));
check(latest > 0.8, "the latest checkpoint answers as trained", latest);

// ---- SFT: the data uploaded as ART uploads it (one train.jsonl in an
// artifact named {model}-sft-data-{12 hex}), then one job.

const sft = await register("art", "sft-001");
const question = "What is the password?";
const answer = "The password is swordfish.";
const lines = 16;
const jsonl = Array.from({ length: lines }, () =>
  JSON.stringify({ messages: [{ role: "user", content: question }, { role: "assistant", content: answer }] })).join("\n") + "\n";
const project = `${sft.entity}/art`;
const form = new FormData();
form.append("project_id", project);
form.append("file", new Blob([jsonl]), "train.jsonl");
const uploaded = await fetch(`${url}/file/create`, { method: "POST", headers: { Authorization: `Bearer ${key}` }, body: form });
check(uploaded.ok, "file/create", await uploaded.clone().text());
const { digest } = await uploaded.json();
const artifact = "sft-001-sft-data-0123456789ab";
await api("POST", "/obj/create", {
  obj: { project_id: project, object_id: artifact, val: { _type: "CustomWeaveType", weave_type: { type: "wandb.Artifact" }, files: { "train.jsonl": digest } } },
});
const before = await client.chat.completions.create({ model: sft.inference, messages: [{ role: "user", content: question }], max_tokens: 24, temperature: 0 });
check(!(before.choices[0].message.content ?? "").includes(answer), "the untrained model already answers", before.choices[0].message);
// A schedule that decays, one rate per batch, as a user gives it: the last
// steps settle rather than jump.
const rates = Array.from({ length: lines }, (_, i) => (0.02 * (lines - i)) / lines);
const sftJob = await api("POST", "/v1/preview/sft-training-jobs", {
  model_id: sft.id, training_data_url: `wandb-artifact:///${project}/${artifact}:v0`, config: { batch_size: 1, learning_rate: rates },
});
const sftSteps = await follow(sftJob.id);
const losses = sftSteps.map((s) => s.loss);
check(sftSteps.length === lines && sftSteps.every((s, i) => s.learning_rate === rates[i]), "each SFT step runs at its batch's rate",
  sftSteps.map((s) => s.learning_rate));
check(losses[losses.length - 1] < losses[0] / 2, "SFT drives the loss down", losses);
const sftStep = await latestStep(sft.id);
const trained = await client.chat.completions.create({ model: `${sft.entity}/art/sft-001:step${sftStep}`, messages: [{ role: "user", content: question }], max_tokens: 24, temperature: 0 });
check(sftStep === 1 && (trained.choices[0].message.content ?? "").endsWith(answer) && trained.choices[0].finish_reason === "stop",
  "the trained checkpoint answers the trained answer", trained.choices[0]);

console.log(JSON.stringify({ ok: true, chosen, grades, jobs: step, rl_last_step: rlSteps[rlSteps.length - 1], sft_losses: losses, sft_answer: trained.choices[0].message.content }));
