package tokenizer

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/weftlabs/weft/internal/llm/gguf"
)

// Tokenizer is a Hugging Face tokenizer loaded from tokenizer.json and
// tokenizer_config.json. It is safe for concurrent use.
type Tokenizer struct {
	model         *bpe
	normalizer    normalizer    // nil: none
	preTokenizer  preTokenizer  // nil: the whole segment is one piece
	postProcessor postProcessor // nil: nothing added
	decoder       decoder       // nil: tokens joined with spaces

	added        []AddedToken        // in file order
	addedByID    map[int]*AddedToken // the file's ids
	addedText    map[int]string      // what decoding writes for an added id
	addedByText  map[string]int
	rawAdded     *addedMatcher // tokens matched in the raw input
	normAdded    *addedMatcher // tokens matched in normalized text
	vocabSize    int
	cleanUp      bool
	special      SpecialTokens
	maxLength    int
	chatTemplate map[string]string
}

// SpecialTokens are the roles tokenizer_config.json gives to tokens. A role
// the file leaves unset has an empty Text and ID -1.
type SpecialTokens struct {
	BOS, EOS, Pad, Unk TokenRef
	// AddBOS and AddEOS are tokenizer_config.json's add_bos_token and
	// add_eos_token as written (false when absent). What Encode adds is
	// decided by the post-processor; these are informational.
	AddBOS, AddEOS bool
}

// TokenRef names a token by text and id.
type TokenRef struct {
	Text string
	ID   int
}

// File names in a model directory.
const (
	TokenizerFile       = "tokenizer.json"
	TokenizerConfigFile = "tokenizer_config.json"
)

// Load reads tokenizer.json and, when present, tokenizer_config.json from a
// model directory, or the tokenizer of a GGUF model (a .gguf file, a
// directory holding one, an Ollama model: see gguf.Locate and FromGGUF).
func Load(dir string) (*Tokenizer, error) {
	if loc, ok, err := gguf.Locate(dir); err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	} else if ok {
		f, err := gguf.Open(loc.File)
		if err != nil {
			return nil, fmt.Errorf("tokenizer: %w", err)
		}
		defer f.Close()
		return FromGGUF(f)
	}
	data, err := os.ReadFile(filepath.Join(dir, TokenizerFile))
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	config, err := os.ReadFile(filepath.Join(dir, TokenizerConfigFile))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	return New(data, config)
}

// New builds a tokenizer from the contents of tokenizer.json and
// tokenizer_config.json (which may be nil). A component or option it does not
// implement is an error wrapping [ErrUnsupported] that names the field.
func New(tokenizerJSON, configJSON []byte) (*Tokenizer, error) {
	var f jsonFile
	if err := json.Unmarshal(tokenizerJSON, &f); err != nil {
		return nil, invalid(TokenizerFile, "%v", err)
	}
	var cfg jsonConfig
	if len(configJSON) > 0 {
		if err := json.Unmarshal(configJSON, &cfg); err != nil {
			return nil, invalid(TokenizerConfigFile, "%v", err)
		}
	}
	// truncation and padding are ignored: callers that go through
	// transformers turn them off unless a request asks for them.

	alphabet := newByteAlphabet()
	t := &Tokenizer{
		addedByID:   make(map[int]*AddedToken),
		addedText:   make(map[int]string),
		addedByText: make(map[string]int),
	}
	var err error
	if t.model, err = newBPE("model", f.Model, alphabet); err != nil {
		return nil, err
	}
	if t.normalizer, err = newNormalizer("normalizer", f.Normalizer); err != nil {
		return nil, err
	}
	if t.preTokenizer, err = newPreTokenizer("pre_tokenizer", f.PreTokenizer); err != nil {
		return nil, err
	}
	if t.postProcessor, err = newPostProcessor("post_processor", f.PostProcessor); err != nil {
		return nil, err
	}
	if t.decoder, err = newDecoder("decoder", f.Decoder, alphabet); err != nil {
		return nil, err
	}
	if err := t.loadAddedTokens(f.AddedTokens); err != nil {
		return nil, err
	}
	if err := t.loadConfig(cfg); err != nil {
		return nil, err
	}
	return t, nil
}

// loadAddedTokens registers added_tokens as the reference implementation
// does when it reads a file: a token whose content the vocabulary already
// has keeps that id, and the others are numbered from the model's
// vocabulary size on, in file order. The ids written in the file are not
// read (well-formed files agree with this numbering; the reference only
// warns when they do not). A repeated content updates the first token's
// options.
func (t *Tokenizer) loadAddedTokens(tokens []jsonAddedToken) error {
	nextID := len(t.model.vocab)
	byContent := make(map[string]int) // content → index in t.added
	for _, at := range tokens {
		if at.Content == "" {
			continue
		}
		added := AddedToken{
			Content: at.Content, Special: at.Special, SingleWord: at.SingleWord,
			LStrip: at.LStrip, RStrip: at.RStrip,
			// Absent means "normalized unless special", the default of the
			// reference implementation.
			Normalized: at.Normalized == nil && !at.Special || at.Normalized != nil && *at.Normalized,
		}
		if i, ok := byContent[at.Content]; ok {
			added.ID = t.added[i].ID
			t.added[i] = added
			continue
		}
		if id, ok := t.model.vocab[at.Content]; ok {
			added.ID = id
		} else {
			added.ID = nextID
			nextID++
		}
		byContent[at.Content] = len(t.added)
		t.added = append(t.added, added)
	}

	t.vocabSize = len(t.model.tokens)
	var raw, normalized []addedEntry
	for i := range t.added {
		at := &t.added[i]
		t.addedByID[at.ID] = at
		t.addedByText[at.Content] = at.ID
		t.vocabSize = max(t.vocabSize, at.ID+1)
		text := at.Content
		if at.Normalized {
			if t.normalizer != nil {
				text = t.normalizer.normalize(text)
			}
			normalized = append(normalized, addedEntry{text: text, token: at})
		} else {
			raw = append(raw, addedEntry{text: text, token: at})
		}
		t.addedText[at.ID] = text
	}
	t.rawAdded = newAddedMatcher(raw)
	t.normAdded = newAddedMatcher(normalized)
	return nil
}

func (t *Tokenizer) loadConfig(cfg jsonConfig) error {
	t.cleanUp = cfg.CleanUpTokenizationSpaces != nil && *cfg.CleanUpTokenizationSpaces
	t.special.AddBOS = cfg.AddBOSToken != nil && *cfg.AddBOSToken
	t.special.AddEOS = cfg.AddEOSToken != nil && *cfg.AddEOSToken
	for _, role := range []struct {
		field string
		raw   json.RawMessage
		ref   *TokenRef
	}{
		{"bos_token", cfg.BOSToken, &t.special.BOS},
		{"eos_token", cfg.EOSToken, &t.special.EOS},
		{"pad_token", cfg.PadToken, &t.special.Pad},
		{"unk_token", cfg.UnkToken, &t.special.Unk},
	} {
		text, err := configToken(TokenizerConfigFile+"."+role.field, role.raw)
		if err != nil {
			return err
		}
		*role.ref = TokenRef{Text: text, ID: -1}
		if text == "" {
			continue
		}
		id, ok := t.TokenToID(text)
		if !ok {
			return invalid(TokenizerConfigFile+"."+role.field, "%q is not a token", text)
		}
		role.ref.ID = id
	}
	if n, err := cfg.ModelMaxLength.Int64(); err == nil && n > 0 && n < 1<<40 {
		// Files without a real limit write a huge sentinel (1e30).
		t.maxLength = int(n)
	}
	if err := t.loadChatTemplates(cfg.ChatTemplate); err != nil {
		return err
	}
	// The Llama family of tokenizers in transformers rebuild their
	// post-processor from add_bos_token / add_eos_token (defaults true and
	// false) rather than keep the file's.
	switch strings.TrimSuffix(cfg.TokenizerClass, "Fast") {
	case "LlamaTokenizer", "CodeLlamaTokenizer", "GemmaTokenizer":
		addBOS := cfg.AddBOSToken == nil || *cfg.AddBOSToken
		var tmpl templateProcessing
		if addBOS {
			if t.special.BOS.ID < 0 {
				return invalid(TokenizerConfigFile+".add_bos_token", "true without a bos_token")
			}
			tmpl = append(tmpl, templatePiece{ids: []int{t.special.BOS.ID}})
		}
		tmpl = append(tmpl, templatePiece{sequence: true})
		if t.special.AddEOS {
			if t.special.EOS.ID < 0 {
				return invalid(TokenizerConfigFile+".add_eos_token", "true without an eos_token")
			}
			tmpl = append(tmpl, templatePiece{ids: []int{t.special.EOS.ID}})
		}
		t.postProcessor = tmpl
	}
	return nil
}

// loadChatTemplates reads chat_template: one template, or a list of named
// ones.
func (t *Tokenizer) loadChatTemplates(raw json.RawMessage) error {
	if isNull(raw) {
		return nil
	}
	var one string
	if err := json.Unmarshal(raw, &one); err == nil {
		t.chatTemplate = map[string]string{"default": one}
		return nil
	}
	var named []struct {
		Name     string `json:"name"`
		Template string `json:"template"`
	}
	if err := json.Unmarshal(raw, &named); err != nil {
		return invalid(TokenizerConfigFile+".chat_template", "want a string or a list of {name, template}: %v", err)
	}
	t.chatTemplate = make(map[string]string, len(named))
	for _, n := range named {
		t.chatTemplate[n.Name] = n.Template
	}
	return nil
}

// Encode turns text into token ids. Added tokens written in the text (as a
// chat template writes them) become those tokens. With addSpecialTokens the
// post-processor adds what the model expects around a sequence (Llama 2's
// BOS; nothing for Qwen3 or this Llama 3 file).
func (t *Tokenizer) Encode(text string, addSpecialTokens bool) []int {
	ids := make([]int, 0, len(text)/3+4)
	var segs, subs []segment
	var pieces []piece
	segs = t.rawAdded.split(text, true, segs)
	for _, seg := range segs {
		if seg.token != nil {
			ids = append(ids, seg.token.ID)
			continue
		}
		// Empty text between tokens, before or after normalizing, is
		// dropped: Metaspace must not prepend to nothing.
		if seg.text == "" {
			continue
		}
		norm := seg.text
		if t.normalizer != nil {
			norm = t.normalizer.normalize(norm)
		}
		subs = t.normAdded.split(norm, seg.atStart, subs[:0])
		for _, sub := range subs {
			if sub.token != nil {
				ids = append(ids, sub.token.ID)
				continue
			}
			if sub.text == "" {
				continue
			}
			p := piece{text: sub.text, atStart: sub.atStart}
			pieces = pieces[:0]
			if t.preTokenizer != nil {
				pieces = t.preTokenizer.split(p, pieces)
			} else if p.text != "" {
				pieces = append(pieces, p)
			}
			for _, p := range pieces {
				ids = t.model.tokenize(p, ids)
			}
		}
	}
	if t.postProcessor != nil {
		ids = t.postProcessor.process(ids, addSpecialTokens)
	}
	return ids
}

// DecodeOptions tune [Tokenizer.Decode].
type DecodeOptions struct {
	// SkipSpecialTokens leaves out special added tokens (BOS, EOS, chat
	// markers); non-special added tokens such as Qwen's <think> stay.
	SkipSpecialTokens bool
	// KeepTokenizationSpaces skips tokenizer_config.json's
	// clean_up_tokenization_spaces step, as incremental (streaming)
	// detokenizers do.
	KeepTokenizationSpaces bool
}

// Decode turns token ids back into text, as transformers' decode does. Ids
// outside the vocabulary are skipped; callers that must reject them check
// against [Tokenizer.VocabSize].
func (t *Tokenizer) Decode(ids []int, opts DecodeOptions) string {
	s := t.decode(ids, opts.SkipSpecialTokens)
	if t.cleanUp && !opts.KeepTokenizationSpaces {
		s = cleanUpTokenizationSpaces(s)
	}
	return s
}

// decode runs the decoder chain, without clean-up.
func (t *Tokenizer) decode(ids []int, skipSpecial bool) string {
	if len(ids) == 0 {
		return ""
	}
	tokens := make([]string, 0, len(ids))
	for _, id := range ids {
		if at, ok := t.addedByID[id]; ok {
			if skipSpecial && at.Special {
				continue
			}
			tokens = append(tokens, t.addedText[id])
			continue
		}
		if id < 0 || id >= len(t.model.tokens) || t.model.tokens[id] == "" {
			continue
		}
		tok := t.model.tokens[id]
		// The reference implementation skips by content: a model token
		// spelled like a special added token is skipped too.
		if skipSpecial {
			if aid, ok := t.addedByText[tok]; ok && t.addedByID[aid].Special {
				continue
			}
		}
		tokens = append(tokens, tok)
	}
	if t.decoder == nil {
		return strings.Join(tokens, " ")
	}
	return strings.Join(t.decoder.decodeChain(tokens), "")
}

// IDToToken is the vocabulary string of an id (convert_ids_to_tokens): for
// byte-level models it is written in the byte-level alphabet ("Ġthe").
func (t *Tokenizer) IDToToken(id int) (string, bool) {
	if _, ok := t.addedByID[id]; ok {
		return t.addedText[id], true
	}
	if id < 0 || id >= len(t.model.tokens) || t.model.tokens[id] == "" {
		return "", false
	}
	return t.model.tokens[id], true
}

// TokenToID is the id of a vocabulary string, added tokens first.
func (t *Tokenizer) TokenToID(token string) (int, bool) {
	if id, ok := t.addedByText[token]; ok {
		return id, true
	}
	id, ok := t.model.vocab[token]
	return id, ok
}

// VocabSize is one more than the largest id the tokenizer knows.
func (t *Tokenizer) VocabSize() int { return t.vocabSize }

// AddedTokens are the file's added tokens, in file order.
func (t *Tokenizer) AddedTokens() []AddedToken { return append([]AddedToken(nil), t.added...) }

// IsSpecial reports whether id is a special added token.
func (t *Tokenizer) IsSpecial(id int) bool {
	at, ok := t.addedByID[id]
	return ok && at.Special
}

// SpecialTokens are the roles tokenizer_config.json names.
func (t *Tokenizer) SpecialTokens() SpecialTokens { return t.special }

// ModelMaxLength is tokenizer_config.json's model_max_length, when it
// states a real limit.
func (t *Tokenizer) ModelMaxLength() (int, bool) { return t.maxLength, t.maxLength > 0 }

// ChatTemplates are tokenizer_config.json's chat templates by name; a file
// with a single template has it under "default".
func (t *Tokenizer) ChatTemplates() map[string]string {
	out := make(map[string]string, len(t.chatTemplate))
	for k, v := range t.chatTemplate {
		out[k] = v
	}
	return out
}
