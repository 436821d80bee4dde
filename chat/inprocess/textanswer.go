package inprocess

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/weftlabs/weft/chat"
	"github.com/weftlabs/weft/internal/llm/engine"
	"github.com/weftlabs/weft/internal/llm/tokenizer"
)

// The answers of a local model to a text completion, shaped field for
// field as vLLM's CompletionResponse (every field present, null when
// unset) and CompletionStreamResponse (its choices' fields all set, the
// usage only when asked), written as the bytes a vLLM upstream would send.

// textOptions are a text completion's choices about its answer.
type textOptions struct {
	id, model string
	created   int64
	// n is the choices answered per prompt.
	n int
	// echo repeats each prompt before its choices; echoOnly (max_tokens
	// 0) answers the prompt alone.
	echo, echoOnly bool
	// logprobs is the request's count when withLogprobs.
	logprobs     int
	withLogprobs bool
	asTokenIDs   bool
	tokenIDs     bool
	tok          *tokenizer.Tokenizer
	// usage: the final usage chunk, usage on every chunk, cached tokens.
	includeUsage, continuousUsage, promptDetails bool
}

// wireTextLogprobs is vLLM's CompletionLogProbs.
type wireTextLogprobs struct {
	TextOffset    []int             `json:"text_offset"`
	TokenLogprobs []*float64        `json:"token_logprobs"`
	Tokens        []string          `json:"tokens"`
	TopLogprobs   []json.RawMessage `json:"top_logprobs"`
}

type wireTextChoice struct {
	Index          int               `json:"index"`
	Text           string            `json:"text"`
	Logprobs       *wireTextLogprobs `json:"logprobs"`
	FinishReason   string            `json:"finish_reason"`
	StopReason     any               `json:"stop_reason"`
	TokenIDs       []int             `json:"token_ids"`
	PromptLogprobs []any             `json:"prompt_logprobs"`
	PromptTokenIDs []int             `json:"prompt_token_ids"`
	RoutedExperts  json.RawMessage   `json:"routed_experts"`
}

type wireTextCompletion struct {
	ID                string           `json:"id"`
	Object            string           `json:"object"`
	Created           int64            `json:"created"`
	Model             string           `json:"model"`
	Choices           []wireTextChoice `json:"choices"`
	ServiceTier       json.RawMessage  `json:"service_tier"`
	SystemFingerprint json.RawMessage  `json:"system_fingerprint"`
	Usage             wireUsage        `json:"usage"`
	KVTransferParams  json.RawMessage  `json:"kv_transfer_params"`
	ECTransferParams  json.RawMessage  `json:"ec_transfer_params"`
	Metrics           json.RawMessage  `json:"metrics"`
}

// textBody is the non-streamed answer to prompts, whose generations ended
// in results.
func (o *textOptions) textBody(prompts []textPrompt, results []*engine.Result) []byte {
	out := wireTextCompletion{ID: o.id, Object: "text_completion", Created: o.created, Model: o.model, Choices: []wireTextChoice{}}
	var usage engine.Usage
	for i, res := range results {
		p := prompts[i]
		var plp []any
		if res.PromptLogprobs != nil {
			plp = promptLogprobs(res.PromptLogprobs)
		}
		for _, ch := range o.best(res.Choices) {
			c := wireTextChoice{Index: len(out.Choices), FinishReason: finishReason(ch.FinishReason), StopReason: ch.StopReason, PromptLogprobs: plp}
			var ids []int
			var lps []*engine.Logprobs
			c.Text, ids, lps = o.echoed(p, res.PromptLogprobs, ch.Text, ch.TokenIDs, pointers(ch.Logprobs))
			if o.withLogprobs {
				c.Logprobs = o.logprobsOf(ids, lps, 0)
			}
			if o.tokenIDs {
				c.TokenIDs, c.PromptTokenIDs = nonNil(ch.TokenIDs), nonNil(p.ids)
			}
			out.Choices = append(out.Choices, c)
			usage.CompletionTokens += len(ch.TokenIDs)
		}
		usage.PromptTokens += len(p.ids)
		usage.CachedTokens = res.Usage.CachedTokens
	}
	out.Usage = usageOf(usage, o.promptDetails)
	b, _ := json.Marshal(out)
	return b
}

// echoed is a choice's text, token ids and logprobs (streamed, those of
// its first chunk) with prompt p echoed before them when echo is asked:
// the prompt alone with max_tokens 0. promptLogprobs are p's.
func (o *textOptions) echoed(p textPrompt, promptLogprobs []*engine.Logprobs, text string, ids []int, lps []*engine.Logprobs) (string, []int, []*engine.Logprobs) {
	switch {
	case o.echoOnly:
		return p.echo, p.ids, promptLogprobs
	case o.echo:
		return p.echo + text, concat(p.ids, ids), concat(promptLogprobs, lps)
	}
	return text, ids, lps
}

// best keeps a prompt's n choices: all of them when it generated n, else
// (best_of) the n of the highest cumulative logprob, best first, as vLLM
// ranked best_of's candidates.
func (o *textOptions) best(choices []engine.Choice) []engine.Choice {
	if len(choices) <= o.n {
		return choices
	}
	score := func(c engine.Choice) float64 {
		var sum float64
		for _, lp := range c.Logprobs {
			sum += float64(lp.Logprob)
		}
		return sum
	}
	ranked := slices.Clone(choices)
	slices.SortStableFunc(ranked, func(a, b engine.Choice) int { return cmp.Compare(score(b), score(a)) })
	return ranked[:o.n]
}

// logprobsOf renders the logprobs of tokens ids as vLLM's completions do:
// each token's text (or "token_id:N"), its logprob (null where it has
// none: a prompt's first token), an object of the position's first
// logprobs+1 entries (the chosen token, then the most likely) keyed by
// their text, and each token's offset in the text, counted in characters
// from offset.
func (o *textOptions) logprobsOf(ids []int, lps []*engine.Logprobs, offset int) *wireTextLogprobs {
	out := &wireTextLogprobs{TextOffset: []int{}, TokenLogprobs: []*float64{}, Tokens: []string{}, TopLogprobs: []json.RawMessage{}}
	for i, id := range ids {
		var lp *engine.Logprobs
		if i < len(lps) {
			lp = lps[i]
		}
		var token string
		if lp == nil {
			token = o.tokenText(id, func() string { return o.tok.Decode([]int{id}, tokenizer.DecodeOptions{}) })
			out.TokenLogprobs = append(out.TokenLogprobs, nil)
			out.TopLogprobs = append(out.TopLogprobs, jsonNull)
		} else {
			token = o.tokenText(lp.ID, func() string { return lp.Token })
			v := clampLogprob(lp.Logprob)
			out.TokenLogprobs = append(out.TokenLogprobs, &v)
			out.TopLogprobs = append(out.TopLogprobs, o.topOf(lp))
		}
		out.Tokens = append(out.Tokens, token)
		out.TextOffset = append(out.TextOffset, offset)
		offset += utf8.RuneCountInString(token)
	}
	return out
}

// topOf is one position's top_logprobs object: its entries (the chosen
// token, then the most likely, each id once) up to logprobs+1 of them,
// keyed by their text; a text that repeats keeps its first place and its
// last value, as a Python dict built from them does.
func (o *textOptions) topOf(lp *engine.Logprobs) json.RawMessage {
	var keys []string
	values := map[string]float64{}
	entries := ranked(lp)
	for _, t := range entries[:min(len(entries), o.logprobs+1)] {
		key := o.tokenText(t.ID, func() string { return t.Token })
		if _, ok := values[key]; !ok {
			keys = append(keys, key)
		}
		values[key] = clampLogprob(t.Logprob)
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		name, _ := json.Marshal(k)
		value, _ := json.Marshal(values[k])
		b.Write(name)
		b.WriteByte(':')
		b.Write(value)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// tokenText is "token_id:N" with return_tokens_as_token_ids, else the
// token's text.
func (o *textOptions) tokenText(id int, text func() string) string {
	if o.asTokenIDs {
		return "token_id:" + strconv.Itoa(id)
	}
	return text()
}

func pointers(lps []engine.Logprobs) []*engine.Logprobs {
	out := make([]*engine.Logprobs, len(lps))
	for i := range lps {
		out[i] = &lps[i]
	}
	return out
}

func concat[T any](a, b []T) []T { return append(slices.Clip(a), b...) }

// The streamed answer: vLLM's completion_stream_generator.

type textStreamChoice struct {
	Index          int               `json:"index"`
	Text           string            `json:"text"`
	Logprobs       *wireTextLogprobs `json:"logprobs"`
	FinishReason   *string           `json:"finish_reason"`
	StopReason     any               `json:"stop_reason"`
	PromptTokenIDs []int             `json:"prompt_token_ids"`
	TokenIDs       []int             `json:"token_ids"`
}

type textStreamChunk struct {
	ID      string             `json:"id"`
	Object  string             `json:"object"`
	Created int64              `json:"created"`
	Model   string             `json:"model"`
	Choices []textStreamChoice `json:"choices"`
	Usage   json.RawMessage    `json:"usage,omitempty"`
}

// streamUsage is vLLM's usage of a stream chunk (prompt_tokens_details
// only when set).
type streamUsage struct {
	PromptTokens        int               `json:"prompt_tokens"`
	TotalTokens         int               `json:"total_tokens"`
	CompletionTokens    int               `json:"completion_tokens"`
	PromptTokensDetails *wireCachedTokens `json:"prompt_tokens_details,omitempty"`
}

// textFrames is the stream of a text completion: a chunk per engine step
// and choice, prompt after prompt (the generations run together; each
// one's chunks wait in it until read), the first chunk of each choice
// carrying the echoed prompt, then the usage chunk when asked. An engine
// failure becomes one error frame, the last.
type textFrames struct {
	gens    []*engine.Generation
	cancel  context.CancelFunc
	o       *textOptions
	prompts []textPrompt
	// cur is the generation being read.
	cur int
	// Per choice (prompt i's choice j at i×n + j): whether its first chunk
	// (the echo, the prompt ids) is out, its text's length in characters
	// and its generated tokens so far.
	opened    []bool
	textLen   []int
	generated []int
	sink      frameSink
	ended     bool
}

func newTextFrames(gens []*engine.Generation, cancel context.CancelFunc, o *textOptions, prompts []textPrompt) *textFrames {
	n := len(gens) * o.n
	return &textFrames{gens: gens, cancel: cancel, o: o, prompts: prompts,
		opened: make([]bool, n), textLen: make([]int, n), generated: make([]int, n)}
}

// Stream sends a frame per engine chunk as the engine makes it, until the
// last generation ends or the client goes away.
func (f *textFrames) Stream(sink chat.FrameSink) error {
	f.sink = frameSink{to: sink}
	for !f.ended && f.sink.err == nil {
		f.step()
	}
	return f.sink.err
}

// Close ends every generation (the client went away) and frees them.
func (f *textFrames) Close() error {
	f.cancel()
	for _, g := range f.gens {
		g.Close()
	}
	return nil
}

func (f *textFrames) event(v any) { f.sink.send(v) }

// step reads one engine chunk of the current generation and sends its
// frame; past the last generation it sends the usage chunk.
func (f *textFrames) step() {
	if f.cur == len(f.gens) {
		f.ended = true
		if f.o.includeUsage {
			f.usageChunk()
		}
		return
	}
	gen := f.gens[f.cur]
	c, err := gen.Next()
	switch {
	case errors.Is(err, io.EOF):
		f.cur++
		return
	case err != nil:
		f.ended = true
		f.event(failureFrame(err))
		return
	case c.Index < 0 || c.Index >= f.o.n:
		return
	}
	i, p, o := f.cur*f.o.n+c.Index, f.prompts[f.cur], f.o
	choice := textStreamChoice{Index: i, Text: c.Text}
	ids, lps := c.TokenIDs, pointers(c.Logprobs)
	switch {
	case o.echo && !f.opened[i]:
		choice.Text, ids, lps = o.echoed(p, gen.PromptLogprobs(), c.Text, ids, lps)
		choice.PromptTokenIDs, f.opened[i] = nonNil(p.ids), true
	case o.echoOnly:
		choice.Text, ids, lps = "", nil, nil
	default:
		if !f.opened[i] && o.tokenIDs {
			choice.PromptTokenIDs, f.opened[i] = nonNil(p.ids), true
		}
		if c.Text == "" && len(c.TokenIDs) == 0 && f.generated[i] == 0 && c.FinishReason == "" {
			return // nothing to say yet
		}
	}
	if o.withLogprobs {
		choice.Logprobs = o.logprobsOf(ids, lps, f.textLen[i])
	}
	f.textLen[i] += utf8.RuneCountInString(choice.Text)
	f.generated[i] += len(c.TokenIDs)
	if c.FinishReason != "" {
		reason := finishReason(c.FinishReason)
		choice.FinishReason, choice.StopReason = &reason, c.StopReason
	}
	if o.tokenIDs {
		choice.TokenIDs = nonNil(c.TokenIDs)
	}
	chunk := textStreamChunk{ID: o.id, Object: "text_completion", Created: o.created, Model: o.model, Choices: []textStreamChoice{choice}}
	if o.continuousUsage {
		prompt := len(p.ids)
		chunk.Usage, _ = json.Marshal(streamUsage{PromptTokens: prompt, CompletionTokens: f.generated[i], TotalTokens: prompt + f.generated[i]})
	}
	f.event(chunk)
}

// usageChunk is the stream's last chunk: the usage of every prompt and
// choice.
func (f *textFrames) usageChunk() {
	var u engine.Usage
	for i, p := range f.prompts {
		u.PromptTokens += len(p.ids)
		if i == 0 {
			u.CachedTokens = f.gens[i].Usage().CachedTokens
		}
	}
	for _, g := range f.generated {
		u.CompletionTokens += g
	}
	w := usageOf(u, f.o.promptDetails)
	usage, _ := json.Marshal(streamUsage{w.PromptTokens, w.TotalTokens, w.CompletionTokens, w.PromptTokensDetails})
	f.event(textStreamChunk{ID: f.o.id, Object: "text_completion", Created: f.o.created, Model: f.o.model, Choices: []textStreamChoice{}, Usage: usage})
}
