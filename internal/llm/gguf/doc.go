// Package gguf reads and writes GGUF files, the single-file model format of
// llama.cpp and Ollama: a header of typed metadata (architecture and
// hyperparameters, the tokenizer's vocabulary and merges, the chat
// template) followed by a directory of tensors and their data, each aligned.
//
// # Reading
//
// Open maps the file and Parse reads the header: the magic, the version (2
// and 3 are read; version 1 and byte-swapped big-endian files are
// ErrUnsupported), every metadata value of every type (integers of each
// width, floats, bools, strings, arrays of them and arrays of arrays), and
// the tensor directory (name, dimensions, ggml type, offset). The data
// section starts at the next multiple of general.alignment (32 by default);
// every tensor must start at a multiple of it, lie inside the file and not
// overlap another. A tensor's Data is a view of the mapping: nothing of the
// weights is read or copied until the caller touches it, and F32 tensors
// convert to float32 without a copy (Tensor.Float32).
//
// Every count and length in a header is checked against the bytes that
// remain before anything is allocated for it (a header claiming 2^60
// tensors or a string of 2^62 bytes fails at once), arrays may nest at most
// eight deep, and every error names the file and the key or tensor, wrapping
// ErrInvalid for a malformed file and ErrUnsupported for a well-formed one
// this package does not read. A fuzz target holds the reader to that.
//
// Tensor types are ggml's (quant.Type, whose package owns the block
// formats): the plain F32, F16, BF16 (and integer) types and the block
// formats of quantized weights (Q8_0, Q4_K, ...). Every type's block layout
// is known, so the reader sizes and places any tensor; turning blocks into
// numbers is package quant's business.
//
// # Writing
//
// Write produces a version 3 file from metadata and tensors, for tests and
// tools; the fixtures the tests compare with are written by llama.cpp's own
// gguf-py (internal/llm/testdata/gguf).
package gguf
