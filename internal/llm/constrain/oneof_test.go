package constrain

import (
	"errors"
	"strings"
	"testing"
)

// oneOf is taken when its branches are disjoint — and then every sampled
// output validates under oneOf, which a value matching two branches would
// fail — and refused, naming it, when they may overlap.
func TestOneOfExactOrRefused(t *testing.T) {
	disjoint := []string{
		// By type.
		`{"oneOf":[{"type":"string","maxLength":4},{"type":"integer"},{"type":"null"}]}`,
		// By const and enum values.
		`{"oneOf":[{"enum":["a","b",1]},{"const":"c"},{"enum":[2,true]}]}`,
		// By a discriminating required property, through $ref.
		`{"$defs":{"cat":{"type":"object","properties":{"kind":{"const":"cat"},"lives":{"type":"integer"}},"required":["kind","lives"]}},` +
			`"oneOf":[{"$ref":"#/$defs/cat"},{"type":"object","properties":{"kind":{"enum":["dog","wolf"]},"name":{"type":"string","maxLength":5}},"required":["kind"]}]}`,
	}
	for _, name := range proofTokenizers {
		f := loadFixture(t, name)
		c := NewCompiler(f.vocab, Config{MaxStringLength: 8})
		for _, schema := range disjoint {
			validOutputs(t, f, c, schema, seedsPerCase)
		}
	}
	f := loadFixture(t, "qwen3")
	c := NewCompiler(f.vocab, Config{})
	for what, schema := range map[string]string{
		"integer within number":   `{"oneOf":[{"type":"integer"},{"type":"number"}]}`,
		"shared enum value":       `{"oneOf":[{"enum":["a","b"]},{"enum":["b","c"]}]}`,
		"equal numbers":           `{"oneOf":[{"const":1},{"const":1.0}]}`,
		"objects without a tag":   `{"oneOf":[{"type":"object","properties":{"a":{"type":"string"}}},{"type":"object","properties":{"b":{"type":"string"}}}]}`,
		"tag not required":        `{"oneOf":[{"type":"object","properties":{"k":{"const":"x"}}},{"type":"object","properties":{"k":{"const":"y"}}}]}`,
		"any value":               `{"oneOf":[true,{"type":"string"}]}`,
		"string beside its const": `{"oneOf":[{"type":"string"},{"const":"s"}]}`,
	} {
		_, err := c.Compile(Spec{Kind: KindJSONSchema, Schema: []byte(schema)})
		if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), `"oneOf"`) {
			t.Errorf("%s: got %v, want ErrUnsupported naming oneOf", what, err)
		}
	}
}
