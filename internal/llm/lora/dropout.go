package lora

import "math/rand/v2"

// DropoutMask fills mask with the scaled keep-mask of the input of layer's
// target t in one training pass: each element is 0 with probability p and
// 1/(1−p) otherwise, in order, from a generator seeded by (seed, layer, t).
// The forward pass multiplies the adapter's input by it; the backward pass
// regenerates the same mask from the same seed instead of storing it.
func DropoutMask(mask []float32, p float64, seed uint64, layer int, t Target) {
	rng := rand.New(rand.NewPCG(seed, uint64(layer)*uint64(NumTargets)+uint64(t)))
	keep := float32(1 / (1 - p))
	for i := range mask {
		if rng.Float64() < p {
			mask[i] = 0
		} else {
			mask[i] = keep
		}
	}
}
