// End-to-end check of the Responses API with the official openai npm
// client. Run by internal/integration/chat (TestResponsesWithOpenAINode)
// with WEFT_URL, WEFT_KEY and WEFT_MODEL set; prints one JSON line with
// what it saw and exits non-zero on the first mismatch.
import OpenAI from "openai";

const client = new OpenAI({ baseURL: `${process.env.WEFT_URL}/v1`, apiKey: process.env.WEFT_KEY, maxRetries: 0, project: "admin/responses-node" });
const model = process.env.WEFT_MODEL;

function check(condition, what, value) {
  if (!condition) {
    console.error(`mismatch: ${what}: ${JSON.stringify(value)}`);
    process.exit(1);
  }
}

const request = { model, instructions: "Answer briefly.", input: "Hello!", max_output_tokens: 8, temperature: 0 };
const whole = await client.responses.create(request);
check(whole.object === "response" && whole.id.startsWith("resp_") && whole.output_text.length > 0 &&
  ["completed", "incomplete"].includes(whole.status) && whole.usage.output_tokens > 0, "whole response", whole);

// The SDK's own stream helper accumulates the events into a response and
// throws on an event out of order (a delta before its item, an index that
// does not exist).
const stream = client.responses.stream(request);
const types = [];
let deltas = "";
for await (const event of stream) {
  types.push(event.type);
  if (event.type === "response.output_text.delta") deltas += event.delta;
}
const final = await stream.finalResponse();
check(types[0] === "response.created" && types[1] === "response.in_progress" && types.at(-1) === `response.${whole.status}`, "event order", types);
// The helper's final response is its accumulation of the events (it takes
// the server's response only from response.completed).
const finalText = final.output.filter((o) => o.type === "message").flatMap((o) => o.content).map((c) => c.text).join("");
check(deltas === whole.output_text && finalText === whole.output_text, "streamed text equals the whole one", { deltas, whole: whole.output_text, final });

// Stored: retrieve, input items, a chain, delete.
const got = await client.responses.retrieve(final.id);
check(got.id === final.id && got.output_text === finalText && got.status === whole.status, "retrieve", got);
const next = await client.responses.create({ model, previous_response_id: final.id, input: [{ role: "user", content: [{ type: "input_text", text: "And?" }] }], max_output_tokens: 4 });
check(next.previous_response_id === final.id, "chain", next);
const items = await client.responses.inputItems.list(next.id);
check(items.data.length === 1 && items.data[0].type === "message" && items.data[0].content[0].text === "And?", "input items", items.data);
await client.responses.delete(final.id);
let gone = null;
try {
  await client.responses.retrieve(final.id);
} catch (err) {
  gone = err;
}
check(gone instanceof OpenAI.NotFoundError, "retrieve after delete", gone?.error);

let bad = null;
try {
  await client.responses.create({ model, input: "x", tools: [{ type: "web_search" }] });
} catch (err) {
  bad = err;
}
check(bad instanceof OpenAI.BadRequestError && /not supported/.test(bad.message), "a hosted tool", bad?.error);

console.log(JSON.stringify({ ok: true, text: whole.output_text, events: types.length }));
