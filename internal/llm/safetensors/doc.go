// Package safetensors reads model weights in the safetensors format as
// Hugging Face model directories hold them: one model.safetensors, or shards
// listed by model.safetensors.index.json.
//
// A file is an 8-byte little-endian header length, a JSON header mapping
// each tensor name to its dtype, shape and [begin, end) byte offsets into the
// data that follows, and the data. Open validates the whole header before
// anything is read: every offset inside the data, every byte length equal to
// the shape's element count times the dtype's size, no two tensors
// overlapping, dtypes F32, F16 and BF16 only. Errors name the file, the
// tensor and the field.
//
// Files are memory-mapped where the platform allows (the pages are read
// when a tensor is touched and shared with the page cache), and read into
// memory elsewhere. A float32 tensor whose bytes are aligned is handed out
// as a view of the mapping without a copy; f16 and bf16 tensors are widened
// to float32 exactly.
package safetensors
