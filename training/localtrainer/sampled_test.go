package localtrainer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/chat"
	"github.com/weftlabs/weft/chat/inprocess"
	"github.com/weftlabs/weft/internal/llm/chattemplate"
	"github.com/weftlabs/weft/internal/llm/llmtest"
	"github.com/weftlabs/weft/internal/llm/tokenizer"
)

// llama2Template is a Mistral-style chat template for the SentencePiece
// fixture, whose tokenizer_config.json has none.
const llama2Template = `{{ bos_token }}{% for m in messages %}{% if m.role == 'user' %}[INST] {{ m.content }} [/INST]{% else %}{{ m.content }}{{ eos_token }}{% endif %}{% endfor %}`

// servedTokenizers are the real vocabularies of the fixtures: byte-level
// BPE (Qwen3, Llama 3) and SentencePiece with byte fallback (Llama 2's,
// Mistral's), each with a tiny random model of its vocabulary's size.
var servedTokenizers = []struct {
	name  string
	dims  llmtest.Dims
	files map[string][]byte
}{
	{llmtest.TokenizerQwen3, llmtest.Dims{Architecture: llmtest.Qwen3, VocabSize: 151669, HiddenSize: 16, IntermediateSize: 32,
		Layers: 1, Heads: 2, KVHeads: 1, HeadDim: 8, MaxPositions: 512, RMSNormEps: 1e-6, RopeTheta: 1e6, TiedEmbedding: true}, nil},
	{llmtest.TokenizerLlama3, llmtest.Dims{Architecture: llmtest.Llama, VocabSize: 128256, HiddenSize: 16, IntermediateSize: 32,
		Layers: 1, Heads: 2, KVHeads: 1, HeadDim: 8, MaxPositions: 512, RMSNormEps: 1e-5, RopeTheta: 5e5, TiedEmbedding: true}, nil},
	{llmtest.TokenizerLlama2, llmtest.Dims{Architecture: llmtest.Llama, VocabSize: 32000, HiddenSize: 16, IntermediateSize: 32,
		Layers: 1, Heads: 2, KVHeads: 1, HeadDim: 8, MaxPositions: 512, RMSNormEps: 1e-5, RopeTheta: 1e4, TiedEmbedding: true},
		map[string][]byte{"chat_template.jinja": []byte(llama2Template)}},
}

// servedModel is a tiny model served through the chat gateway, and the
// trainer's template of it.
type servedModel struct {
	gateway *chat.Gateway
	tp      *Template
}

func serve(t *testing.T, name string, dims llmtest.Dims, files map[string][]byte) servedModel {
	t.Helper()
	dir := llmtest.ModelDir{Dims: dims, Tokenizer: name, Files: files}.Write(t)
	routing, err := chat.ParseRouting([]byte(fmt.Sprintf("models: [{name: tiny, upstreams: [{kind: local, path: %q, threads: 1, kv_cache_bytes: 64MiB}]}]", dir)), nil, inprocess.Kind)
	if err != nil {
		t.Fatal(err)
	}
	models, err := inprocess.Open(routing, inprocess.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = models.Close() })
	g, err := chat.New(chat.Config{Routing: routing, Logger: slog.New(slog.DiscardHandler), Backends: map[string]chat.Backend{chat.KindLocal: models}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.Close(context.Background()) })
	tok, err := tokenizer.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := os.ReadFile(filepath.Join(dir, tokenizer.TokenizerConfigFile))
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := chattemplate.Load(cfg, files["chat_template.jinja"], chattemplate.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return servedModel{gateway: g, tp: &Template{tokenizer: tok, chat: tmpl, EndOfTurn: []int{tok.SpecialTokens().EOS.ID}}}
}

// choices asks the served model for a completion and returns its choices as
// a trajectory stores them.
func (s servedModel) choices(t *testing.T, body string) []json.RawMessage {
	t.Helper()
	ctx := weft.WithPrincipal(context.Background(), weft.Principal{UserID: "u1", DefaultEntity: "alice"})
	c, err := s.gateway.Complete(ctx, "alice/chat", []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	if err := c.Relay(rec); err != nil || rec.Code != 200 {
		t.Fatalf("relay: %v, %d %s", err, rec.Code, rec.Body)
	}
	var res struct{ Choices []json.RawMessage }
	if err := json.Unmarshal(rec.Body.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	return res.Choices
}

// Rollouts sampled by the engine with plain logprobs (token texts and
// bytes) are read back as exactly the tokens the same requests name by id
// with return_tokens_as_token_ids, on real byte-level and SentencePiece
// vocabularies: a random model at temperature 1 samples every kind of token
// (parts of characters, special tokens, SentencePiece words whose leading
// space decoding alone drops, byte-fallback tokens). The one exception is
// a byte-fallback token whose byte is also a token ("<0x41>" and "A"):
// nothing in a text tells them apart, and it reads as the token the
// tokenizer writes.
func TestPlainLogprobsReadBackAsSampledIDs(t *testing.T) {
	for _, tc := range servedTokenizers {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := serve(t, tc.name, tc.dims, tc.files)
			const request = `{"model":"tiny","messages":[{"role":"user","content":"Write anything."}],"n":4,"max_tokens":64,"temperature":1,"seed":%d,"logprobs":true%s}`
			tokens, otherwise, fallbacks := 0, 0, 0
			for seed := 1; seed <= 4; seed++ {
				extra := ""
				if seed == 4 {
					extra = `,"logit_bias":` + hardTokens(s.tp.tokenizer)
				}
				plain := s.choices(t, fmt.Sprintf(request, seed, extra))
				named := s.choices(t, fmt.Sprintf(request, seed, extra+`,"return_tokens_as_token_ids":true`))
				for i := range plain {
					var entries struct {
						Logprobs struct{ Content []wireLogprob }
					}
					_ = json.Unmarshal(plain[i], &entries)
					user := map[string]any{"role": "user", "content": "Write anything."}
					fromText, err := s.tp.Trajectory(raws(t, user, plain[i]), nil)
					if err != nil {
						t.Fatalf("seed %d choice %d: %v\n%s", seed, i, err, plain[i])
					}
					byID, err := s.tp.Trajectory(raws(t, user, named[i]), nil)
					if err != nil {
						t.Fatalf("seed %d choice %d, by id: %v", seed, i, err)
					}
					if len(fromText) != 1 || len(byID) != 1 || len(fromText[0].IDs) != len(byID[0].IDs) {
						t.Fatalf("seed %d choice %d: sequences %d and %d", seed, i, len(fromText), len(byID))
					}
					a, b := fromText[0], byID[0]
					if !slices.Equal(a.Trained, b.Trained) || fmt.Sprint(a.Logprobs) != fmt.Sprint(b.Logprobs) {
						t.Fatalf("seed %d choice %d: trained tokens or logprobs differ", seed, i)
					}
					tokens += len(entries.Logprobs.Content)
					for _, e := range entries.Logprobs.Content {
						if b := string(bytesOf(e.Bytes)); b != e.Token {
							otherwise++ // a part of a character, or a space decoding alone drops
						}
					}
					for k := range a.IDs {
						if a.IDs[k] == b.IDs[k] {
							continue
						}
						raw, _ := s.tp.tokenizer.IDToToken(b.IDs[k])
						ba, _ := s.tp.tokenizer.TokenBytes(a.IDs[k])
						bb, _ := s.tp.tokenizer.TokenBytes(b.IDs[k])
						if !byteFallback.MatchString(raw) || string(ba) != string(bb) {
							t.Fatalf("seed %d choice %d, token %d: read %d, sampled %d (%q)", seed, i, k, a.IDs[k], b.IDs[k], raw)
						}
						fallbacks++
					}
				}
			}
			t.Logf("%d sampled tokens read back, %d of them with bytes other than their text, %d byte-fallback tokens read as the token of the same byte", tokens, otherwise, fallbacks)
			if otherwise == 0 {
				t.Error("no sampled token had bytes other than its text")
			}
			if (tc.name == llmtest.TokenizerLlama2) != (fallbacks > 0) {
				t.Errorf("%s: %d byte-fallback tokens read as another", tc.name, fallbacks)
			}
		})
	}
}

// hardTokens is a logit_bias that makes a random model sample the tokens
// hardest to read back: parts of characters and, in a SentencePiece
// vocabulary, the byte-fallback token of "A".
func hardTokens(tok *tokenizer.Tokenizer) string {
	bias := map[string]float64{}
	for id := 0; id < tok.VocabSize() && len(bias) < 3; id++ {
		if b, ok := tok.TokenBytes(id); ok && !utf8.Valid(b) {
			bias[fmt.Sprint(id)] = 10
		}
	}
	if id, ok := tok.TokenToID("<0x41>"); ok {
		bias[fmt.Sprint(id)] = 10
	}
	b, _ := json.Marshal(bias)
	return string(b)
}

func bytesOf(ints []int) []byte {
	b := make([]byte, len(ints))
	for i, c := range ints {
		b[i] = byte(c)
	}
	return b
}

// An entry whose bytes or text were changed is refused, naming the entry.
func TestTamperedLogprobEntryRefused(t *testing.T) {
	tp := qwen3(t)
	user := map[string]any{"role": "user", "content": "Hi"}
	entry := func(text string) map[string]any {
		var b []int
		for _, c := range []byte(text) {
			b = append(b, int(c))
		}
		return map[string]any{"token": text, "logprob": -0.5, "bytes": b, "top_logprobs": []any{}}
	}
	reply := func(content string, entries ...map[string]any) map[string]any {
		return map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": content},
			"logprobs": map[string]any{"content": entries}}
	}
	// As the engine writes them: "The sky is blue." and the end of turn.
	words := []string{"The", " sky", " is", " blue", ".", "<|im_end|>"}
	var entries []map[string]any
	for _, w := range words {
		entries = append(entries, entry(w))
	}
	seqs, err := tp.Trajectory(raws(t, user, reply("The sky is blue.", entries...)), nil)
	if err != nil {
		t.Fatal(err)
	}
	if trained, _ := split(tp, seqs[0]); fmt.Sprint(trained) != "[The sky is blue.<|im_end|>]" {
		t.Fatalf("trained %q", trained)
	}

	tampered := func(k int, e map[string]any) []json.RawMessage {
		changed := slices.Clone(entries)
		changed[k] = e
		return raws(t, user, reply("The sky is blue.", changed...))
	}
	for _, tc := range []struct {
		what  string
		items []json.RawMessage
		want  string
	}{
		{"another token's bytes and text", tampered(3, entry(" red")), `entry 1, logprob 3 (token " red"): the message's text "The sky is blue." is not what the tokens spell here`},
		{"its text alone", tampered(1, map[string]any{"token": " cloud", "logprob": -0.5, "bytes": entry(" sky")["bytes"]}), `entry 1, logprob 1 (token " cloud"): its bytes " sky" are token 12884, whose text is " sky"`},
		{"bytes of no token", tampered(2, entry(" isisisisisisisisisis")), `entry 1, logprob 2 (token " isisisisisisisisisis"): its bytes " isisisisisisisisisis" are no token of this model`},
		{"a number that is not a byte", tampered(4, map[string]any{"token": ".", "logprob": -0.5, "bytes": []int{256}}), `entry 1, logprob 4 (token "."): bytes[0] = 256 is not a byte`},
		{"an id past the vocabulary", tampered(0, map[string]any{"token": "token_id:151669", "logprob": -0.5}), `entry 1, logprob 0 (token "token_id:151669"): it is not a token id of this model`},
	} {
		_, err := tp.Trajectory(tc.items, nil)
		if !errors.Is(err, ErrConversation) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %s", tc.what, err, tc.want)
		}
	}
	// The message's reasoning is checked as its content is.
	withReasoning := reply("The sky is blue.", entries...)
	withReasoning["message"].(map[string]any)["reasoning_content"] = "Clouds?"
	if _, err := tp.Trajectory(raws(t, user, withReasoning), nil); err == nil || !strings.Contains(err.Error(), `entry 1, logprob 0 (token "The"): the message's text "Clouds?"`) {
		t.Errorf("reasoning the tokens do not spell: %v", err)
	}
}
