package inprocess

import (
	"context"
	"net/http"

	"github.com/weftlabs/weft/chat"
	"github.com/weftlabs/weft/internal/llm/engine"
	"github.com/weftlabs/weft/internal/llm/tokenizer"
)

// The text completions of a local model (POST /v1/completions): vLLM's
// OpenAIServingCompletion over the engine. Each prompt of a batch is one
// engine request, all of them admitted at once; the answer numbers the
// choices prompt by prompt (prompt i's choice j is i×n + j), as vLLM does.

var _ chat.TextCompleter = (*Server)(nil)

// textPrompt is one prompt of a text completion, ready for the engine.
type textPrompt struct {
	// ids are the tokens the model continues, after truncation.
	ids []int
	// echo is the text echo repeats: the prompt as sent, or the text of
	// its token ids ("" with return_token_ids, as vLLM leaves it).
	echo string
	// maxTokens is what the engine may generate for each choice.
	maxTokens int
}

// fimTokens are the fill-in-the-middle tokens of a vocabulary: a text
// completion with a suffix is the prompt prefix, suffix, middle, in
// which the model writes the middle.
type fimTokens struct{ prefix, suffix, middle int }

// fimSpellings are the fill-in-the-middle tokens of the vocabularies that
// have them: Qwen2.5-Coder's and Qwen3's, StarCoder's.
var fimSpellings = [][3]string{
	{"<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>"},
	{"<fim_prefix>", "<fim_suffix>", "<fim_middle>"},
}

// readFIM finds the vocabulary's fill-in-the-middle tokens, nil without.
func readFIM(tok *tokenizer.Tokenizer) *fimTokens {
	for _, s := range fimSpellings {
		p, okP := tok.TokenToID(s[0])
		q, okS := tok.TokenToID(s[1])
		m, okM := tok.TokenToID(s[2])
		if okP && okS && okM {
			return &fimTokens{prefix: p, suffix: q, middle: m}
		}
	}
	return nil
}

// TextComplete implements chat.TextCompleter: it tokenizes each prompt
// (add_special_tokens true unless the request turns it off; token ids as
// given), fits it to the context with max_tokens (vLLM's 16 when left
// out), starts one generation per prompt with best_of (else n) choices
// under the request's structured-output constraint, and answers vLLM's
// text_completion: whole (best_of keeps the n choices of the highest
// cumulative logprob), or its chunks as they are generated. An overloaded
// engine is chat.Retryable.
func (s *Server) TextComplete(ctx context.Context, t chat.Target, req *chat.TextCompletionRequest) (*chat.Answer, error) {
	lm, err := s.modelOf(t)
	if err != nil {
		return nil, err
	}
	shared := req.Shared
	if err := refuseNotYetLocal(shared); err != nil {
		return nil, err
	}
	var plan outputPlan
	specs, err := requestConstraints(shared)
	if err != nil {
		return nil, err
	}
	if err := plan.constrainBy(specs); err != nil {
		return nil, err
	}
	constraint, err := plan.compile(ctx, lm.engine)
	if err != nil {
		return overloaded(err)
	}
	prompts, err := lm.textPrompts(req)
	if err != nil {
		return nil, err
	}
	o := &textOptions{
		id: "cmpl-" + requestID(ctx, shared), model: t.Route.Name, created: s.now().Unix(),
		n: 1, echo: req.Echoing(), echoOnly: req.Echoing() && req.MaxTokens() == 0,
		asTokenIDs: shared.ReturnTokensAsTokenIDs != nil && *shared.ReturnTokensAsTokenIDs,
		tokenIDs:   shared.ReturnTokenIDs != nil && *shared.ReturnTokenIDs,
		tok:        lm.engine.Tokenizer(), includeUsage: shared.IncludeUsage(), promptDetails: lm.promptDetails,
	}
	if shared.N != nil {
		o.n = int(*shared.N)
	}
	if req.Logprobs != nil {
		o.logprobs = int(*req.Logprobs)
		o.withLogprobs = true
	}
	o.continuousUsage = o.includeUsage && shared.StreamOptions["continuous_usage_stats"] == true

	genCtx, cancel := context.WithCancel(ctx)
	gens := make([]*engine.Generation, 0, len(prompts))
	for _, p := range prompts {
		er := textEngineRequest(req, p.ids, p.maxTokens)
		er.Constraint = constraint
		if t.Adapter != nil {
			er.Adapter = t.Adapter.Path
		}
		gen, err := lm.engine.Generate(genCtx, er)
		if err != nil {
			cancel()
			for _, g := range gens {
				g.Close()
			}
			return overloaded(err)
		}
		gens = append(gens, gen)
	}
	if shared.Streaming() {
		return &chat.Answer{Status: http.StatusOK, ContentType: "text/event-stream", Frames: newTextFrames(gens, cancel, o, prompts)}, nil
	}
	defer cancel()
	results := make([]*engine.Result, len(gens))
	for i, g := range gens {
		res, err := g.Wait()
		g.Close()
		if err != nil {
			for _, rest := range gens[i+1:] {
				rest.Close()
			}
			return nil, fromEngine(err)
		}
		results[i] = res
	}
	return &chat.Answer{Status: http.StatusOK, ContentType: "application/json", Body: o.textBody(prompts, results)}, nil
}

// textPrompts tokenizes the request's prompts and fits each to the
// context: truncate_prompt_tokens (and truncation_side) first, then
// max_tokens against max_model_len, with vLLM's messages. A suffix makes
// the prompt the model's fill-in-the-middle form.
func (lm *model) textPrompts(req *chat.TextCompletionRequest) ([]textPrompt, error) {
	shared := req.Shared
	side, err := truncationSide(shared)
	if err != nil {
		return nil, err
	}
	special := shared.AddSpecialTokens == nil || *shared.AddSpecialTokens
	requested := req.MaxTokens()
	if requested == 0 {
		requested = 1 // echo alone: vLLM generates one token and answers the prompt
	}
	tok := lm.prompt.tokenizer
	prompts := make([]textPrompt, len(req.Inputs))
	for i, in := range req.Inputs {
		p := &prompts[i]
		if in.IDs != nil {
			p.ids = ints(in.IDs)
			p.echo = tok.Decode(p.ids, tokenizer.DecodeOptions{})
		} else {
			// With a suffix, the special prefix goes before the
			// fill-in-the-middle tokens, not inside them.
			p.ids, p.echo = tok.Encode(in.Text, special && req.Suffix == nil), in.Text
		}
		if req.Suffix != nil {
			p.ids = lm.fillInMiddle(p.ids, tok.Encode(*req.Suffix, false), special)
		}
		if shared.ReturnTokenIDs != nil && *shared.ReturnTokenIDs {
			p.echo = ""
		}
		p.ids, p.maxTokens, err = lm.prompt.fitPrompt(p.ids, &requested, "max_tokens", shared.TruncatePromptTokens, side)
		if err != nil {
			return nil, err
		}
	}
	return prompts, nil
}

// fillInMiddle is the prompt whose continuation is the text between
// prefix and suffix: the prefix, suffix and middle tokens around them in
// that order (the order such models are trained on, and llama.cpp's
// /infill), after the tokenizer's special prefix (a BOS) when special.
func (lm *model) fillInMiddle(prefix, suffix []int, special bool) []int {
	var ids []int
	if special {
		ids = lm.prompt.tokenizer.Encode("", true)
	}
	ids = append(append(ids, lm.fim.prefix), prefix...)
	ids = append(append(ids, lm.fim.suffix), suffix...)
	return append(ids, lm.fim.middle)
}

// textEngineRequest is a text completion's engine request: the shared
// sampling options as a chat completion's, then what differs: best_of
// (else n) choices, logprobs as a count (and on for best_of's ranking),
// and the prompt's logprobs that prompt_logprobs, else echo with
// logprobs, asks for.
func textEngineRequest(req *chat.TextCompletionRequest, ids []int, maxTokens int) engine.Request {
	er := engineRequest(req.Shared, ids, maxTokens)
	er.N = int(max(req.Choices(), 1))
	er.Logprobs, er.TopLogprobs = false, 0
	if req.Logprobs != nil {
		er.Logprobs, er.TopLogprobs = true, int(*req.Logprobs)
	}
	if er.N > 1 && req.BestOf != nil && (req.Shared.N == nil || *req.Shared.N < *req.BestOf) {
		er.Logprobs = true // ranks the candidates
	}
	er.PromptLogprobs, er.PromptTopLogprobs = false, 0
	switch {
	case req.Shared.PromptLogprobs != nil:
		er.PromptLogprobs, er.PromptTopLogprobs = true, int(*req.Shared.PromptLogprobs)
	case req.Echoing() && req.Logprobs != nil:
		er.PromptLogprobs, er.PromptTopLogprobs = true, int(*req.Logprobs)
	}
	return er
}
