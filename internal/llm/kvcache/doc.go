// Package kvcache is a paged KV cache for the forward pass of package
// model: a fixed pool of blocks, sized by a byte budget, that sequences
// take as they grow and give back when released.
//
// Blocks whose positions are all filled can be shared between sequences
// with a common prompt prefix. Commit registers a sequence's full blocks
// under a hash chained over the token content of every block up to and
// including it, seeded by a salt, so that a block is only ever found by a
// sequence whose tokens up to that block are the same and whose salt is
// the same: requests with different salts never see each other's blocks.
// Attach maps the longest run of such resident blocks into a new sequence,
// read-only and reference-counted; the first write into a shared block
// copies it. A registered block that no sequence references stays resident
// until the pool runs out, when the least recently used is evicted.
package kvcache
