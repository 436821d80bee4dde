// Package rl is the reinforcement-learning loss of the built-in trainer: group
// advantages from rewards, the job-wide weight and advantage normalisation, and
// the per-token policy loss (CISPO or PPO clipping, token or sequence
// importance sampling and the other experimental_config knobs of ART's
// serverless training API), with its gradient with respect to the current
// policy's log-probabilities.
//
// It works on plain slices of float64: the trainer computes the
// log-probabilities of the trained tokens with the model, calls [Config.Loss]
// for one packed row and hands [Result.Grad] to the model's backward pass.
// Positions are already shifted: position t holds the log-probability of token
// t+1 and the mask, advantage and weight of that token.
package rl
