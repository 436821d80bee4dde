package tokenizer

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
)

// tinyFile is a tokenizer.json with a character vocabulary and a few
// merges, small enough to read its behaviour off by hand; edit changes it.
func tinyFile(t *testing.T, edit func(f map[string]any)) []byte {
	t.Helper()
	vocab := map[string]int{"<unk>": 0, "<s>": 1, "</s>": 2}
	for _, r := range "abcdehlorw▁ <>[]/XY" {
		vocab[string(r)] = len(vocab)
	}
	for _, tok := range []string{"he", "ll", "llo", "hello", "▁hello", "wo", "wor", "worl", "world", "▁world", "▁a", "<0xC3>", "<0xA9>"} {
		vocab[tok] = len(vocab)
	}
	f := map[string]any{
		"version": "1.0",
		"added_tokens": []map[string]any{
			{"id": 1, "content": "<s>", "special": true, "normalized": false},
			{"id": 2, "content": "</s>", "special": true, "normalized": false},
		},
		"normalizer":     nil,
		"pre_tokenizer":  nil,
		"post_processor": nil,
		"decoder":        nil,
		"model": map[string]any{
			"type": "BPE", "unk_token": "<unk>", "fuse_unk": true, "byte_fallback": true,
			"vocab": vocab,
			"merges": []any{
				[]string{"h", "e"}, "l l", []string{"ll", "o"}, []string{"he", "llo"}, []string{"▁", "hello"},
				"w o", []string{"wo", "r"}, []string{"wor", "l"}, []string{"worl", "d"}, []string{"▁", "world"},
				[]string{"▁", "a"},
			},
		},
	}
	if edit != nil {
		edit(f)
	}
	data, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func newTiny(t *testing.T, config string, edit func(f map[string]any)) *Tokenizer {
	t.Helper()
	var cfg []byte
	if config != "" {
		cfg = []byte(config)
	}
	tok, err := New(tinyFile(t, edit), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// tokens is Encode written as token strings, for readable expectations.
func tokens(t *testing.T, tok *Tokenizer, text string, addSpecial bool) []string {
	t.Helper()
	var out []string
	for _, id := range tok.Encode(text, addSpecial) {
		s, ok := tok.IDToToken(id)
		if !ok {
			t.Fatalf("id %d has no token", id)
		}
		out = append(out, s)
	}
	return out
}

func metaspace(scheme string, split bool) func(map[string]any) {
	return func(f map[string]any) {
		f["pre_tokenizer"] = map[string]any{"type": "Metaspace", "replacement": "▁", "prepend_scheme": scheme, "split": split}
		f["decoder"] = map[string]any{"type": "Metaspace", "replacement": "▁", "prepend_scheme": scheme, "split": split}
	}
}

func TestMetaspace(t *testing.T) {
	always := newTiny(t, "", metaspace("always", true))
	if got, want := tokens(t, always, "hello world", false), []string{"▁hello", "▁world"}; !slices.Equal(got, want) {
		t.Errorf("always: %q, want %q", got, want)
	}
	// Every segment after an added token gets the prefix under "always",
	// only the one at the start of the input under "first".
	if got, want := tokens(t, always, "a</s>hello", false), []string{"▁a", "</s>", "▁hello"}; !slices.Equal(got, want) {
		t.Errorf("always after </s>: %q, want %q", got, want)
	}
	first := newTiny(t, "", metaspace("first", true))
	if got, want := tokens(t, first, "a</s>hello", false), []string{"▁a", "</s>", "hello"}; !slices.Equal(got, want) {
		t.Errorf("first after </s>: %q, want %q", got, want)
	}
	// The decoder drops every replacement of the first token (a quirk the
	// reference implementation has) and turns the others into spaces.
	ids := always.Encode("hello world", false)
	if got := always.Decode(ids, DecodeOptions{}); got != "hello world" {
		t.Errorf("decode = %q", got)
	}
	never := newTiny(t, "", metaspace("never", true))
	if got := never.Decode(ids, DecodeOptions{}); got != " hello world" {
		t.Errorf("never: decode = %q", got)
	}
}

func TestAddedTokenOptions(t *testing.T) {
	withToken := func(tok map[string]any) func(map[string]any) {
		return func(f map[string]any) {
			tok["id"] = 100 // not read: the loader numbers added tokens
			f["added_tokens"] = append(f["added_tokens"].([]map[string]any), tok)
		}
	}
	cases := []struct {
		name  string
		token map[string]any
		in    string
		want  []string
	}{
		{"plain", map[string]any{"content": "[/]"}, "a [/] a", []string{"a", " ", "[/]", " ", "a"}},
		{"lstrip", map[string]any{"content": "[/]", "lstrip": true}, "a  [/] a", []string{"a", "[/]", " ", "a"}},
		{"rstrip", map[string]any{"content": "[/]", "rstrip": true}, "a [/]  a", []string{"a", " ", "[/]", "a"}},
		{"single word alone", map[string]any{"content": "ab", "single_word": true}, "ab a", []string{"ab", " ", "a"}},
		{"single word inside a word", map[string]any{"content": "ab", "single_word": true}, "cab a", []string{"c", "a", "b", " ", "a"}},
		{"longest match wins", map[string]any{"content": "<s>>"}, "<s>>", []string{"<s>>"}},
	}
	for _, c := range cases {
		c.token["special"] = false
		c.token["normalized"] = false
		tok := newTiny(t, "", withToken(c.token))
		got := tokens(t, tok, c.in, false)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: %q → %q, want %q", c.name, c.in, got, c.want)
		}
	}
}

// TestNormalizedAddedToken: a normalized added token is matched in the
// normalized text, and decodes to its normalized form.
func TestNormalizedAddedToken(t *testing.T) {
	tok := newTiny(t, "", func(f map[string]any) {
		f["normalizer"] = map[string]any{"type": "Lowercase"}
		f["added_tokens"] = append(f["added_tokens"].([]map[string]any),
			map[string]any{"id": 40, "content": "HeLLo", "normalized": true, "special": false})
	})
	id := tok.mustID(t, "HeLLo")
	if got := tok.Encode("HELLO hello", false); !slices.Equal(got, []int{id, tok.mustID(t, " "), id}) {
		t.Errorf("Encode = %v", got)
	}
	if got := tok.Decode([]int{id}, DecodeOptions{}); got != "hello" {
		t.Errorf("Decode = %q", got)
	}
}

func (tok *Tokenizer) mustID(t *testing.T, s string) int {
	t.Helper()
	id, ok := tok.TokenToID(s)
	if !ok {
		t.Fatalf("no token %q", s)
	}
	return id
}

func TestByteFallbackAndUnknown(t *testing.T) {
	tok := newTiny(t, "", nil)
	// "é" is not in the vocabulary but its bytes are; "ü" has neither, and
	// a run of unknown characters fuses into one <unk>.
	if got, want := tokens(t, tok, "éüüa", false), []string{"<0xC3>", "<0xA9>", "<unk>", "a"}; !slices.Equal(got, want) {
		t.Errorf("tokens = %q, want %q", got, want)
	}
	tok = newTiny(t, "", func(f map[string]any) {
		f["decoder"] = map[string]any{"type": "Sequence", "decoders": []any{
			map[string]any{"type": "ByteFallback"}, map[string]any{"type": "Fuse"},
		}}
	})
	c3, a9 := tok.mustID(t, "<0xC3>"), tok.mustID(t, "<0xA9>")
	if got := tok.Decode([]int{c3, a9}, DecodeOptions{}); got != "é" {
		t.Errorf("decode = %q", got)
	}
	// An invalid run is one U+FFFD per byte (not per maximal subpart).
	if got := tok.Decode([]int{c3, c3, a9, a9}, DecodeOptions{}); got != "\uFFFD\uFFFD\uFFFD\uFFFD" {
		t.Errorf("decode invalid = %q", got)
	}
}

// TestByteFallbackRealFile: the same on Llama 2's file, where the JavaScript
// oracle's lossy decoding differs from the reference implementation.
func TestByteFallbackRealFile(t *testing.T) {
	tok := loadFixture(t, "llama2")
	var ids []int
	for _, b := range []byte{0xF0, 0x9F, 0x98} {
		ids = append(ids, tok.mustID(t, "<0x"+strings.ToUpper(hex2(b))+">"))
	}
	ids = append(ids, tok.Encode("ok", false)...)
	if got := tok.Decode(ids, DecodeOptions{}); got != "\uFFFD\uFFFD\uFFFD ok" {
		t.Errorf("decode = %q", got)
	}
}

func hex2(b byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[b>>4], digits[b&15]})
}

// TestLlamaPostProcessorFromConfig: the Llama tokenizer classes add BOS and
// EOS as add_bos_token / add_eos_token say, whatever the file's template.
func TestLlamaPostProcessorFromConfig(t *testing.T) {
	cfg := `{"tokenizer_class": "LlamaTokenizerFast", "bos_token": "<s>", "eos_token": {"content": "</s>"}, "add_eos_token": true}`
	tok := newTiny(t, cfg, nil)
	if got, want := tokens(t, tok, "a", true), []string{"<s>", "a", "</s>"}; !slices.Equal(got, want) {
		t.Errorf("tokens = %q, want %q", got, want)
	}
	if got := tokens(t, tok, "a", false); !slices.Equal(got, []string{"a"}) {
		t.Errorf("without special tokens: %q", got)
	}
	sp := tok.SpecialTokens()
	if sp.BOS.ID != 1 || sp.EOS.ID != 2 || sp.EOS.Text != "</s>" || sp.Unk.ID != -1 || !sp.AddEOS {
		t.Errorf("special tokens = %+v", sp)
	}
	// Another class keeps the file's (absent) post-processor.
	other := newTiny(t, `{"tokenizer_class": "PreTrainedTokenizerFast", "bos_token": "<s>", "add_bos_token": true}`, nil)
	if got := tokens(t, other, "a", true); !slices.Equal(got, []string{"a"}) {
		t.Errorf("generic class: %q", got)
	}
}

func TestTemplateProcessing(t *testing.T) {
	tok := newTiny(t, "", func(f map[string]any) {
		f["post_processor"] = map[string]any{
			"type":   "TemplateProcessing",
			"single": []any{map[string]any{"SpecialToken": map[string]any{"id": "<s>", "type_id": 0}}, map[string]any{"Sequence": map[string]any{"id": "A", "type_id": 0}}},
			"pair":   []any{},
			"special_tokens": map[string]any{
				"<s>": map[string]any{"id": "<s>", "ids": []int{1}, "tokens": []string{"<s>"}},
			},
		}
	})
	if got := tok.Encode("", true); !slices.Equal(got, []int{1}) {
		t.Errorf("Encode(\"\", true) = %v", got)
	}
	if got := tok.Encode("", false); len(got) != 0 {
		t.Errorf("Encode(\"\", false) = %v", got)
	}
}

// TestUnsupportedNamesTheField: what the engine does not implement fails at
// load with the JSON path of the setting.
func TestUnsupportedNamesTheField(t *testing.T) {
	cases := []struct {
		field string
		edit  func(f map[string]any)
	}{
		{"model.type", func(f map[string]any) { f["model"].(map[string]any)["type"] = "WordPiece" }},
		{"model.dropout", func(f map[string]any) { f["model"].(map[string]any)["dropout"] = 0.1 }},
		{"normalizer.normalizers[1].type", func(f map[string]any) {
			f["normalizer"] = map[string]any{"type": "Sequence", "normalizers": []any{
				map[string]any{"type": "NFC"}, map[string]any{"type": "Precompiled", "precompiled_charsmap": "AA=="},
			}}
		}},
		{"pre_tokenizer.pattern.Regex", func(f map[string]any) {
			f["pre_tokenizer"] = map[string]any{"type": "Split", "pattern": map[string]any{"Regex": `\s+(?=x)`}, "behavior": "Isolated"}
		}},
		{"pre_tokenizer.type", func(f map[string]any) { f["pre_tokenizer"] = map[string]any{"type": "BertPreTokenizer"} }},
		{"decoder.decoders[0].type", func(f map[string]any) {
			f["decoder"] = map[string]any{"type": "Sequence", "decoders": []any{map[string]any{"type": "WordPiece"}}}
		}},
		{"post_processor.single[0].Sequence.id", func(f map[string]any) {
			f["post_processor"] = map[string]any{"type": "TemplateProcessing", "single": []any{map[string]any{"Sequence": map[string]any{"id": "B"}}}}
		}},
	}
	for _, c := range cases {
		_, err := New(tinyFile(t, c.edit), nil)
		if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), c.field+":") {
			t.Errorf("%s: err = %v", c.field, err)
		}
	}
	// Inconsistent files are ErrInvalid.
	_, err := New(tinyFile(t, func(f map[string]any) {
		f["model"].(map[string]any)["merges"] = []any{"a zz"}
	}), nil)
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "model.merges[0]") {
		t.Errorf("bad merge: err = %v", err)
	}
}

func TestDecodeEdges(t *testing.T) {
	tok := loadFixture(t, "qwen3")
	if got := tok.Decode(nil, DecodeOptions{}); got != "" {
		t.Errorf("Decode(nil) = %q", got)
	}
	// Ids outside the vocabulary are skipped, as in the reference
	// implementation.
	ids := tok.Encode("hi", false)
	if got := tok.Decode(append([]int{-1, tok.VocabSize()}, ids...), DecodeOptions{}); got != "hi" {
		t.Errorf("Decode with unknown ids = %q", got)
	}
	if tok.VocabSize() != 151669 {
		t.Errorf("VocabSize = %d", tok.VocabSize())
	}
	if !tok.IsSpecial(tok.mustID(t, "<|im_end|>")) || tok.IsSpecial(tok.mustID(t, "<think>")) {
		t.Error("IsSpecial: <|im_end|> is special, <think> is not")
	}
	if n, ok := tok.ModelMaxLength(); !ok || n != 131072 {
		t.Errorf("ModelMaxLength = %d, %v", n, ok)
	}
	if sp := tok.SpecialTokens(); sp.EOS.Text != "<|im_end|>" || sp.BOS.ID != -1 || sp.Pad.Text != "<|endoftext|>" {
		t.Errorf("SpecialTokens = %+v", sp)
	}
	if !strings.Contains(tok.ChatTemplates()["default"], "<|im_start|>") {
		t.Error("chat template missing")
	}
	llama3 := loadFixture(t, "llama3")
	// clean_up_tokenization_spaces is on in this file.
	ids = llama3.Encode("Hi , there .", false)
	if got := llama3.Decode(ids, DecodeOptions{}); got != "Hi, there." {
		t.Errorf("clean-up: %q", got)
	}
	if got := llama3.Decode(ids, DecodeOptions{KeepTokenizationSpaces: true}); got != "Hi , there ." {
		t.Errorf("no clean-up: %q", got)
	}
}

// TestConcurrentEncode: one tokenizer serves many goroutines (the word
// cache is shared); run under -race it also checks the locking.
func TestConcurrentEncode(t *testing.T) {
	tok := loadFixture(t, "llama3")
	g := readGolden(t, "llama3")
	var wg sync.WaitGroup
	errs := make(chan string, 8*len(g.Cases))
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, c := range g.Cases {
				if got := tok.Encode(c.Text, false); !slices.Equal(got, c.IDs) {
					errs <- c.Text
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for text := range errs {
		t.Errorf("concurrent Encode(%.40q) differs from the golden ids", text)
	}
}
