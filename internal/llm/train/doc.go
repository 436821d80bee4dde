// Package train trains LoRA adapters (package lora) of the engine's models
// on the CPU: the backward pass of the model's own forward pass (package
// model: Model.TrainForward, Pass.Backward) turned into gradients of every
// adapter factor, accumulated over micro-batches, clipped by global norm
// and applied by AdamW.
//
// # A step
//
// A Stepper holds the adapter, its gradients and the optimizer's moments,
// and takes the optimizer's steps:
//
//	st, _ := train.New(m, adapter, train.Config{})       // defaults below
//	for _, micro := range microBatches {                  // bounds memory
//		pass, _ := st.Forward(micro)                  // pass.Logprobs
//		dLogprobs := loss(pass.Logprobs)              // ∂loss/∂logprob
//		_ = st.Backward(pass, dLogprobs)              // accumulates
//	}
//	res, _ := st.Step(learningRate)                       // clip, AdamW, zero
//
// Forward takes sequences from position 0 with, per position, the token
// whose log-probability the loss looks at (model.TrainSequence; the next
// token, or model.NoTarget); only those positions get logits. Any loss that
// is a function of those log-probabilities composes: the caller passes its
// derivative with respect to each of them to Backward — CrossEntropy gives
// the supervised one (−1/N per target), the RL loss its own. Gradients add
// up until Step, so a batch split into micro-batches gives the gradients of
// the whole batch.
//
// SaveOptimizer writes AdamW's moments and step count beside a saved
// adapter (OptimizerFile) and LoadOptimizer resumes them, so that training
// continued from a checkpoint steps as one uninterrupted run would.
//
// # Defaults
//
// Config's defaults are the reference RL trainer's: AdamW with β = (0.9,
// 0.99), ε = 1e-8, weight decay 0.1 (decoupled, as torch.optim.AdamW), and
// gradients clipped to a global L2 norm of 0.1 (as clip_grad_norm_; Step
// reports the norm before clipping). The adapter's own configuration
// (lora.Config) sets rank, alpha, targets and dropout; dropout masks are
// drawn per forward pass from Config.Seed.
//
// # Proof
//
// The gradients of every factor agree with PyTorch autograd within 1e-4
// relative (observed: a few 1e-6) on tiny random Llama, Qwen2 and Qwen3
// models covering GQA, biases, q/k norms, tied and untied outputs and each
// RoPE scaling; AdamW steps agree with torch.optim.AdamW after
// clip_grad_norm_ (testdata/torch/generate_train.py writes the goldens).
package train
