// RL jobs trained on a scorer's rewards, on one server that serves a model
// itself (-model DIR): the rollouts are sampled through the official openai
// npm client as ART samples them, each reply is scored by a scorer
// published in the project (POST /v2/{entity}/{project}/scorers/score, the
// monitors' own scoring, which answers a reward per item), and those
// rewards are the trajectories' rewards of the RL jobs, until the replies
// the trained checkpoint gives earn the reward.
//
// WEFT_REWARD chooses the scorer: "regex", a RegexScorer matching the
// commonest word of the untrained model's replies, or "judge", an
// LLMAsAJudgeScorer whose judge is the served base model (its
// LLMStructuredCompletionModel published as an object and named by ref),
// answering {"<key>": boolean} under the verdict's JSON Schema at
// temperature 0, the boolean the reward. The judge never changes while the
// policy trains, so its verdict is a fixed function of the reply; of a few
// keys, the one the untrained replies earn least often (but some do) is
// the reward.
//
// Run by internal/integration/training (TestRLOnScorerRewards) with
// WEFT_URL, WEFT_KEY, WEFT_MODEL (the served base model), WEFT_PROJECT
// (<entity>/<project>) and WEFT_REWARD set; prints one JSON line with what
// it saw and exits non-zero on the first mismatch.
import OpenAI from "openai";

import { check, jsonAPI } from "./checks.mjs";

const url = process.env.WEFT_URL;
const key = process.env.WEFT_KEY;
const baseModel = process.env.WEFT_MODEL;
const project = process.env.WEFT_PROJECT;
const reward = process.env.WEFT_REWARD;
const [, projectName] = project.split("/");
const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: key, maxRetries: 0 });
const api = jsonAPI(url, key);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const ref = (name, digest) => `weave:///${project}/object/${name}:${digest}`;

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

// rewards scores replies through the project's scorer, 16 at a time (the
// most one request scores); a reply the judge gave no verdict on earns 0.
async function rewards(scorerRef, path, rs) {
  const out = [];
  for (let i = 0; i < rs.length; i += 16) {
    const batch = rs.slice(i, i + 16);
    const res = await api("POST", `/v2/${project}/scorers/score`, {
      scorer: scorerRef, reward: path, items: batch.map((r) => ({ inputs: { prompt: r.prompt }, output: r.choice.message.content ?? "" })),
    });
    for (const item of res.results) {
      check(typeof item.reward === "number" || (reward === "judge" && item.error), "a reward, or a judge's error, per reply", item);
      out.push(item.reward ?? 0);
    }
  }
  return out;
}
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;

const untrained = await rollouts(baseModel, 10000, false);
let scorer; // { ref, path, what }
if (reward === "regex") {
  // The commonest token (as text) of the untrained model's replies.
  const counts = new Map();
  for (const r of untrained) {
    for (const e of r.choice.logprobs.content) {
      if (/^[A-Za-z]{2,}$/.test(e.token.trim())) counts.set(e.token.trim(), (counts.get(e.token.trim()) ?? 0) + 1);
    }
  }
  check(counts.size > 0, "the untrained model's replies hold a word", null);
  const chosen = [...counts.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0][0];
  const obj = await api("POST", "/obj/create", {
    obj: { project_id: project, object_id: "says_it", val: { _type: "RegexScorer", _class_name: "RegexScorer", _bases: ["Scorer", "Object", "BaseModel"], pattern: chosen } },
  });
  scorer = { ref: ref("says_it", obj.digest), path: "match", what: chosen };
} else {
  check(reward === "judge", "WEFT_REWARD is regex or judge", reward);
  const model = await api("POST", "/obj/create", {
    obj: { project_id: project, object_id: "judge_model", val: {
      _type: "LLMStructuredCompletionModel", _class_name: "LLMStructuredCompletionModel", _bases: ["Model", "Object", "BaseModel"],
      llm_model_id: baseModel, default_params: { temperature: 0, max_tokens: 64, response_format: "json_schema" },
    } },
  });
  const candidates = [];
  for (const k of ["ok", "pass", "good", "correct", "fine", "right"]) {
    const obj = await api("POST", "/obj/create", {
      obj: { project_id: project, object_id: `judge_${k}`, val: {
        _type: "LLMAsAJudgeScorer", _class_name: "LLMAsAJudgeScorer", _bases: ["Scorer", "Object", "BaseModel"],
        model: ref("judge_model", model.digest), scoring_prompt: "{output}",
        response_schema: { type: "object", properties: { [k]: { type: "boolean" } }, required: [k], additionalProperties: false },
      } },
    });
    const c = { ref: ref(`judge_${k}`, obj.digest), path: k, what: k };
    c.mean = mean(await rewards(c.ref, k, untrained));
    candidates.push(c);
  }
  const earned = candidates.filter((c) => c.mean > 0).sort((a, b) => a.mean - b.mean);
  check(earned.length > 0, "some untrained reply earns a judge's reward", candidates);
  scorer = earned[0];
}

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
const score = (rs) => rewards(scorer.ref, scorer.path, rs);
const means = [mean(await score(await rollouts(inference, 20000)))];
const maxJobs = 8;
let step = 0;
while (step < maxJobs && means[means.length - 1] < 0.9) {
  const rs = await rollouts(inference, 1000 * (step + 1));
  const rewarded = await score(rs);
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
  means.push(mean(await score(await rollouts(`${model.entity}/${projectName}/judged-001:step${step}`, 50000 + 1000 * step))));
}
console.log(JSON.stringify({ ok: true, scorer: scorer.ref, reward: scorer.what, means, jobs: step }));
