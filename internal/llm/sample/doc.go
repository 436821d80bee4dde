// Package sample turns one sequence's row of logits into its next token, with
// the options of an OpenAI-style request and in the order the reference
// server (vLLM's V1 sampler) applies them:
//
//  1. The log-probabilities reported in Choice are log_softmax of the raw
//     row, before anything below (the reference's default logprobs mode,
//     "raw_logprobs", computed first thing in Sampler.forward), but for
//     ids past Params.Tokens: a model's rows past its tokenizer's last
//     token are masked first, like a constraint's, never picked nor listed.
//  2. allowed_token_ids: every other token is masked to −Inf.
//  3. bad_words: a word's last id is masked when the generated output ends
//     with the ids before it (a one-id word always); the prompt is not
//     looked at.
//  4. min_tokens: the stop ids (end-of-sequence included) are masked while
//     fewer than min_tokens tokens have been generated; then logit_bias is
//     added, clamped to [−100, 100]. These are the reference's two built-in
//     logits processors that can change the argmax, applied before the
//     penalties.
//  5. Penalties: repetition_penalty divides the positive and multiplies the
//     non-positive logits of every token seen in the prompt or the output;
//     then frequency_penalty·count and presence_penalty are subtracted for
//     tokens of the output only.
//  6. Temperature below 1e-5 (only 0, since (0, 0.01) is raised to 0.01 as
//     request validation does) is greedy: argmax, ties to the lowest id, with
//     top_k, top_p and min_p not applied.
//  7. Otherwise the logits are divided by the temperature, then min_p masks
//     tokens whose probability is below min_p times the largest (the
//     reference applies min_p as an argmax-invariant processor after
//     temperature), then top_k keeps logits at least the k-th largest (ties
//     kept), then top_p keeps, most likely first, each token whose more
//     likely tokens hold less than top_p of the mass (always the first), as
//     the reference's sort-and-cumsum top-k/top-p sampler does.
//  8. A token is drawn from the softmax of what remains.
//
// # Randomness and determinism
//
// Each Sampler owns a ChaCha8 generator seeded from Params.Seed (or a random
// seed), drawing one uniform number per sampled token and walking the
// cumulative mass in id order. A sequence's tokens therefore depend only on
// its seed, options and logits, never on other sequences sampled alongside.
// The reference draws exponential noise on the accelerator instead, so the
// same seed gives the same distribution there but not the same tokens.
// Probabilities are one float32 softmax of the processed row per token (as
// the reference computes them) and their cumulative masses are summed in
// float64, where the reference sums in float32; a top_p set can differ only
// where a cumulative mass lands within rounding of top_p.
package sample
