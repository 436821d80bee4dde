// Package embeddings serves OpenAI's POST /v1/embeddings with embedding
// models loaded in-process (sentence-transformers directories: see
// model.ReadPooling): inputs as text, token ids or batches of either,
// encoding_format float or base64, dimensions for Matryoshka models and
// vLLM's truncate_prompt_tokens. Requests that arrive together share one
// batched pass of the model, up to Config.MaxBatchTokens.
package embeddings
