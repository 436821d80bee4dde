package model

// Entropies returns the entropy of the model's next-token distribution,
// −Σ_v p_v·ln p_v in nats, at every position of the pass with a target,
// shaped as Logprobs (0 elsewhere): how sure the policy being trained is
// where the loss looks. The forward pass computes it with the softmax, from
// each block of the vocabulary's sums (train_logits.go), so it costs
// nothing more; it may be called before or after Backward.
func (p *Pass) Entropies() [][]float32 {
	out := make([][]float32, len(p.Logprobs))
	for i := range out {
		out[i] = make([]float32, len(p.Logprobs[i]))
	}
	for i, tp := range p.targetPos {
		out[tp.seq][tp.pos] = p.entropies[i]
	}
	return out
}
