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
	// tokens; probs holds their softmax over the vocabulary.
	targetRows []int
	targetPos  []rowInfo // sequence and position of each target row
	targets    []int32
	probs      []float32
	// targetLogprobs are the log-probabilities of targets.
	targetLogprobs []float32
	done           bool // backward-ed: the activations are spent
	// Logprobs[s][i] is log p(Targets[i] | Tokens[:i+1]) of sequence s, 0
	// where Targets[i] is NoTarget.
	Logprobs [][]float32
}

// TrainForward runs a training micro-batch through the model under adapter
// (nil for the base model) — the same forward pass as Forward, recording
// its activations — and returns the log-probabilities of the targets. An
// adapter with dropout drops its inputs with masks drawn from dropoutSeed
// (see Batch.DropoutSeed). The pass keeps nothing in the model: several
// may be alive at once, each backward-ed once or dropped.
func (m *Model) TrainForward(adapter *lora.Adapter, seqs []TrainSequence, dropoutSeed uint64) (*Pass, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := &Pass{m: m, batch: Batch{Record: &Activations{}, DropoutSeed: dropoutSeed}}
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
		p.batch.Seqs = append(p.batch.Seqs, Sequence{ID: SeqID(i), Tokens: s.Tokens, Adapter: adapter})
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

// targetLogits applies the final norm and the output projection to the
// target rows of x and keeps their softmax (and the recorded hidden state
// and norm the backward pass needs).
func (p *Pass) targetLogits(x []float32) {
	m := p.m
	c := m.Config
	d, v := c.HiddenSize, c.VocabSize
	n := len(p.targetRows)
	normed := make([]float32, n*d)
	for i, r := range p.targetRows {
		copy(normed[i*d:(i+1)*d], x[r*d:(r+1)*d])
	}
	tensor.RMSNorm(normed, normed, m.Norm, c.RMSNormEps)
	p.probs = make([]float32, n*v)
	if n > 0 {
		m.project(normed, n, []*Linear{m.LMHead}, [][]float32{p.probs})
	}
	p.targetLogprobs = make([]float32, n)
	m.pool.Parallel(n, 1, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			row := p.probs[i*v : (i+1)*v]
			// The log-probability from the log-softmax, not the log of
			// the probability, which underflows for unlikely targets.
			logit := row[p.targets[i]]
			mx, logSum := tensor.SoftmaxLogZ(row)
			p.targetLogprobs[i] = (logit - mx) - logSum
		}
	})
	rec := p.batch.Record
	rec.Hidden, rec.Normed, rec.LogitRows = x, normed, p.targetRows
}
