package engine

import (
	"context"
	"testing"
	"time"

	"github.com/weftlabs/weft/internal/llm/constrain"
	"github.com/weftlabs/weft/internal/llm/llmtest"
)

// Benchmark of what a JSON Schema constraint costs decoding through the
// engine (go test -run XXX -bench StructuredDecode ./internal/llm/engine): random
// Qwen3 models with the real 151,936-token vocabulary — "tiny" (hidden 16,
// where the logits row and the mask dominate a step) and "15M" (llama2.c's
// 15M shape) — decode one stream at temperature 1, alternately free and
// under a nested schema, in the same run. ratio is constrained tokens/s
// over free tokens/s. The schema's masks are warmed first, as repeated
// requests with one schema find them; with the default MaxMasks (512) the
// schema's string states outnumber the masks kept, so some steps walk the
// vocabulary again, which "tiny/max_masks=4096" spares (for 4096 × 19 KiB
// of masks).

const benchSchema = `{"type":"object","properties":{
"id":{"type":"integer"},"name":{"type":"string","maxLength":20},
"address":{"type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"},"zip":{"type":"string","pattern":"^[0-9]{5}$"}},"required":["street","city"]},
"tags":{"type":"array","items":{"type":"string","maxLength":8},"maxItems":4},
"scores":{"type":"array","items":{"type":"number"},"maxItems":3},
"active":{"type":"boolean"},"kind":{"enum":["a","b","c"]}},
"required":["id","name","address","active"]}`

// decodeRun generates one request and returns its tokens and duration.
func decodeRun(b *testing.B, e *Engine, req Request) (int, time.Duration) {
	start := time.Now()
	g, err := e.Generate(context.Background(), req)
	if err != nil {
		b.Fatal(err)
	}
	res, err := g.Wait()
	if err != nil {
		b.Fatal(err)
	}
	return len(res.Choices[0].TokenIDs), time.Since(start)
}

func BenchmarkStructuredDecode(b *testing.B) {
	tiny := structuredModels[0].dims
	mid := llmtest.Llama15M
	mid.Architecture, mid.VocabSize, mid.RMSNormEps, mid.RopeTheta = llmtest.Qwen3, tiny.VocabSize, 1e-6, 1e6
	for _, shape := range []struct {
		name     string
		dims     llmtest.Dims
		maxMasks int
	}{{"tiny", tiny, 0}, {"tiny/max_masks=4096", tiny, 4096}, {"15M", mid, 0}} {
		b.Run(shape.name, func(b *testing.B) {
			dir := llmtest.ModelDir{Dims: shape.dims, Tokenizer: llmtest.TokenizerQwen3}.Write(b)
			e, err := Open(dir, ModelConfig{Structured: constrain.Config{MaxStringLength: 24, MaxMasks: shape.maxMasks}})
			if err != nil {
				b.Fatal(err)
			}
			defer e.Close()
			c, err := e.Compile(context.Background(), constrain.Spec{Kind: constrain.KindJSONSchema, Schema: []byte(benchSchema)})
			if err != nil {
				b.Fatal(err)
			}
			start := []int{e.Tokenizer().SpecialTokens().EOS.ID}
			seed := int64(0)
			request := func(constrained bool) Request {
				seed++
				r := Request{Prompt: start, MaxTokens: 128, Temperature: ptr(1.0), Seed: ptr(seed), IgnoreEOS: true}
				if constrained {
					r.Constraint, r.IgnoreEOS, r.MaxTokens = c, false, 400
				}
				return r
			}
			for range 8 { // warm the weights and the schema's masks
				decodeRun(b, e, request(true))
			}
			decodeRun(b, e, request(false))
			var freeTokens, constrainedTokens int
			var free, constrained time.Duration
			for b.Loop() {
				n, d := decodeRun(b, e, request(false))
				freeTokens, free = freeTokens+n, free+d
				n, d = decodeRun(b, e, request(true))
				constrainedTokens, constrained = constrainedTokens+n, constrained+d
			}
			freeRate := float64(freeTokens) / free.Seconds()
			constrainedRate := float64(constrainedTokens) / constrained.Seconds()
			b.ReportMetric(freeRate, "free_tok/s")
			b.ReportMetric(constrainedRate, "constrained_tok/s")
			b.ReportMetric(constrainedRate/freeRate, "ratio")
			b.ReportMetric(float64(constrainedTokens)/float64(b.N), "constrained_tok/op")
		})
	}
}
