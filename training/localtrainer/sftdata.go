package localtrainer

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/weftlabs/weft/internal/llm/model"
	"github.com/weftlabs/weft/training"
)

// sftConfig is an SFT job's config: batch_size (a number, or "auto" /
// absent for the default) and learning_rate (a number, or one per batch).
type sftConfig struct {
	BatchSize    json.RawMessage `json:"batch_size"`
	LearningRate json.RawMessage `json:"learning_rate"`
}

// sftLine is one line of SFT data: a conversation ({"messages", "tools"}) or
// a trajectory ({"messages_and_choices", "tools"}).
type sftLine struct {
	Messages           []json.RawMessage `json:"messages"`
	MessagesAndChoices []json.RawMessage `json:"messages_and_choices"`
	Tools              []json.RawMessage `json:"tools"`
}

// planSFT reads the data file and the config into steps: consecutive batches
// of batch_size conversations, one optimizer step each, each with its
// learning rate. Conversations longer than maxLen are truncated; a batch
// with nothing to train is skipped (and does not count against a schedule).
// It reads one line at a time (at most training.MaxDataLineBytes), keeps only
// the trained sequences' token ids, stops with ErrUntrainable once they pass
// maxTokens, and with ctx's error as soon as ctx ends.
func planSFT(ctx context.Context, tp *Template, file string, rawConfig json.RawMessage, maxLen, maxTokens int) ([]*step, error) {
	var cfg sftConfig
	if len(rawConfig) > 0 {
		if err := json.Unmarshal(rawConfig, &cfg); err != nil {
			return nil, fmt.Errorf("%w: SFT config: %v", ErrConversation, err)
		}
	}
	batchSize := DefaultSFTBatchSize
	if b := cfg.BatchSize; len(b) > 0 && string(b) != "null" && string(b) != `"auto"` {
		if err := json.Unmarshal(b, &batchSize); err != nil || batchSize < 1 {
			return nil, fmt.Errorf("%w: SFT batch_size %s: want a positive integer or \"auto\"", ErrConversation, b)
		}
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// batches[b] are the trained sequences of conversations
	// b·batchSize … (b+1)·batchSize-1; empty ones are dropped once each has
	// its learning rate.
	var batches [][]model.TrainSequence
	convs, tokens := 0, 0
	scanner := bufio.NewScanner(f)
	scanner.Buffer(make([]byte, 0, 64<<10), training.MaxDataLineBytes)
	for n := 1; scanner.Scan(); n++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		text := bytes.TrimSpace(scanner.Bytes())
		if len(text) == 0 {
			continue
		}
		var line sftLine
		if err := json.Unmarshal(text, &line); err != nil {
			return nil, fmt.Errorf("%w: line %d is not a conversation", ErrConversation, n)
		}
		messages := line.Messages
		if messages == nil {
			messages = line.MessagesAndChoices
		}
		seqs, err := tp.Conversation(messages, line.Tools)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		if convs%batchSize == 0 {
			batches = append(batches, nil)
		}
		convs++
		for _, s := range seqs {
			if s = truncate(s, maxLen); scoredTokens(s) > 0 {
				if tokens += len(s.IDs); tokens > maxTokens {
					return nil, fmt.Errorf("%w: the SFT data passes %d tokens at line %d, more than this server trains in one job", ErrConversation, maxTokens, n)
				}
				batches[len(batches)-1] = append(batches[len(batches)-1], trainSequence(s))
			}
		}
	}
	if err := scanner.Err(); err != nil {
		return nil, err
	}
	rates, err := learningRates(cfg.LearningRate, len(batches))
	if err != nil {
		return nil, err
	}
	var steps []*step
	for b, seqs := range batches {
		if len(seqs) > 0 {
			steps = append(steps, &step{seqs: seqs, lr: rates[b]})
		}
	}
	return steps, nil
}

// learningRates reads learning_rate: absent means [DefaultSFTLearningRate]
// for every batch, a number the same for every batch, a list one per batch
// (its length must be the number of batches).
func learningRates(raw json.RawMessage, batches int) ([]float64, error) {
	rates := make([]float64, batches)
	if len(raw) == 0 || string(raw) == "null" {
		for i := range rates {
			rates[i] = DefaultSFTLearningRate
		}
		return rates, nil
	}
	var one float64
	if json.Unmarshal(raw, &one) == nil {
		for i := range rates {
			rates[i] = one
		}
	} else {
		var list []float64
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, fmt.Errorf("%w: SFT learning_rate %s: want a number or a list of numbers", ErrConversation, raw)
		}
		if len(list) != batches {
			return nil, fmt.Errorf("%w: SFT learning-rate schedule must match batch count: %d rates for %d batches", ErrConversation, len(list), batches)
		}
		rates = list
	}
	for _, r := range rates {
		if !(r >= 0) {
			return nil, fmt.Errorf("%w: SFT learning rate %v", ErrConversation, r)
		}
	}
	return rates, nil
}
