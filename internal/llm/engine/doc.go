// Package engine is the inference engine of the models weft serves
// in-process: it loads a Hugging Face model directory and generates
// completions for already tokenized prompts on the CPU, with every sampling
// option of vLLM's SamplingParams, continuous batching and a paged prefix KV
// cache. It knows nothing of HTTP nor of weft: the serving layer above it
// renders the chat template, tokenizes, calls [Engine.Generate] and turns
// the [Chunk]s it reads into answers.
//
// # Using it
//
//	e, err := engine.Open("models/Qwen3-0.6B", engine.ModelConfig{})
//	defer e.Close()
//	ids := e.Tokenizer().Encode(prompt, false)
//	g, err := e.Generate(ctx, engine.Request{Prompt: ids, MaxTokens: 64, Stop: []string{"\n\n"}})
//	for {
//		c, err := g.Next() // one chunk per choice per step; io.EOF at the end
//		...
//	}
//	usage := g.Usage()
//
// [ModelConfig]'s zero fields are the documented defaults ([DefaultMaxSeqs],
// [DefaultKVCacheBytes], ...). Errors wrap this package's plain sentinels,
// which the serving layer maps to its own classes: [ErrInvalidRequest] (a
// [RequestError] naming the field) and [ErrPromptTooLong] (vLLM's 400s),
// [ErrOverloaded] (a 503 with a retry-after in [OverloadedError]),
// [ErrClosed], [ErrModelDir], [ErrAdapter].
//
// # Semantics (vLLM's)
//
//   - Sampling follows package sample (vLLM's order of logits processors);
//     a nil option takes generation_config.json's default. With a seed, choice
//     i of n samples with seed+i, as vLLM's parallel sampling does.
//   - A choice ends with finish_reason "length" when it has max_tokens tokens
//     or reaches MaxModelLen (checked first), else "stop" on the tokenizer's
//     end-of-sequence token (stop_reason nil) or a stop token id (stop_reason
//     the id; generation_config.json's other eos ids count as stop ids unless
//     ignore_eos), else "stop" when its text contains a stop string
//     (stop_reason the string), which wins even over "length".
//   - Text is detokenized incrementally (never splitting a character); the
//     stop token's text is left out, and a stop string cut off, unless
//     include_stop_str_in_output; while a choice runs, text that could be the
//     beginning of a stop string is held back. min_tokens suppresses stop
//     tokens (masked) and stop strings (not searched) in its first tokens.
//   - Logprobs are log_softmax of the raw logits; prompt logprobs likewise,
//     for every prompt token after the first.
//
// # Structured outputs
//
// A request's Constraint (a choice, a regular expression, a JSON Schema,
// any JSON object or a grammar) is compiled by the engine's [Engine.Compile]
// — one compiler per engine over the model's vocabulary, built on first
// use, caching compiled constraints by their canonical text — and masks,
// at every step, the tokens that could not continue a valid output before
// sampling (package sample's NextMasked: the mask applies before penalties,
// bias and temperature, and reported logprobs are those of the masked
// row). Each choice follows the constraint with a matcher of its own,
// which lives with the sequence: preemption recomputes the KV cache and
// keeps it. End-of-sequence tokens are allowed exactly when the output is
// complete; a choice whose output is complete and admits nothing longer
// ends there with finish_reason "stop" and a nil stop_reason, without an
// end-of-sequence token. max_tokens still bounds it ("length", the output
// then cut short), and stop strings and stop token ids still apply. With
// ConstrainAfterReasoning the constraint waits while the choice reasons,
// until it generates the reasoning end ([Engine.ReasoningEnd], Qwen3's
// </think>): from its first token when the prompt left the reasoning open
// (ReasoningOpen), else only when that first token is <think>, which the
// mask allows beside the constraint's. The reasoning is free text, the
// answer after it constrained. The mask
// depends only on the choice's own tokens, so determinism holds as below.
// Compile errors wrap ErrInvalidRequest and package constrain's sentinel,
// naming the unsupported keyword; compiles are bounded in states, time and
// number at once (ModelConfig.Structured), and one that finds no turn is
// an OverloadedError.
//
//	c, err := e.Compile(ctx, constrain.Spec{Kind: constrain.KindJSONSchema, Schema: schema})
//	g, err := e.Generate(ctx, engine.Request{Prompt: ids, Constraint: c, ConstrainAfterReasoning: thinking, ReasoningOpen: open})
//
// # Scheduling
//
// One goroutine per engine runs steps: each step is one batched forward pass
// of every running sequence's next tokens — one for a decoding sequence, a
// chunk of the prompt for a prefilling one (decode rows first, then prompt
// chunks within MaxBatchTokens). Sequences join and leave between steps.
// A request is admitted when a slot (MaxSeqs) is free and the KV cache can
// hold its prompt, in priority order (lower value first), fairly across
// tenants (Request.Tenant: the tenant running the fewest sequences first, a
// tenant running two or more sequences more than a waiting one preempted
// for it), then by arrival; it reuses the cached blocks of the longest
// prefix computed before for the same Tenant under the same CacheSalt. Its
// n choices share the prompt's blocks. When a running sequence cannot grow,
// the lowest-priority running sequence (of the tenant running the most) is
// preempted: its blocks go back to the pool and it is recomputed later (its
// random generator keeps its state). A request the cache cannot take waits
// at most MaxQueueWait (and at most MaxQueued wait; a full queue refuses the
// newest request of the tenant queuing the most, if that is more than the
// newcomer's tenant queues, else the newcomer) before ErrOverloaded. One
// request generates at most MaxRequestTokens (n × max_tokens); the engine
// never allocates past KVCacheBytes. Cancelling a request's context frees
// its slots and blocks before the next step.
//
// # LoRA adapters
//
// A request may name a LoRA adapter directory (Request.Adapter, the standard
// adapter layout: a trained checkpoint). The engine loads it on first use
// and holds at most MaxAdapters (least recently used out first). Sequences
// under different adapters, and the base model's, share each forward pass:
// the base model's products run once for the whole batch and each
// adapter's low-rank delta only on its own rows (package model). The prefix
// cache is keyed by adapter as well as tenant and salt: blocks computed
// under one adapter never serve another, nor the base model.
//
// # Determinism
//
// A sequence's logits are the same bits whatever else is batched with it and
// however its prompt is chunked (package model), and its sampler draws only
// from its own seeded generator, so a seeded request gives the same tokens,
// text and logprobs alone or under load.
package engine
