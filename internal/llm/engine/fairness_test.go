package engine

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/weftlabs/weft/internal/llm/llmtest"
)

// One request generates at most MaxRequestTokens: n × max_tokens, with
// max_tokens as given or else what the context leaves.
func TestRequestTokenBound(t *testing.T) {
	if got := open(t, llamaDir(t), ModelConfig{}).Config().MaxRequestTokens; got != DefaultMaxRequestTokens {
		t.Fatalf("default MaxRequestTokens %d", got)
	}
	e := open(t, llamaDir(t), ModelConfig{MaxRequestTokens: 100})
	p := prompt(e, texts[0])
	for _, tc := range []struct {
		n, maxTokens int
		refused      bool
	}{
		{5, 20, false}, {5, 21, true}, {101, 1, true}, {1, 0, e.MaxModelLen()-len(p) > 100},
	} {
		g, err := e.Generate(context.Background(), Request{Prompt: p, N: tc.n, MaxTokens: tc.maxTokens, Temperature: ptr(1.0)})
		if g != nil {
			g.Close()
		}
		refused := errors.Is(err, ErrInvalidRequest) && Param(err) == "n" &&
			strings.Contains(err.Error(), "n × max_tokens") && strings.Contains(err.Error(), "(100)")
		if refused != tc.refused || (!refused && err != nil) {
			t.Errorf("n %d, max_tokens %d: %v", tc.n, tc.maxTokens, err)
		}
	}
}

// One tenant's queued work does not hold another's request back: alice
// runs two long requests in the engine's two slots and fills its queue of
// three; bob's one request then takes the place of alice's newest queued
// one (which is refused), and is admitted before alice's other queued
// requests by preempting one of her running ones, with no slot freed.
func TestFairAdmissionAcrossTenants(t *testing.T) {
	dims := tinyLlama
	dims.MaxPositions = 1 << 15 // blockers that outlast the test
	e := open(t, llmtest.ModelDir{Dims: dims, Tokenizer: llmtest.TokenizerLlama2}.Write(t),
		ModelConfig{MaxSeqs: 2, MaxQueued: 3, MaxQueueWait: time.Hour})
	admission := func(g *Generation) uint64 {
		g.mu.Lock()
		defer g.mu.Unlock()
		return g.admission
	}
	for attempt := 0; ; attempt++ {
		if attempt == 5 {
			t.Fatal("alice's long requests ended before bob's arrived in every attempt")
		}
		var blockers []*Generation
		for i := range 2 {
			g, err := e.Generate(context.Background(), Request{Tenant: "alice", Prompt: prompt(e, texts[i]), Temperature: ptr(0.0), IgnoreEOS: true})
			if err != nil {
				t.Fatal(err)
			}
			blockers = append(blockers, g)
		}
		type queued struct {
			g   *Generation
			err error
		}
		results := make([]chan queued, 3)
		for i := range results {
			results[i] = make(chan queued, 1)
			go func() {
				g, err := e.Generate(context.Background(), Request{Tenant: "alice", Prompt: prompt(e, texts[2+i]), MaxTokens: 4})
				results[i] <- queued{g, err}
			}()
			eventually(t, "alice's request queued", func() bool { return e.Stats().Waiting == i+1 })
		}
		bob, err := e.Generate(context.Background(), Request{Tenant: "bob", Prompt: prompt(e, texts[5]), MaxTokens: 4})
		if err != nil {
			t.Fatalf("bob's request: %v", err)
		}
		early := done(blockers[0]) || done(blockers[1])
		newest := <-results[2]
		for _, g := range blockers {
			g.Close()
		}
		bobAdmitted := admission(bob)
		bob.Close()
		for _, r := range results[:2] {
			q := <-r
			if q.err != nil {
				t.Fatalf("alice's queued request: %v", q.err)
			}
			if a := admission(q.g); !early && a < bobAdmitted {
				t.Errorf("alice's queued request was admitted %d, before bob's (%d)", a, bobAdmitted)
			}
			q.g.Close()
		}
		if early {
			continue // nothing held the slots: the attempt shows nothing
		}
		if !errors.Is(newest.err, ErrOverloaded) {
			t.Errorf("alice's newest queued request, in a full queue bob needed a place in: %v", newest.err)
		}
		return
	}
}
