package constrain

import (
	"errors"
	"fmt"
	"math/big"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// Numeric ranges, formats, patterns with lengths and merged allOf: every
// sampled output validates (the validator asserts formats), and where the
// language is small enough it is checked exactly, text by text, against an
// arithmetic or library oracle.

// accepts reports whether text is a whole output of c.
func accepts(c *Constraint, text string) bool {
	d := c.dfa
	d.mu.Lock()
	defer d.mu.Unlock()
	s := d.walk(d.start, []byte(text))
	return s != transDead && d.states[s].accept
}

func compileSchema(t *testing.T, c *Compiler, schema string) *Constraint {
	t.Helper()
	con, err := c.Compile(Spec{Kind: KindJSONSchema, Schema: []byte(schema)})
	if err != nil {
		t.Fatalf("%s: %v", schema, err)
	}
	return con
}

func TestIntegerRangesAreExact(t *testing.T) {
	f := loadFixture(t, "qwen3")
	c := NewCompiler(f.vocab, Config{})
	type intCase struct {
		schema string
		in     func(n int) bool
	}
	cases := []intCase{
		{`{"type":"integer","minimum":-37,"maximum":1234}`, func(n int) bool { return n >= -37 && n <= 1234 }},
		{`{"type":"integer","exclusiveMinimum":5.5,"exclusiveMaximum":100}`, func(n int) bool { return n >= 6 && n <= 99 }},
		{`{"type":"integer","minimum":2.1,"maximum":9.9}`, func(n int) bool { return n >= 3 && n <= 9 }},
		{`{"type":"integer","minimum":999}`, func(n int) bool { return n >= 999 }},
		{`{"type":"integer","maximum":-5}`, func(n int) bool { return n <= -5 }},
		{`{"type":"integer","minimum":-100,"maximum":100,"multipleOf":7}`, func(n int) bool { return n >= -100 && n <= 100 && n%7 == 0 }},
		{`{"type":"integer","multipleOf":1.5}`, func(n int) bool { return n%3 == 0 }},
		{`{"type":"integer","minimum":0,"exclusiveMinimum":0,"maximum":10}`, func(n int) bool { return n > 0 && n <= 10 }},
	}
	rng := rand.New(rand.NewPCG(7, 7))
	for range 30 {
		lo := rng.IntN(10000) - 5000
		hi := lo + rng.IntN(6000)
		cases = append(cases, intCase{fmt.Sprintf(`{"type":"integer","minimum":%d,"maximum":%d}`, lo, hi),
			func(n int) bool { return n >= lo && n <= hi }})
	}
	for _, tc := range cases {
		con := compileSchema(t, c, tc.schema)
		for n := -12000; n <= 12000; n++ {
			if got := accepts(con, strconv.Itoa(n)); got != tc.in(n) {
				t.Fatalf("%s: %d accepted %v, want %v", tc.schema, n, got, !got)
			}
		}
		for _, text := range []string{"-0", "01", "-01", "5.0", "1e2", "+5", ""} {
			if accepts(con, text) {
				t.Fatalf("%s: %q accepted", tc.schema, text)
			}
		}
	}
	for what, schema := range map[string]string{
		"empty range":       `{"type":"integer","minimum":5,"maximum":4}`,
		"empty open range":  `{"type":"integer","exclusiveMinimum":4,"exclusiveMaximum":5}`,
		"no multiple":       `{"type":"integer","minimum":1,"maximum":6,"multipleOf":7}`,
		"multipleOf zero":   `{"type":"integer","multipleOf":0}`,
		"minimum not a num": `{"type":"integer","minimum":"3"}`,
	} {
		if _, err := c.Compile(Spec{Kind: KindJSONSchema, Schema: []byte(schema)}); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: got %v, want ErrInvalid", what, err)
		}
	}
	for _, schema := range []string{`{"type":"integer","multipleOf":101}`, `{"type":"integer","minimum":1e70}`} {
		_, err := c.Compile(Spec{Kind: KindJSONSchema, Schema: []byte(schema)})
		if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), `"multipleOf"`) && !strings.Contains(err.Error(), `"minimum"`) {
			t.Errorf("%s: got %v, want ErrUnsupported naming the keyword", schema, err)
		}
	}
}

func TestNumberRangesAreSound(t *testing.T) {
	f := loadFixture(t, "qwen3")
	c := NewCompiler(f.vocab, Config{FractionDigits: 3})
	rat := func(s string) *big.Rat { r, _ := new(big.Rat).SetString(s); return r }
	for _, tc := range []struct {
		schema         string
		lo, hi         string
		loExcl, hiExcl bool
		must           []string // written as the compiler writes them, in range
	}{
		{`{"type":"number","minimum":-2.5,"maximum":3.75}`, "-2.5", "3.75", false, false, []string{"-2", "3", "0.5", "2.999", "-1.5", "-0.25"}},
		{`{"type":"number","exclusiveMinimum":0,"exclusiveMaximum":1}`, "0", "1", true, true, []string{"0.5", "0.001"}},
		{`{"type":"number","exclusiveMinimum":-3,"maximum":0}`, "-3", "0", true, false, []string{"0", "-2", "-2.5", "-0.5"}},
		{`{"type":"number","minimum":10,"exclusiveMaximum":12}`, "10", "12", false, true, []string{"10", "11", "10.5", "11.999"}},
	} {
		con := compileSchema(t, c, tc.schema)
		lo, hi := rat(tc.lo), rat(tc.hi)
		in := func(x *big.Rat) bool {
			a, b := x.Cmp(lo), x.Cmp(hi)
			return (a > 0 || a == 0 && !tc.loExcl) && (b < 0 || b == 0 && !tc.hiExcl)
		}
		// Every text on a grid of thousandths, in both spellings.
		for k := -6000; k <= 15000; k++ {
			x := new(big.Rat).SetFrac64(int64(k), 1000)
			for _, text := range []string{x.FloatString(3), strings.TrimRight(strings.TrimRight(x.FloatString(3), "0"), ".")} {
				if accepts(con, text) && !in(rat(text)) {
					t.Fatalf("%s: %s accepted but out of range", tc.schema, text)
				}
			}
		}
		for _, text := range tc.must {
			if !accepts(con, text) {
				t.Fatalf("%s: %s refused", tc.schema, text)
			}
		}
	}
	if _, err := c.Compile(Spec{Kind: KindJSONSchema, Schema: []byte(`{"type":"number","minimum":0.2,"maximum":0.4}`)}); !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), `"minimum"`) {
		t.Errorf("a range within one unit interval: got %v, want ErrUnsupported naming minimum", err)
	}
}

func TestNumberRangeOutputsValidate(t *testing.T) {
	schema := `{"type":"object","properties":{` +
		`"a":{"type":"integer","minimum":-37,"maximum":1234},` +
		`"b":{"type":"integer","exclusiveMinimum":0,"multipleOf":5},` +
		`"c":{"type":"number","minimum":-2.5,"maximum":3.75},` +
		`"d":{"type":"number","exclusiveMinimum":0,"exclusiveMaximum":1},` +
		`"e":{"type":"number","minimum":1e3},` +
		`"f":{"type":"number","exclusiveMaximum":-0.5},` +
		`"g":{"type":"integer","minimum":-9,"maximum":9,"multipleOf":3}},` +
		`"required":["a","b","c","d","e","f","g"]}`
	for _, name := range proofTokenizers {
		f := loadFixture(t, name)
		validOutputs(t, f, NewCompiler(f.vocab, Config{}), schema, 2*seedsPerCase)
	}
}

// formatCases are one schema per format; the open-ended ones carry a
// maxLength, as a random model needs to end a string.
var formatCases = map[string]string{
	"date":      `{"type":"string","format":"date"}`,
	"time":      `{"type":"string","format":"time"}`,
	"date-time": `{"type":"string","format":"date-time"}`,
	"uuid":      `{"type":"string","format":"uuid"}`,
	"ipv4":      `{"type":"string","format":"ipv4"}`,
	"ipv6":      `{"type":"string","format":"ipv6"}`,
	"email":     `{"type":"string","format":"email","maxLength":24}`,
	"hostname":  `{"type":"string","format":"hostname","maxLength":20}`,
	"uri":       `{"type":"string","format":"uri","maxLength":30}`,
}

func TestFormatOutputsValidate(t *testing.T) {
	for format, schema := range formatCases {
		// The validator asserts the format: a plain string fails it.
		if err := validator(t, schema).Validate("not a " + format); err == nil {
			t.Fatalf("%s: the validator does not assert formats", format)
		}
	}
	for _, name := range proofTokenizers {
		f := loadFixture(t, name)
		c := NewCompiler(f.vocab, Config{})
		for format, schema := range formatCases {
			outs := validOutputs(t, f, c, schema, 2*seedsPerCase)
			distinct := map[string]bool{}
			for _, o := range outs {
				distinct[o] = true
			}
			if len(distinct) < seedsPerCase {
				t.Errorf("%s %s: only %d distinct outputs", name, format, len(distinct))
			}
		}
	}
	f := loadFixture(t, "qwen3")
	c := NewCompiler(f.vocab, Config{})
	for _, schema := range formatCases {
		// Without a maxLength too.
		compileSchema(t, c, strings.Replace(schema, `"maxLength"`, `"x-maxLength"`, 1))
	}
}

func TestDatesAreExact(t *testing.T) {
	f := loadFixture(t, "qwen3")
	con := compileSchema(t, NewCompiler(f.vocab, Config{}), `{"type":"string","format":"date"}`)
	for _, year := range []int{0, 4, 100, 1900, 1996, 2000, 2023, 2024, 2100, 2400, 9999} {
		for month := 0; month <= 13; month++ {
			for day := 0; day <= 32; day++ {
				text := fmt.Sprintf("%04d-%02d-%02d", year, month, day)
				_, err := time.Parse("2006-01-02", text)
				if got := accepts(con, `"`+text+`"`); got != (err == nil) {
					t.Fatalf("%s accepted %v, a date %v", text, got, err == nil)
				}
			}
		}
	}
}

func TestFormatEdges(t *testing.T) {
	f := loadFixture(t, "qwen3")
	c := NewCompiler(f.vocab, Config{})
	for format, texts := range map[string]map[string]bool{
		"ipv4":      {"1.2.3.4": true, "255.255.255.255": true, "256.1.1.1": false, "01.2.3.4": false, "1.2.3": false},
		"ipv6":      {"::": true, "::1": true, "1::": true, "2001:db8::8a2e:370:7334": true, "::ffff:1.2.3.4": true, "1:2:3:4:5:6:7:8": true, "1:2:3:4:5:6:7:8:9": false, "1::2::3": false, "::ffff:1.2.3.04": false},
		"time":      {"23:59:59Z": true, "12:00:00.5+01:30": true, "24:00:00Z": false, "12:00:60Z": false, "12:00:00": false},
		"date-time": {"2024-02-29T00:00:00Z": true, "2023-02-29T00:00:00Z": false, "2024-01-01t00:00:00Z": false},
		"uuid":      {"123e4567-e89b-12d3-a456-426614174000": true, "123e4567e89b12d3a456426614174000": false},
		"hostname":  {"example.com": true, "a-b.c": true, "-a.com": false, "a-.com": false, strings.Repeat("a", 63): true, strings.Repeat("a", 64): false, "a." + strings.Repeat("b", 62): false},
		"email":     {"a.b+c@example.com": true, ".a@example.com": false, "a..b@example.com": false, "a@-example.com": false, strings.Repeat("a", 64) + "@x.io": true, strings.Repeat("a", 65) + "@x.io": false},
		"uri":       {"https://user@example.com:8080/a/b?q=1#f": true, "urn:isbn:0451450523": true, "mailto:a@b.c": true, "/relative": false, "http://a b": false, "http://%zz": false},
	} {
		con := compileSchema(t, c, `{"type":"string","format":"`+format+`"}`)
		for text, want := range texts {
			if got := accepts(con, `"`+text+`"`); got != want {
				t.Errorf("%s %q: accepted %v, want %v", format, text, got, want)
			}
		}
	}
}

func TestPatternWithLengthOutputsValidate(t *testing.T) {
	schema := `{"type":"object","properties":{` +
		`"slug":{"type":"string","pattern":"^[a-z]+(-[a-z]+)*$","minLength":5,"maxLength":9},` +
		`"word":{"type":"string","pattern":"ab","maxLength":6},` +
		`"accents":{"type":"string","pattern":"^[à-ÿ]+$","minLength":3,"maxLength":4},` +
		`"code":{"type":"string","pattern":"^[A-Z]{2}[0-9]+$","minLength":4,"maxLength":5},` +
		`"ip":{"type":"string","format":"ipv4","maxLength":9}},` +
		`"required":["slug","word","accents","code","ip"]}`
	for _, name := range proofTokenizers {
		f := loadFixture(t, name)
		validOutputs(t, f, NewCompiler(f.vocab, Config{}), schema, 2*seedsPerCase)
	}
	// Lengths count characters, not bytes.
	f := loadFixture(t, "qwen3")
	con := compileSchema(t, NewCompiler(f.vocab, Config{}), `{"type":"string","pattern":"^[à-ÿ]+$","minLength":3,"maxLength":4}`)
	for n := 1; n <= 6; n++ {
		text := strings.Repeat("é", n)
		if got, want := accepts(con, `"`+text+`"`), utf8.RuneCountInString(text) >= 3 && n <= 4; got != want {
			t.Errorf("%d characters: accepted %v, want %v", n, got, want)
		}
	}
	_, err := NewCompiler(f.vocab, Config{}).Compile(Spec{Kind: KindJSONSchema, Schema: []byte(`{"type":"string","pattern":"^[0-9]{3}$","minLength":4}`)})
	if !errors.Is(err, ErrInvalid) {
		t.Errorf("a pattern no length allows: got %v, want ErrInvalid", err)
	}
}

func TestAllOfMergedOutputsValidate(t *testing.T) {
	schemas := []string{
		// A base by reference, extended; "id" constrained by both.
		`{"$defs":{"base":{"type":"object","properties":{"id":{"type":"integer","minimum":1}},"required":["id"]}},` +
			`"allOf":[{"$ref":"#/$defs/base"},{"type":"object","properties":{"name":{"type":"string","maxLength":8},"id":{"type":"integer","maximum":99}},"required":["name"]}]}`,
		// additionalProperties of one schema forbids what only the other declares.
		`{"allOf":[{"type":"object","properties":{"a":{"type":"boolean"},"b":{"type":"null"}},"additionalProperties":false},` +
			`{"properties":{"b":{"type":"null"},"c":{"type":"integer"}},"required":["b"]}]}`,
		// Keywords beside allOf, and additionalProperties schemas constraining declared names.
		`{"type":"object","properties":{"x":{"type":"string","maxLength":3}},"required":["x"],` +
			`"allOf":[{"required":["y"],"properties":{"y":{"enum":[1,2,"three"]}}},{"additionalProperties":{"type":["integer","string"]}}]}`,
		// Not objects: keywords that do not meet are joined.
		`{"allOf":[{"type":"string"},{"maxLength":5},{"pattern":"^[a-z]*$"}]}`,
		// Types intersect.
		`{"allOf":[{"type":["integer","string"]},{"type":"number","minimum":0,"maximum":10}]}`,
	}
	for _, name := range proofTokenizers {
		f := loadFixture(t, name)
		c := NewCompiler(f.vocab, Config{MaxStringLength: 8})
		for _, schema := range schemas {
			validOutputs(t, f, c, schema, seedsPerCase)
		}
	}
	f := loadFixture(t, "qwen3")
	c := NewCompiler(f.vocab, Config{})
	con := compileSchema(t, c, schemas[1])
	for text, want := range map[string]bool{`{"a":true,"b":null}`: true, `{"b":null}`: true, `{"b":null,"c":1}`: false, `{"a":true}`: false} {
		if got := accepts(con, text); got != want {
			t.Errorf("%s: accepted %v, want %v", text, got, want)
		}
	}
	for what, schema := range map[string]string{
		"required but forbidden": `{"allOf":[{"properties":{"a":{}},"additionalProperties":false},{"required":["b"]}]}`,
		"no common type":         `{"allOf":[{"type":"string"},{"type":"integer"}]}`,
		"allOf false":            `{"allOf":[{"type":"string"},false]}`,
	} {
		if _, err := c.Compile(Spec{Kind: KindJSONSchema, Schema: []byte(schema)}); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: got %v, want ErrInvalid", what, err)
		}
	}
}
