package tokenizer

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/weftlabs/weft/internal/llm/gguf"
)

// The metadata keys of a GGUF file's tokenizer.
const (
	ggufModel          = "tokenizer.ggml.model"
	ggufPre            = "tokenizer.ggml.pre"
	ggufTokens         = "tokenizer.ggml.tokens"
	ggufScores         = "tokenizer.ggml.scores"
	ggufTokenTypes     = "tokenizer.ggml.token_type"
	ggufMerges         = "tokenizer.ggml.merges"
	ggufBOS            = "tokenizer.ggml.bos_token_id"
	ggufEOS            = "tokenizer.ggml.eos_token_id"
	ggufUnk            = "tokenizer.ggml.unknown_token_id"
	ggufPad            = "tokenizer.ggml.padding_token_id"
	ggufAddBOS         = "tokenizer.ggml.add_bos_token"
	ggufAddEOS         = "tokenizer.ggml.add_eos_token"
	ggufAddSpacePrefix = "tokenizer.ggml.add_space_prefix"
	ggufChatTemplate   = "tokenizer.chat_template"
	ggufChatTemplates  = "tokenizer.chat_templates"
)

// GGUF token types (llama_token_type).
const (
	ggufNormal      = 1
	ggufUnknown     = 2
	ggufControl     = 3
	ggufUserDefined = 4
	ggufUnused      = 5
	ggufByte        = 6
)

// ggufPreTokenizer is what llama.cpp makes of a byte-level BPE file's
// tokenizer.ggml.pre: the split regex, whether a word that is a token as a
// whole skips the merges, whether BOS is added unless the file says
// otherwise, and whether decoding cleans up spaces.
type ggufPreTokenizer struct {
	regex                         string
	ignoreMerges, addBOS, cleanUp bool
}

// ggufPreTokenizers are the pre-tokenizer names whose split is one of the
// regexes this package runs, grouped as llama.cpp's vocabulary loader groups
// them.
var ggufPreTokenizers = func() map[string]ggufPreTokenizer {
	m := map[string]ggufPreTokenizer{}
	set := func(p ggufPreTokenizer, names ...string) {
		for _, n := range names {
			m[n] = p
		}
	}
	set(ggufPreTokenizer{regex: llama3Regex, ignoreMerges: true, addBOS: true, cleanUp: true},
		"llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2", "jina-v5-nano")
	set(ggufPreTokenizer{regex: llama3Regex, cleanUp: true}, "dbrx", "smaug-bpe")
	set(ggufPreTokenizer{regex: gpt2Regex, cleanUp: true},
		"gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v2-es", "jina-v2-de", "a.x-4.0",
		"mellum", "modern-bert", "exaone4", "mpt", "olmo", "jais")
	set(ggufPreTokenizer{regex: gpt2Regex}, "trillion", "granite-docling")
	set(ggufPreTokenizer{regex: qwen2Regex}, "qwen2", "deepseek-r1-qwen", "kormo", "f2llmv2", "hunyuan", "solar-open")
	set(ggufPreTokenizer{regex: qwen2Regex, cleanUp: true}, "megrez", "stablelm2")
	return m
}()

// endOfGenerationTexts are the tokens llama.cpp's vocabulary loader (build
// b10587) ends generation at whatever their type, and makes control tokens
// when the file did not: the turn and text ends of the common chat formats.
var endOfGenerationTexts = []string{
	"<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>",
	"<end_of_turn>", "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]",
	"<|end_of_text|>", "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>",
	"<｜end▁of▁sentence｜>", "[e~[",
}

// fillInMiddleTexts are the fill-in-the-middle markers the loader makes
// control tokens the same way.
var fillInMiddleTexts = []string{
	"<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<｜fim▁begin｜>", "<PRE>", "▁<PRE>", "<|code_prefix|>", "<|prefix|>",
	"<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<｜fim▁hole｜>", "<SUF>", "▁<SUF>", "<|code_suffix|>", "<|suffix|>",
	"<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<｜fim▁end｜>", "<MID>", "▁<MID>", "<|code_middle|>", "<|middle|>",
	"<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]",
	"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>", "<|file_sep|>",
}

// EndOfGeneration returns the ids a GGUF file's model ends generation at,
// as llama.cpp decides them: the end-of-sequence, end-of-turn and
// end-of-message ids the metadata names and every token spelled as one of
// the common end markers (llama.cpp b10587's list), in id order.
func EndOfGeneration(f *gguf.File) ([]int, error) {
	tokens, err := f.Strings(ggufTokens)
	if err != nil {
		return nil, ggufError(err)
	}
	var ids []int
	for _, key := range []string{ggufEOS, "tokenizer.ggml.eot_token_id", "tokenizer.ggml.eom_token_id"} {
		if _, ok := f.Lookup(key); !ok {
			continue
		}
		v, err := f.Uint(key)
		if err != nil {
			return nil, ggufError(err)
		}
		if v < uint64(len(tokens)) {
			ids = append(ids, int(v))
		}
	}
	for id, tok := range tokens {
		if slices.Contains(endOfGenerationTexts, tok) {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return slices.Compact(ids), nil
}

// FromGGUF builds the tokenizer a GGUF file's metadata describes, as
// llama.cpp reads it: the vocabulary, token types and merges (byte-level
// BPE, tokenizer.ggml.model "gpt2", with the split of tokenizer.ggml.pre)
// or scores (SentencePiece, "llama"), the special token ids and whether BOS
// and EOS are added, and the chat templates. It is the tokenizer New builds
// from the equivalent tokenizer.json and tokenizer_config.json: control,
// unknown and user-defined tokens are added tokens (the first two special;
// tokens spelled as llama.cpp's end-of-generation and fill-in-the-middle
// markers are control tokens whatever their type, as it makes them),
// and a SentencePiece vocabulary's merges are its pairs of pieces that make
// a piece, ranked by that piece's score. Anything else the file asks for is
// an error wrapping ErrUnsupported or ErrInvalid naming the file and key.
func FromGGUF(f *gguf.File) (*Tokenizer, error) {
	tj, cfg, err := ggufFiles(f)
	if err != nil {
		return nil, err
	}
	tokJSON, err := json.Marshal(tj)
	if err != nil {
		return nil, err
	}
	cfgJSON, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	t, err := New(tokJSON, cfgJSON)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.Path, err)
	}
	return t, nil
}

// GGUFConfig returns the tokenizer_config.json equivalent to a GGUF file's
// tokenizer metadata: the special tokens' text, whether BOS and EOS are
// added, clean_up_tokenization_spaces and the chat templates; what chat
// templates read from a model directory's file.
func GGUFConfig(f *gguf.File) ([]byte, error) {
	_, cfg, err := ggufFiles(f)
	if err != nil {
		return nil, err
	}
	return json.Marshal(cfg)
}

// ggufError marks a metadata lookup's error (a key missing or of the wrong
// type, named with the file) as an invalid tokenizer.
func ggufError(err error) error { return fmt.Errorf("%w: %v", ErrInvalid, err) }

// ggufFiles returns the tokenizer.json and tokenizer_config.json contents
// equivalent to the file's metadata.
func ggufFiles(f *gguf.File) (map[string]any, map[string]any, error) {
	model, err := f.String(ggufModel)
	if err != nil {
		return nil, nil, ggufError(err)
	}
	tokens, err := f.Strings(ggufTokens)
	if err != nil {
		return nil, nil, ggufError(err)
	}
	tokens = slices.Clone(tokens) // empty ones are renamed below
	types := make([]int64, len(tokens))
	for i := range types {
		types[i] = ggufNormal
	}
	if _, ok := f.Lookup(ggufTokenTypes); ok {
		if types, err = f.Ints(ggufTokenTypes); err != nil {
			return nil, nil, ggufError(err)
		}
		if len(types) < len(tokens) {
			return nil, nil, fmt.Errorf("%w: %s: %s: %d types for %d tokens", ErrInvalid, f.Path, ggufTokenTypes, len(types), len(tokens))
		}
	}
	// The converter pads the list to the model's vocabulary with unused
	// "[PAD<id>]" entries; they are rows of the model, not tokens, so the
	// tokenizer ends where a Hugging Face tokenizer of the model does.
	for n := len(tokens); n > 0 && types[n-1] == ggufUnused && tokens[n-1] == fmt.Sprintf("[PAD%d]", n-1); n-- {
		tokens = tokens[:n-1]
	}
	vocab := make(map[string]int, len(tokens))
	for id, tok := range tokens {
		if tok == "" {
			tok = fmt.Sprintf("[EMPTY_%d]", id) // as llama.cpp names them
			tokens[id] = tok
		}
		if prev, dup := vocab[tok]; dup {
			return nil, nil, fmt.Errorf("%w: %s: %s: %q has ids %d and %d", ErrInvalid, f.Path, ggufTokens, tok, prev, id)
		}
		vocab[tok] = id
	}
	tj := map[string]any{"version": "1.0"}
	cfg := map[string]any{}
	bpe := map[string]any{"type": "BPE", "vocab": vocab}
	tj["model"] = bpe
	var s special
	switch model {
	case "gpt2":
		pre, err := f.String(ggufPre)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %v (a byte-level vocabulary needs its pre-tokenizer)", ErrUnsupported, err)
		}
		p, ok := ggufPreTokenizers[pre]
		if !ok {
			return nil, nil, fmt.Errorf("%w: %s: %s: %q (supported: the Llama 3, Qwen2 and GPT-2 splits and the names llama.cpp gives them)", ErrUnsupported, f.Path, ggufPre, pre)
		}
		merges, err := f.Strings(ggufMerges)
		if err != nil {
			return nil, nil, ggufError(err)
		}
		bpe["merges"] = merges
		bpe["ignore_merges"] = p.ignoreMerges
		tj["pre_tokenizer"] = map[string]any{"type": "Sequence", "pretokenizers": []any{
			map[string]any{"type": "Split", "pattern": map[string]any{"Regex": p.regex}, "behavior": "Isolated"},
			map[string]any{"type": "ByteLevel", "add_prefix_space": false, "use_regex": false},
		}}
		tj["decoder"] = map[string]any{"type": "ByteLevel"}
		cfg["clean_up_tokenization_spaces"] = p.cleanUp
		s = special{bos: -1, eos: -1, unk: -1, addBOS: p.addBOS}
	case "llama":
		scores, err := f.Floats(ggufScores)
		if err != nil {
			return nil, nil, ggufError(err)
		}
		if len(scores) < len(tokens) {
			return nil, nil, fmt.Errorf("%w: %s: %s: %d scores for %d tokens", ErrInvalid, f.Path, ggufScores, len(scores), len(tokens))
		}
		bpe["merges"] = sentencePieceMerges(tokens, scores, types, vocab)
		bpe["byte_fallback"] = true
		bpe["fuse_unk"] = true
		prefix := true
		if _, ok := f.Lookup(ggufAddSpacePrefix); ok {
			if prefix, err = f.Bool(ggufAddSpacePrefix); err != nil {
				return nil, nil, ggufError(err)
			}
		}
		var norms []any
		decoders := []any{
			map[string]any{"type": "Replace", "pattern": map[string]any{"String": "▁"}, "content": " "},
			map[string]any{"type": "ByteFallback"}, map[string]any{"type": "Fuse"},
		}
		if prefix {
			norms = append(norms, map[string]any{"type": "Prepend", "prepend": "▁"})
			decoders = append(decoders, map[string]any{"type": "Strip", "content": " ", "start": 1, "stop": 0})
		}
		norms = append(norms, map[string]any{"type": "Replace", "pattern": map[string]any{"String": " "}, "content": "▁"})
		tj["normalizer"] = map[string]any{"type": "Sequence", "normalizers": norms}
		tj["decoder"] = map[string]any{"type": "Sequence", "decoders": decoders}
		s = special{bos: 1, eos: 2, unk: 0, addBOS: true}
	default:
		return nil, nil, fmt.Errorf("%w: %s: %s: %q (supported: gpt2, llama)", ErrUnsupported, f.Path, ggufModel, model)
	}
	if err := s.read(f, len(tokens)); err != nil {
		return nil, nil, err
	}
	if model == "llama" && s.unk >= 0 {
		bpe["unk_token"] = tokens[s.unk]
	}
	var added []any
	for id, typ := range types[:len(tokens)] {
		if slices.Contains(endOfGenerationTexts, tokens[id]) || slices.Contains(fillInMiddleTexts, tokens[id]) {
			typ = ggufControl // as llama.cpp promotes them
		}
		if typ == ggufControl || typ == ggufUnknown || typ == ggufUserDefined {
			added = append(added, map[string]any{"id": id, "content": tokens[id],
				"special": typ != ggufUserDefined, "normalized": false})
		}
	}
	tj["added_tokens"] = added
	var single []any
	specials := map[string]any{}
	for _, role := range []struct {
		key  string
		id   int
		add  bool
		name string
	}{{"bos_token", s.bos, s.addBOS, ggufAddBOS}, {"eos_token", s.eos, s.addEOS, ggufAddEOS}, {"unk_token", s.unk, false, ""}, {"pad_token", s.pad, false, ""}} {
		if role.id >= 0 {
			cfg[role.key] = tokens[role.id]
		} else if role.add {
			return nil, nil, fmt.Errorf("%w: %s: %s is true, but the file names no %s", ErrInvalid, f.Path, role.name, role.key)
		}
		if role.add {
			specials[tokens[role.id]] = map[string]any{"id": tokens[role.id], "ids": []int{role.id}}
		}
	}
	if s.addBOS {
		single = append(single, map[string]any{"SpecialToken": map[string]any{"id": tokens[s.bos]}})
	}
	single = append(single, map[string]any{"Sequence": map[string]any{"id": "A"}})
	if s.addEOS {
		single = append(single, map[string]any{"SpecialToken": map[string]any{"id": tokens[s.eos]}})
	}
	tj["post_processor"] = map[string]any{"type": "TemplateProcessing", "single": single, "special_tokens": specials}
	cfg["add_bos_token"], cfg["add_eos_token"] = s.addBOS, s.addEOS
	templates, err := chatTemplatesOf(f)
	if err != nil {
		return nil, nil, err
	}
	if templates != nil {
		cfg["chat_template"] = templates
	}
	return tj, cfg, nil
}

// special holds the special token ids of a file (-1: none) and whether BOS
// and EOS are added to an encoding, starting from llama.cpp's defaults for
// the vocabulary type.
type special struct {
	bos, eos, unk, pad int
	addBOS, addEOS     bool
}

func (s *special) read(f *gguf.File, n int) error {
	s.pad = -1
	for _, id := range []struct {
		key string
		dst *int
	}{{ggufBOS, &s.bos}, {ggufEOS, &s.eos}, {ggufUnk, &s.unk}, {ggufPad, &s.pad}} {
		if *id.dst >= n {
			*id.dst = -1
		}
		if _, ok := f.Lookup(id.key); !ok {
			continue
		}
		v, err := f.Uint(id.key)
		if err != nil {
			return ggufError(err)
		}
		// An id outside the vocabulary (converters write 2^32-1 for "none")
		// leaves the default, as llama.cpp does.
		if v < uint64(n) {
			*id.dst = int(v)
		}
	}
	for _, b := range []struct {
		key string
		dst *bool
	}{{ggufAddBOS, &s.addBOS}, {ggufAddEOS, &s.addEOS}} {
		if _, ok := f.Lookup(b.key); !ok {
			continue
		}
		v, err := f.Bool(b.key)
		if err != nil {
			return ggufError(err)
		}
		*b.dst = v
	}
	return nil
}

// chatTemplatesOf returns the file's chat template: a string, or the list
// of named templates (tokenizer.chat_templates names them, each under
// tokenizer.chat_template.<name>) with the unnamed one as "default". Nil
// when the file has none.
func chatTemplatesOf(f *gguf.File) (any, error) {
	var def string
	if _, ok := f.Lookup(ggufChatTemplate); ok {
		var err error
		if def, err = f.String(ggufChatTemplate); err != nil {
			return nil, ggufError(err)
		}
	}
	if _, ok := f.Lookup(ggufChatTemplates); !ok {
		if def == "" {
			return nil, nil
		}
		return def, nil
	}
	names, err := f.Strings(ggufChatTemplates)
	if err != nil {
		return nil, ggufError(err)
	}
	var list []any
	if def != "" {
		list = append(list, map[string]any{"name": "default", "template": def})
	}
	for _, name := range names {
		tmpl, err := f.String(ggufChatTemplate + "." + name)
		if err != nil {
			return nil, ggufError(err)
		}
		list = append(list, map[string]any{"name": name, "template": tmpl})
	}
	return list, nil
}

// sentencePieceMerges makes a SentencePiece vocabulary's merges as
// Hugging Face's converter does (SentencePieceExtractor): every split of a
// piece into two pieces of the vocabulary is a merge, the merges of one
// piece ordered by the ids of their parts, and all of them by the score of
// the piece they make, highest first. Merging the pair of best rank is then
// what SentencePiece (and llama.cpp) do: merge the adjacent pair whose
// concatenation is the piece of highest score. Control, unknown and byte
// tokens are never made by merges.
func sentencePieceMerges(tokens []string, scores []float32, types []int64, vocab map[string]int) []any {
	type merge struct {
		left, right string
		l, r        int
		score       float32
	}
	var merges []merge
	for id, tok := range tokens {
		if t := types[id]; t == ggufControl || t == ggufUnknown || t == ggufByte {
			continue
		}
		var local []merge
		for i := range tok {
			if i == 0 {
				continue
			}
			l, okL := vocab[tok[:i]]
			r, okR := vocab[tok[i:]]
			if okL && okR {
				local = append(local, merge{tok[:i], tok[i:], l, r, scores[id]})
			}
		}
		slices.SortFunc(local, func(a, b merge) int {
			if a.l != b.l {
				return a.l - b.l
			}
			return a.r - b.r
		})
		merges = append(merges, local...)
	}
	slices.SortStableFunc(merges, func(a, b merge) int {
		switch {
		case a.score > b.score:
			return -1
		case a.score < b.score:
			return 1
		}
		return 0
	})
	out := make([]any, len(merges))
	for i, m := range merges {
		out[i] = []string{m.left, m.right}
	}
	return out
}
