// Package model runs the decoder-only transformers of Hugging Face model
// directories — LlamaForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM,
// MistralForCausalLM and Gemma3ForCausalLM — on the CPU, in float32, with
// the kernels of package tensor.
//
// # Loading
//
// Load reads config.json (ParseConfig) and the safetensors weights (f32,
// f16 or bf16; one file or shards). The architectures share one decoder:
// RMSNorm, grouped-query attention with rotate-half RoPE, a SwiGLU MLP,
// tied or untied output embeddings. Qwen2 adds q/k/v biases, Qwen3 an
// RMSNorm of each query and key head before RoPE, Mistral a sliding window;
// head_dim may differ from hidden_size / num_attention_heads. Gemma 3
// (gemma3.go) adds its norms of (1 + w), a scaled embedding, a GELU-gated
// MLP, norms of each sub-layer's output, query_pre_attn_scalar, sliding
// and global layers with their own RoPE bases, and optional tanh
// softcapping of scores and logits; a Gemma3ForConditionalGeneration
// directory serves its language model. rope_scaling may be linear, dynamic,
// yarn or llama3; their inverse frequencies and attention scaling are
// computed as the reference implementation computes them. Anything else a
// config.json asks for — another architecture or activation, Qwen2's
// sliding windows, quantised checkpoints, partial rotation — is ErrUnsupported
// naming the field, and a weight of the wrong shape is ErrInvalid naming
// the tensor. Options.WeightType Int8 quantises the linear layers and the
// output projection in blocks of 32 weights (tensor.QuantizeQ8) for a
// quarter of the memory traffic of a decode step; their inputs are quantised
// per block of 32 too, and the products summed in integers. The GGUF block
// formats Q8_0, Q4_0, Q4_K, Q5_K and Q6_K quantise them as llama.cpp does
// (package quant) and multiply them on their blocks against inputs
// quantised per 32 or 256 elements (tensor.MatMulTQuant); F16 and BF16 keep
// them in half precision. The default, Auto, keeps each weight in the type
// its file stores it in: a GGUF file's blocks are multiplied where they lie
// in the mapped file (LoadGGUF).
//
// # Forward passes
//
// Forward takes a Batch of sequences, each with new tokens at consecutive
// positions from Start: a whole prompt, a chunk of one, or one decode
// token. All of a batch's tokens go through each linear layer together (one
// matrix product over the pool's threads, so concurrent sequences share the
// weights' memory traffic); attention runs per sequence and key-value head
// against the KVCache, which the pass extends with the new positions. The
// cache is an interface over blocks of positions, so the same pass serves
// the contiguous cache here and a paged cache with shared prefixes. Logits
// come back for each sequence's last token, or for all of its tokens with
// AllLogits.
//
// # Embeddings
//
// A model directory in sentence-transformers' layout (modules.json, its
// Pooling module's config.json, a Normalize module) is an embedding model
// (ReadPooling; a checkpoint of the bare decoder, without the model.
// prefix, loads too): Embeddings runs a batch of sequences through the
// same layers and pools each one's final-norm states — the last token
// (Qwen3-Embedding), the mean, or the first — truncates it to a
// Matryoshka size the config.json declares, and scales it to unit length
// when the model normalises.
//
// # Determinism
//
// A sequence's logits are the same bits whatever else is batched with it,
// however its prompt is split into chunks, and whatever the thread count:
// every matrix product computes each output element in one order fixed by
// the shapes (package tensor), and attention computes each token's heads
// alone, in position order, on one thread.
//
// # Training
//
// The forward pass is the one a trainer differentiates. TrainForward runs
// a micro-batch of sequences from position 0 under an adapter through
// Forward's own code with Batch.Record set, which keeps every layer's
// activations (Activations: the residual stream, normed inputs, Q/K before
// the q/k norm and after RoPE, V, the attention output, gate and up before
// the gating, its output, Gemma 3's projections before their output norms)
// in an arena of its own instead of the workspace, and
// returns the log-probabilities of the chosen target tokens (only those
// rows get logits, multiplied block by block of the vocabulary and turned
// into exponentials in cache: train_logits.go). Pass.Backward takes the
// loss's derivative with respect to each of them and walks the layers in
// reverse: the gradient of x·Wᵀ is dy·W, a MatMulAdd against the weight as
// stored (projections that share an input add into one gradient); RMSNorm,
// RoPE (the transposed rotation), SwiGLU and GeGLU and the tanh softcaps
// have closed-form derivatives over the recorded values; attention
// probabilities are recomputed from the recorded Q and K rather than
// stored. Base weights and embeddings are
// frozen: no gradient is formed for them. Every linear layer's input and output gradient goes
// to a LinearGradients, which is how an adapter's factors get their
// gradients (package train) without the model knowing about them.
package model
