// Package llmcheck holds the answers that serving tests compare against,
// computed without the code under test: a greedy decode straight from the
// model's forward pass, and JSON Schema validation by an independent library.
package llmcheck

import (
	"fmt"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/weftlabs/weft/internal/llm/lora"
	"github.com/weftlabs/weft/internal/llm/model"
)

// Greedy decodes n tokens greedily from the model in modelDir with the
// adapter in adapterDir ("" for none) applied, one sequence on one thread:
// what an engine serving that model (or checkpoint) must answer.
func Greedy(t testing.TB, modelDir, adapterDir string, prompt []int, n int) []int {
	t.Helper()
	m, err := model.Load(modelDir, model.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	var a *lora.Adapter
	if adapterDir != "" {
		if a, err = lora.Load(adapterDir); err != nil {
			t.Fatal(err)
		}
	}
	cache := model.NewContiguousCache(m.Config, len(prompt)+n)
	tokens := make([]int32, 0, len(prompt)+n)
	for _, id := range prompt {
		tokens = append(tokens, int32(id))
	}
	var out []int
	for start := 0; len(out) < n; start = len(tokens) - 1 {
		logits, err := m.Forward(&model.Batch{Seqs: []model.Sequence{{ID: 1, Tokens: tokens[start:], Start: start, Adapter: a}}}, cache)
		if err != nil {
			t.Fatal(err)
		}
		next := 0
		for i, v := range logits[0] {
			if v > logits[0][next] {
				next = i
			}
		}
		out = append(out, next)
		tokens = append(tokens, int32(next))
	}
	return out
}

// SchemaValidator compiles schema (draft 2020-12) with the independent
// validator library.
func SchemaValidator(t testing.TB, schema string) *jsonschema.Schema {
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

// ValidJSON says why text does not parse as JSON or does not validate under
// sch, or nil.
func ValidJSON(sch *jsonschema.Schema, text string) error {
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(text))
	if err != nil {
		return fmt.Errorf("does not parse: %v", err)
	}
	if err := sch.Validate(inst); err != nil {
		return fmt.Errorf("does not validate: %v", err)
	}
	return nil
}
