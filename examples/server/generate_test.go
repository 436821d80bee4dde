package main

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/weftlabs/weft/internal/llm/llmtest"
	"github.com/weftlabs/weft/internal/llm/model"
	"github.com/weftlabs/weft/internal/llm/tokenizer"
)

// generateModel is a small Llama with the 32,000-token SentencePiece-style
// vocabulary, whose context of 48 positions the tests can fill.
var generateModel = llmtest.Dims{Architecture: llmtest.Llama, VocabSize: 32000, HiddenSize: 32, IntermediateSize: 64,
	Layers: 2, Heads: 4, KVHeads: 2, HeadDim: 8, MaxPositions: 48, RMSNormEps: 1e-5, RopeTheta: 10000, TiedEmbedding: true}

// greedyReference decodes greedily with the model package alone: the
// prompt's ids as the tokenizer encodes a plain sequence, then up to n
// arg-max tokens, stopping after the end-of-sequence token. It returns the
// ids generated.
func greedyReference(t *testing.T, dir, prompt string, n int) []int {
	t.Helper()
	tok, err := tokenizer.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	m, err := model.Load(dir, model.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	var ids []int32
	for _, id := range tok.Encode(prompt, true) {
		ids = append(ids, int32(id))
	}
	cache := model.NewContiguousCache(m.Config, m.MaxLen)
	var out []int
	next, start := ids, 0
	for len(out) < n {
		logits, err := m.Forward(&model.Batch{Seqs: []model.Sequence{{ID: 1, Tokens: next, Start: start}}}, cache)
		if err != nil {
			t.Fatal(err)
		}
		best := 0
		for i, v := range logits[0] {
			if v > logits[0][best] {
				best = i
			}
		}
		out = append(out, best)
		if best == tok.SpecialTokens().EOS.ID {
			break
		}
		start += len(next)
		next = []int32{int32(best)}
	}
	return out
}

var timingsLine = regexp.MustCompile(`^prompt: (\d+) tokens, first token after \S+ \([\d.]+ tok/s\); generated: (\d+) tokens(, decode [\d.]+ tok/s)?$`)

// splitGenerate separates generate's text from its timings line and
// returns the text and the line's prompt and generated token counts.
func splitGenerate(t *testing.T, stdout string) (text string, promptTokens, generated int) {
	t.Helper()
	body, last, ok := strings.Cut(strings.TrimSuffix(stdout, "\n"), "\nprompt: ")
	m := timingsLine.FindStringSubmatch("prompt: " + last)
	if !ok || m == nil {
		t.Fatalf("no timings line at the end of\n%s", stdout)
	}
	promptTokens, _ = strconv.Atoi(m[1])
	generated, _ = strconv.Atoi(m[2])
	return body, promptTokens, generated
}

func TestGenerateDecodesGreedilyFromBOSAndPrompt(t *testing.T) {
	dir := llmtest.ModelDir{Dims: generateModel, Tokenizer: llmtest.TokenizerLlama2}.Write(t)
	tok, err := tokenizer.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	const prompt = "Once upon a time, there was"
	promptIDs := tok.Encode(prompt, true)
	if promptIDs[0] != tok.SpecialTokens().BOS.ID {
		t.Fatalf("the tokenizer adds no BOS: %v", promptIDs)
	}
	for _, n := range []int{1, 12} {
		got := run(t, "generate", "-model", dir, "-prompt", prompt, "-n", strconv.Itoa(n), "-threads", "1")
		if got.status != 0 || got.stderr != "" {
			t.Fatalf("generate -n %d: status %d, stderr %q", n, got.status, got.stderr)
		}
		text, promptTokens, generated := splitGenerate(t, got.stdout)
		want := greedyReference(t, dir, prompt, n)
		// The text continues the prompt's: the difference of the two
		// decodings, as a streaming detokenizer writes it.
		opts := tokenizer.DecodeOptions{SkipSpecialTokens: true}
		whole, before := tok.Decode(append(slices.Clone(promptIDs), want...), opts), tok.Decode(promptIDs, opts)
		if wantText, ok := strings.CutPrefix(whole, before); !ok || text != wantText {
			t.Errorf("-n %d: text %q, greedy decode gives %q (ids %v)", n, text, wantText, want)
		}
		if promptTokens != len(promptIDs) || generated != len(want) {
			t.Errorf("-n %d: timings count %d prompt and %d generated tokens, want %d and %d", n, promptTokens, generated, len(promptIDs), len(want))
		}
	}
}

func TestGenerateStopsAtTheContext(t *testing.T) {
	dir := llmtest.ModelDir{Dims: generateModel, Tokenizer: llmtest.TokenizerLlama2}.Write(t)
	const prompt = "one two three four"
	got := run(t, "generate", "-model", dir, "-prompt", prompt, "-n", "1000", "-threads", "1")
	if got.status != 0 {
		t.Fatalf("status %d, stderr %q", got.status, got.stderr)
	}
	text, promptTokens, generated := splitGenerate(t, got.stdout)
	want := greedyReference(t, dir, prompt, generateModel.MaxPositions-promptTokens)
	if generated != len(want) {
		t.Errorf("generated %d tokens after a %d-token prompt in a context of %d; greedy decode gives %d", generated, promptTokens, generateModel.MaxPositions, len(want))
	}
	if text == "" {
		t.Error("no text")
	}
}

func TestGenerateRejectsBadArguments(t *testing.T) {
	dir := llmtest.ModelDir{Dims: generateModel, Tokenizer: llmtest.TokenizerLlama2}.Write(t)
	for _, tc := range []struct {
		args []string
		err  string
	}{
		{[]string{"generate", "-prompt", "hi"}, "weft generate: -model is required"},
		{[]string{"generate", "-model", dir, "-n", "0"}, "weft generate: -n must be at least 1, got 0"},
		{[]string{"generate", "-model", dir, "-weight-type", "f8"}, `weft generate: -weight-type must be one of [auto f32 int8 q8_0 q4_0 q4_k q5_k q6_k f16 bf16], got "f8"`},
		{[]string{"generate", "-model", dir, "-prompt", strings.Repeat("word ", 60)}, "weft generate: the prompt has "},
	} {
		got := run(t, tc.args...)
		if got.status != 2 || !strings.HasPrefix(got.stderr, tc.err) || !strings.Contains(got.stderr, "Usage: weft generate [flags]") {
			t.Errorf("weft %s: status %d, stderr\n%s\nwant status 2 and %q", strings.Join(tc.args, " "), got.status, got.stderr, tc.err)
		}
	}
	got := run(t, "generate", "-model", t.TempDir())
	if got.status != 1 || !strings.Contains(got.stderr, "config.json") {
		t.Errorf("a directory without a model: status %d, stderr %q; want 1 and an error naming config.json", got.status, got.stderr)
	}
}
