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

// Thinking is on (the template's default), but the tiny Qwen3 never opens
// a think block: its text is content, with no reasoning.
const text = (m) => (m.reasoning_content ?? "") + (m.content ?? "");
check(whole.choices.every((c) => c.message.reasoning_content === null && c.message.reasoning === null && c.message.content !== ""), "content of a model that never thought", whole.choices);
const stream = await client.chat.completions.create({ ...request, stream: true, stream_options: { include_usage: true } });
const texts = ["", ""];
let usage = null;
let first = null;
for await (const chunk of stream) {
  first ??= chunk;
  for (const c of chunk.choices) texts[c.index] += (c.delta.reasoning_content ?? "") + (c.delta.content ?? "");
  if (chunk.usage) usage = chunk.usage;
}
check(first.choices[0].delta.role === "assistant", "role chunk first", first);
check(texts[0] === text(whole.choices[0].message) && texts[1] === text(whole.choices[1].message), "streamed text equals the whole answer", { texts, whole: whole.choices.map((c) => c.message) });
check(usage !== null && usage.total_tokens === whole.usage.total_tokens, "usage chunk", usage);

const stopped = await client.chat.completions.create({ model, messages, max_tokens: 5, ignore_eos: true, temperature: 0 });
check(stopped.choices[0].finish_reason === "length" && stopped.usage.completion_tokens === 5, "ignore_eos with max_tokens", stopped);

// tool_choice "required": every choice calls a declared tool with
// arguments in its schema, whole and streamed alike.
const noThinking = { chat_template_kwargs: { enable_thinking: false } };
const weather = {
  type: "object",
  properties: { city: { type: "string", maxLength: 6 }, days: { type: "integer", minimum: 1, maximum: 7 }, unit: { enum: ["celsius", "fahrenheit"] } },
  required: ["city", "days", "unit"],
  additionalProperties: false,
};
const valid = (args) => {
  const a = JSON.parse(args);
  return Object.keys(a).join() === "city,days,unit" && typeof a.city === "string" && [...a.city].length <= 6 &&
    Number.isInteger(a.days) && a.days >= 1 && a.days <= 7 && ["celsius", "fahrenheit"].includes(a.unit);
};
const toolRequest = {
  model, messages, ...noThinking, n: 3, seed: 4, temperature: 1, max_tokens: 300,
  tools: [{ type: "function", function: { name: "get_weather", parameters: weather } }], tool_choice: "required", parallel_tool_calls: false,
};
const called = await client.chat.completions.create(toolRequest);
check(called.choices.every((c) => c.finish_reason === "tool_calls" && c.message.tool_calls.length === 1 &&
  c.message.tool_calls[0].function.name === "get_weather" && valid(c.message.tool_calls[0].function.arguments)), "required tool calls", called.choices);
const callStream = await client.chat.completions.create({ ...toolRequest, stream: true });
const streamedCalls = [[], [], []];
const finishes = [];
for await (const chunk of callStream) {
  for (const c of chunk.choices) {
    for (const d of c.delta.tool_calls ?? []) {
      streamedCalls[c.index][d.index] ??= { name: "", arguments: "" };
      streamedCalls[c.index][d.index].name += d.function?.name ?? "";
      streamedCalls[c.index][d.index].arguments += d.function?.arguments ?? "";
    }
    if (c.finish_reason) finishes[c.index] = c.finish_reason;
  }
}
check(called.choices.every((c, i) => finishes[i] === "tool_calls" && streamedCalls[i].length === 1 &&
  streamedCalls[i][0].name === "get_weather" && streamedCalls[i][0].arguments === c.message.tool_calls[0].function.arguments), "streamed tool calls", { streamedCalls, finishes });

// Thinking on: a think block the model opens (a bias on <think>, 151667,
// makes its first token one; one on </think>, 151668, closes it) is
// reasoning_content; the constrained answer after it is content.
const reasoned = await client.chat.completions.create({
  model, messages, n: 6, seed: 5, temperature: 1, max_tokens: 60, logit_bias: { 151667: 40, 151668: 80 }, structured_outputs: { choice: ["sunny", "rainy"] },
});
check(reasoned.choices.every((c) => typeof c.message.reasoning_content === "string" && ["sunny", "rainy"].includes(c.message.content)),
  "reasoning_content before a constrained answer", reasoned.choices);

let tooLong = null;
try {
  await client.chat.completions.create({ model, messages, max_tokens: 100000 });
} catch (err) {
  tooLong = err;
}
check(tooLong instanceof OpenAI.BadRequestError && /cannot be greater than max_model_len/.test(tooLong.message), "max_tokens over the context", tooLong?.error);

console.log(JSON.stringify({ ok: true, streamed: texts, usage, calls: called.choices.map((c) => c.message.tool_calls[0].function.arguments) }));
