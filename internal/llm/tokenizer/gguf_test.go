package tokenizer

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"golang.org/x/text/unicode/norm"

	"github.com/weftlabs/weft/internal/llm/gguf"
	"github.com/weftlabs/weft/internal/llm/llmtest"
)

// ggufFixture is the vocabulary-only GGUF file llama.cpp's converter code
// writes for a fixture tokenizer (llmtest.VocabGGUF, checked to the byte
// against the file testdata/gguf/vocab.py wrote), parsed.
func ggufFixture(t *testing.T, name string) *gguf.File {
	t.Helper()
	llmtest.RequireTokenizer(t, name)
	kvs, err := llmtest.VocabGGUF(name)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := gguf.Write(&b, kvs, nil); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Parse(name+".vocab.gguf", b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// ggufTokenizers caches FromGGUF's tokenizer of each fixture across tests.
var ggufTokenizers sync.Map

func ggufTokenizer(t *testing.T, name string) *Tokenizer {
	t.Helper()
	if tok, ok := ggufTokenizers.Load(name); ok {
		return tok.(*Tokenizer)
	}
	tok, err := FromGGUF(ggufFixture(t, name))
	if err != nil {
		t.Fatal(err)
	}
	ggufTokenizers.Store(name, tok)
	return tok
}

type llamaCppGolden struct {
	Cases []struct {
		Text       string `json:"text"`
		IDs        []int  `json:"ids"`
		IDsWithBOS []int  `json:"ids_with_bos"`
	} `json:"cases"`
}

func readLlamaCppGolden(t *testing.T, name string) llamaCppGolden {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "testdata", "gguf", name+".tokenize.json"))
	if err != nil {
		t.Fatal(err)
	}
	var g llamaCppGolden
	if err := json.Unmarshal(raw, &g); err != nil {
		t.Fatal(err)
	}
	if len(g.Cases) == 0 {
		t.Fatal("no cases")
	}
	return g
}

// TestGGUFVocabularyIsTheConverters checks that the fixture vocabularies
// are the files vocab.py wrote with llama.cpp's gguf-py, to the byte, so
// that llama.cpp's tokenization of them (the goldens) applies.
func TestGGUFVocabularyIsTheConverters(t *testing.T) {
	for _, name := range fixtureNames {
		t.Run(name, func(t *testing.T) {
			llmtest.RequireTokenizer(t, name)
			want, got, err := llmtest.VocabGGUFDigest(name)
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Fatalf("written %s, vocab.py wrote %s", got, want)
			}
		})
	}
}

// TestGGUFMatchesLlamaCpp compares the tokenizer FromGGUF builds with
// llama.cpp's own (llama-tokenize, testdata/gguf/<name>.tokenize.json) on
// the tokenizer tests' corpus, with and without the BOS the file asks for.
func TestGGUFMatchesLlamaCpp(t *testing.T) {
	for _, name := range fixtureNames {
		t.Run(name, func(t *testing.T) {
			tok := ggufTokenizer(t, name)
			for i, c := range readLlamaCppGolden(t, name).Cases {
				if got := tok.Encode(c.Text, false); !slices.Equal(got, c.IDs) {
					t.Errorf("case %d %.40q:\n got %v\nwant %v", i, c.Text, got, c.IDs)
				}
				if got := tok.Encode(c.Text, true); !slices.Equal(got, c.IDsWithBOS) {
					t.Errorf("case %d %.40q with BOS:\n got %v\nwant %v", i, c.Text, got, c.IDsWithBOS)
				}
			}
		})
	}
}

// TestGGUFMatchesTokenizerJSON compares the tokenizer FromGGUF builds with
// the one New builds from the same model's tokenizer.json (itself checked
// against transformers.js): the same ids for every text of the corpus but
// where llama.cpp's reading of a GGUF file differs by design, and the same
// text back from every encoding. The differences are: tokenizer.json's
// normalizer (Qwen3's NFC), which a GGUF file does not carry; tokens that
// llama.cpp makes control tokens because they are spelled like another
// model's end marker (Qwen's "</s>"). Encodings are compared without
// special tokens: a Llama 3 GGUF file adds BOS by default (llama.cpp's rule
// for its pre-tokenizer), which this tokenizer.json's post-processor does
// not; TestGGUFMatchesLlamaCpp checks the BOS.
func TestGGUFMatchesTokenizerJSON(t *testing.T) {
	for _, name := range fixtureNames {
		t.Run(name, func(t *testing.T) {
			tok := ggufTokenizer(t, name)
			ref := loadFixture(t, name)
			differ := 0
			for i, c := range readGolden(t, name).Cases {
				got, want := tok.Encode(c.Text, false), ref.Encode(c.Text, false)
				explained := ref.normalizer != nil && !norm.NFC.IsNormalString(c.Text) ||
					slices.ContainsFunc(endOfGenerationTexts, func(m string) bool {
						id, ok := ref.TokenToID(m)
						return ok && !ref.IsSpecial(id) && strings.Contains(c.Text, m)
					})
				switch {
				case slices.Equal(got, want):
				case explained:
					differ++
				default:
					t.Errorf("case %d %.40q:\n got %v\nwant %v", i, c.Text, got, want)
				}
				if back, want := tok.Decode(got, DecodeOptions{}), ref.Decode(got, DecodeOptions{}); back != want {
					t.Errorf("case %d: decoding %v gives %q, tokenizer.json %q", i, got, back, want)
				}
			}
			t.Logf("%s: %d texts differ, each for a reason the test names", name, differ)
			if name == "llama2" && differ != 0 {
				t.Errorf("the SentencePiece vocabulary differs on %d texts", differ)
			}
		})
	}
}

func TestGGUFChatTemplateAndSpecialTokens(t *testing.T) {
	tok := ggufTokenizer(t, "qwen3")
	ref := loadFixture(t, "qwen3")
	if tok.ChatTemplates()["default"] != ref.ChatTemplates()["default"] || tok.ChatTemplates()["default"] == "" {
		t.Error("the chat template differs from tokenizer_config.json's")
	}
	s := tok.SpecialTokens()
	if s.EOS.Text != "<|im_end|>" || s.Pad.Text != "<|endoftext|>" || s.BOS.ID != -1 || s.AddBOS {
		t.Errorf("special tokens %+v", s)
	}
	f := ggufFixture(t, "qwen3")
	eog, err := EndOfGeneration(f)
	if err != nil {
		t.Fatal(err)
	}
	im, _ := tok.TokenToID("<|im_end|>")
	eot, _ := tok.TokenToID("<|endoftext|>")
	if !slices.Contains(eog, im) || !slices.Contains(eog, eot) {
		t.Errorf("end of generation %v lacks <|im_end|> %d or <|endoftext|> %d", eog, im, eot)
	}
}

// smallVocab is a byte-level vocabulary of a few tokens, in the layout
// of the converter's files.
func smallVocab() []gguf.KV {
	return []gguf.KV{
		{Key: "tokenizer.ggml.model", Value: gguf.String("gpt2")},
		{Key: "tokenizer.ggml.pre", Value: gguf.String("qwen2")},
		{Key: "tokenizer.ggml.tokens", Value: gguf.Strings([]string{"a", "b", "ab", "<|im_end|>"})},
		{Key: "tokenizer.ggml.token_type", Value: gguf.Int32s([]int32{1, 1, 1, 3})},
		{Key: "tokenizer.ggml.merges", Value: gguf.Strings([]string{"a b"})},
		{Key: "tokenizer.ggml.eos_token_id", Value: gguf.Uint32(3)},
		{Key: "tokenizer.ggml.add_bos_token", Value: gguf.Bool(false)},
	}
}

func TestGGUFSmallVocabulary(t *testing.T) {
	var b bytes.Buffer
	if err := gguf.Write(&b, smallVocab(), nil); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Parse("small.gguf", b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	tok, err := FromGGUF(f)
	if err != nil {
		t.Fatal(err)
	}
	if got := tok.Encode("abba<|im_end|>", true); !slices.Equal(got, []int{2, 1, 0, 3}) {
		t.Errorf("Encode = %v", got)
	}
	if s := tok.SpecialTokens(); s.EOS.ID != 3 || s.BOS.ID != -1 || !tok.IsSpecial(3) {
		t.Errorf("special tokens %+v", s)
	}
	// An id past the vocabulary (2^32-1 is how converters write "none") is
	// no token, as llama.cpp reads it.
	var b2 bytes.Buffer
	kvs := append(smallVocab(), gguf.KV{Key: "tokenizer.ggml.padding_token_id", Value: gguf.Uint32(1<<32 - 1)})
	if err := gguf.Write(&b2, kvs, nil); err != nil {
		t.Fatal(err)
	}
	f2, err := gguf.Parse("small.gguf", b2.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if tok2, err := FromGGUF(f2); err != nil || tok2.SpecialTokens().Pad.ID != -1 {
		t.Errorf("padding id 2^32-1: %v", err)
	}
}

func TestGGUFErrorsNameTheKey(t *testing.T) {
	with := func(key string, v gguf.Value) []gguf.KV {
		out := smallVocab()
		for i := range out {
			if out[i].Key == key {
				out[i].Value = v
				return out
			}
		}
		return append(out, gguf.KV{Key: key, Value: v})
	}
	for _, c := range []struct {
		kvs  []gguf.KV
		kind error
		says string
	}{
		{with("tokenizer.ggml.pre", gguf.String("tekken")), ErrUnsupported, "tokenizer.ggml.pre"},
		{with("tokenizer.ggml.model", gguf.String("bert")), ErrUnsupported, "tokenizer.ggml.model"},
		{with("tokenizer.ggml.eos_token_id", gguf.Int32(-1)), ErrInvalid, "eos_token_id"},
		{with("tokenizer.ggml.merges", gguf.Int32s([]int32{1})), ErrInvalid, "tokenizer.ggml.merges"},
		{with("tokenizer.ggml.add_bos_token", gguf.Bool(true)), ErrInvalid, "bos_token"},
		{with("tokenizer.ggml.tokens", gguf.Strings([]string{"a", "b", "ab", "a"})), ErrInvalid, "has ids 0 and 3"},
		{with("tokenizer.ggml.token_type", gguf.Int32s([]int32{1})), ErrInvalid, "tokenizer.ggml.token_type"},
		{with("tokenizer.chat_template", gguf.Uint32(1)), ErrInvalid, "tokenizer.chat_template"},
	} {
		var b bytes.Buffer
		if err := gguf.Write(&b, c.kvs, nil); err != nil {
			t.Fatal(err)
		}
		f, err := gguf.Parse("bad.gguf", b.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		_, err = FromGGUF(f)
		if !errors.Is(err, c.kind) || !strings.Contains(err.Error(), c.says) || !strings.Contains(err.Error(), "bad.gguf") {
			t.Errorf("got %v, want %v naming %s and the file", err, c.kind, c.says)
		}
	}
}
