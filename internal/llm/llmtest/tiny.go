package llmtest

// TinyQwen3 is a Qwen3 shape with Qwen3's vocabulary (so that the real
// Qwen3 tokenizer and chat template fit it) and everything else tiny: a
// model directory of it loads in a fraction of a second and generates
// thousands of tokens a second, for tests that drive a served model end to
// end.
var TinyQwen3 = Dims{
	Architecture: Qwen3, VocabSize: 151936, HiddenSize: 32, IntermediateSize: 64,
	Layers: 2, Heads: 4, KVHeads: 2, HeadDim: 8, MaxPositions: 1024,
	RMSNormEps: 1e-6, RopeTheta: 1e6, TiedEmbedding: true,
}
