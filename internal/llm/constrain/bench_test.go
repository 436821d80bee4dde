package constrain

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// fiftyProperties is a schema of 50 properties of every kind.
func fiftyProperties() string {
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{`)
	kinds := []string{`{"type":"string","maxLength":32}`, `{"type":"integer"}`, `{"type":"number"}`,
		`{"type":"boolean"}`, `{"enum":["red","green","blue"]}`, `{"type":"array","items":{"type":"string"},"maxItems":5}`,
		`{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"}},"required":["a"]}`,
		`{"type":"string","pattern":"^[A-Z]{2}[0-9]{4}$"}`}
	var required []string
	for i := range 50 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"field_%d":%s`, i, kinds[i%len(kinds)])
		if i%2 == 0 {
			required = append(required, fmt.Sprintf(`"field_%d"`, i))
		}
	}
	b.WriteString(`},"required":[` + strings.Join(required, ",") + `]}`)
	return b.String()
}

// BenchmarkCompile50Properties is the time to compile a 50-property schema
// without the cache (a new Compiler each time) up to its first mask.
func BenchmarkCompile50Properties(b *testing.B) {
	f := loadFixture(b, "qwen3")
	schema := []byte(fiftyProperties())
	mask := make([]uint64, f.vocab.MaskWords())
	for b.Loop() {
		c, err := NewCompiler(f.vocab, Config{}).Compile(Spec{Kind: KindJSONSchema, Schema: schema})
		if err != nil {
			b.Fatal(err)
		}
		c.NewMatcher().Mask(mask)
	}
}

// BenchmarkMask is the cost of one step's mask on the Qwen3 vocabulary
// while decoding under a nested schema: "cold" computes every mask afresh
// (a new compile per output), "warm" reuses the masks of states already
// seen, as repeated requests with one schema do.
func BenchmarkMask(b *testing.B) {
	f := loadFixture(b, "qwen3")
	schema := []byte(`{"type":"object","properties":{"user":{"type":"object","properties":{"name":{"type":"string","maxLength":16},"age":{"type":"integer"},"emails":{"type":"array","items":{"type":"string","maxLength":12},"maxItems":3}},"required":["name","age"]},"tags":{"type":"array","items":{"enum":["x","y","z"]},"maxItems":4},"ok":{"type":"boolean"}},"required":["user","ok"]}`)
	for _, warm := range []bool{false, true} {
		name := "cold"
		if warm {
			name = "warm"
		}
		b.Run(name, func(b *testing.B) {
			compiler := NewCompiler(f.vocab, Config{})
			mask := make([]uint64, f.vocab.MaskWords())
			rng := rand.New(rand.NewPCG(1, 1))
			var m *Matcher
			restart := func() {
				if !warm {
					compiler = NewCompiler(f.vocab, Config{})
				}
				c, err := compiler.Compile(Spec{Kind: KindJSONSchema, Schema: schema})
				if err != nil {
					b.Fatal(err)
				}
				m = c.NewMatcher()
			}
			restart()
			var allowed []int
			steps := 0
			for b.Loop() {
				m.Mask(mask)
				steps++
				b.StopTimer()
				allowed = allowed[:0]
				for id := range f.vocab.Size() {
					if Allowed(mask, id) {
						allowed = append(allowed, id)
					}
				}
				if err := m.Advance(allowed[rng.IntN(len(allowed))]); err != nil {
					b.Fatal(err)
				}
				if m.Ended() {
					restart()
				}
				b.StartTimer()
			}
		})
	}
}

// BenchmarkCompileHostilePattern is the cost of refusing the 16-pattern
// schema of hostilePatternSchema (bytes and time per refusal), beside a
// same-run baseline: compiling the 50-property schema.
func BenchmarkCompileHostilePattern(b *testing.B) {
	vocab := NewVocabularyFromBytes([][]byte{[]byte("a"), []byte(`"`)}, []int{1})
	for _, tc := range []struct {
		name, schema string
		refused      bool
	}{{"hostile", hostilePatternSchema(16), true}, {"baseline-50-properties", fiftyProperties(), false}} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_, err := NewCompiler(vocab, Config{}).Compile(Spec{Kind: KindJSONSchema, Schema: []byte(tc.schema)})
				if refused := errors.Is(err, ErrTooComplex); refused != tc.refused {
					b.Fatal(err)
				}
			}
		})
	}
}
