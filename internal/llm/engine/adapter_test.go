package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/weftlabs/weft/internal/llm/llmtest"
	"github.com/weftlabs/weft/internal/llm/llmtest/llmcheck"
	"github.com/weftlabs/weft/internal/llm/lora"
)

func TestAdapterAppliedPerRequest(t *testing.T) {
	dir := llamaDir(t)
	first := llmtest.AdapterDir(t, tinyLlama, lora.Config{}, 1, 0.5)
	second := llmtest.AdapterDir(t, tinyLlama, lora.Config{Rank: 4, Targets: []lora.Target{lora.V, lora.Down}}, 2, 1)
	e := open(t, dir, ModelConfig{})
	p := longPrompt(e, 20)
	req := func(adapter string) Request {
		return Request{Prompt: p, MaxTokens: 12, Temperature: ptr(0.0), IgnoreEOS: true, Logprobs: true, Adapter: adapter}
	}
	alone := map[string]*Result{}
	for _, a := range []string{"", first, second} {
		res := run(t, e, req(a))
		want := llmcheck.Greedy(t, dir, a, p, 12)
		if !slices.Equal(res.Choices[0].TokenIDs, want) {
			t.Fatalf("adapter %q: the engine generated %v, the model with the adapter %v", a, res.Choices[0].TokenIDs, want)
		}
		alone[a] = res
	}
	if slices.Equal(alone[""].Choices[0].TokenIDs, alone[first].Choices[0].TokenIDs) ||
		slices.Equal(alone[first].Choices[0].TokenIDs, alone[second].Choices[0].TokenIDs) {
		t.Fatal("the adapters do not change the output")
	}

	// Together: each answers as alone. An attempt in which the requests
	// never shared a pass proves nothing and is repeated.
	adapters := []string{first, second, "", second, first, ""}
	for attempt := 0; ; attempt++ {
		before := e.Stats()
		var wg sync.WaitGroup
		results := make([]*Result, len(adapters))
		for i, a := range adapters {
			wg.Go(func() {
				g, err := e.Generate(context.Background(), req(a))
				if err != nil {
					t.Error(err)
					return
				}
				results[i], err = g.Wait()
				if err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if t.Failed() {
			return
		}
		for i, a := range adapters {
			if err := sameChoice(results[i].Choices[0], alone[a].Choices[0]); err != nil {
				t.Fatalf("request %d (adapter %q) among others: %v", i, a, err)
			}
		}
		after := e.Stats()
		rows, steps := after.Rows-before.Rows, after.Steps-before.Steps
		if rows >= steps+len(adapters) {
			return // several passes carried rows of different adapters
		}
		if attempt == 4 {
			t.Fatalf("%d rows in %d steps over 5 attempts: the requests never ran together", rows, steps)
		}
	}
}

func TestAdapterPrefixCacheEvictionAndErrors(t *testing.T) {
	dir := llamaDir(t)
	first := llmtest.AdapterDir(t, tinyLlama, lora.Config{}, 1, 0.5)
	second := llmtest.AdapterDir(t, tinyLlama, lora.Config{}, 3, 0.5)
	e := open(t, dir, ModelConfig{MaxAdapters: 1})
	p := longPrompt(e, 40)
	req := func(adapter string) Request {
		return Request{Prompt: p, MaxTokens: 4, Temperature: ptr(0.0), IgnoreEOS: true, Adapter: adapter}
	}
	a := run(t, e, req(first))
	if again := run(t, e, req(first)); again.Usage.CachedTokens != 32 {
		t.Fatalf("the same adapter again: %d cached tokens, want 32", again.Usage.CachedTokens)
	}
	if base := run(t, e, req("")); base.Usage.CachedTokens != 0 {
		t.Fatalf("the base model after an adapter: %d cached tokens", base.Usage.CachedTokens)
	}
	if other := run(t, e, req(second)); other.Usage.CachedTokens != 0 {
		t.Fatalf("another adapter: %d cached tokens", other.Usage.CachedTokens)
	}
	if n := e.adapters.len(); n != 1 {
		t.Fatalf("%d adapters held, MaxAdapters is 1", n)
	}
	// first was evicted: loaded again, it answers the same, and the
	// prefix blocks of its earlier load are not reused.
	back := run(t, e, req(first))
	if err := sameChoice(back.Choices[0], a.Choices[0]); err != nil {
		t.Fatalf("reloaded adapter: %v", err)
	}
	if back.Usage.CachedTokens != 0 {
		t.Fatalf("a reloaded adapter reused %d tokens of its earlier load", back.Usage.CachedTokens)
	}

	// Directories that cannot be served are the request's error.
	otherShape := tinyLlama
	otherShape.IntermediateSize = 48
	bad := filepath.Join(t.TempDir(), "broken")
	if err := os.MkdirAll(bad, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bad, lora.ConfigFile), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, dir := range map[string]string{
		"missing":     filepath.Join(t.TempDir(), "none"),
		"malformed":   bad,
		"other model": llmtest.AdapterDir(t, otherShape, lora.Config{}, 1, 0.5),
	} {
		_, err := e.Generate(context.Background(), Request{Prompt: []int{1, 2}, MaxTokens: 1, Adapter: dir})
		if !errors.Is(err, ErrAdapter) {
			t.Errorf("%s: %v, want ErrAdapter", name, err)
		}
	}
}
