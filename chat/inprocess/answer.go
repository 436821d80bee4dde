package inprocess

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"

	"github.com/weftlabs/weft/internal/llm/engine"
	"github.com/weftlabs/weft/internal/llm/tokenizer"
)

// The answers of a local model, shaped field for field as vLLM's
// ChatCompletionResponse (every field present, null when unset) and
// ChatCompletionStreamResponse (only the fields vLLM sets). They are written
// as the bytes a vLLM upstream would send, so that relaying and tracing are
// the ones forwarded completions go through.

// answerOptions are the request's choices about the shape of the answer.
type answerOptions struct {
	id, model   string
	created     int64
	role        string
	logprobs    bool
	topLogprobs int // -1: every entry the engine returned
	asTokenIDs  bool
	tokenIDs    bool
	// tok gives each token's bytes.
	tok *tokenizer.Tokenizer
	// echo is the text prepended to each choice (the last message's, when
	// echo is asked and it has the answer's role).
	echo string
	// promptIDs are the prompt tokens (return_token_ids).
	promptIDs []int
	// usage: the final usage chunk, usage on every chunk, cached tokens.
	includeUsage, continuousUsage, promptDetails bool
	// plan is how the text is read back: reasoning, tool calls.
	plan outputPlan
}

type wireLogprob struct {
	Token   string  `json:"token"`
	Logprob float64 `json:"logprob"`
	Bytes   []int   `json:"bytes"`
}

type wireLogprobEntry struct {
	Token       string        `json:"token"`
	Logprob     float64       `json:"logprob"`
	Bytes       []int         `json:"bytes"`
	TopLogprobs []wireLogprob `json:"top_logprobs"`
}

type wireLogprobs struct {
	Content []wireLogprobEntry `json:"content"`
}

type wireMessageOut struct {
	Role         string          `json:"role"`
	Content      *string         `json:"content"`
	Refusal      *string         `json:"refusal"`
	Annotations  json.RawMessage `json:"annotations"`
	Audio        json.RawMessage `json:"audio"`
	FunctionCall json.RawMessage `json:"function_call"`
	// Reasoning is written under both names vLLM has used for it:
	// reasoning, and reasoning_content, which older clients read.
	Reasoning        *string        `json:"reasoning"`
	ReasoningContent *string        `json:"reasoning_content"`
	ToolCalls        []wireToolCall `json:"tool_calls,omitempty"`
}

type wireChoice struct {
	Index         int             `json:"index"`
	Message       wireMessageOut  `json:"message"`
	Logprobs      *wireLogprobs   `json:"logprobs"`
	FinishReason  string          `json:"finish_reason"`
	StopReason    any             `json:"stop_reason"`
	TokenIDs      []int           `json:"token_ids"`
	RoutedExperts json.RawMessage `json:"routed_experts"`
}

type wireCachedTokens struct {
	CachedTokens int `json:"cached_tokens"`
}

type wireUsage struct {
	PromptTokens            int               `json:"prompt_tokens"`
	TotalTokens             int               `json:"total_tokens"`
	CompletionTokens        int               `json:"completion_tokens"`
	PromptTokensDetails     *wireCachedTokens `json:"prompt_tokens_details"`
	CompletionTokensDetails json.RawMessage   `json:"completion_tokens_details"`
}

type wireCompletion struct {
	ID                string          `json:"id"`
	Object            string          `json:"object"`
	Created           int64           `json:"created"`
	Model             string          `json:"model"`
	Choices           []wireChoice    `json:"choices"`
	ServiceTier       json.RawMessage `json:"service_tier"`
	SystemFingerprint json.RawMessage `json:"system_fingerprint"`
	Usage             wireUsage       `json:"usage"`
	PromptLogprobs    []any           `json:"prompt_logprobs"`
	PromptTokenIDs    []int           `json:"prompt_token_ids"`
	PromptText        json.RawMessage `json:"prompt_text"`
	KVTransferParams  json.RawMessage `json:"kv_transfer_params"`
	ECTransferParams  json.RawMessage `json:"ec_transfer_params"`
	Metrics           json.RawMessage `json:"metrics"`
}

// completionBody is the non-streamed answer.
func (o *answerOptions) completionBody(res *engine.Result) []byte {
	out := wireCompletion{
		ID: o.id, Object: "chat.completion", Created: o.created, Model: o.model,
		Choices: make([]wireChoice, len(res.Choices)),
		Usage:   o.usage(res.Usage),
	}
	for i, ch := range res.Choices {
		msg := wireMessageOut{Role: o.role}
		finish := finishReason(ch.FinishReason)
		if o.plan.parsed() {
			a := o.plan.readWhole(ch.Text)
			msg.Content, msg.Reasoning, msg.ReasoningContent, msg.ToolCalls = a.content, a.reasoning, a.reasoning, a.calls
			if o.echo != "" && a.content != nil {
				echoed := o.echo + *a.content
				msg.Content = &echoed
			}
			finish = o.plan.finishReason(ch.FinishReason, len(a.calls) > 0)
		} else {
			content := o.echo + ch.Text
			msg.Content = &content
		}
		c := wireChoice{Index: ch.Index, Message: msg, FinishReason: finish, StopReason: ch.StopReason}
		if o.logprobs {
			c.Logprobs = o.logprobsOf(ch.Logprobs)
		}
		if o.tokenIDs {
			c.TokenIDs = nonNil(ch.TokenIDs)
		}
		out.Choices[i] = c
	}
	if res.PromptLogprobs != nil {
		out.PromptLogprobs = promptLogprobs(res.PromptLogprobs)
	}
	if o.tokenIDs {
		out.PromptTokenIDs = nonNil(o.promptIDs)
	}
	b, _ := json.Marshal(out)
	return b
}

// finishReason is vLLM's: the engine's, "stop" when it gave none.
func finishReason(r engine.FinishReason) string {
	if r == "" {
		return "stop"
	}
	return string(r)
}

func nonNil(ids []int) []int {
	if ids == nil {
		return []int{}
	}
	return ids
}

// usage builds a request's usage; it carries prompt_tokens_details when the
// model is configured to report cached tokens.
func (o *answerOptions) usage(u engine.Usage) wireUsage { return usageOf(u, o.promptDetails) }

// usageOf is vLLM's usage of u, with prompt_tokens_details when details.
func usageOf(u engine.Usage, details bool) wireUsage {
	w := wireUsage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.PromptTokens + u.CompletionTokens}
	if details {
		w.PromptTokensDetails = &wireCachedTokens{CachedTokens: u.CachedTokens}
	}
	return w
}

// logprobsOf renders a choice's token logprobs as vLLM does: the token's
// text (or "token_id:N"), its logprob (-inf as -9999.0), its bytes, and the
// first top_logprobs entries of the position's logprob map, which holds the
// chosen token first and then the most likely ones.
func (o *answerOptions) logprobsOf(lps []engine.Logprobs) *wireLogprobs {
	out := &wireLogprobs{Content: make([]wireLogprobEntry, len(lps))}
	for i, lp := range lps {
		entry := wireLogprobEntry{
			Token:   o.tokenText(lp.ID, lp.Token),
			Logprob: clampLogprob(lp.Logprob),
			Bytes:   o.tokenBytes(lp.TokenLogprob),
		}
		entry.TopLogprobs = []wireLogprob{}
		for _, t := range ranked(&lp) {
			if o.topLogprobs >= 0 && len(entry.TopLogprobs) >= o.topLogprobs {
				break
			}
			top := wireLogprob{Token: o.tokenText(t.ID, t.Token), Logprob: clampLogprob(t.Logprob), Bytes: o.tokenBytes(t)}
			if o.asTokenIDs {
				top.Bytes = utf8Bytes(top.Token) // vLLM's: the bytes of "token_id:N"
			}
			entry.TopLogprobs = append(entry.TopLogprobs, top)
		}
		out.Content[i] = entry
	}
	return out
}

// ranked are a position's logprob entries as vLLM's logprob map holds
// them: the chosen token first, then the most likely, each id once.
func ranked(lp *engine.Logprobs) []engine.TokenLogprob {
	out := make([]engine.TokenLogprob, 0, 1+len(lp.Top))
	seen := make(map[int]bool, 1+len(lp.Top))
	for _, t := range append([]engine.TokenLogprob{lp.TokenLogprob}, lp.Top...) {
		if !seen[t.ID] {
			seen[t.ID] = true
			out = append(out, t)
		}
	}
	return out
}

func (o *answerOptions) tokenText(id int, text string) string {
	if o.asTokenIDs {
		return "token_id:" + strconv.Itoa(id)
	}
	return text
}

// tokenBytes are a token's bytes as OpenAI's API gives them: the token's own
// bytes as it adds them to a text, which concatenated spell the answer —
// a part of a character and the leading space that decoding a
// SentencePiece token alone drops included — and which name the token, so
// that a client's rollout is trainable without return_tokens_as_token_ids.
// (vLLM writes the UTF-8 of the token's text, U+FFFD for a part of a
// character.)
func (o *answerOptions) tokenBytes(t engine.TokenLogprob) []int {
	b, ok := o.tok.TokenBytes(t.ID)
	if !ok {
		return utf8Bytes(t.Token)
	}
	out := make([]int, len(b))
	for i, c := range b {
		out[i] = int(c)
	}
	return out
}

// clampLogprob writes -inf (and anything below) as vLLM's floor -9999.0.
func clampLogprob(lp float32) float64 {
	v := float64(lp)
	if math.IsInf(v, -1) || v < -9999 {
		return -9999
	}
	return v
}

// utf8Bytes is Python's list(text.encode("utf-8", errors="replace")).
func utf8Bytes(text string) []int {
	b := []byte(string([]rune(text)))
	out := make([]int, len(b))
	for i, c := range b {
		out[i] = int(c)
	}
	return out
}

// promptLogprobs renders the prompt's logprobs as vLLM does: null for the
// first token, then per position {"<id>": {logprob, rank, decoded_token}}
// with the prompt's own token first and the most likely ones after it.
func promptLogprobs(plp []*engine.Logprobs) []any {
	out := make([]any, len(plp))
	for i, lp := range plp {
		if lp == nil {
			continue
		}
		var b bytes.Buffer
		b.WriteByte('{')
		for _, t := range ranked(lp) {
			if b.Len() > 1 {
				b.WriteByte(',')
			}
			entry, _ := json.Marshal(struct {
				Logprob      float64 `json:"logprob"`
				Rank         int     `json:"rank"`
				DecodedToken string  `json:"decoded_token"`
			}{clampLogprob(t.Logprob), t.Rank, t.Token})
			b.WriteString(strconv.Quote(strconv.Itoa(t.ID)))
			b.WriteByte(':')
			b.Write(entry)
		}
		b.WriteByte('}')
		out[i] = json.RawMessage(b.Bytes())
	}
	return out
}
