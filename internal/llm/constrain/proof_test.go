package constrain

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/weftlabs/weft/internal/llm/tokenizer"
)

// The proof: tokens drawn uniformly from the mask (a random model at
// temperature 1) always give output that an independent oracle accepts —
// a JSON Schema validator library, Go's regexp, the list of choices.

const seedsPerCase = 12

var proofTokenizers = []string{"qwen3", "llama3"}

// proofSchemas are the schemas every seed must satisfy. Strings carry a
// maxLength so that a random walk ends: a uniformly random token closes a
// string rarely.
var proofSchemas = []string{
	`{"type":"object","properties":{"name":{"type":"string","maxLength":12},"age":{"type":"integer"},"score":{"type":"number"},"ok":{"type":"boolean"},"none":{"type":"null"}},"required":["name","age","score","ok","none"]}`,
	`{"type":"object","properties":{"city":{"type":"string","minLength":2,"maxLength":8},"unit":{"enum":["celsius","fahrenheit"]},"days":{"type":"integer"}},"required":["city"],"additionalProperties":false}`,
	`{"type":"object","properties":{"tags":{"type":"array","items":{"type":"string","maxLength":5},"minItems":2,"maxItems":4},"pair":{"type":"array","prefixItems":[{"type":"integer"},{"const":"x"}],"items":false,"minItems":2}},"required":["tags","pair"]}`,
	`{"type":"object","properties":{"user":{"type":"object","properties":{"id":{"type":"string","pattern":"^[a-z]{2}-[0-9]{3}$"},"address":{"type":"object","properties":{"street":{"type":"string","maxLength":10},"zip":{"type":"string","pattern":"^\\d{5}$"}},"required":["street","zip"]}},"required":["id","address"]},"kind":{"const":"person"}},"required":["user","kind"]}`,
	`{"$defs":{"node":{"type":"object","properties":{"value":{"type":"integer"},"children":{"type":"array","items":{"$ref":"#/$defs/node"},"maxItems":2}},"required":["value"]}},"$ref":"#/$defs/node"}`,
	`{"type":"object","properties":{"id":{"type":"integer"}},"required":["id"],"additionalProperties":{"type":"string","maxLength":4}}`,
	`{"anyOf":[{"type":"string","maxLength":6},{"type":"integer"},{"type":"array","items":{"type":["boolean","null"]},"maxItems":3}]}`,
	`{"type":"object","properties":{"q":{"type":"string","pattern":"^[a-f]{0,3}ab+c.?$"},"e":{"enum":[1,"two",[3],{"four":4},null]}},"required":["q","e"]}`,
}

func validator(t *testing.T, schema string) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(schema))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat() // formats are checked, not only annotations
	if err := c.AddResource("schema.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("schema.json")
	if err != nil {
		t.Fatal(err)
	}
	return sch
}

// generate runs one seed under spec and returns the decoded output, failing
// if the walk does not end.
func generate(t *testing.T, f *fixture, c *Compiler, spec Spec, seed uint64) string {
	t.Helper()
	con, err := c.Compile(spec)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	ids, ended := sampleUniform(t, f, con.NewMatcher(), rng, 3000)
	out := f.tok.Decode(ids, tokenizer.DecodeOptions{KeepTokenizationSpaces: true})
	if !ended {
		t.Fatalf("seed %d: no end after 3000 tokens: %.300q", seed, out)
	}
	return out
}

func TestJSONSchemaOutputsValidate(t *testing.T) {
	for _, name := range proofTokenizers {
		f := loadFixture(t, name)
		// Strings the schema leaves unbounded (member names under
		// additionalProperties) get a bound, as a random model needs.
		c := NewCompiler(f.vocab, Config{MaxStringLength: 16})
		for _, schema := range proofSchemas {
			validOutputs(t, f, c, schema, seedsPerCase)
		}
	}
}

// validOutputs draws seeds outputs under schema and fails unless each
// parses and validates; it returns the outputs.
func validOutputs(t *testing.T, f *fixture, c *Compiler, schema string, seeds int) []string {
	t.Helper()
	sch := validator(t, schema)
	var outs []string
	for seed := range uint64(seeds) {
		out := generate(t, f, c, Spec{Kind: KindJSONSchema, Schema: []byte(schema)}, seed)
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(out))
		if err != nil {
			t.Fatalf("%s seed %d: output does not parse: %v\n%s\n%q", f.name, seed, err, schema, out)
		}
		if err := sch.Validate(inst); err != nil {
			t.Fatalf("%s seed %d: output does not validate: %v\n%s\n%q", f.name, seed, err, schema, out)
		}
		outs = append(outs, out)
	}
	return outs
}

func TestJSONObjectOutputsParse(t *testing.T) {
	for _, name := range proofTokenizers {
		f := loadFixture(t, name)
		c := NewCompiler(f.vocab, Config{MaxStringLength: 8, MaxNesting: 6})
		for seed := range uint64(seedsPerCase) {
			out := generate(t, f, c, Spec{Kind: KindJSONObject}, seed)
			var v map[string]any
			if err := json.Unmarshal([]byte(out), &v); err != nil {
				t.Fatalf("%s seed %d: not a JSON object: %v\n%q", name, seed, err, out)
			}
		}
	}
}

func TestChoiceOutputsAreChoices(t *testing.T) {
	choices := []string{"yes", "no", "not sure", "Nö — vielleicht", "🙂"}
	for _, name := range proofTokenizers {
		f := loadFixture(t, name)
		c := NewCompiler(f.vocab, Config{})
		seen := map[string]bool{}
		for seed := range uint64(4 * seedsPerCase) {
			out := generate(t, f, c, Spec{Kind: KindChoice, Choice: choices}, seed)
			if !slices.Contains(choices, out) {
				t.Fatalf("%s seed %d: %q is not a choice", name, seed, out)
			}
			seen[out] = true
		}
		if len(seen) < 3 {
			t.Errorf("%s: only %d distinct choices drawn", name, len(seen))
		}
	}
}

func TestRegexOutputsMatch(t *testing.T) {
	patterns := []string{
		`[a-z]{3,8}-\d{2,4}`,
		`(cat|dog|bird)s? (are|is) (cute|loud)\.`,
		`\d{4}-\d{2}-\d{2}T\d{2}:\d{2}`,
		`[A-Z][a-z]{1,9}( [A-Z][a-z]{0,5}){0,2}`,
		`(?i)hello, wörld!`,
		`[^a-z\n]{1,6}x`,
		`(ab|cd)*e`,
	}
	for _, name := range proofTokenizers {
		f := loadFixture(t, name)
		c := NewCompiler(f.vocab, Config{})
		for _, p := range patterns {
			oracle := regexp.MustCompile(`^(?:` + p + `)$`)
			for seed := range uint64(seedsPerCase) {
				out := generate(t, f, c, Spec{Kind: KindRegex, Regex: p}, seed)
				if !oracle.MatchString(out) {
					t.Fatalf("%s %q seed %d: %q does not match", name, p, seed, out)
				}
			}
		}
	}
}

func TestUnsupportedKeywordIsNamed(t *testing.T) {
	f := loadFixture(t, "qwen3")
	c := NewCompiler(f.vocab, Config{})
	for keyword, schema := range map[string]string{
		"multipleOf":        `{"type":"object","properties":{"n":{"type":"number","multipleOf":0.5}}}`,
		"format":            `{"type":"string","format":"duration"}`,
		"allOf":             `{"allOf":[{"type":"string","pattern":"a"},{"type":"string","pattern":"b"}]}`,
		"pattern":           `{"type":"string","pattern":"a","format":"email"}`,
		"not":               `{"not":{"type":"string"}}`,
		"patternProperties": `{"type":"object","patternProperties":{"^x":{}}}`,
		"uniqueItems":       `{"type":"array","uniqueItems":true}`,
		"$ref":              `{"$ref":"https://example.com/schema.json"}`,
	} {
		_, err := c.Compile(Spec{Kind: KindJSONSchema, Schema: []byte(schema)})
		if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), `"`+keyword+`"`) {
			t.Errorf("%s: got %v, want ErrUnsupported naming it", keyword, err)
		}
	}
	for what, spec := range map[string]Spec{
		"not JSON":     {Kind: KindJSONSchema, Schema: []byte(`{"type":`)},
		"bad type":     {Kind: KindJSONSchema, Schema: []byte(`{"type":"text"}`)},
		"bad regex":    {Kind: KindRegex, Regex: `a(b`},
		"empty choice": {Kind: KindChoice},
		"min > max":    {Kind: KindJSONSchema, Schema: []byte(`{"type":"string","minLength":3,"maxLength":2}`)},
	} {
		if _, err := c.Compile(spec); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: got %v, want ErrInvalid", what, err)
		}
	}
}
