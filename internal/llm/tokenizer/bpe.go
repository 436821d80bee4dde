package tokenizer

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
)

// bpe is a byte-pair-encoding model: a vocabulary and ranked merges. A word
// starts as one symbol per character (per byte for byte-level pieces) and the
// adjacent pair of lowest rank is merged until no pair has a merge.
type bpe struct {
	vocab  map[string]int
	tokens []string // by id; "" where the vocabulary has no token
	merges *mergeTable
	// ignoreMerges: a word that is a vocabulary token as a whole is that
	// token, whatever the merges would make of it (Llama 3).
	ignoreMerges bool
	// byteFallback: a character outside the vocabulary becomes the tokens
	// <0xAB> of its UTF-8 bytes (SentencePiece's trick).
	byteFallback bool
	fuseUnk      bool
	unkID        int // -1 without an unknown token
	byteTokenIDs [256]int

	// Byte-level pieces: the id of each byte's alphabet character, and the
	// vocabulary keyed by raw bytes rather than by alphabet text.
	alphabet       *byteAlphabet
	byteIDs        [256]int
	byteLevelVocab map[string]int

	cache *wordCache
}

type merge struct {
	rank  int32
	newID int32
}

func pairKey(a, b int) uint64 { return uint64(uint32(a))<<32 | uint64(uint32(b)) }

type jsonBPE struct {
	Type                    string          `json:"type"`
	Dropout                 *float64        `json:"dropout"`
	UnkToken                *string         `json:"unk_token"`
	ContinuingSubwordPrefix *string         `json:"continuing_subword_prefix"`
	EndOfWordSuffix         *string         `json:"end_of_word_suffix"`
	FuseUnk                 bool            `json:"fuse_unk"`
	ByteFallback            bool            `json:"byte_fallback"`
	IgnoreMerges            bool            `json:"ignore_merges"`
	Vocab                   map[string]int  `json:"vocab"`
	Merges                  json.RawMessage `json:"merges"`
}

func newBPE(field string, raw json.RawMessage, alphabet *byteAlphabet) (*bpe, error) {
	if isNull(raw) {
		return nil, invalid(field, "missing")
	}
	var c jsonBPE
	if err := decodeStrict(field, raw, &c); err != nil {
		return nil, err
	}
	if c.Type == "" && isNull(c.Merges) {
		return nil, unsupported(field+".type", "missing, and a model without merges is not BPE")
	}
	if c.Type != "" && c.Type != "BPE" {
		return nil, unsupported(field+".type", "model %q (only BPE is implemented)", c.Type)
	}
	if c.Dropout != nil && *c.Dropout != 0 {
		return nil, unsupported(field+".dropout", "%v (sampling merges is for training)", *c.Dropout)
	}
	if c.ContinuingSubwordPrefix != nil && *c.ContinuingSubwordPrefix != "" {
		return nil, unsupported(field+".continuing_subword_prefix", "%q", *c.ContinuingSubwordPrefix)
	}
	if c.EndOfWordSuffix != nil && *c.EndOfWordSuffix != "" {
		return nil, unsupported(field+".end_of_word_suffix", "%q", *c.EndOfWordSuffix)
	}
	m := &bpe{
		vocab:        c.Vocab,
		ignoreMerges: c.IgnoreMerges,
		byteFallback: c.ByteFallback,
		fuseUnk:      c.FuseUnk,
		unkID:        -1,
		alphabet:     alphabet,
		cache:        newWordCache(wordCacheCapacity),
	}
	size := 0
	for tok, id := range c.Vocab {
		if id < 0 {
			return nil, invalid(field+".vocab", "token %q has negative id %d", tok, id)
		}
		size = max(size, id+1)
	}
	m.tokens = make([]string, size)
	for tok, id := range c.Vocab {
		m.tokens[id] = tok
	}
	if c.UnkToken != nil {
		id, ok := c.Vocab[*c.UnkToken]
		if !ok {
			return nil, invalid(field+".unk_token", "%q is not in the vocabulary", *c.UnkToken)
		}
		m.unkID = id
	}
	for b := 0; b < 256; b++ {
		m.byteTokenIDs[b] = -1
		if id, ok := c.Vocab[fmt.Sprintf("<0x%02X>", b)]; ok {
			m.byteTokenIDs[b] = id
		}
		m.byteIDs[b] = -1
		if id, ok := c.Vocab[string(alphabet.toRune[b])]; ok {
			m.byteIDs[b] = id
		}
	}
	if c.IgnoreMerges {
		m.byteLevelVocab = make(map[string]int, len(c.Vocab))
		var buf []byte
		for tok, id := range c.Vocab {
			var ok bool
			if buf, ok = alphabet.decode(buf[:0], tok); ok {
				m.byteLevelVocab[string(buf)] = id
			}
		}
	}
	if err := m.loadMerges(field+".merges", c.Merges); err != nil {
		return nil, err
	}
	return m, nil
}

// loadMerges reads merges written as ["a", "b"] pairs (tokenizers 0.20 and
// later) or as "a b" strings (earlier files).
func (m *bpe) loadMerges(field string, raw json.RawMessage) error {
	var pairs [][2]string
	if !isNull(raw) {
		var list []json.RawMessage
		if err := json.Unmarshal(raw, &list); err != nil {
			return invalid(field, "%v", err)
		}
		pairs = make([][2]string, len(list))
		for i, item := range list {
			var s string
			if err := json.Unmarshal(item, &s); err == nil {
				a, b, ok := strings.Cut(s, " ")
				if !ok || strings.Contains(b, " ") {
					return invalid(fmt.Sprintf("%s[%d]", field, i), "%q is not two tokens separated by one space", s)
				}
				pairs[i] = [2]string{a, b}
				continue
			}
			if err := json.Unmarshal(item, &pairs[i]); err != nil {
				return invalid(fmt.Sprintf("%s[%d]", field, i), "want \"a b\" or [\"a\", \"b\"]: %v", err)
			}
		}
	}
	m.merges = newMergeTable(len(pairs))
	for rank, p := range pairs {
		a, okA := m.vocab[p[0]]
		b, okB := m.vocab[p[1]]
		joined, okJ := m.vocab[p[0]+p[1]]
		if !okA || !okB || !okJ {
			return invalid(fmt.Sprintf("%s[%d]", field, rank), "merge %q + %q: a part or the result is not in the vocabulary", p[0], p[1])
		}
		m.merges.put(a, b, merge{rank: int32(rank), newID: int32(joined)})
	}
	return nil
}

// tokenize appends the ids of one piece.
func (m *bpe) tokenize(p piece, out []int) []int {
	if p.text == "" {
		return out
	}
	if m.ignoreMerges {
		vocab := m.vocab
		if p.byteLevel {
			vocab = m.byteLevelVocab
		}
		if id, ok := vocab[p.text]; ok {
			return append(out, id)
		}
	}
	cacheable := len(p.text) < wordCacheMaxLength
	if cacheable {
		if ids, ok := m.cache.get(p.text, p.byteLevel); ok {
			return append(out, ids...)
		}
	}
	start := len(out)
	w := newWord(len(p.text))
	if p.byteLevel {
		for i := 0; i < len(p.text); i++ {
			m.addSymbol(w, m.byteIDs[p.text[i]], p.text[i:i+1])
		}
	} else {
		m.addChars(w, p.text)
	}
	w.flushUnk()
	w.mergeAll(m.merges)
	out = w.appendIDs(out)
	if cacheable {
		m.cache.put(p.text, p.byteLevel, out[start:])
	}
	return out
}

// addSymbol adds the symbol for one character (or byte) of a word, or its
// fallback when the vocabulary lacks it.
func (m *bpe) addSymbol(w *word, id int, char string) {
	if id >= 0 {
		w.flushUnk()
		w.add(id)
		return
	}
	if m.byteFallback {
		ok := true
		for i := 0; i < len(char); i++ {
			ok = ok && m.byteTokenIDs[char[i]] >= 0
		}
		if ok {
			// The reference implementation adds the byte tokens without
			// settling a pending unknown token first, so a fused run of
			// unknowns lands after them.
			for i := 0; i < len(char); i++ {
				w.add(m.byteTokenIDs[char[i]])
			}
			return
		}
	}
	if m.unkID < 0 {
		// No unknown token: the character is dropped, as the reference
		// implementation does.
		return
	}
	if w.pendingUnk && m.fuseUnk {
		return
	}
	w.flushUnk()
	w.pendingUnk = true
	w.unkID = m.unkID
}

// addChars adds the characters of a (non-byte-level) word.
func (m *bpe) addChars(w *word, s string) {
	for i := 0; i < len(s); {
		_, size := runeAt(s, i)
		char := s[i : i+size]
		id, ok := m.vocab[char]
		if !ok {
			id = -1
		}
		m.addSymbol(w, id, char)
		i += size
	}
}

// Bounds of the per-model cache of tokenized words: words are short and
// repeat, so a bounded set of them saves most of the merging.
const (
	wordCacheCapacity  = 10000
	wordCacheMaxLength = 256
)

// wordCache remembers the ids of words seen before. It stops taking new
// words once full rather than evicting: the common words come early.
type wordCache struct {
	mu       sync.RWMutex
	capacity int
	// Byte-level and character pieces of the same text tokenize
	// differently, so they have a map each.
	chars, bytes map[string][]int
}

func newWordCache(capacity int) *wordCache {
	return &wordCache{capacity: capacity, chars: make(map[string][]int), bytes: make(map[string][]int)}
}

func (c *wordCache) mapFor(byteLevel bool) map[string][]int {
	if byteLevel {
		return c.bytes
	}
	return c.chars
}

func (c *wordCache) get(text string, byteLevel bool) ([]int, bool) {
	c.mu.RLock()
	ids, ok := c.mapFor(byteLevel)[text]
	c.mu.RUnlock()
	return ids, ok
}

func (c *wordCache) put(text string, byteLevel bool, ids []int) {
	c.mu.Lock()
	if len(c.chars)+len(c.bytes) < c.capacity {
		c.mapFor(byteLevel)[strings.Clone(text)] = append([]int(nil), ids...)
	}
	c.mu.Unlock()
}
