package constrain

import (
	"bytes"
	"slices"

	"github.com/weftlabs/weft/internal/llm/tokenizer"
)

// Vocabulary is a tokenizer's tokens as the bytes they write, arranged once
// as a trie so that one walk finds every token a constraint allows: a token
// is allowed when the walk reaches its node, and a subtree is skipped as
// soon as its prefix is refused. Build one per tokenizer and share it; it is
// read-only.
type Vocabulary struct {
	size      int
	end       []int    // ids that end the output (end-of-sequence tokens)
	spellings [][]byte // by id

	// The trie in depth-first order: node i consumes label[i] after its
	// parent, its subtree is nodes i..skip[i]-1, and the tokens spelled by
	// the path to it are ids[idStart[i]:idStart[i+1]]. Node 0 is the root.
	label   []byte
	depth   []int32
	skip    []int32
	idStart []int32
	ids     []int32
}

// NewVocabulary indexes tok's vocabulary for a model whose logits rows have
// size entries (at least the tokenizer's size; ids the tokenizer does not
// know are never allowed). endIDs are the tokens that end a sequence (the
// model's end-of-sequence and stop tokens): the mask allows them exactly
// when the constraint is complete. Special tokens other than those are
// never allowed; other added tokens count as their text.
func NewVocabulary(tok *tokenizer.Tokenizer, endIDs []int, size int) *Vocabulary {
	n := max(size, tok.VocabSize())
	spellings := make([][]byte, n)
	for id := range tok.VocabSize() {
		if tok.IsSpecial(id) {
			continue
		}
		if b, ok := tok.TokenBytes(id); ok {
			spellings[id] = b
		}
	}
	return NewVocabularyFromBytes(spellings, endIDs)
}

// NewVocabularyFromBytes indexes a vocabulary given as each token's bytes;
// a nil or empty entry is a token that constrained output never uses.
func NewVocabularyFromBytes(spellings [][]byte, endIDs []int) *Vocabulary {
	order := make([]int32, 0, len(spellings))
	for id, b := range spellings {
		if len(b) > 0 {
			order = append(order, int32(id))
		}
	}
	slices.SortFunc(order, func(a, b int32) int {
		if c := bytes.Compare(spellings[a], spellings[b]); c != 0 {
			return c
		}
		return int(a - b)
	})
	v := &Vocabulary{size: len(spellings), end: slices.Clone(endIDs), spellings: spellings}
	v.label = append(v.label, 0)
	v.depth = append(v.depth, 0)
	v.idStart = append(v.idStart, 0)
	// path[k] is the node at depth k on the path to the previous token.
	path := []int32{0}
	var prev []byte
	for _, id := range order {
		b := spellings[id]
		common := 0
		for common < len(prev) && common < len(b) && prev[common] == b[common] {
			common++
		}
		path = path[:common+1]
		for k := common; k < len(b); k++ {
			v.label = append(v.label, b[k])
			v.depth = append(v.depth, int32(k+1))
			v.idStart = append(v.idStart, int32(len(v.ids)))
			path = append(path, int32(len(v.label)-1))
		}
		v.ids = append(v.ids, id)
		prev = b
	}
	v.idStart = append(v.idStart, int32(len(v.ids)))
	// A node's subtree ends at the next node no deeper than it.
	v.skip = make([]int32, len(v.label))
	var open []int32
	for i := range v.label {
		for len(open) > 0 && v.depth[open[len(open)-1]] >= v.depth[i] {
			v.skip[open[len(open)-1]] = int32(i)
			open = open[:len(open)-1]
		}
		open = append(open, int32(i))
	}
	for _, i := range open {
		v.skip[i] = int32(len(v.label))
	}
	return v
}

// Size is the number of token ids a mask covers.
func (v *Vocabulary) Size() int { return v.size }

// MaskWords is the length of a mask in 64-bit words.
func (v *Vocabulary) MaskWords() int { return (v.size + 63) / 64 }

// isEnd reports whether id is an end-of-sequence token.
func (v *Vocabulary) isEnd(id int) bool { return slices.Contains(v.end, id) }
