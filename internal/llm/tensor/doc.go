// Package tensor holds the float32 arrays and numeric operations of the model
// code: matrix products over a pool of threads, RMSNorm, rotary position
// embeddings, softmax, SwiGLU, element-wise sums, embedding lookup,
// transposition, f16/bf16 widening and narrowing, int8 block quantisation
// of weights and activations, and probes of the machine's streaming-read
// and peak FLOP rates that speeds are reported against.
//
// Everything works on plain []float32 in row-major order; Tensor adds a shape
// and views for code that wants one. Matrices multiplied by MatMulT keep the
// checkpoint layout [out, in]. The kernels of package asm (Dot, MatMulT,
// MatMulTQ8, Axpy) are exported here with their signatures, single-threaded,
// and MatMulTQ8Q8Strided multiplies int8 activations (QuantizeRows) by int8
// weights; MatMulTQuant multiplies activations quantised by QuantizeActs
// by weights in a GGUF block format (package quant) on their own bytes, and
// MatMulTHalf float32 activations by F16 or BF16 weights. Pool runs the
// matrix products over threads.
//
// # Determinism
//
// Every operation computes each output element in one fixed order that
// depends on the shapes of a row, never on how many rows are batched together
// or how many threads run: a sequence's activations, logits and sampled
// tokens are the same bits alone or batched with others. The matrix products
// split work over output columns; the summation order is the one documented
// in package asm.
//
// The kernels run as AVX2+FMA assembly where the CPU has it and as pure Go
// elsewhere or under the purego build tag; the two agree to rounding (the
// int8 × int8 and block-quantised products bit for bit).
package tensor
