package localtrainer

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
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
func planSFT(tp *Template, file string, rawConfig json.RawMessage, maxLen int) ([]*step, error) {
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
	var convs [][]Sequence
	scanner := bufio.NewScanner(f)
	scanner.Buffer(make([]byte, 1<<20), 1<<30)
	for n := 1; scanner.Scan(); n++ {
		if len(scanner.Bytes()) == 0 {
			continue
		}
		var line sftLine
		if err := json.Unmarshal(scanner.Bytes(), &line); err != nil {
			return nil, fmt.Errorf("%w: line %d: %v", ErrConversation, n, err)
		}
		messages := line.Messages
		if messages == nil {
			messages = line.MessagesAndChoices
		}
		seqs, err := tp.Conversation(messages, line.Tools)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		convs = append(convs, seqs)
	}
	if err := scanner.Err(); err != nil {
		return nil, err
	}
	batches := (len(convs) + batchSize - 1) / batchSize
	rates, err := learningRates(cfg.LearningRate, batches)
	if err != nil {
		return nil, err
	}
	var steps []*step
	for b := range batches {
		st := &step{lr: rates[b]}
		for _, conv := range convs[b*batchSize : min((b+1)*batchSize, len(convs))] {
			for _, s := range conv {
				if s = truncate(s, maxLen); scoredTokens(s) > 0 {
					st.seqs = append(st.seqs, trainSequence(s))
				}
			}
		}
		if len(st.seqs) > 0 {
			steps = append(steps, st)
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
