package model

import (
	"fmt"

	"github.com/weftlabs/weft/internal/llm/lora"
	"github.com/weftlabs/weft/internal/llm/tensor"
)

// TrainSequence is one sequence of a training micro-batch: its tokens from
// position 0 and the tokens whose log-probabilities a loss looks at.
type TrainSequence struct {
	Tokens []int32
	// Targets has one entry per token: Targets[i] is the token whose
	// log-probability given Tokens[:i+1] the pass computes (for next-token
	// training, Tokens[i+1]), or NoTarget. Only these positions get logits.
	Targets []int32
}

// NoTarget marks a position of TrainSequence.Targets that the loss ignores.
const NoTarget int32 = -1

// DropoutSeed is the seed of the pass's adapter dropout masks: a backward
// pass regenerates them with lora.DropoutMask over all the batch's rows.
func (p *Pass) DropoutSeed() uint64 { return p.batch.DropoutSeed }

// Pass is the recorded forward pass of a training micro-batch: the
// log-probabilities of its targets and the activations Backward multiplies
// gradients by. Its memory grows with the batch's tokens (every layer's
// activations) and with its targets times the vocabulary (their softmax);
// a trainer bounds both by splitting a batch into micro-batches.
type Pass struct {
	m     *Model
	batch Batch
	rows  []rowInfo
	ropes []*tensor.RoPE
	// targetRows are the rows with a target, in order, and targets their
	// tokens.
	targetRows []int
	targetPos  []rowInfo // sequence and position of each target row
	targets    []int32
	// exps holds the target rows' exponentials over the vocabulary, each
	// block of logitsBlock entries shifted by its own maximum, when they
	// fit in one chunk of chunkRows rows (TrainOptions.LogitsBudget);
	// otherwise the backward pass recomputes them chunk by chunk.
	// blockScales [targets × blocks] turn a block's exponentials into the
	// row's softmax (train_logits.go).
	exps        []float32
	blockScales []float32
	chunkRows   int
	// targetLogprobs are the log-probabilities of targets, entropies the
	// entropies of their rows' distributions.
	targetLogprobs []float32
	entropies      []float32
	// capped holds what the backward pass through capped logits needs
	// (Config.FinalSoftcap), else nil.
	capped *cappedLogits
	done   bool // backward-ed: the activations are spent
	// Logprobs[s][i] is log p(Targets[i] | Tokens[:i+1]) of sequence s, 0
	// where Targets[i] is NoTarget.
	Logprobs [][]float32
}

// TrainOptions are the choices of a training forward pass.
type TrainOptions struct {
	// Adapter is applied to every sequence (nil: the base model). With
	// dropout, its inputs are dropped with masks drawn from DropoutSeed
	// (see Batch.DropoutSeed).
	Adapter     *lora.Adapter
	DropoutSeed uint64
	// LogitsBudget bounds the bytes of softmax rows (targets × vocabulary
	// × 4) the pass keeps for its backward pass. Past it, the forward pass
	// computes the log-probabilities in chunks of rows that fit and the
	// backward pass recomputes each chunk's logits: one more output
	// projection for memory that no longer grows with the targets. 0 means
	// DefaultLogitsBudget.
	LogitsBudget int
}

// DefaultLogitsBudget is TrainOptions.LogitsBudget's default, 256 MiB:
// 2,048 targets of a 32,000-token vocabulary, 441 of a 152,000-token one.
const DefaultLogitsBudget = 256 << 20

// TargetsWithin is the most targets whose softmax rows fit in budget bytes
// (TrainOptions.LogitsBudget; 0 means DefaultLogitsBudget), at least 1: a
// training pass with more recomputes their logits in Backward, so a
// trainer that splits its batches at this many keeps every pass to two
// output projections.
func (m *Model) TargetsWithin(budget int) int {
	if budget <= 0 {
		budget = DefaultLogitsBudget
	}
	return max(1, budget/(4*m.Config.VocabSize))
}

// TrainForward runs a training micro-batch through the model — the same
// forward pass as Forward, recording its activations — and returns the
// log-probabilities of the targets. The pass keeps nothing in the model:
// several may be alive at once, each backward-ed once or dropped.
func (m *Model) TrainForward(seqs []TrainSequence, opts TrainOptions) (*Pass, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := &Pass{m: m, batch: Batch{Record: &Activations{arena: m.spareRecord}, DropoutSeed: opts.DropoutSeed}}
	m.spareRecord = nil
	p.chunkRows = m.TargetsWithin(opts.LogitsBudget)
	longest := 0
	for i, s := range seqs {
		if len(s.Targets) != len(s.Tokens) {
			return nil, fmt.Errorf("%w: sequence %d has %d tokens and %d targets", ErrBatch, i, len(s.Tokens), len(s.Targets))
		}
		for t, id := range s.Targets {
			if id != NoTarget && (id < 0 || int(id) >= m.Config.VocabSize) {
				return nil, fmt.Errorf("%w: sequence %d: target %d at position %d outside the vocabulary of %d", ErrBatch, i, id, t, m.Config.VocabSize)
			}
		}
		p.batch.Seqs = append(p.batch.Seqs, Sequence{ID: SeqID(i), Tokens: s.Tokens, Adapter: opts.Adapter})
		longest = max(longest, len(s.Tokens))
	}
	rows, err := m.checkBatch(&p.batch)
	if err != nil {
		return nil, err
	}
	p.rows = rows
	// The cache only serves the pass itself: attention's backward reads
	// the recorded keys and values.
	x, err := m.decoderLayers(&p.batch, NewContiguousCache(m.Config, longest))
	if err != nil {
		return nil, err
	}
	p.ropes = m.ropeTables(&p.batch)
	p.Logprobs = make([][]float32, len(seqs))
	row := 0
	for i, s := range seqs {
		p.Logprobs[i] = make([]float32, len(s.Tokens))
		for t, id := range s.Targets {
			if id != NoTarget {
				p.targetRows = append(p.targetRows, row+t)
				p.targetPos = append(p.targetPos, rowInfo{seq: i, pos: t})
				p.targets = append(p.targets, id)
			}
		}
		row += len(s.Tokens)
	}
	p.targetLogits(x)
	at := 0
	for i, s := range seqs {
		for t, id := range s.Targets {
			if id != NoTarget {
				p.Logprobs[i][t] = p.targetLogprobs[at]
				at++
			}
		}
	}
	return p, nil
}
