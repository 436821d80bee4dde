// End-to-end check of a model weft serves itself (-model DIR) with the
// official openai npm client. Run by internal/integration/chat
// (TestLocalModelWithOpenAINode) with WEFT_URL, WEFT_KEY and WEFT_MODEL set;
// prints one JSON line with what it saw and exits non-zero on the first
// mismatch.
import OpenAI from "openai";

const client = new OpenAI({ baseURL: `${process.env.WEFT_URL}/v1`, apiKey: process.env.WEFT_KEY, maxRetries: 0 });
const model = process.env.WEFT_MODEL;
const messages = [{ role: "user", content: "Hello!" }];

function check(condition, what, value) {
  if (!condition) {
    console.error(`mismatch: ${what}: ${JSON.stringify(value)}`);
    process.exit(1);
  }
}

const request = { model, messages, max_tokens: 10, seed: 3, temperature: 1, n: 2, logprobs: true, top_logprobs: 1 };
const whole = await client.chat.completions.create(request);
check(whole.choices.length === 2 && whole.usage.completion_tokens === 20 && whole.model === model, "whole completion", whole);
check(whole.choices.every((c) => c.logprobs.content.length === 10 && c.finish_reason === "length"), "logprobs", whole.choices);

const stream = await client.chat.completions.create({ ...request, stream: true, stream_options: { include_usage: true } });
const texts = ["", ""];
let usage = null;
let first = null;
for await (const chunk of stream) {
  first ??= chunk;
  for (const c of chunk.choices) texts[c.index] += c.delta.content ?? "";
  if (chunk.usage) usage = chunk.usage;
}
check(first.choices[0].delta.role === "assistant", "role chunk first", first);
check(texts[0] === whole.choices[0].message.content && texts[1] === whole.choices[1].message.content, "streamed text equals the whole answer", { texts, whole: whole.choices.map((c) => c.message.content) });
check(usage !== null && usage.total_tokens === whole.usage.total_tokens, "usage chunk", usage);

const stopped = await client.chat.completions.create({ model, messages, max_tokens: 5, ignore_eos: true, temperature: 0 });
check(stopped.choices[0].finish_reason === "length" && stopped.usage.completion_tokens === 5, "ignore_eos with max_tokens", stopped);

let rejected = null;
try {
  await client.chat.completions.create({ model, messages, tools: [{ type: "function", function: { name: "f", parameters: { type: "object" } } }], tool_choice: "required" });
} catch (err) {
  rejected = err;
}
check(rejected instanceof OpenAI.BadRequestError && rejected.param === "tool_choice", "tool_choice required on a local model", rejected?.error);

let tooLong = null;
try {
  await client.chat.completions.create({ model, messages, max_tokens: 100000 });
} catch (err) {
  tooLong = err;
}
check(tooLong instanceof OpenAI.BadRequestError && /cannot be greater than max_model_len/.test(tooLong.message), "max_tokens over the context", tooLong?.error);

console.log(JSON.stringify({ ok: true, streamed: texts, usage }));
