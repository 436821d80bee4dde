// Package llm holds no code: it is the map of weft's engine, the packages
// under it that run models in-process on the CPU. None of them imports
// anything of weft outside internal/llm; the serving layer above (package
// chat for chat completions, training/localtrainer for the built-in
// trainer) maps their plain sentinel errors to weft's error classes.
//
// # The stack, from the bottom
//
//   - tensor: float32 arrays and the numeric kernels (assembly with a
//     pure-Go twin each); quant: the GGUF block formats and their dot
//     products.
//   - filemap, safetensors, gguf: weight files mapped read-only and read as
//     tensors; modelfiles: what a model directory (or GGUF file, or Ollama
//     manifest) holds and where.
//   - tokenizer: Hugging Face tokenizer files, encoding and decoding as the
//     reference tokenizers do; chattemplate (with its jinja interpreter):
//     messages to prompt text as the model's template renders them.
//   - arch: the names of the architectures the engine runs, one list.
//   - model: the decoder-only transformers (config.json to weights to
//     logits), forward and backward; kvcache: the paged KV cache; lora:
//     low-rank adapters applied per batch row.
//   - sample: logits to the next token with vLLM's sampling options;
//     constrain: structured outputs as a token mask per step; toolcall:
//     tool calls and reasoning read back from the text.
//   - engine: a model served to many requests at once (continuous batching,
//     prefix cache, fairness, adapters), the chunks of each generation.
//   - train (an optimizer step over a LoRA adapter) and rl (the RL loss):
//     what the built-in trainer runs.
//   - llmtest: fixtures for all of the above: random-weight model
//     directories of any shape, real tokenizers, llama.cpp's tools.
//
// Numerics are held to outside oracles: testdata/torch (PyTorch, by its
// generate*.py scripts), testdata/oracle (the tokenizers' and templates'
// JavaScript and Python references), testdata/gguf (llama.cpp's gguf-py).
//
// # Adding an architecture
//
//  1. arch: its entry in All (the name config.json's "architectures"
//     gives, its model_type and its GGUF general.architecture name), read
//     by model and llmtest alike; model/config.go: the config.json fields
//     it reads; a field value the decoder does not implement is
//     ErrUnsupported naming it.
//  2. model: what differs from the shared decoder (norms, activation,
//     attention), beside gemma3.go's example, forward and backward alike;
//     model/gguf.go: its metadata keys.
//  3. llmtest: its shape in Dims (and ModelDir/GGUF writers when its files
//     differ), by its arch name.
//  4. testdata/torch/generate.py: a tiny model of it with PyTorch's logits,
//     added to model's goldenModels; testdata/gguf for its GGUF form.
//  5. tokenizer and chattemplate: its tokenizer and template, with their
//     references' golden files in testdata/oracle when they are new kinds.
//  6. toolcall: its tool-call format when it writes calls its own way (the
//     serving layer tells the format from the vocabulary).
package llm
