// Package quant holds the block formats of GGUF tensors: each Type's
// layout (elements per block, bytes per block), dequantisation to float32
// and, where one is defined, quantisation from float32, all on the bytes
// exactly as a GGUF file stores them, so a file's tensor data is used as it
// is.
//
// # Formats
//
// F32, F16 and BF16 are one element per block. Q8_0, Q4_0, Q4_1, Q5_0 and
// Q5_1 hold 32 weights a block with a half-precision scale (and minimum,
// for the _1 types); Q4_K, Q5_K and Q6_K hold 256 weights a super-block
// with 8 or 16 sub-block scales under a half-precision one. These are the
// types of the common Q4_K_M, Q5_K_M and Q8_0 files (a K-quant file's
// tensors whose rows are not a multiple of 256 are stored as Q5_0, Q5_1 or
// Q8_0).
//
// # Bits
//
// Dequantize computes each element in float32 with the operations and
// rounding of the reference Python implementation (gguf-py's quants
// module): for Q4_K, (d·scale)·q − dmin·min, each product rounded once.
// Its results equal that implementation's bit for bit, signed zeros
// included; a NaN or infinite scale gives NaN or infinite elements as the
// same arithmetic does (a NaN's payload is not part of the contract).
// Quantize for F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0 and Q5_1 gives the
// reference implementation's bytes; for Q4_K, Q5_K and Q6_K, which it only
// dequantises, the bytes of llama.cpp's reference quantiser, the one
// llama-quantize uses without an importance matrix (testdata/quants holds
// golden blocks of both, written by a script that runs gguf-py and
// llama-quantize).
package quant
