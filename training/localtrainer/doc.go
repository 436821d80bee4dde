// Package localtrainer is weft's built-in trainer: it trains LoRA adapters of
// the models the engine serves, on the CPU, for reinforcement-learning jobs
// (the loss of package rl) and supervised fine-tuning jobs.
//
// A job goes: conversations → training sequences with the model's own chat
// template and tokenizer ([Template]; only assistant tokens are trained) →
// packed rows with advantages and weights (RL) or batches (SFT) → per row a
// forward pass for the log-probabilities of the trained tokens, the loss and
// its gradient, the backward pass into the adapter, an optimizer step → the
// adapter saved as the new checkpoint.
package localtrainer
