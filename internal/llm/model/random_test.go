package model

import (
	"testing"

	"github.com/weftlabs/weft/internal/llm/llmtest"
)

// dims is the shape of cfg as package llmtest describes it.
func dims(cfg *Config) llmtest.Dims {
	return llmtest.Dims{
		Architecture: cfg.Architecture, VocabSize: cfg.VocabSize, HiddenSize: cfg.HiddenSize,
		IntermediateSize: cfg.IntermediateSize, Layers: cfg.Layers, Heads: cfg.Heads, KVHeads: cfg.KVHeads,
		HeadDim: cfg.HeadDim, MaxPositions: cfg.MaxPositions, RMSNormEps: float64(cfg.RMSNormEps),
		RopeTheta: cfg.RopeTheta, TiedEmbedding: cfg.TiedEmbedding, AttentionBias: cfg.AttentionBias,
	}
}

// configOf parses the config.json of a shape.
func configOf(tb testing.TB, d llmtest.Dims) *Config {
	tb.Helper()
	cfg, err := ParseConfig(d.ConfigJSON())
	if err != nil {
		tb.Fatal(err)
	}
	return cfg
}

// randomModel builds a model of cfg with random weights.
func randomModel(tb testing.TB, cfg *Config, opts Options) *Model {
	tb.Helper()
	m, err := FromWeights(cfg, llmtest.RandomWeights(dims(cfg), 1), opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { m.Close() })
	return m
}

// randomTokens returns n token ids below vocab from seed.
func randomTokens(seed uint64, n, vocab int) []int32 { return llmtest.RandomTokens(seed, n, vocab) }
