package localtrainer

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/weftlabs/weft/internal/llm/chattemplate"
	"github.com/weftlabs/weft/internal/llm/tokenizer"
)

// Reading back the tokens a choice was sampled as. Each logprob entry names
// its token three ways: "token_id:N" when the request asked for ids
// (return_tokens_as_token_ids); otherwise its text, the token decoded alone,
// and its bytes, the token's own bytes as it adds them to a text (what
// OpenAI's API and this server write; a part of a character included). In
// byte-level vocabularies (GPT-2, Llama 3, Qwen) every token has bytes of
// its own; in SentencePiece ones ("▁the" is " the") every token but the
// byte-fallback ones ("<0x41>" is "A", as is the token "A"), which no text
// tells apart and which read as the token the tokenizer itself writes.
// Entries read from their bytes are then checked against the message: its
// reasoning and content must be text the tokens spell.

// wireLogprob is one entry of a choice's logprobs.
type wireLogprob struct {
	Token   string  `json:"token"`
	Logprob float64 `json:"logprob"`
	Bytes   []int   `json:"bytes"` // nil when absent or null
}

// entryError is a logprob entry that cannot be read back: Index is its
// position in the choice's logprobs.
type entryError struct {
	Index int
	Token string
	Err   error
}

func (e *entryError) Error() string {
	return fmt.Sprintf("logprob %d (token %q): %v", e.Index, e.Token, e.Err)
}

func (e *entryError) Unwrap() error { return e.Err }

// errReadBack is the advice every refusal of an entry read from its text
// ends with.
var errReadBack = errors.New("sample with return_tokens_as_token_ids to name tokens by id")

// sampledTokens reads the ids and log-probabilities of a choice's entries.
// The error is an *entryError.
func (t *Template) sampledTokens(entries []wireLogprob, msg chattemplate.Message) ([]int, []float64, error) {
	ids := make([]int, len(entries))
	logprobs := make([]float64, len(entries))
	byText := false
	for j, e := range entries {
		id, fromText, err := t.entryToken(e)
		if err != nil {
			return nil, nil, &entryError{Index: j, Token: e.Token, Err: err}
		}
		ids[j], logprobs[j] = id, e.Logprob
		byText = byText || fromText
	}
	if byText {
		if j, err := t.checkSpelled(ids, msg); err != nil {
			return nil, nil, &entryError{Index: j, Token: entries[j].Token, Err: err}
		}
	}
	return ids, logprobs, nil
}

// entryToken reads one entry: its id, and whether it was read from the
// entry's text rather than named by id.
func (t *Template) entryToken(e wireLogprob) (id int, fromText bool, err error) {
	if rest, ok := strings.CutPrefix(e.Token, "token_id:"); ok {
		id, err := strconv.Atoi(rest)
		if err != nil || id < 0 || id >= t.tokenizer.VocabSize() {
			return 0, false, errors.New("it is not a token id of this model")
		}
		return id, false, nil
	}
	spelling := []byte(e.Token)
	if e.Bytes != nil {
		spelling = make([]byte, len(e.Bytes))
		for i, b := range e.Bytes {
			if b < 0 || b > 255 {
				return 0, false, fmt.Errorf("bytes[%d] = %d is not a byte", i, b)
			}
			spelling[i] = byte(b)
		}
	}
	ids := t.spelledBy(spelling)
	if len(ids) == 0 {
		// A vocabulary string ("Ġthe"), as convert_ids_to_tokens writes it.
		if id, ok := t.tokenizer.TokenToID(e.Token); ok {
			return id, true, nil
		}
		return 0, false, fmt.Errorf("its bytes %q are no token of this model; %w", spelling, errReadBack)
	}
	if len(ids) > 1 {
		return 0, false, fmt.Errorf("its bytes %q are the bytes of tokens %v of this model; %w", spelling, ids, errReadBack)
	}
	id = ids[0]
	if e.Token != string(spelling) && !slices.Contains(t.tokenTexts(id), e.Token) {
		return 0, false, fmt.Errorf("its bytes %q are token %d, whose text is %q", spelling, id, t.tokenizer.Decode([]int{id}, tokenizer.DecodeOptions{}))
	}
	return id, true, nil
}

// tokenTexts are the texts a server may write for a token alone: decoded
// with and without the tokenizer's clean-up of spaces.
func (t *Template) tokenTexts(id int) []string {
	one := []int{id}
	return []string{t.tokenizer.Decode(one, tokenizer.DecodeOptions{}), t.tokenizer.Decode(one, tokenizer.DecodeOptions{KeepTokenizationSpaces: true})}
}

// spellings maps each token's bytes to its id. Tokens that share their
// bytes with a byte-fallback token ("A" and "<0x41>") map to the other one,
// which is what the tokenizer writes; any other bytes that name several
// tokens map to all of them.
type spellings struct {
	once   sync.Once
	one    map[string]int32
	shared map[string][]int
}

var byteFallback = regexp.MustCompile(`^<0x[0-9A-Fa-f]{2}>$`)

// spelledBy are the ids of the tokens whose bytes are b.
func (t *Template) spelledBy(b []byte) []int {
	s := &t.spellings
	s.once.Do(func() {
		tok := t.tokenizer
		s.one = make(map[string]int32, tok.VocabSize())
		s.shared = map[string][]int{}
		for id := range tok.VocabSize() {
			b, ok := tok.TokenBytes(id)
			if !ok || len(b) == 0 {
				continue
			}
			key := string(b)
			if other, ok := s.one[key]; ok {
				s.shared[key] = append(s.shared[key], int(other))
			}
			if ids, ok := s.shared[key]; ok {
				s.shared[key] = append(ids, id)
				continue
			}
			s.one[key] = int32(id)
		}
		for key, ids := range s.shared {
			written := slices.DeleteFunc(slices.Clone(ids), func(id int) bool {
				raw, _ := tok.IDToToken(id)
				return byteFallback.MatchString(raw)
			})
			if len(written) == 1 {
				s.one[key] = int32(written[0])
				delete(s.shared, key)
			}
		}
	})
	if ids, ok := s.shared[string(b)]; ok {
		return ids
	}
	if id, ok := s.one[string(b)]; ok {
		return []int{int(id)}
	}
	return nil
}

// checkSpelled checks that the message's reasoning and content are text
// the tokens spell: each, cut at U+FFFD (a character the tokens may spell
// otherwise than it was shown), is found in order in the tokens' bytes, with
// special tokens or without, or in the text the tokenizer decodes from them
// (which may strip a leading space or clean up spaces). It reports the
// entry at which a text that is not found stops being spelled.
func (t *Template) checkSpelled(ids []int, msg chattemplate.Message) (int, error) {
	var texts []string
	if msg.Reasoning != nil {
		texts = append(texts, *msg.Reasoning)
	}
	texts = append(texts, msg.Content)
	for _, p := range msg.Parts {
		texts = append(texts, p.Text)
	}
	spelled, ends := t.spell(ids, true)
	all, _ := t.spell(ids, false)
	decoded := []string{t.tokenizer.Decode(ids, tokenizer.DecodeOptions{SkipSpecialTokens: true}), t.tokenizer.Decode(ids, tokenizer.DecodeOptions{})}
	for _, text := range texts {
		if containsInOrder(spelled, text) || containsInOrder(all, text) || containsInOrder(decoded[0], text) || containsInOrder(decoded[1], text) {
			continue
		}
		at := departure(spelled, text)
		j, _ := slices.BinarySearch(ends, at+1)
		return min(j, len(ids)-1), fmt.Errorf("the message's text %q is not what the tokens spell here; %w", shorten(text), errReadBack)
	}
	return 0, nil
}

// spell concatenates the tokens' bytes (leaving special tokens out when
// skipSpecial) and gives the offset at which each token's bytes end.
func (t *Template) spell(ids []int, skipSpecial bool) (string, []int) {
	var b []byte
	ends := make([]int, len(ids))
	for i, id := range ids {
		if !skipSpecial || !t.tokenizer.IsSpecial(id) {
			tb, _ := t.tokenizer.TokenBytes(id)
			b = append(b, tb...)
		}
		ends[i] = len(b)
	}
	return string(b), ends
}

// containsInOrder reports whether the pieces of text between its U+FFFD
// characters occur in s, in order and without overlapping.
func containsInOrder(s, text string) bool {
	from := 0
	for piece := range strings.SplitSeq(text, "\uFFFD") {
		i := strings.Index(s[from:], piece)
		if i < 0 {
			return false
		}
		from += i + len(piece)
	}
	return true
}

// departure is the offset in s at which text stops being spelled: past the
// longest prefix of the first piece of text (between U+FFFD characters)
// that does not occur where it should.
func departure(s, text string) int {
	from := 0
	for piece := range strings.SplitSeq(text, "\uFFFD") {
		if i := strings.Index(s[from:], piece); i >= 0 {
			from += i + len(piece)
			continue
		}
		// The longest prefix of piece found from `from` on (the prefixes of
		// a prefix found are found, so its length is searched for).
		lo, hi := 0, len(piece) // piece[:lo] is found, piece[:hi+1] is not
		for lo < hi {
			mid := (lo + hi + 1) / 2
			if strings.Contains(s[from:], piece[:mid]) {
				lo = mid
			} else {
				hi = mid - 1
			}
		}
		return from + strings.Index(s[from:], piece[:lo]) + lo
	}
	return len(s)
}

// shorten cuts a text for an error message.
func shorten(s string) string {
	if r := []rune(s); len(r) > 60 {
		return string(r[:60]) + "…"
	}
	return s
}
