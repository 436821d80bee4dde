package engine

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/weftlabs/weft/internal/llm/llmtest"
)

// reference is an unstopped greedy run: its ids and the text each token
// added.
type reference struct {
	ids   []int
	texts []string
}

func (r reference) text(n int) string { return strings.Join(r.texts[:n], "") }

func referenceRun(t *testing.T, e *Engine, req Request) reference {
	t.Helper()
	var ref reference
	for _, c := range chunks(t, e, req) {
		if len(c.TokenIDs) != 1 {
			t.Fatalf("chunk with %d tokens", len(c.TokenIDs))
		}
		ref.ids = append(ref.ids, c.TokenIDs[0])
		ref.texts = append(ref.texts, c.Text)
	}
	return ref
}

// streamed checks that a stopped run's chunks add up to its result and
// returns that.
func streamed(t *testing.T, e *Engine, req Request) Choice {
	t.Helper()
	var ch Choice
	cs := chunks(t, e, req)
	for i, c := range cs {
		ch.TokenIDs = append(ch.TokenIDs, c.TokenIDs...)
		ch.Text += c.Text
		if (c.FinishReason != "") != (i == len(cs)-1) {
			t.Fatalf("chunk %d of %d has finish reason %q", i, len(cs), c.FinishReason)
		}
		ch.FinishReason, ch.StopReason = c.FinishReason, c.StopReason
	}
	return ch
}

func greedyReq(e *Engine, text string, maxTokens int) Request {
	return Request{Prompt: prompt(e, text), MaxTokens: maxTokens, Temperature: ptr(0.0), IgnoreEOS: true}
}

func TestStopStringAcrossTokens(t *testing.T) {
	e := open(t, llamaDir(t), ModelConfig{})
	base := greedyReq(e, texts[1], 40)
	ref := referenceRun(t, e, base)
	full := ref.text(len(ref.ids))
	// A stop string made of the end of token k's text and the start of token
	// k+1's, found nowhere earlier.
	var stop string
	var k, at int
	for k = 2; k+1 < len(ref.ids); k++ {
		a, b := []rune(ref.texts[k]), []rune(ref.texts[k+1])
		if len(a) < 2 || len(b) < 2 {
			continue
		}
		stop = string(a[len(a)-2:]) + string(b[:2])
		at = len(ref.text(k+1)) - len(string(a[len(a)-2:]))
		if strings.Index(full, stop) == at {
			break
		}
	}
	if k+1 >= len(ref.ids) {
		t.Fatalf("no stop string candidate in %q", full)
	}
	t.Logf("stop %q spans tokens %d and %d of %q", stop, k, k+1, full)

	for _, include := range []bool{false, true} {
		req := base
		req.Stop = []string{"never in the text", stop}
		req.IncludeStopStrInOutput = include
		got := streamed(t, e, req)
		want := full[:at]
		if include {
			want = full[:at+len(stop)]
		}
		if got.Text != want || got.FinishReason != FinishStop || got.StopReason != stop {
			t.Errorf("include=%v: %q %s %v, want %q stop %q", include, got.Text, got.FinishReason, got.StopReason, want, stop)
		}
		if len(got.TokenIDs) != k+2 {
			t.Errorf("include=%v: %d tokens, want %d (up to the one completing the stop string)", include, len(got.TokenIDs), k+2)
		}
	}
}

func TestStopStringHeldBackWhileStreaming(t *testing.T) {
	e := open(t, llamaDir(t), ModelConfig{})
	base := greedyReq(e, texts[0], 30)
	ref := referenceRun(t, e, base)
	full := ref.text(len(ref.ids))
	// A stop string that never matches but whose first character occurs:
	// text ending in a possible beginning must wait for the next token.
	first, _ := utf8.DecodeRuneInString(ref.texts[len(ref.texts)/2])
	stop := string(first) + "\x00\x00"
	req := base
	req.Stop = []string{stop}
	cs := chunks(t, e, req)
	sent := ""
	for i, c := range cs[:len(cs)-1] {
		sent += c.Text
		// All but the last two characters of the text so far are out.
		want := ref.text(i + 1)
		if n := utf8.RuneCountInString(want); n > 2 {
			want = string([]rune(want)[:n-2])
		} else {
			want = ""
		}
		if sent != want {
			t.Fatalf("after token %d sent %q, want %q", i, sent, want)
		}
	}
	if sent+cs[len(cs)-1].Text != full {
		t.Fatalf("stream %q, want %q", sent+cs[len(cs)-1].Text, full)
	}
}

func TestStopTokenIDs(t *testing.T) {
	e := open(t, llamaDir(t), ModelConfig{})
	base := greedyReq(e, texts[3], 30)
	ref := referenceRun(t, e, base)
	i := 3
	for ; i < len(ref.ids) && slicesContains(ref.ids[:i], ref.ids[i]); i++ {
	}
	id := ref.ids[i]
	for _, include := range []bool{false, true} {
		req := base
		req.StopTokenIDs = []int{id}
		req.IncludeStopStrInOutput = include
		got := streamed(t, e, req)
		want := ref.text(i)
		if include {
			want = ref.text(i + 1)
		}
		if got.Text != want || got.FinishReason != FinishStop || got.StopReason != id || len(got.TokenIDs) != i+1 {
			t.Errorf("include=%v: %q %s %v (%d tokens), want %q stop %d (%d tokens)", include, got.Text,
				got.FinishReason, got.StopReason, len(got.TokenIDs), want, id, i+1)
		}
	}
}

func slicesContains(s []int, v int) bool { return containsInt(s, v) }

func TestEOSMinTokensIgnoreEOS(t *testing.T) {
	e := open(t, llamaDir(t), ModelConfig{})
	eos := e.EOSTokenIDs()[0]
	p := prompt(e, texts[0])
	forced := map[int]float64{eos: 100} // end-of-sequence is the argmax whenever allowed
	got := streamed(t, e, Request{Prompt: p, MaxTokens: 10, Temperature: ptr(0.0), LogitBias: forced})
	if len(got.TokenIDs) != 1 || got.TokenIDs[0] != eos || got.Text != "" || got.FinishReason != FinishStop || got.StopReason != nil {
		t.Errorf("eos: %+v", got)
	}
	got = streamed(t, e, Request{Prompt: p, MaxTokens: 10, MinTokens: 5, Temperature: ptr(0.0), LogitBias: forced})
	if len(got.TokenIDs) != 6 || got.TokenIDs[5] != eos || containsInt(got.TokenIDs[:5], eos) || got.FinishReason != FinishStop || got.StopReason != nil {
		t.Errorf("min_tokens 5: %+v", got)
	}
	got = streamed(t, e, Request{Prompt: p, MaxTokens: 4, Temperature: ptr(0.0), LogitBias: forced, IgnoreEOS: true})
	if len(got.TokenIDs) != 4 || got.FinishReason != FinishLength || got.StopReason != nil {
		t.Errorf("ignore_eos: %+v", got)
	}
	for _, id := range got.TokenIDs {
		if id != eos {
			t.Errorf("ignore_eos: %v, want only eos", got.TokenIDs)
		}
	}
	// min_tokens masks stop token ids too.
	stopID := 1000
	got = streamed(t, e, Request{Prompt: p, MaxTokens: 10, MinTokens: 3, Temperature: ptr(0.0),
		LogitBias: map[int]float64{stopID: 100}, StopTokenIDs: []int{stopID}})
	if len(got.TokenIDs) != 4 || got.TokenIDs[3] != stopID || got.StopReason != stopID {
		t.Errorf("min_tokens with stop id: %+v", got)
	}
}

func TestMinTokensSkipsStopStrings(t *testing.T) {
	e := open(t, llamaDir(t), ModelConfig{})
	base := greedyReq(e, texts[4], 20)
	ref := referenceRun(t, e, base)
	full := ref.text(len(ref.ids))
	// The text of token 1, if it occurs only there.
	stop := ref.texts[1]
	if stop == "" || strings.Count(full, stop) != 1 {
		t.Skipf("token 1's text %q is not unique in %q", stop, full)
	}
	req := base
	req.Stop = []string{stop}
	if got := streamed(t, e, req); got.FinishReason != FinishStop || len(got.TokenIDs) != 2 {
		t.Fatalf("without min_tokens: %+v", got)
	}
	req.MinTokens = 3
	got := streamed(t, e, req)
	if got.FinishReason != FinishLength || got.Text != full || len(got.TokenIDs) != 20 {
		t.Fatalf("min_tokens 3: %+v, want the whole text", got)
	}
}

func TestLengthLimits(t *testing.T) {
	e := open(t, llamaDir(t), ModelConfig{MaxModelLen: 40})
	p := prompt(e, texts[2])
	got := streamed(t, e, Request{Prompt: p, MaxTokens: 7, Temperature: ptr(0.0), IgnoreEOS: true})
	if len(got.TokenIDs) != 7 || got.FinishReason != FinishLength || got.StopReason != nil {
		t.Errorf("max_tokens 7: %+v", got)
	}
	// No max_tokens: up to max_model_len.
	got = streamed(t, e, Request{Prompt: p, Temperature: ptr(0.0), IgnoreEOS: true})
	if len(got.TokenIDs) != 40-len(p) || got.FinishReason != FinishLength {
		t.Errorf("to max_model_len: %d tokens, %s", len(got.TokenIDs), got.FinishReason)
	}
}

func TestGenerationConfig(t *testing.T) {
	const extraEOS = 13
	dir := llmtest.ModelDir{Dims: tinyLlama, Tokenizer: llmtest.TokenizerLlama2, Files: map[string][]byte{
		GenerationConfigFile: []byte(`{"eos_token_id": [2, 13], "max_new_tokens": 6, "top_k": 50, "temperature": 0.5}`),
	}}.Write(t)
	e := open(t, dir, ModelConfig{})
	if ids := e.EOSTokenIDs(); len(ids) != 2 || ids[0] != 2 || ids[1] != extraEOS {
		t.Fatalf("eos ids %v", ids)
	}
	d := e.SamplingDefaults()
	if d.TopK != nil || d.Temperature == nil || *d.Temperature != 0.5 || d.MaxTokens == nil || *d.MaxTokens != 6 {
		t.Fatalf("defaults %+v (top_k 50 is transformers' default and does not count)", d)
	}
	p := prompt(e, texts[0])
	got := streamed(t, e, Request{Prompt: p, Temperature: ptr(0.0), IgnoreEOS: true})
	if len(got.TokenIDs) != 6 || got.FinishReason != FinishLength {
		t.Errorf("max_new_tokens default: %+v", got)
	}
	// The extra eos id stops with itself as stop_reason, unless ignore_eos.
	bias := map[int]float64{extraEOS: 100}
	got = streamed(t, e, Request{Prompt: p, Temperature: ptr(0.0), LogitBias: bias})
	if len(got.TokenIDs) != 1 || got.StopReason != extraEOS {
		t.Errorf("extra eos: %+v", got)
	}
	got = streamed(t, e, Request{Prompt: p, Temperature: ptr(0.0), LogitBias: bias, IgnoreEOS: true, MaxTokens: 3})
	if len(got.TokenIDs) != 3 || got.FinishReason != FinishLength {
		t.Errorf("extra eos with ignore_eos: %+v", got)
	}
}
