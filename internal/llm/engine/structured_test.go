package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/weftlabs/weft/internal/llm/constrain"
	"github.com/weftlabs/weft/internal/llm/llmtest"
	"github.com/weftlabs/weft/internal/llm/llmtest/llmcheck"
	"github.com/weftlabs/weft/internal/llm/tokenizer"
)

// The proof of structured outputs through the engine: random-weight models
// with the real Qwen3, Llama 3 and Llama 2 tokenizers sample at temperature
// 1 under a constraint, and an oracle independent of the code under test —
// a JSON Schema validator library, Go's regexp, the list of choices, Go's
// JSON parser — accepts every output. Without the mask, random weights
// write random text that none of them would accept.

// structuredModel is a tiny random model with a real tokenizer, long
// enough a context for constrained outputs.
type structuredModel struct {
	name string
	dims llmtest.Dims
	tok  string
}

var structuredModels = []structuredModel{
	{"qwen3", llmtest.Dims{Architecture: llmtest.Qwen3, VocabSize: 151936, HiddenSize: 16, IntermediateSize: 32,
		Layers: 2, Heads: 2, KVHeads: 1, HeadDim: 8, MaxPositions: 1024, RMSNormEps: 1e-6, RopeTheta: 1e6,
		TiedEmbedding: true}, llmtest.TokenizerQwen3},
	{"llama3", llmtest.Dims{Architecture: llmtest.Llama, VocabSize: 128256, HiddenSize: 16, IntermediateSize: 32,
		Layers: 2, Heads: 2, KVHeads: 1, HeadDim: 8, MaxPositions: 1024, RMSNormEps: 1e-5, RopeTheta: 5e5,
		TiedEmbedding: true}, llmtest.TokenizerLlama3},
	{"llama2", llmtest.Dims{Architecture: llmtest.Llama, VocabSize: 32000, HiddenSize: 16, IntermediateSize: 32,
		Layers: 2, Heads: 2, KVHeads: 1, HeadDim: 8, MaxPositions: 1024, RMSNormEps: 1e-5, RopeTheta: 1e4,
		TiedEmbedding: true}, llmtest.TokenizerLlama2},
}

// structuredKVBlock is a KV block of those models: 2 layers × keys and
// values × 8 floats × 4 bytes per position.
const structuredKVBlock = 2 * 2 * 8 * 4 * DefaultBlockSize

// structuredConfig bounds unbounded strings, since a random model closes a
// string only by chance.
var structuredConfig = constrain.Config{MaxStringLength: 8, MaxNesting: 6}

func openStructured(t testing.TB, m structuredModel, cfg ModelConfig) *Engine {
	t.Helper()
	if cfg.Structured == (constrain.Config{}) {
		cfg.Structured = structuredConfig
	}
	return open(t, llmtest.ModelDir{Dims: m.dims, Tokenizer: m.tok}.Write(t), cfg)
}

// structuredSchemas cover the keywords the issue names: types, properties,
// required, enum, const, arrays with min/max items, nesting, $ref/$defs,
// additionalProperties, string lengths and patterns, anyOf.
var structuredSchemas = []string{
	`{"type":"object","properties":{"name":{"type":"string","maxLength":10},"age":{"type":"integer"},"score":{"type":"number"},"ok":{"type":"boolean"},"none":{"type":"null"}},"required":["name","age","score","ok","none"]}`,
	`{"type":"object","properties":{"city":{"type":"string","minLength":2,"maxLength":6},"unit":{"enum":["celsius","fahrenheit"]},"days":{"type":"integer"}},"required":["city","unit"],"additionalProperties":false}`,
	`{"type":"object","properties":{"tags":{"type":"array","items":{"type":"string","maxLength":4},"minItems":2,"maxItems":3},"points":{"type":"array","items":{"type":"object","properties":{"x":{"type":"integer"},"y":{"type":"integer"}},"required":["x","y"]},"maxItems":2}},"required":["tags","points"]}`,
	`{"type":"object","properties":{"user":{"type":"object","properties":{"id":{"type":"string","pattern":"^[a-z]{2}-[0-9]{3}$"},"address":{"type":"object","properties":{"zip":{"type":"string","pattern":"^\\d{5}$"},"street":{"type":"string","maxLength":8}},"required":["zip"]}},"required":["id","address"]},"kind":{"const":"person"}},"required":["user","kind"]}`,
	`{"$defs":{"node":{"type":"object","properties":{"value":{"type":"integer"},"children":{"type":"array","items":{"$ref":"#/$defs/node"},"maxItems":2}},"required":["value"]}},"$ref":"#/$defs/node"}`,
	`{"anyOf":[{"type":"string","maxLength":6},{"type":"integer"},{"type":"array","items":{"type":["boolean","null"]},"maxItems":3}]}`,
}

func compile(t testing.TB, e *Engine, spec constrain.Spec) *constrain.Constraint {
	t.Helper()
	c, err := e.Compile(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

const structuredSeeds = 6

// seeded is a constrained request at temperature 1 for each seed.
func seeded(e *Engine, c *constrain.Constraint, text string, maxTokens int) []Request {
	reqs := make([]Request, structuredSeeds)
	for i := range reqs {
		reqs[i] = Request{Prompt: prompt(e, text), MaxTokens: maxTokens, Temperature: ptr(1.0),
			Seed: ptr(int64(1000 + i)), Constraint: c}
	}
	return reqs
}

// finished checks that a choice ended by its constraint, not its length.
func finished(t *testing.T, what string, c Choice) {
	t.Helper()
	if c.FinishReason != FinishStop {
		t.Fatalf("%s: finish_reason %q after %d tokens: %q", what, c.FinishReason, len(c.TokenIDs), c.Text)
	}
}

func TestStructuredJSONSchemaOutputsValidate(t *testing.T) {
	for _, m := range structuredModels {
		t.Run(m.name, func(t *testing.T) {
			e := openStructured(t, m, ModelConfig{})
			for i, schema := range structuredSchemas {
				sch := llmcheck.SchemaValidator(t, schema)
				c := compile(t, e, constrain.Spec{Kind: constrain.KindJSONSchema, Schema: []byte(schema)})
				for seed, res := range concurrently(t, e, seeded(e, c, texts[i%len(texts)], 600)) {
					out := res.Choices[0]
					what := fmt.Sprintf("schema %d seed %d", i, seed)
					finished(t, what, out)
					if err := llmcheck.ValidJSON(sch, out.Text); err != nil {
						t.Fatalf("%s: %v\n%q", what, err, out.Text)
					}
				}
			}
		})
	}
}

func TestStructuredChoiceRegexAndJSONObject(t *testing.T) {
	choices := []string{"yes", "no", "not sure", "Nö — vielleicht", "東京"}
	patterns := []string{
		`[a-z]{3,8}-\d{2,4}`,
		`(cat|dog|bird)s? (are|is) (cute|loud)\.`,
		`\d{4}-\d{2}-\d{2}T\d{2}:\d{2}`,
		`[A-Z][a-z]{1,9}( [A-Z][a-z]{0,5}){0,2}`,
		`[^a-z\n]{1,6}x`,
	}
	for _, m := range structuredModels {
		t.Run(m.name, func(t *testing.T) {
			e := openStructured(t, m, ModelConfig{})
			c := compile(t, e, constrain.Spec{Kind: constrain.KindChoice, Choice: choices})
			for seed, res := range concurrently(t, e, seeded(e, c, texts[0], 64)) {
				out := res.Choices[0]
				finished(t, "choice", out)
				if !slices.Contains(choices, out.Text) {
					t.Fatalf("seed %d: %q is not a choice", seed, out.Text)
				}
			}
			for _, p := range patterns {
				oracle := regexp.MustCompile(`^(?:` + p + `)$`)
				c := compile(t, e, constrain.Spec{Kind: constrain.KindRegex, Regex: p})
				for seed, res := range concurrently(t, e, seeded(e, c, texts[1], 200)) {
					out := res.Choices[0]
					finished(t, p, out)
					if !oracle.MatchString(out.Text) {
						t.Fatalf("%s seed %d: %q does not match", p, seed, out.Text)
					}
				}
			}
			c = compile(t, e, constrain.Spec{Kind: constrain.KindJSONObject})
			for seed, res := range concurrently(t, e, seeded(e, c, texts[2], 800)) {
				out := res.Choices[0]
				finished(t, "json_object", out)
				var v map[string]any
				if err := json.Unmarshal([]byte(out.Text), &v); err != nil {
					t.Fatalf("seed %d: not a JSON object: %v\n%q", seed, err, out.Text)
				}
			}
		})
	}
}

// nestedSchema is the nested object the scheduling tests constrain to.
const nestedSchema = `{"type":"object","properties":{"id":{"type":"integer"},"name":{"type":"string","maxLength":8},"address":{"type":"object","properties":{"city":{"type":"string","maxLength":6},"zip":{"type":"string","pattern":"^[0-9]{5}$"}},"required":["city","zip"]},"tags":{"type":"array","items":{"enum":["a","b","c"]},"maxItems":3},"active":{"type":"boolean"}},"required":["id","name","address","active"]}`

func TestStructuredSameAloneAndAmongSeven(t *testing.T) {
	e := openStructured(t, structuredModels[0], ModelConfig{})
	sch := llmcheck.SchemaValidator(t, nestedSchema)
	c := compile(t, e, constrain.Spec{Kind: constrain.KindJSONSchema, Schema: []byte(nestedSchema)})
	target := Request{Prompt: prompt(e, texts[0]), MaxTokens: 400, Temperature: ptr(1.0), Seed: ptr(int64(42)),
		Constraint: c, Logprobs: true, TopLogprobs: 2}
	alone := run(t, e, target)
	finished(t, "alone", alone.Choices[0])
	if err := llmcheck.ValidJSON(sch, alone.Choices[0].Text); err != nil {
		t.Fatalf("%v\n%q", err, alone.Choices[0].Text)
	}
	reqs := []Request{target}
	for i, text := range texts[1:] {
		reqs = append(reqs, Request{Prompt: prompt(e, text), MaxTokens: 64, Temperature: ptr(1.0),
			Seed: ptr(int64(100 + i)), IgnoreEOS: true})
	}
	before := e.Stats()
	together := concurrently(t, e, reqs)
	after := e.Stats()
	if err := sameChoice(alone.Choices[0], together[0].Choices[0]); err != nil {
		t.Fatalf("constrained alone vs among 7 unconstrained: %v", err)
	}
	if rows, steps := after.Rows-before.Rows, after.Steps-before.Steps; rows < 2*steps {
		t.Errorf("%d rows in %d steps: the requests were hardly batched", rows, steps)
	}
	// The unconstrained neighbours were not masked: 64 tokens each, and
	// not JSON.
	for i, res := range together[1:] {
		if n := len(res.Choices[0].TokenIDs); n != 64 {
			t.Errorf("unconstrained request %d: %d tokens", i, n)
		}
		if json.Valid([]byte(res.Choices[0].Text)) {
			t.Errorf("unconstrained request %d wrote JSON: %q", i, res.Choices[0].Text)
		}
	}
}

func TestStructuredChoicesFollowTheirOwnMatcher(t *testing.T) {
	e := openStructured(t, structuredModels[1], ModelConfig{})
	sch := llmcheck.SchemaValidator(t, nestedSchema)
	c := compile(t, e, constrain.Spec{Kind: constrain.KindJSONSchema, Schema: []byte(nestedSchema)})
	req := Request{Prompt: prompt(e, texts[3]), N: 3, MaxTokens: 400, Temperature: ptr(1.0), Seed: ptr(int64(5)), Constraint: c}
	res := run(t, e, req)
	if len(res.Choices) != 3 {
		t.Fatalf("%d choices", len(res.Choices))
	}
	for i, ch := range res.Choices {
		finished(t, fmt.Sprintf("choice %d", i), ch)
		if err := llmcheck.ValidJSON(sch, ch.Text); err != nil {
			t.Fatalf("choice %d: %v\n%q", i, err, ch.Text)
		}
		// Choice i samples with seed+i: the same as a request of its own.
		one := req
		one.N, one.Seed = 1, ptr(int64(5+i))
		if err := sameChoice(run(t, e, one).Choices[0], ch); err != nil {
			t.Errorf("choice %d vs seed %d alone: %v", i, 5+i, err)
		}
	}
}

func TestStructuredPreemptedChoiceKeepsItsConstraint(t *testing.T) {
	// 5 blocks for two sequences that each grow to 4 (the first to need
	// its fourth finds the other holding at least two): Qwen3 writes digits
	// one token each, so \d{50} is 50 tokens, and the choice ends on the
	// last digit, the output complete, without an end-of-sequence token.
	e := openStructured(t, structuredModels[0], ModelConfig{KVCacheBytes: 5 * structuredKVBlock, MaxModelLen: 64})
	const digits = 50
	c := compile(t, e, constrain.Spec{Kind: constrain.KindRegex, Regex: fmt.Sprintf(`\d{%d}`, digits)})
	oracle := regexp.MustCompile(fmt.Sprintf(`^\d{%d}$`, digits))
	req := func(text string, priority int) Request {
		p := prompt(e, text)
		return Request{Prompt: p, MaxTokens: 64 - len(p), Temperature: ptr(1.0), Seed: ptr(int64(priority)),
			Priority: priority, Constraint: c, Logprobs: true}
	}
	low, high := req(texts[0], 10), req(texts[6], 0)
	aloneLow, aloneHigh := run(t, e, low), run(t, e, high)
	before := e.Stats().Preemptions
	gLow, err := e.Generate(context.Background(), low)
	if err != nil {
		t.Fatal(err)
	}
	gHigh, err := e.Generate(context.Background(), high)
	if err != nil {
		t.Fatal(err)
	}
	resLow, err := gLow.Wait()
	if err != nil {
		t.Fatal(err)
	}
	resHigh, err := gHigh.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if e.Stats().Preemptions == before {
		t.Fatal("no preemption")
	}
	for _, tc := range []struct {
		name        string
		alone, load Choice
	}{{"preempted", aloneLow.Choices[0], resLow.Choices[0]}, {"high priority", aloneHigh.Choices[0], resHigh.Choices[0]}} {
		if err := sameChoice(tc.alone, tc.load); err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
		ch := tc.load
		if !oracle.MatchString(ch.Text) || len(ch.TokenIDs) != digits || ch.FinishReason != FinishStop || ch.StopReason != nil {
			t.Errorf("%s: %q in %d tokens, finish %q (%v)", tc.name, ch.Text, len(ch.TokenIDs), ch.FinishReason, ch.StopReason)
		}
	}
}

// reasoningBias raises </think>'s logit during the reasoning.
const reasoningBias = 17

func TestStructuredAnswerAfterReasoning(t *testing.T) {
	e := openStructured(t, structuredModels[0], ModelConfig{})
	end, ok := e.ReasoningEnd()
	if !ok || e.Tokenizer().Decode([]int{end}, tokenizer.DecodeOptions{}) != "</think>" {
		t.Fatalf("reasoning end %d, %v", end, ok)
	}
	// Strings would let </think> in as text; this answer has none.
	schema := `{"type":"object","properties":{"answer":{"type":"integer"},"unit":{"enum":["c","f"]},"sure":{"type":"boolean"}},"required":["answer","unit","sure"]}`
	sch := llmcheck.SchemaValidator(t, schema)
	c := compile(t, e, constrain.Spec{Kind: constrain.KindJSONSchema, Schema: []byte(schema)})
	start, ok := e.Tokenizer().TokenToID("<think>")
	if !ok {
		t.Fatal("no <think>")
	}
	// reasoned runs the seeded requests and checks each reasons, then
	// answers valid JSON after </think>; with free, that some reasoning
	// is text the constraint would not allow.
	reasoned := func(what string, reqs []Request, free bool) []*Result {
		t.Helper()
		unconstrained := 0
		results := concurrently(t, e, reqs)
		for seed, res := range results {
			out := res.Choices[0]
			finished(t, what, out)
			reasoning, answer, ok := strings.Cut(out.Text, "</think>")
			if !ok {
				t.Fatalf("%s seed %d: no </think> in %q", what, seed, out.Text)
			}
			if err := llmcheck.ValidJSON(sch, answer); err != nil {
				t.Fatalf("%s seed %d: answer %v\n%q", what, seed, err, out.Text)
			}
			if t := strings.TrimSpace(strings.TrimPrefix(reasoning, "<think>")); t != "" && t[0] != '{' {
				unconstrained++
			}
		}
		if free && unconstrained == 0 {
			t.Errorf("%s: every reasoning looked like the constrained answer: the constraint did not wait", what)
		}
		return results
	}
	// The prompt left the reasoning open: it runs from the first token.
	open := seeded(e, c, texts[4], 600)
	for i := range open {
		open[i].ConstrainAfterReasoning, open[i].ReasoningOpen = true, true
		// Random weights rarely pick </think>; a bias makes the reasoning
		// short but not empty.
		open[i].LogitBias = map[int]float64{end: reasoningBias}
	}
	reasoned("open reasoning", open, true)
	// The prompt left none open: a first token <think> opens it (biases
	// make the random model write it, then close it at once) ...
	opened := seeded(e, c, texts[4], 600)
	for i := range opened {
		opened[i].ConstrainAfterReasoning = true
		opened[i].LogitBias = map[int]float64{start: 40, end: 80}
	}
	for i, res := range reasoned("reasoning the model opened", opened, false) {
		if !strings.HasPrefix(res.Choices[0].Text, "<think>") {
			t.Fatalf("seed %d: %q does not open with <think>", i, res.Choices[0].Text)
		}
	}
	// ... and any other first token is the constrained answer's, which
	// </think> cannot interrupt.
	closed := seeded(e, c, texts[4], 400)
	for i := range closed {
		closed[i].ConstrainAfterReasoning = true
		closed[i].LogitBias = map[int]float64{end: reasoningBias}
	}
	for seed, res := range concurrently(t, e, closed) {
		if err := llmcheck.ValidJSON(sch, res.Choices[0].Text); err != nil {
			t.Fatalf("seed %d: no reasoning opened, yet %v\n%q", seed, err, res.Choices[0].Text)
		}
	}
	// Without the option the constraint applies from the first token.
	res := run(t, e, Request{Prompt: closed[0].Prompt, MaxTokens: 400, Temperature: ptr(1.0), Seed: ptr(int64(1)),
		Constraint: c, LogitBias: map[int]float64{end: reasoningBias}})
	if err := llmcheck.ValidJSON(sch, res.Choices[0].Text); err != nil {
		t.Fatalf("%v\n%q", err, res.Choices[0].Text)
	}
}

func TestStructuredCompileErrorsAndCache(t *testing.T) {
	e := openStructured(t, structuredModels[2], ModelConfig{})
	for keyword, schema := range map[string]string{
		"uniqueItems": `{"type":"array","uniqueItems":true}`,
		"not":         `{"type":"object","properties":{"a":{"not":{"type":"string"}}}}`,
	} {
		_, err := e.Compile(context.Background(), constrain.Spec{Kind: constrain.KindJSONSchema, Schema: []byte(schema)})
		if !errors.Is(err, ErrInvalidRequest) || !errors.Is(err, constrain.ErrUnsupported) ||
			!strings.Contains(err.Error(), `"`+keyword+`"`) {
			t.Errorf("%s: got %v, want a request error naming the keyword", keyword, err)
		}
	}
	if _, err := e.Compile(context.Background(), constrain.Spec{Kind: constrain.KindRegex, Regex: "a(b"}); !errors.Is(err, ErrInvalidRequest) || !errors.Is(err, constrain.ErrInvalid) {
		t.Errorf("bad regex: got %v", err)
	}
	// The same schema, however spaced, is compiled once.
	cached := e.Compiler().Cached()
	a := compile(t, e, constrain.Spec{Kind: constrain.KindJSONSchema, Schema: []byte(nestedSchema)})
	b := compile(t, e, constrain.Spec{Kind: constrain.KindJSONSchema, Schema: []byte(" \n" + strings.ReplaceAll(nestedSchema, ",", ", "))})
	if a != b || e.Compiler().Cached() != cached+1 {
		t.Errorf("recompiled: %p %p, %d cached", a, b, e.Compiler().Cached())
	}
	// A model without </think> cannot hold a constraint back for it.
	if _, ok := e.ReasoningEnd(); ok {
		t.Fatal("the Llama 2 vocabulary has a reasoning end")
	}
	_, err := e.Generate(context.Background(), Request{Prompt: prompt(e, "Hi"), Constraint: a, ConstrainAfterReasoning: true})
	if !errors.Is(err, ErrInvalidRequest) || Param(err) != "structured_outputs" {
		t.Errorf("got %v", err)
	}
}
