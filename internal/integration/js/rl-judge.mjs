// An RL job trained on a scorer's rewards, on one server that serves a
// model itself (-model DIR): the rollouts are sampled through the official
// openai npm client as ART samples them, each reply is scored by a scorer
// published in the project (POST /v2/{entity}/{project}/scorers/score, the
// monitors' own scoring, which answers a reward per item), and those
// rewards are the trajectories' rewards of the RL jobs, until the replies
// the trained checkpoint gives earn the reward.
//
// Run by internal/integration/training (TestRLOnScorerRewards) with
// WEFT_URL, WEFT_KEY, WEFT_MODEL (the served base model) and WEFT_PROJECT
// (<entity>/<project>) set; prints one JSON line with what it saw and exits
// non-zero on the first mismatch.
import OpenAI from "openai";

import { check, jsonAPI } from "./checks.mjs";

const url = process.env.WEFT_URL;
const key = process.env.WEFT_KEY;
const baseModel = process.env.WEFT_MODEL;
const project = process.env.WEFT_PROJECT;
const [, projectName] = project.split("/");
const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: key, maxRetries: 0 });
const api = jsonAPI(url, key);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const prompts = ["Name a colour.", "Name a fruit.", "Name a city."];

// sample is one reply, with its tokens as ids when ids is set (what the
// trainer reads) or as text.
async function sample(model, prompt, seed, ids) {
  const res = await client.chat.completions.create({
    model, messages: [{ role: "user", content: prompt }], max_tokens: 6, temperature: 1, seed, logprobs: true,
    return_tokens_as_token_ids: ids,
  });
  return { prompt, choice: res.choices[0] };
}
// perPrompt replies to each prompt: a group wide enough that some earn the
// reward while few do.
const perPrompt = 8;
const rollouts = (model, seed, ids = true) =>
  Promise.all(prompts.flatMap((p, g) => Array.from({ length: perPrompt }, (_, i) => sample(model, p, seed + 100 * g + i, ids))));

// The reward: whether a reply holds the commonest token (as text) of the
// untrained model's replies, judged by a RegexScorer of the project.
const counts = new Map();
for (const r of await rollouts(baseModel, 10000, false)) {
  for (const e of r.choice.logprobs.content) {
    if (/^[A-Za-z]{2,}$/.test(e.token.trim())) counts.set(e.token.trim(), (counts.get(e.token.trim()) ?? 0) + 1);
  }
}
check(counts.size > 0, "the untrained model's replies hold a word", null);
const chosen = [...counts.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0][0];
const scorer = await api("POST", "/obj/create", {
  obj: { project_id: project, object_id: "says_it", val: { _type: "RegexScorer", _class_name: "RegexScorer", _bases: ["Scorer", "Object", "BaseModel"], pattern: chosen } },
});
const scorerRef = `weave:///${project}/object/says_it:${scorer.digest}`;

// rewards scores replies through the project's scorer, 16 at a time.
async function rewards(rs) {
  const out = [];
  for (let i = 0; i < rs.length; i += 16) {
    const batch = rs.slice(i, i + 16);
    const res = await api("POST", `/v2/${project}/scorers/score`, {
      scorer: scorerRef, reward: "match", items: batch.map((r) => ({ inputs: { prompt: r.prompt }, output: r.choice.message.content ?? "" })),
    });
    for (const item of res.results) {
      check(typeof item.reward === "number", "a reward per reply", item);
      out.push(item.reward);
    }
  }
  return out;
}
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;

const model = await api("POST", "/v1/preview/models", { entity: null, project: projectName, name: "judged-001", base_model: baseModel });
const inference = `wandb-artifact:///${model.entity}/${projectName}/judged-001`;

async function finished(jobID) {
  for (;;) {
    await sleep(200);
    const job = await api("GET", `/v1/preview/training-jobs/${jobID}`);
    if (job.status === "COMPLETED") return;
    check(job.status !== "FAILED" && job.status !== "CANCELLED", "the RL job ended", job);
  }
}

const experimental = { learning_rate: 0.02, scale_rewards: true, importance_sampling_level: "token", advantage_balance: 0.0, ppo: false };
const means = [mean(await rewards(await rollouts(inference, 20000)))];
const maxJobs = 8;
let step = 0;
while (step < maxJobs && means[means.length - 1] < 0.9) {
  const rs = await rollouts(inference, 1000 * (step + 1));
  const rewarded = await rewards(rs);
  const groups = prompts.map((p) => ({
    trajectories: rs.map((r, i) => ({ r, reward: rewarded[i] })).filter(({ r }) => r.prompt === p).map(({ r, reward }) => ({
      messages_and_choices: [{ role: "user", content: p }, r.choice],
      tools: null, additional_histories: [], reward, metrics: {}, metadata: {}, logs: [],
    })),
    exceptions: [], metadata: {}, metrics: {}, logs: [],
  }));
  const job = await api("POST", "/v1/preview/training-jobs", { model_id: model.id, trajectory_groups: groups, experimental_config: experimental });
  await finished(job.id);
  step += 1;
  means.push(mean(await rewards(await rollouts(`${model.entity}/${projectName}/judged-001:step${step}`, 50000 + 1000 * step))));
}
console.log(JSON.stringify({ ok: true, chosen, means, jobs: step }));
