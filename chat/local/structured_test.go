package local

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/weftlabs/weft/internal/llm/constrain"
	"github.com/weftlabs/weft/internal/llm/llmtest"
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

// schemaValidator compiles schema with the independent validator.
func schemaValidator(t testing.TB, schema string) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(schema))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource("schema.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("schema.json")
	if err != nil {
		t.Fatal(err)
	}
	return sch
}

// validJSON checks that text parses and validates under sch.
func validJSON(sch *jsonschema.Schema, text string) error {
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(text))
	if err != nil {
		return fmt.Errorf("does not parse: %v", err)
	}
	if err := sch.Validate(inst); err != nil {
		return fmt.Errorf("does not validate: %v", err)
	}
	return nil
}

func compile(t testing.TB, e *Engine, spec constrain.Spec) *constrain.Constraint {
	t.Helper()
	c, err := e.Compile(spec)
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
				sch := schemaValidator(t, schema)
				c := compile(t, e, constrain.Spec{Kind: constrain.KindJSONSchema, Schema: []byte(schema)})
				for seed, res := range concurrently(t, e, seeded(e, c, texts[i%len(texts)], 600)) {
					out := res.Choices[0]
					what := fmt.Sprintf("schema %d seed %d", i, seed)
					finished(t, what, out)
					if err := validJSON(sch, out.Text); err != nil {
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
