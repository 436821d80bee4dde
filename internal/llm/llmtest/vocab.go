package llmtest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/weftlabs/weft/internal/llm/gguf"
)

// GGUF token types (llama.cpp's llama_token_type).
const (
	tokenNormal      = 1
	tokenUnknown     = 2
	tokenControl     = 3
	tokenUserDefined = 4
	tokenUnused      = 5
	tokenByte        = 6
)

// vocabManifest is testdata/gguf/<name>.vocab.json, written by vocab.py from
// the vocabulary file llama.cpp's converter code writes for a tokenizer.
type vocabManifest struct {
	NVocab int    `json:"n_vocab"`
	Size   int    `json:"size"`
	SHA256 string `json:"sha256"`
	KV     []struct {
		Key     string          `json:"key"`
		Derived bool            `json:"derived"`
		Type    []uint32        `json:"type"`
		Value   json.RawMessage `json:"value"`
	} `json:"kv"`
}

func testdataDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "testdata")
}

var vocabCache sync.Map // name → []gguf.KV

// VocabGGUF returns the metadata of the vocabulary-only GGUF file that
// internal/llm/testdata/gguf/vocab.py writes with llama.cpp's gguf-py for
// the npm tokenizer name (TokenizerQwen3, TokenizerLlama3 or
// TokenizerLlama2): the keys and small values as its manifest records
// them, and the tokens, token types, scores and merges derived from the
// package's tokenizer.json as the converter derives them. Written with
// gguf.Write the result is that file to the byte (the manifest's SHA-256;
// the gguf tests check it). The tokenizer files must be installed
// (RequireTokenizer).
func VocabGGUF(name string) ([]gguf.KV, error) {
	if kvs, ok := vocabCache.Load(name); ok {
		return kvs.([]gguf.KV), nil
	}
	raw, err := os.ReadFile(filepath.Join(testdataDir(), "gguf", name+".vocab.json"))
	if err != nil {
		return nil, err
	}
	var m vocabManifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	tj, err := os.ReadFile(filepath.Join(TokenizerDir(name), "tokenizer.json"))
	if err != nil {
		return nil, err
	}
	derived, err := deriveVocab(tj, m.NVocab)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var kvs []gguf.KV
	for _, kv := range m.KV {
		var v gguf.Value
		if kv.Derived {
			v, err = derived.value(kv.Key)
		} else {
			v, err = manifestValue(kv.Type, kv.Value)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", name, kv.Key, err)
		}
		kvs = append(kvs, gguf.KV{Key: kv.Key, Value: v})
	}
	vocabCache.Store(name, kvs)
	return kvs, nil
}

// VocabGGUFDigest is the size and SHA-256 of the file vocab.py wrote for
// name, and those of VocabGGUF(name) written with gguf.Write.
func VocabGGUFDigest(name string) (want, got string, err error) {
	raw, err := os.ReadFile(filepath.Join(testdataDir(), "gguf", name+".vocab.json"))
	if err != nil {
		return "", "", err
	}
	var m vocabManifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return "", "", err
	}
	kvs, err := VocabGGUF(name)
	if err != nil {
		return "", "", err
	}
	var b bytes.Buffer
	if err := gguf.Write(&b, kvs, nil); err != nil {
		return "", "", err
	}
	sum := sha256.Sum256(b.Bytes())
	return fmt.Sprintf("%d %s", m.Size, m.SHA256), fmt.Sprintf("%d %s", b.Len(), hex.EncodeToString(sum[:])), nil
}

// manifestValue rebuilds a value the manifest records as JSON.
func manifestValue(types []uint32, raw json.RawMessage) (gguf.Value, error) {
	if len(types) == 0 {
		return gguf.Value{}, fmt.Errorf("no type")
	}
	t := gguf.ValueType(types[0])
	if t == gguf.TypeArray {
		if len(types) != 2 {
			return gguf.Value{}, fmt.Errorf("nested arrays are not in vocabularies")
		}
		switch gguf.ValueType(types[1]) {
		case gguf.TypeString:
			var s []string
			err := json.Unmarshal(raw, &s)
			return gguf.Strings(s), err
		case gguf.TypeInt32:
			var v []int32
			err := json.Unmarshal(raw, &v)
			return gguf.Int32s(v), err
		case gguf.TypeFloat32:
			var v []float32
			err := json.Unmarshal(raw, &v)
			return gguf.Float32s(v), err
		}
		return gguf.Value{}, fmt.Errorf("arrays of %s", gguf.ValueType(types[1]))
	}
	var x any
	if err := json.Unmarshal(raw, &x); err != nil {
		return gguf.Value{}, err
	}
	switch t {
	case gguf.TypeString:
		return gguf.String(x.(string)), nil
	case gguf.TypeBool:
		return gguf.Bool(x.(bool)), nil
	case gguf.TypeUint32:
		return gguf.Uint32(uint32(x.(float64))), nil
	case gguf.TypeInt32:
		return gguf.Int32(int32(x.(float64))), nil
	case gguf.TypeFloat32:
		return gguf.Float32(float32(x.(float64))), nil
	}
	return gguf.Value{}, fmt.Errorf("type %s", t)
}

// derivedVocab holds the arrays the converter derives from tokenizer.json.
type derivedVocab struct {
	tokens []string
	types  []int32
	scores []float32
	merges []string
}

func (d *derivedVocab) value(key string) (gguf.Value, error) {
	switch key {
	case "tokenizer.ggml.tokens":
		return gguf.Strings(d.tokens), nil
	case "tokenizer.ggml.token_type":
		return gguf.Int32s(d.types), nil
	case "tokenizer.ggml.scores":
		return gguf.Float32s(d.scores), nil
	case "tokenizer.ggml.merges":
		return gguf.Strings(d.merges), nil
	}
	return gguf.Value{}, fmt.Errorf("not derived from tokenizer.json")
}

// deriveVocab derives the arrays as vocab.py does: for a byte-level BPE,
// convert_hf_to_gguf.py's tokens and types and gguf-py's SpecialVocab's
// merges; for a SentencePiece BPE (byte fallback), tokens, types and the
// scores rebuilt from the merge ranks.
func deriveVocab(tokenizerJSON []byte, nVocab int) (*derivedVocab, error) {
	var f struct {
		AddedTokens []addedToken `json:"added_tokens"`
		Model       struct {
			Vocab        map[string]int    `json:"vocab"`
			Merges       []json.RawMessage `json:"merges"`
			ByteFallback bool              `json:"byte_fallback"`
			UnkToken     *string           `json:"unk_token"`
		} `json:"model"`
	}
	if err := json.Unmarshal(tokenizerJSON, &f); err != nil {
		return nil, err
	}
	var pairs [][2]string
	for _, raw := range f.Model.Merges {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			l, r, _ := strings.Cut(s, " ")
			pairs = append(pairs, [2]string{l, r})
			continue
		}
		var p [2]string
		if err := json.Unmarshal(raw, &p); err != nil {
			return nil, err
		}
		pairs = append(pairs, p)
	}
	d := &derivedVocab{tokens: make([]string, nVocab), types: make([]int32, nVocab)}
	vocab := map[string]int{}
	for t, id := range f.Model.Vocab {
		vocab[t] = id
	}
	if f.Model.ByteFallback {
		return d.sentencePiece(vocab, pairs, f.AddedTokens, f.Model.UnkToken)
	}
	addedSpecial := map[string]bool{} // added tokens by content: special or not
	for _, a := range f.AddedTokens {
		addedSpecial[a.Content] = a.Special
		if _, ok := vocab[a.Content]; !ok {
			vocab[a.Content] = a.ID
		}
	}
	reverse := make(map[int]string, len(vocab))
	for t, id := range vocab {
		reverse[id] = t
	}
	for i := range nVocab {
		t, ok := reverse[i]
		special, isAdded := addedSpecial[t]
		switch {
		case !ok:
			d.tokens[i], d.types[i] = fmt.Sprintf("[PAD%d]", i), tokenUnused
		case isAdded:
			if special || looksSpecial(t) {
				d.types[i] = tokenControl
			} else {
				t = strings.ReplaceAll(t, "▁", " ")
				d.types[i] = tokenUserDefined
			}
			d.tokens[i] = t
		default:
			d.tokens[i], d.types[i] = t, tokenNormal
		}
	}
	// SpecialVocab writes list-form merges with the spaces inside a part
	// as U+0120.
	for _, p := range pairs {
		enc := func(s string) string { return strings.ReplaceAll(s, " ", string(rune(' '+256))) }
		d.merges = append(d.merges, enc(p[0])+" "+enc(p[1]))
	}
	return d, nil
}

// looksSpecial is the converter's does_token_look_special.
func looksSpecial(t string) bool {
	switch t {
	case "<pad>", "<mask>", "<2mass>", "[@BOS@]":
		return true
	}
	wrapped := func(open, close string) bool { return strings.HasPrefix(t, open) && strings.HasSuffix(t, close) }
	return wrapped("<|", "|>") || wrapped("<｜", "｜>") || wrapped("<unused", ">")
}

// addedToken is an entry of tokenizer.json's added_tokens.
type addedToken struct {
	ID      int    `json:"id"`
	Content string `json:"content"`
	Special bool   `json:"special"`
}

func (d *derivedVocab) sentencePiece(vocab map[string]int, pairs [][2]string, addedTokens []addedToken, unk *string) (*derivedVocab, error) {
	firstRank := map[string]int{}
	for rank, p := range pairs {
		if _, ok := firstRank[p[0]+p[1]]; !ok {
			firstRank[p[0]+p[1]] = rank
		}
	}
	special := map[int]bool{}
	for _, a := range addedTokens {
		if a.Special {
			special[a.ID] = true
		}
	}
	reverse := make(map[int]string, len(vocab))
	for t, id := range vocab {
		reverse[id] = t
	}
	d.scores = make([]float32, len(d.tokens))
	for i := range d.tokens {
		t, ok := reverse[i]
		if !ok {
			return nil, fmt.Errorf("id %d missing from the vocabulary", i)
		}
		d.tokens[i] = t
		switch {
		case unk != nil && t == *unk:
			d.types[i] = tokenUnknown
		case special[i]:
			d.types[i] = tokenControl
		case len(t) == 6 && strings.HasPrefix(t, "<0x") && strings.HasSuffix(t, ">"):
			d.types[i] = tokenByte
		default:
			d.types[i] = tokenNormal
			rank, ok := firstRank[t]
			if !ok {
				rank = 1e9
			}
			d.scores[i] = -float32(rank)
		}
	}
	return d, nil
}
