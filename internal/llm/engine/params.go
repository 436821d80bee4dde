package engine

import (
	"errors"
	"strings"

	"github.com/weftlabs/weft/internal/llm/constrain"
	"github.com/weftlabs/weft/internal/llm/lora"
	"github.com/weftlabs/weft/internal/llm/sample"
)

// request is a validated Request as the scheduler runs it.
type request struct {
	gen      *Generation
	admitted chan error // receives nil on admission, or the refusal
	arrival  uint64     // order of submission, the tie-break of priority
	priority int
	tenant   string // whose request it is: admission is fair across tenants
	salt     string // the prefix-cache key: Tenant, CacheSalt and the adapter
	adapter  *lora.Adapter
	prompt   []int
	n        int

	params    []sample.Params // one per choice (seeds differ)
	maxTokens int
	stops     []string
	stopIDs   []int // stop_token_ids (with generation_config's extra eos ids unless ignore_eos)
	eos       int   // ends the choice with a nil stop_reason; -1 with ignore_eos or none
	include   bool
	minTokens int

	constraint *constrain.Constraint
	// reasoningEnd: the constraint waits for this token while the choice
	// reasons; -1: it applies from the start. reasoningStart: the choice
	// reasons only if its first token is this one; -1: from the start.
	reasoningEnd, reasoningStart int

	logprobs    bool
	skipSpecial bool
	promptTop   int // prompt logprobs: how many alternatives; -2 when not asked

	seqs     []*sequence // created on admission
	finished int         // choices finished
	queuedAt int64       // unix nanoseconds when queued, for MaxQueueWait
}

const noPromptLogprobs = -2

// resolve validates req against the model and fills in defaults, as vLLM's
// request and SamplingParams checks do.
func (e *Engine) resolve(req Request) (*request, error) {
	vocab := e.VocabSize()
	if len(req.Prompt) == 0 {
		return nil, invalid("prompt", "The prompt must not be empty.")
	}
	for _, id := range req.Prompt {
		if id < 0 || id >= vocab {
			return nil, invalid("prompt", "Token id %d is out of vocabulary. Vocabulary size: %d", id, vocab)
		}
	}
	if req.N < 0 {
		return nil, invalid("n", "n must be at least 1, got %d.", req.N)
	}
	var adapter *heldAdapter
	if req.Adapter != "" {
		var err error
		if adapter, err = e.adapters.get(req.Adapter, e.model.LoRAShape()); err != nil {
			return nil, err
		}
	}
	r := &request{priority: req.Priority, tenant: req.Tenant, salt: prefixKey(req.Tenant, req.CacheSalt, adapter), prompt: req.Prompt, n: req.choices(),
		include: req.IncludeStopStrInOutput, minTokens: req.MinTokens, logprobs: req.Logprobs,
		skipSpecial: req.SkipSpecialTokens == nil || *req.SkipSpecialTokens, promptTop: noPromptLogprobs, eos: -1,
		constraint: req.Constraint, reasoningEnd: -1, reasoningStart: -1}
	if adapter != nil {
		r.adapter = adapter.adapter
	}
	if req.ConstrainAfterReasoning && req.Constraint != nil {
		if e.reasoningEnd < 0 || e.reasoningStart < 0 {
			return nil, invalid("structured_outputs", "the model has no %s and %s tokens to reason between, so the constraint cannot wait for them.", reasoningStartText, reasoningEndText)
		}
		r.reasoningEnd = e.reasoningEnd
		if !req.ReasoningOpen {
			r.reasoningStart = e.reasoningStart
		}
	}

	// Context length.
	p, m := len(req.Prompt), e.maxModelLen
	if req.MaxTokens < 0 {
		return nil, invalid("max_tokens", "max_tokens must be at least 1, got %d.", req.MaxTokens)
	}
	if p >= m {
		return nil, &PromptTooLongError{PromptTokens: p, MaxModelLen: m}
	}
	if req.MaxTokens > 0 && p+req.MaxTokens > m {
		return nil, &PromptTooLongError{PromptTokens: p, MaxTokens: req.MaxTokens, MaxModelLen: m}
	}
	r.maxTokens = req.MaxTokens
	if r.maxTokens == 0 {
		r.maxTokens = m - p
		if d := e.defaults.MaxTokens; d != nil && *d > 0 {
			r.maxTokens = min(r.maxTokens, *d)
		}
	}
	if total := int64(r.n) * int64(r.maxTokens); total > int64(e.cfg.MaxRequestTokens) {
		return nil, invalid("n", "n × max_tokens = %d × %d = %d tokens is more than this model generates for one request (%d); lower n or max_tokens (max_completion_tokens).",
			r.n, r.maxTokens, total, e.cfg.MaxRequestTokens)
	}
	if req.MinTokens < 0 || req.MinTokens > r.maxTokens {
		return nil, invalid("min_tokens", "min_tokens must be greater than or equal to 0 and less than or equal to max_tokens=%d, got %d.", r.maxTokens, req.MinTokens)
	}

	// Stops.
	for _, s := range req.Stop {
		if s == "" {
			return nil, invalid("stop", "stop cannot contain an empty string.")
		}
	}
	r.stops = req.Stop
	for _, id := range req.StopTokenIDs {
		if id < 0 || id >= vocab {
			return nil, invalid("stop_token_ids", "token_id(s) [%d] in stop_token_ids contain out-of-vocab token ids. Vocabulary size: %d", id, vocab)
		}
	}
	// vLLM's update_from_generation_config: generation_config's extra eos
	// ids become stop token ids (reported as stop_reason) unless ignore_eos;
	// every eos id is masked before min_tokens either way.
	allStops := append([]int(nil), req.StopTokenIDs...)
	if !req.IgnoreEOS {
		r.eos = e.eos
		for _, id := range e.extraEOS {
			if !containsInt(r.stopIDs, id) {
				r.stopIDs = append(r.stopIDs, id)
			}
		}
	}
	for _, id := range req.StopTokenIDs {
		if !containsInt(r.stopIDs, id) {
			r.stopIDs = append(r.stopIDs, id)
		}
	}
	for _, id := range e.EOSTokenIDs() {
		if !containsInt(allStops, id) {
			allStops = append(allStops, id)
		}
	}

	// Logprobs.
	maxLP := e.cfg.MaxLogprobs
	if req.Logprobs {
		if req.TopLogprobs < -1 {
			return nil, invalid("top_logprobs", "`top_logprobs` must be a positive value or -1.")
		}
		if maxLP != -1 && (req.TopLogprobs == -1 && maxLP < vocab || req.TopLogprobs > maxLP) {
			return nil, invalid("top_logprobs", "Requested sample logprobs of %d, which is greater than max allowed: %d", req.TopLogprobs, maxLP)
		}
	}
	if req.PromptLogprobs {
		if req.PromptTopLogprobs < -1 {
			return nil, invalid("prompt_logprobs", "`prompt_logprobs` must be a positive value or -1.")
		}
		if maxLP != -1 && (req.PromptTopLogprobs == -1 && maxLP < vocab || req.PromptTopLogprobs > maxLP) {
			return nil, invalid("prompt_logprobs", "Requested prompt logprobs of %d, which is greater than max allowed: %d", req.PromptTopLogprobs, maxLP)
		}
		r.promptTop = req.PromptTopLogprobs
	}

	// Sampling.
	base := sample.DefaultParams()
	pick := func(v, d *float64, into *float64) {
		switch {
		case v != nil:
			*into = *v
		case d != nil:
			*into = *d
		}
	}
	pick(req.Temperature, e.defaults.Temperature, &base.Temperature)
	pick(req.TopP, e.defaults.TopP, &base.TopP)
	pick(req.MinP, e.defaults.MinP, &base.MinP)
	pick(req.RepetitionPenalty, e.defaults.RepetitionPenalty, &base.RepetitionPenalty)
	if req.TopK != nil {
		base.TopK = *req.TopK
	} else if e.defaults.TopK != nil {
		base.TopK = *e.defaults.TopK
	}
	if base.Temperature < 1e-5 && r.n > 1 {
		return nil, invalid("n", "n must be 1 when using greedy sampling, got %d.", r.n)
	}
	base.PresencePenalty = req.PresencePenalty
	base.FrequencyPenalty = req.FrequencyPenalty
	base.LogitBias = req.LogitBias
	base.AllowedTokenIDs = req.AllowedTokenIDs
	base.MinTokens = req.MinTokens
	base.StopTokenIDs = allStops
	// Ids past the tokenizer's last token pad the model's vocabulary: no
	// tokenizer prints them, so they are neither sampled nor listed.
	base.Tokens = e.tok.VocabSize()
	if req.Logprobs {
		base.TopLogprobs = req.TopLogprobs
	} else {
		base.NoLogprobs = true // spare the log_softmax pass over the vocabulary
	}
	bad, err := e.badWords(req.BadWords)
	if err != nil {
		return nil, err
	}
	base.BadWords = bad
	// Validate once; each choice's sampler is built on admission.
	if _, err := sample.New(base, vocab); err != nil {
		return nil, samplingError(err)
	}
	r.params = make([]sample.Params, r.n)
	for i := range r.params {
		r.params[i] = base
		if req.Seed != nil && *req.Seed != -1 {
			seed := *req.Seed + int64(i) // vLLM's parallel sampling: child i gets seed + i
			r.params[i].Seed = &seed
		}
	}
	return r, nil
}

// samplingError turns package sample's validation error into a request
// error naming the field.
func samplingError(err error) error {
	if !errors.Is(err, sample.ErrInvalidParams) {
		return err
	}
	msg := strings.TrimPrefix(err.Error(), sample.ErrInvalidParams.Error()+": ")
	// The request fields package sample's messages name.
	names := []string{"temperature", "top_p", "top_k", "min_p", "repetition_penalty", "presence_penalty",
		"frequency_penalty", "min_tokens", "top_logprobs", "logit_bias", "allowed_token_ids", "bad_words", "stop_token_ids"}
	param, at := "", len(msg)
	for _, name := range names {
		if i := strings.Index(msg, name); i >= 0 && i < at {
			param, at = name, i
		}
	}
	return &RequestError{Param: param, Message: msg}
}

// badWords tokenizes bad_words as vLLM does: each word (left-stripped)
// alone and after a space, the spaced form kept when it tokenizes to a
// different first token and as many tokens.
func (e *Engine) badWords(words []string) ([][]int, error) {
	var out [][]int
	for _, w := range words {
		if w == "" {
			return nil, invalid("bad_words", "bad_words cannot contain an empty string.")
		}
		w = strings.TrimLeft(w, " \t\n\r\v\f")
		plain := e.tok.Encode(w, false)
		if len(plain) == 0 {
			return nil, invalid("bad_words", "bad word %q tokenizes to no tokens.", w)
		}
		out = append(out, plain)
		spaced := e.tok.Encode(" "+w, false)
		if len(spaced) > 0 && spaced[0] != plain[0] && len(spaced) == len(plain) {
			out = append(out, spaced)
		}
	}
	for _, ids := range out {
		for _, id := range ids {
			if id >= e.VocabSize() {
				return nil, invalid("bad_words", "bad_words contain out-of-vocab token id %d.", id)
			}
		}
	}
	return out, nil
}
