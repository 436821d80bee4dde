package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/weftlabs/weft/internal/llm/llmtest"
)

// tinyLlama's KV cache takes 2 layers × keys and values × 16 floats × 4
// bytes per position.
const tinyLlamaKVBlock = 2 * 2 * 16 * 4 * DefaultBlockSize

// eventually polls cond until it holds; the test's own timeout bounds it.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
	}
}

func done(g *Generation) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.done
}

// longPrompt is n tokens of text.
func longPrompt(e *Engine, n int) []int {
	p := prompt(e, texts[7]+" "+texts[1]+" "+texts[3]+" "+texts[0])
	for len(p) < n {
		p = append(p, p[1:]...)
	}
	return p[:n]
}

func TestCancelFreesSlotAndBlocks(t *testing.T) {
	e := open(t, llamaDir(t), ModelConfig{})
	long := Request{Prompt: longPrompt(e, 40), Temperature: ptr(0.0), IgnoreEOS: true, CacheSalt: "a"}
	ctxA, cancelA := context.WithCancel(context.Background())
	a, err := e.Generate(ctxA, long)
	if err != nil {
		t.Fatal(err)
	}
	long.CacheSalt = "b" // no shared blocks
	b, err := e.Generate(context.Background(), long)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := a.Next(); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "two sequences running", func() bool { return e.Stats().Running == 2 })
	inUseBoth := e.Stats().KV.InUse
	cancelA()
	eventually(t, "one sequence left running", func() bool { return e.Stats().Running == 1 })
	for {
		if _, err := a.Next(); err != nil {
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("cancelled generation ends with %v", err)
			}
			break
		}
	}
	if st := e.Stats(); st.KV.InUse >= inUseBoth {
		t.Fatalf("blocks in use %d after cancelling one of two sequences (%d before)", st.KV.InUse, inUseBoth)
	}
	b.Close()
	eventually(t, "every block released", func() bool {
		st := e.Stats()
		return st.Running == 0 && st.KV.InUse == 0 && st.KV.Free+st.KV.Idle == st.KV.Total
	})
	if _, err := b.Next(); err != nil && !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
}

// The scheduling tests need requests that hold KV blocks for a while: a
// Llama of tinyLlama's size with a long context, and a budget of 256 blocks
// that two sequences growing to 2048 positions fill. A 1376-token prompt
// takes 86 blocks, so two of them leave 84 free: not enough for a third.
const (
	longContext      = 2048
	longBudgetBlocks = 256
	longPromptTokens = 1376
)

func longLlamaDir(t testing.TB) string {
	d := tinyLlama
	d.MaxPositions = longContext
	return llmtest.ModelDir{Dims: d, Tokenizer: llmtest.TokenizerLlama2}.Write(t)
}

// occupy starts n requests that each grow to the whole context, under
// salts of their own so that they share no blocks.
func occupy(t *testing.T, e *Engine, n int) []*Generation {
	t.Helper()
	var gens []*Generation
	for i := range n {
		g, err := e.Generate(context.Background(), Request{Prompt: longPrompt(e, longPromptTokens),
			Temperature: ptr(0.0), IgnoreEOS: true, CacheSalt: fmt.Sprint("blocker", i)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(g.Close)
		gens = append(gens, g)
	}
	return gens
}

func TestOverBudgetBurstQueuesThenIsRefused(t *testing.T) {
	e := open(t, longLlamaDir(t), ModelConfig{KVCacheBytes: longBudgetBlocks * tinyLlamaKVBlock, MaxQueueWait: time.Millisecond})
	blockers := occupy(t, e, 2)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() {
			_, errs[i] = e.Generate(context.Background(), Request{Prompt: longPrompt(e, longPromptTokens),
				MaxTokens: 24, CacheSalt: fmt.Sprint("burst", i)})
		})
	}
	wg.Wait()
	for i, err := range errs {
		var over *OverloadedError
		if !errors.As(err, &over) || !errors.Is(err, ErrOverloaded) || over.RetryAfterSeconds() < 1 {
			t.Errorf("burst request %d: %v, want ErrOverloaded with a retry-after", i, err)
		}
	}
	for _, g := range blockers {
		g.Close()
	}
	// With the budget free again the same request runs.
	res := run(t, e, Request{Prompt: longPrompt(e, longPromptTokens), MaxTokens: 24, CacheSalt: "burst0"})
	if len(res.Choices[0].TokenIDs) != 24 {
		t.Fatal("no tokens")
	}
}

func TestQueuedRequestRunsWhenRoomFrees(t *testing.T) {
	e := open(t, longLlamaDir(t), ModelConfig{KVCacheBytes: longBudgetBlocks * tinyLlamaKVBlock, MaxQueued: 1, MaxQueueWait: time.Hour})
	blockers := occupy(t, e, 2)
	queued := make(chan error, 1)
	go func() {
		g, err := e.Generate(context.Background(), Request{Prompt: longPrompt(e, longPromptTokens), MaxTokens: 5,
			Temperature: ptr(0.0), CacheSalt: "queued"})
		if err == nil {
			_, err = g.Wait()
		}
		queued <- err
	}()
	eventually(t, "a request waiting", func() bool { return e.Stats().Waiting == 1 })
	// The queue holds one: the next is refused at once.
	_, err := e.Generate(context.Background(), Request{Prompt: prompt(e, "Hello"), MaxTokens: 5})
	var over *OverloadedError
	if !errors.As(err, &over) {
		t.Fatalf("second queued request: %v", err)
	}
	for _, g := range blockers {
		g.Close()
	}
	if err := <-queued; err != nil {
		t.Fatalf("queued request: %v", err)
	}
}

func TestPriorityOrdersAdmission(t *testing.T) {
	e := open(t, longLlamaDir(t), ModelConfig{MaxSeqs: 1})
	blocker := occupy(t, e, 1)[0]
	priorities := []int{5, 1, 3}
	gens := make([]*Generation, len(priorities))
	var wg sync.WaitGroup
	for i, p := range priorities {
		wg.Go(func() {
			g, err := e.Generate(context.Background(), Request{Prompt: prompt(e, texts[i]), MaxTokens: 4, Priority: p})
			if err != nil {
				t.Error(err)
				return
			}
			gens[i] = g
			if _, err := g.Wait(); err != nil {
				t.Error(err)
			}
		})
		// Arrival order 5, 1, 3, all while the one slot is taken.
		eventually(t, "queued", func() bool { return e.Stats().Waiting == i+1 })
	}
	blocker.Close()
	wg.Wait()
	order := func(g *Generation) uint64 {
		g.mu.Lock()
		defer g.mu.Unlock()
		return g.admission
	}
	// Admitted in the order of priority 1 (index 1), 3 (index 2), 5 (index 0).
	if a, b, c := order(gens[1]), order(gens[2]), order(gens[0]); !(a < b && b < c) {
		t.Fatalf("admissions of priorities 1, 3, 5: %d, %d, %d", a, b, c)
	}
}

func TestPreemptionTakesLowestPriorityAndRecomputes(t *testing.T) {
	// 7 blocks for two sequences that each grow to 4.
	e := open(t, llamaDir(t), ModelConfig{KVCacheBytes: 7 * tinyLlamaKVBlock, MaxModelLen: 64})
	req := func(text string, priority int) Request {
		return Request{Prompt: prompt(e, text+" "+text), MaxTokens: 64 - len(prompt(e, text+" "+text)),
			Temperature: ptr(0.9), Seed: ptr(int64(priority)), IgnoreEOS: true, Priority: priority, Logprobs: true}
	}
	low, high := req(texts[1], 10), req(texts[7], 0)
	aloneLow, aloneHigh := run(t, e, low), run(t, e, high)

	// The high-priority request must arrive while the low one still runs; on
	// a loaded machine the low one can finish before the test submits the
	// other, and then nothing contends for the cache. Such an attempt shows
	// nothing and is repeated; an attempt with a preemption is the test.
	for attempt := 0; ; attempt++ {
		if attempt == 20 {
			t.Fatal("no attempt had the two requests contend for the cache")
		}
		before := e.Stats().Preemptions
		gLow, err := e.Generate(context.Background(), low) // arrives first
		if err != nil {
			t.Fatal(err)
		}
		gHigh, err := e.Generate(context.Background(), high)
		if err != nil {
			t.Fatal(err)
		}
		resLow, err := gLow.Wait()
		if err != nil {
			t.Fatal(err)
		}
		highDone := done(gHigh)
		resHigh, err := gHigh.Wait()
		if err != nil {
			t.Fatal(err)
		}
		if e.Stats().Preemptions == before {
			continue
		}
		if !highDone {
			t.Fatal("the low-priority request finished while the high-priority one ran: the wrong one was preempted")
		}
		if err := sameChoice(aloneLow.Choices[0], resLow.Choices[0]); err != nil {
			t.Errorf("preempted and recomputed: %v", err)
		}
		if err := sameChoice(aloneHigh.Choices[0], resHigh.Choices[0]); err != nil {
			t.Errorf("high priority: %v", err)
		}
		return
	}
}

// The prefix cache is shared within one tenant and salt only: another
// salt, another tenant with the same salt, or a tenant and salt that join
// into the same text read nothing.
func TestPrefixCacheReuseIsolatedBySalt(t *testing.T) {
	e := open(t, llamaDir(t), ModelConfig{})
	p := longPrompt(e, 40)
	req := func(salt string) Request {
		return Request{Prompt: p, MaxTokens: 8, Temperature: ptr(0.0), Tenant: "t", CacheSalt: salt, Logprobs: true, TopLogprobs: 2}
	}
	first := run(t, e, req("a"))
	if first.Usage.CachedTokens != 0 {
		t.Fatalf("first run: %d cached tokens", first.Usage.CachedTokens)
	}
	again := run(t, e, req("a"))
	if again.Usage.CachedTokens != 32 { // two full blocks of 16; the last token is always computed
		t.Fatalf("repeat: %d cached tokens, want 32", again.Usage.CachedTokens)
	}
	if err := sameChoice(first.Choices[0], again.Choices[0]); err != nil {
		t.Fatalf("from the cache: %v", err)
	}
	if other := run(t, e, req("b")); other.Usage.CachedTokens != 0 {
		t.Fatalf("another salt: %d cached tokens", other.Usage.CachedTokens)
	}
	if other := run(t, e, req("")); other.Usage.CachedTokens != 0 {
		t.Fatalf("no salt: %d cached tokens", other.Usage.CachedTokens)
	}
	for _, other := range []struct{ tenant, salt string }{{"u", "a"}, {"", "a"}, {"", "ta"}, {"t a", ""}, {`t" "a`, ""}} {
		r := req(other.salt)
		r.Tenant = other.tenant
		if res := run(t, e, r); res.Usage.CachedTokens != 0 {
			t.Fatalf("tenant %q, salt %q: %d cached tokens of tenant t's", other.tenant, other.salt, res.Usage.CachedTokens)
		}
	}
	if back := run(t, e, req("a")); back.Usage.CachedTokens != 32 {
		t.Fatalf("salt a again: %d cached tokens", back.Usage.CachedTokens)
	}
}

func TestChoicesSharePromptBlocks(t *testing.T) {
	// A 72-token prompt fills 4 blocks and starts a fifth. Four choices that
	// shared nothing would need 5 blocks each, so a budget of 8 would run
	// them one at a time; sharing the 4 full blocks, all four fit (4 + 4×1).
	e := open(t, llamaDir(t), ModelConfig{KVCacheBytes: 8 * tinyLlamaKVBlock})
	before := e.Stats()
	res := run(t, e, Request{Prompt: longPrompt(e, 72), N: 4, MaxTokens: 4, Temperature: ptr(1.0), Seed: ptr(int64(1)), IgnoreEOS: true})
	after := e.Stats()
	for _, c := range res.Choices {
		if len(c.TokenIDs) != 4 {
			t.Fatalf("choice %d: %d tokens", c.Index, len(c.TokenIDs))
		}
	}
	steps, rows := after.Steps-before.Steps, after.Rows-before.Rows
	if after.Preemptions != before.Preemptions || rows < 3*steps {
		t.Fatalf("%d rows in %d steps, %d preemptions: the choices did not run together", rows, steps, after.Preemptions-before.Preemptions)
	}
}
