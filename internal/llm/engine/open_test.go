package engine

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/weftlabs/weft/internal/llm/chattemplate"
	"github.com/weftlabs/weft/internal/llm/llmtest"
)

func TestOpenErrorsNameTheProblem(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edit  func(dir string)
		cfg   ModelConfig
		field string
	}{
		{"unsupported activation", func(dir string) {
			raw, _ := os.ReadFile(filepath.Join(dir, ConfigFile))
			os.WriteFile(filepath.Join(dir, ConfigFile), []byte(strings.Replace(string(raw), `"silu"`, `"gelu"`, 1)), 0o644)
		}, ModelConfig{}, "hidden_act"},
		{"no tokenizer", func(dir string) { os.Remove(filepath.Join(dir, "tokenizer.json")) }, ModelConfig{}, "tokenizer.json"},
		{"bad generation config", func(dir string) {
			os.WriteFile(filepath.Join(dir, GenerationConfigFile), []byte(`{"eos_token_id": "x"}`), 0o644)
		}, ModelConfig{}, "eos_token_id"},
		{"context beyond the budget", func(string) {}, ModelConfig{KVCacheBytes: 64 * tinyLlamaKVBlock, MaxModelLen: 2048}, "max_model_len"},
		{"weight type", func(string) {}, ModelConfig{WeightType: "int4"}, "weight_type"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := llamaDir(t)
			tc.edit(dir)
			_, err := Open(dir, tc.cfg)
			if !errors.Is(err, ErrModelDir) || !strings.Contains(err.Error(), tc.field) {
				t.Fatalf("got %v, want ErrModelDir naming %s", err, tc.field)
			}
		})
	}
}

func TestOpenDefaultsAndAccessors(t *testing.T) {
	// A budget of 8 blocks of 16 positions lowers the context from
	// max_position_embeddings (256) to 128.
	e := open(t, llamaDir(t), ModelConfig{KVCacheBytes: 8 * tinyLlamaKVBlock, Name: "tiny"})
	if e.MaxModelLen() != 128 || e.Name() != "tiny" || e.VocabSize() != 32000 {
		t.Fatalf("max_model_len %d, name %q, vocab %d", e.MaxModelLen(), e.Name(), e.VocabSize())
	}
	if ids := e.EOSTokenIDs(); len(ids) != 1 || ids[0] != 2 {
		t.Fatalf("eos %v", ids)
	}
	c := e.Config()
	if c.MaxSeqs != DefaultMaxSeqs || c.BlockSize != DefaultBlockSize || c.WeightType != WeightAuto || c.MaxQueueWait != DefaultMaxQueueWait {
		t.Fatalf("defaults %+v", c)
	}
}

func TestChatTemplateFromTheModel(t *testing.T) {
	e := open(t, qwen3Dir(t), ModelConfig{})
	text, err := e.ChatTemplate().Render(chattemplate.Input{
		Messages:            []chattemplate.Message{{Role: "user", Content: "Hi"}},
		AddGenerationPrompt: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(text, "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n") {
		t.Fatalf("rendered %q", text)
	}
	// chat_template.jinja wins over tokenizer_config.json's.
	dir := llmtest.ModelDir{Dims: tinyQwen3, Tokenizer: llmtest.TokenizerQwen3,
		Files: map[string][]byte{ChatTemplateFile: []byte("{% for m in messages %}[{{ m.content }}]{% endfor %}")}}.Write(t)
	e = open(t, dir, ModelConfig{})
	if text, err = e.ChatTemplate().Render(chattemplate.Input{Messages: []chattemplate.Message{{Role: "user", Content: "Hi"}}}); err != nil || text != "[Hi]" {
		t.Fatalf("rendered %q, %v", text, err)
	}
	// The rendered prompt generates like any other.
	ids := e.Tokenizer().Encode("<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n", false)
	if res := run(t, e, Request{Prompt: ids, MaxTokens: 3}); len(res.Choices[0].TokenIDs) == 0 {
		t.Fatal("no tokens")
	}
}

func TestCloseEndsRequests(t *testing.T) {
	e, err := Open(llamaDir(t), ModelConfig{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	g, err := e.Generate(context.Background(), Request{Prompt: longPrompt(e, 40), IgnoreEOS: true})
	if err != nil {
		t.Fatal(err)
	}
	e.Close()
	for {
		if _, err = g.Next(); err != nil {
			break
		}
	}
	if !errors.Is(err, ErrClosed) {
		t.Fatalf("running request: %v", err)
	}
	if _, err := e.Generate(context.Background(), Request{Prompt: []int{1}}); !errors.Is(err, ErrClosed) {
		t.Fatalf("after close: %v", err)
	}
}

func TestInt8WeightsStayCloseToF32(t *testing.T) {
	dir := llamaDir(t)
	f32 := open(t, dir, ModelConfig{})
	int8 := open(t, dir, ModelConfig{WeightType: WeightInt8})
	req := Request{Prompt: prompt(f32, texts[7]), MaxTokens: 1, PromptLogprobs: true}
	a, b := run(t, f32, req), run(t, int8, req)
	sum, worst := 0.0, 0.0
	for i := 1; i < len(req.Prompt); i++ {
		d := math.Abs(float64(a.PromptLogprobs[i].Logprob - b.PromptLogprobs[i].Logprob))
		sum, worst = sum+d, max(worst, d)
	}
	mean := sum / float64(len(req.Prompt)-1)
	t.Logf("prompt logprobs, int8 vs f32: mean |Δ| %.4f, max %.4f", mean, worst)
	if mean == 0 || mean > 0.05 {
		t.Fatalf("mean |Δ| %g: int8 weights are either not used or too far from f32", mean)
	}
	// Greedy text follows f32's: on this fixture every prompt's first 8
	// tokens agree (the int8 kernels keep agreeing for 9 to 32 of them),
	// where a wrong product diverges at once.
	for i, text := range texts {
		req := Request{Prompt: prompt(f32, text), MaxTokens: 8, Temperature: ptr(0.0), IgnoreEOS: true}
		a, b := run(t, f32, req).Choices[0], run(t, int8, req).Choices[0]
		if !slices.Equal(a.TokenIDs, b.TokenIDs) {
			t.Errorf("text %d: greedy int8 %v (%q), f32 %v (%q)", i, b.TokenIDs, b.Text, a.TokenIDs, a.Text)
		}
	}
}
