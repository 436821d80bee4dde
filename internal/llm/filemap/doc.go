// Package filemap maps weight files into memory read-only and reads their
// little-endian floating-point data without copying it where it can: the
// safetensors and GGUF readers share it.
//
// A mapping's pages are read from the file when touched and shared with the
// page cache, so opening a model costs no copy of its weights; where the
// platform cannot map a file it is read into memory instead. A float32
// array whose bytes are 4-byte aligned is handed out as a view of the
// mapping (which must not be written); f16 and bf16 arrays are widened to
// float32 exactly.
package filemap
