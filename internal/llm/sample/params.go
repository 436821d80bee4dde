package sample

import (
	"errors"
	"fmt"
	"math"
)

// ErrInvalidParams is wrapped by every validation error of New; the message
// names the offending field.
var ErrInvalidParams = errors.New("sample: invalid parameters")

// Tiny temperatures are raised to minTemperature, and temperatures below
// greedyEpsilon mean greedy decoding, as the reference server does.
const (
	minTemperature = 0.01
	greedyEpsilon  = 1e-5
)

// Params are one request's sampling options. The zero value is not the
// OpenAI default: set Temperature, TopP and RepetitionPenalty explicitly (or
// use DefaultParams).
type Params struct {
	// Temperature divides the logits; 0 means greedy (argmax, ties to the
	// lowest id). Values in (0, 0.01) are raised to 0.01. Range [0, 2].
	Temperature float64
	// TopK keeps the tokens whose logit is at least the k-th largest (ties
	// with it are kept); 0 or -1 disables it.
	TopK int
	// TopP keeps the smallest set of most likely tokens whose mass reaches
	// TopP; range (0, 1], 1 disables it.
	TopP float64
	// MinP drops tokens whose probability is below MinP times the largest
	// one's (after temperature); range [0, 1], 0 disables it.
	MinP float64
	// RepetitionPenalty divides positive and multiplies negative logits of
	// every token seen in the prompt or the output; must be > 0, 1 disables.
	RepetitionPenalty float64
	// PresencePenalty is subtracted once from the logit of every token that
	// occurs in the output; range [-2, 2].
	PresencePenalty float64
	// FrequencyPenalty is subtracted from a token's logit once per time it
	// occurs in the output; range [-2, 2].
	FrequencyPenalty float64
	// LogitBias is added to the logit of each token id; values are clamped
	// to [-100, 100].
	LogitBias map[int]float64
	// AllowedTokenIDs, when non-nil, is the only set of tokens that may be
	// chosen; it must not be empty.
	AllowedTokenIDs []int
	// BadWords are token sequences that must not be generated: the last id
	// of a sequence is banned when the output ends with the ids before it.
	BadWords [][]int
	// MinTokens masks StopTokenIDs until the output has this many tokens.
	MinTokens int
	// StopTokenIDs are the ids that end generation (the end-of-sequence id
	// included, unless the request ignores it); only MinTokens uses them.
	StopTokenIDs []int
	// Seed seeds this sequence's random generator; nil or -1 draws a random
	// seed.
	Seed *int64
	// TopLogprobs is how many most likely tokens Choice.Top lists (0 none,
	// -1 the whole vocabulary).
	TopLogprobs int
	// NoLogprobs skips the log_softmax pass over the vocabulary for a
	// caller that reports no logprobs: Choice.Logprob, Rank and Top stay
	// zero, and TopLogprobs must be 0. The token picked is the same.
	NoLogprobs bool
	// Tokens, when positive, is how many of a row's ids are tokens: a
	// model's vocabulary is often padded past its tokenizer's last token
	// (Qwen3: 151,936 rows, 151,669 tokens), and ids at or past Tokens,
	// which no tokenizer can print, are masked like a constraint's:
	// never picked, −Inf in the log-probabilities, never in Top.
	Tokens int
}

// DefaultParams are the OpenAI defaults: temperature 1, no truncation, no
// penalties.
func DefaultParams() Params {
	return Params{Temperature: 1, TopP: 1, RepetitionPenalty: 1}
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidParams, fmt.Sprintf(format, args...))
}

// validate checks p against a vocabulary of vocabSize tokens with the
// reference server's bounds and messages.
func (p *Params) validate(vocabSize int) error {
	if vocabSize <= 0 {
		return invalid("vocabulary size must be positive, got %d", vocabSize)
	}
	switch {
	case math.IsNaN(p.Temperature) || math.IsInf(p.Temperature, 0):
		return invalid("temperature must be a finite number, got %v.", p.Temperature)
	case p.Temperature < 0 || p.Temperature > 2:
		return invalid("temperature must be in [0, 2], got %v.", p.Temperature)
	case !(p.TopP > 0 && p.TopP <= 1):
		return invalid("top_p must be in (0, 1], got %v.", p.TopP)
	case p.TopK < -1:
		return invalid("top_k must be 0 (disable), or at least 1, got %d.", p.TopK)
	case !(p.MinP >= 0 && p.MinP <= 1):
		return invalid("min_p must be in [0, 1], got %v.", p.MinP)
	case !(p.RepetitionPenalty > 0) || math.IsInf(p.RepetitionPenalty, 0):
		return invalid("repetition_penalty must be a finite number greater than zero, got %v.", p.RepetitionPenalty)
	case !(p.PresencePenalty >= -2 && p.PresencePenalty <= 2):
		return invalid("presence_penalty must be in [-2, 2], got %v.", p.PresencePenalty)
	case !(p.FrequencyPenalty >= -2 && p.FrequencyPenalty <= 2):
		return invalid("frequency_penalty must be in [-2, 2], got %v.", p.FrequencyPenalty)
	case p.MinTokens < 0:
		return invalid("min_tokens must be greater than or equal to 0, got %d.", p.MinTokens)
	case p.TopLogprobs < -1:
		return invalid("top_logprobs must be a positive value or -1, got %d.", p.TopLogprobs)
	case p.NoLogprobs && p.TopLogprobs != 0:
		return invalid("top_logprobs must be 0 when no logprobs are reported, got %d.", p.TopLogprobs)
	case p.Tokens < 0 || p.Tokens > vocabSize:
		return invalid("tokens must be in [0, %d], got %d.", vocabSize, p.Tokens)
	}
	var outside []int
	for id, b := range p.LogitBias {
		if id < 0 || id >= vocabSize {
			outside = append(outside, id)
		}
		if math.IsNaN(b) {
			return invalid("logit_bias value for token %d is not a number", id)
		}
	}
	if len(outside) > 0 {
		return invalid("token_id(s) %v in logit_bias contain out-of-vocab token ids. Vocabulary size: %d", outside, vocabSize)
	}
	if p.AllowedTokenIDs != nil {
		if len(p.AllowedTokenIDs) == 0 {
			return invalid("allowed_token_ids is not None and empty!")
		}
		for _, id := range p.AllowedTokenIDs {
			if id < 0 || id >= vocabSize {
				return invalid("allowed_token_ids contains out-of-vocab token id!")
			}
		}
	}
	for _, w := range p.BadWords {
		if len(w) == 0 {
			return invalid("bad_words contains an empty token sequence")
		}
		for _, id := range w {
			if id < 0 || id >= vocabSize {
				return invalid("bad_words contains out-of-vocab token id %d", id)
			}
		}
	}
	for _, id := range p.StopTokenIDs {
		if id < 0 || id >= vocabSize {
			return invalid("stop_token_ids contains out-of-vocab token id %d", id)
		}
	}
	return nil
}
