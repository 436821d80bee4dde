// Publishes a scorer and a Monitor with the official Weave TypeScript SDK
// (client.publish sends a plain object's JSON as it is, the shape the
// Python SDK gives weave.Monitor), then makes calls of the monitored op and
// of another op for the server's monitors to score.
//
// Run by internal/integration/tssdk (TestWeaveSDKMonitor) with
// WF_TRACE_SERVER_URL, WANDB_API_KEY, WEFT_PROJECT, WEFT_CALLS and
// WEFT_SAMPLING_RATE set. It prints one JSON line with the refs it
// published, and exits non-zero on anything the SDK reports.
import * as weave from "weave";

const sdkErrors = [];
const consoleError = console.error.bind(console);
console.error = (...args) => {
  sdkErrors.push(args.map((a) => (a instanceof Error ? a.stack : String(a))).join(" "));
  consoleError(...args);
};
process.on("unhandledRejection", (reason) => {
  consoleError(`unhandled rejection: ${reason instanceof Error ? reason.stack : String(reason)}`);
  process.exit(1);
});

const project = process.env.WEFT_PROJECT;
const calls = Number(process.env.WEFT_CALLS);
await weave.login(process.env.WANDB_API_KEY, new URL(process.env.WF_TRACE_SERVER_URL).host);
const client = await weave.init(project);

const scorer = await client.publish(
  { _type: "RegexScorer", _class_name: "RegexScorer", _bases: ["Scorer", "Object", "BaseModel"], name: "has_digit", pattern: "[0-9]" },
  "has_digit",
);
const monitor = await client.publish(
  {
    _type: "Monitor",
    _class_name: "Monitor",
    _bases: ["Object", "BaseModel"],
    name: "digits",
    description: "answers that hold a digit",
    sampling_rate: Number(process.env.WEFT_SAMPLING_RATE),
    scorers: [scorer.uri()],
    call_filter: { op_names: [`weave:///${project}/op/answer:*`], query: null },
    active: true,
  },
  "digits",
);

const answer = weave.op(async function answer(i) {
  return i % 2 === 0 ? `answer ${i}` : "no digits here";
});
const other = weave.op(async function other(i) {
  return `other ${i}`;
});
for (let i = 0; i < calls; i++) {
  await answer(i);
  if (i % 10 === 0) await other(i);
}
await client.waitForBatchProcessing();
if (sdkErrors.length > 0) {
  consoleError(`the SDK reported errors: ${sdkErrors.join("\n")}`);
  process.exit(1);
}
console.log(JSON.stringify({ ok: true, scorer: scorer.uri(), monitor: monitor.uri() }));
