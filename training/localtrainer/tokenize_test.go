package localtrainer

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/weftlabs/weft/internal/llm/chattemplate"
	"github.com/weftlabs/weft/internal/llm/llmtest"
	"github.com/weftlabs/weft/internal/llm/tokenizer"
)

// qwen3Template is loaded once for the package's tests (the tokenizer takes
// seconds to load).
var qwen3Template = sync.OnceValues(func() (*Template, error) {
	dir := llmtest.TokenizerDir(llmtest.TokenizerQwen3)
	tok, err := tokenizer.Load(dir)
	if err != nil {
		return nil, err
	}
	cfg, err := os.ReadFile(filepath.Join(dir, tokenizer.TokenizerConfigFile))
	if err != nil {
		return nil, err
	}
	chat, err := chattemplate.Load(cfg, nil, chattemplate.Config{})
	if err != nil {
		return nil, err
	}
	end, ok := tok.TokenToID("<|im_end|>")
	if !ok {
		return nil, errors.New("no <|im_end|>")
	}
	return &Template{tokenizer: tok, chat: chat, EndOfTurn: []int{end}}, nil
})

// qwen3 is the real Qwen3 tokenizer and chat template, with <|im_end|> ending
// turns as the engine reads it from the tokenizer config.
func qwen3(t *testing.T) *Template {
	t.Helper()
	llmtest.RequireTokenizer(t, llmtest.TokenizerQwen3)
	tp, err := qwen3Template()
	if err != nil {
		t.Fatal(err)
	}
	return tp
}

func raws(t *testing.T, items ...any) []json.RawMessage {
	t.Helper()
	out := make([]json.RawMessage, len(items))
	for i, it := range items {
		b, err := json.Marshal(it)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = b
	}
	return out
}

// split decodes a sequence into its trained and its untrained text, runs
// of trained tokens separated by "|".
func split(tp *Template, s Sequence) (trained []string, all string) {
	var run []int
	for i, id := range s.IDs {
		if s.Trained[i] {
			run = append(run, id)
			continue
		}
		if run != nil {
			trained = append(trained, tp.tokenizer.Decode(run, tokenizer.DecodeOptions{}))
			run = nil
		}
	}
	if run != nil {
		trained = append(trained, tp.tokenizer.Decode(run, tokenizer.DecodeOptions{}))
	}
	return trained, tp.tokenizer.Decode(s.IDs, tokenizer.DecodeOptions{})
}

// choice is a chat completion choice whose logprobs name the tokens of text
// (as the engine samples them with return_tokens_as_token_ids), each with
// log-probability -0.1·(position+1).
func choice(tp *Template, content string, toolCalls []any, sampled string) map[string]any {
	var entries []any
	for i, id := range tp.tokenizer.Encode(sampled, false) {
		entries = append(entries, map[string]any{"token": fmt.Sprintf("token_id:%d", id), "logprob": -0.1 * float64(i+1), "bytes": nil, "top_logprobs": []any{}})
	}
	msg := map[string]any{"role": "assistant", "content": content}
	if toolCalls != nil {
		msg["tool_calls"] = toolCalls
	}
	return map[string]any{"finish_reason": "stop", "index": 0, "message": msg, "logprobs": map[string]any{"content": entries}}
}

func TestConversationMasksAssistantTurns(t *testing.T) {
	tp := qwen3(t)
	seqs, err := tp.Conversation(raws(t,
		map[string]any{"role": "system", "content": "Be brief."},
		map[string]any{"role": "user", "content": "Hi"},
		map[string]any{"role": "assistant", "content": "Hello there!"},
		map[string]any{"role": "user", "content": "Bye"},
		map[string]any{"role": "assistant", "content": "Goodbye."},
	), nil)
	if err != nil {
		t.Fatal(err)
	}
	// Each turn is trained as the template writes it when it is the last one
	// (Qwen3 then adds an empty reasoning block), after the prompt the engine
	// renders for it. Once followed by more, the template writes the first
	// turn without the block, so the second turn starts a new sequence.
	if len(seqs) != 2 {
		t.Fatalf("%d sequences", len(seqs))
	}
	trained, all := split(tp, seqs[0])
	if fmt.Sprint(trained) != "[<think>\n\n</think>\n\nHello there!<|im_end|>]" {
		t.Errorf("first turn trained %q", trained)
	}
	if want := "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\nHello there!<|im_end|>\n"; all != want {
		t.Errorf("first sequence %q", all)
	}
	trained, all = split(tp, seqs[1])
	if fmt.Sprint(trained) != "[<think>\n\n</think>\n\nGoodbye.<|im_end|>]" {
		t.Errorf("second turn trained %q", trained)
	}
	if !strings.HasPrefix(all, "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\nHello there!<|im_end|>\n<|im_start|>user\nBye<|im_end|>\n<|im_start|>assistant\n") {
		t.Errorf("second sequence %q", all)
	}
	for _, s := range seqs {
		for i, lp := range s.Logprobs {
			if !math.IsNaN(lp) {
				t.Fatalf("written turns have no sampler log-probabilities; token %d has %v", i, lp)
			}
		}
	}
}

func TestTrajectoryTrainsSampledChoices(t *testing.T) {
	tp := qwen3(t)
	tools := raws(t, map[string]any{"type": "function", "function": map[string]any{"name": "search", "description": "Search mail",
		"parameters": map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": "string"}}}}})
	call := "<tool_call>\n{\"name\": \"search\", \"arguments\": {\"q\": \"invoice\"}}\n</tool_call><|im_end|>"
	first := choice(tp, "", []any{map[string]any{"id": "c1", "type": "function", "function": map[string]any{"name": "search", "arguments": `{"q": "invoice"}`}}}, call)
	second := choice(tp, "It is in the inbox.", nil, "It is in the inbox.<|im_end|>")
	items := raws(t,
		map[string]any{"role": "user", "content": "Find the invoice"},
		first,
		map[string]any{"role": "tool", "tool_call_id": "c1", "content": "inbox/42"},
		second,
		map[string]any{"role": "assistant", "content": "A written reply is context, not trained."},
	)
	seqs, err := tp.Trajectory(items, tools)
	if err != nil {
		t.Fatal(err)
	}
	var trained []string
	var lastAll string
	for _, s := range seqs {
		tr, all := split(tp, s)
		trained = append(trained, tr...)
		lastAll = all
		// Trained tokens carry the sampler's log-probabilities, in order; the
		// others none.
		n := 0
		for i, lp := range s.Logprobs {
			if s.Trained[i] {
				n++
				if want := -0.1 * float64(n); math.Abs(lp-want) > 1e-12 && n <= 3 {
					t.Errorf("trained token %d: logprob %v, want %v", i, lp, want)
				}
			} else if !math.IsNaN(lp) {
				t.Errorf("context token %d has logprob %v", i, lp)
			}
		}
	}
	if len(trained) != 2 || trained[0] != call || trained[1] != "It is in the inbox.<|im_end|>" {
		t.Fatalf("trained %q", trained)
	}
	// The second choice reads the tool call and the tool's answer as context,
	// rendered by the template.
	for _, want := range []string{"<tools>", `"name": "search"`, "<tool_response>\ninbox/42\n</tool_response>", "<|im_start|>assistant\nIt is in the inbox.<|im_end|>"} {
		if !strings.Contains(lastAll, want) {
			t.Errorf("last sequence lacks %q:\n%s", want, lastAll)
		}
	}
	if strings.Contains(lastAll, "A written reply") {
		t.Error("the plain assistant message after the last choice was tokenised")
	}
	// The sampled ids follow exactly the engine's prompt for the first choice.
	wireTools, _ := chattemplate.WireTools(tools)
	prompt, _ := tp.chat.Render(chattemplate.Input{Messages: []chattemplate.Message{{Role: "user", Content: "Find the invoice"}},
		Tools: wireTools, AddGenerationPrompt: true})
	want := append(tp.tokenizer.Encode(prompt, false), tp.tokenizer.Encode(call, false)...)
	if fmt.Sprint(seqs[0].IDs[:len(want)]) != fmt.Sprint(want) {
		t.Errorf("first sequence does not start with the engine's prompt and the sampled tokens")
	}
}

func TestTrajectoryChoiceWithoutLogprobs(t *testing.T) {
	tp := qwen3(t)
	seqs, err := tp.Trajectory(raws(t,
		map[string]any{"role": "user", "content": "Hi"},
		map[string]any{"finish_reason": "stop", "index": 0, "message": map[string]any{"role": "assistant", "content": "Hello!"}, "logprobs": nil},
	), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(seqs) != 1 {
		t.Fatalf("%d sequences", len(seqs))
	}
	trained, _ := split(tp, seqs[0])
	if fmt.Sprint(trained) != "[<think>\n\n</think>\n\nHello!<|im_end|>]" {
		t.Errorf("trained %q", trained)
	}
	// A history without choices trains nothing.
	seqs, err = tp.Trajectory(raws(t, map[string]any{"role": "user", "content": "Hi"}, map[string]any{"role": "assistant", "content": "Hello!"}), nil)
	if err != nil || len(seqs) != 0 {
		t.Fatalf("plain messages: %d sequences, %v", len(seqs), err)
	}
	// Tokens that are not this model's are refused.
	_, err = tp.Trajectory(raws(t, map[string]any{"role": "user", "content": "Hi"},
		map[string]any{"message": map[string]any{"role": "assistant", "content": "x"}, "logprobs": map[string]any{"content": []any{map[string]any{"token": "token_id:99999999", "logprob": -1}}}}), nil)
	if !errors.Is(err, ErrConversation) {
		t.Fatalf("unknown token id: %v", err)
	}
}
