// End-to-end check of weft's chat gateway with the official openai npm client.
// Run by internal/integration/chat (TestOpenAINodeClient) with WEFT_URL, WEFT_KEY
// and WEFT_MODEL set; prints one JSON line with what it saw and exits non-zero
// on the first mismatch.
import OpenAI from "openai";

const client = new OpenAI({ baseURL: `${process.env.WEFT_URL}/v1`, apiKey: process.env.WEFT_KEY, maxRetries: 0 });
const model = process.env.WEFT_MODEL;
const messages = [{ role: "user", content: "hi" }];

function check(condition, what, value) {
  if (!condition) {
    console.error(`mismatch: ${what}: ${JSON.stringify(value)}`);
    process.exit(1);
  }
}

const plain = await client.chat.completions.create({ model, messages, n: 2 });
check(plain.choices.length === 2 && plain.choices[1].message.content === "Hello from the model", "plain completion", plain);
check(plain.usage.total_tokens > 0, "plain usage", plain.usage);

const stream = await client.chat.completions.create({ model, messages, stream: true, stream_options: { include_usage: true } });
let text = "";
let usage = null;
let first = null;
for await (const chunk of stream) {
  first ??= chunk;
  if (chunk.choices.length > 0) text += chunk.choices[0].delta.content ?? "";
  if (chunk.usage) usage = chunk.usage;
}
check(first.choices[0].delta.role === "assistant", "role chunk first", first);
check(text === "Hello from the model", "streamed text", text);
check(usage !== null && usage.total_tokens > 0, "usage chunk", usage);

const tools = await client.chat.completions.create({
  model, messages,
  tools: [{ type: "function", function: { name: "get_weather", parameters: { type: "object", properties: {} } } }],
});
check(tools.choices[0].message.tool_calls?.[0]?.function?.name === "get_weather", "tool call", tools.choices[0]);

let rejected = null;
try {
  await client.chat.completions.create({ model, messages, top_logprobs: 3 });
} catch (err) {
  rejected = err;
}
check(rejected instanceof OpenAI.BadRequestError && rejected.status === 400 && rejected.param === "top_logprobs", "validation error", rejected?.error);

let missing = null;
try {
  await client.chat.completions.create({ model: "no-such-model", messages });
} catch (err) {
  missing = err;
}
check(missing instanceof OpenAI.NotFoundError && missing.param === "model", "unknown model", missing?.error);

console.log(JSON.stringify({ ok: true, plainChoices: plain.choices.length, streamed: text, usage }));
