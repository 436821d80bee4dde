package constrain

import (
	"errors"
	"regexp"
	"strings"
	"testing"
)

func TestGrammarOutputsAreSentences(t *testing.T) {
	regular := `# a greeting
root     ::= greeting " " name "!"
greeting ::= "hello" | "hi" | 'hey'
name     ::= [A-Z] [a-z]{1,6}`
	oracle := regexp.MustCompile(`^(hello|hi|hey) [A-Z][a-z]{1,6}!$`)
	lark := `start: pair (";" pair){0,2}
pair: KEY "=" /[0-9]{1,3}/
KEY: /[a-z]{1,4}/`
	larkOracle := regexp.MustCompile(`^[a-z]{1,4}=[0-9]{1,3}(;[a-z]{1,4}=[0-9]{1,3}){0,2}$`)
	nested := `root ::= "(" inner ")"
inner ::= ("x" | "(" inner ")")?`
	for _, name := range proofTokenizers {
		f := loadFixture(t, name)
		c := NewCompiler(f.vocab, Config{MaxNesting: 8})
		for seed := range uint64(seedsPerCase) {
			if out := generate(t, f, c, Spec{Kind: KindGrammar, Grammar: regular}, seed); !oracle.MatchString(out) {
				t.Fatalf("%s seed %d: %q is not a sentence", name, seed, out)
			}
			if out := generate(t, f, c, Spec{Kind: KindGrammar, Grammar: lark}, seed); !larkOracle.MatchString(out) {
				t.Fatalf("%s seed %d: %q is not a sentence of the Lark grammar", name, seed, out)
			}
			out := generate(t, f, c, Spec{Kind: KindGrammar, Grammar: nested}, seed)
			depth := strings.Count(out, "(")
			want := strings.Repeat("(", depth) + strings.TrimSuffix(strings.TrimPrefix(out, strings.Repeat("(", depth)), strings.Repeat(")", depth)) + strings.Repeat(")", depth)
			if depth == 0 || strings.Count(out, ")") != depth || want != out || strings.Count(out, "x") > 1 {
				t.Fatalf("%s seed %d: %q is not balanced", name, seed, out)
			}
		}
	}
}

func TestGrammarErrorsNameTheProblem(t *testing.T) {
	f := loadFixture(t, "qwen3")
	c := NewCompiler(f.vocab, Config{})
	for text, want := range map[string]error{
		"%import common.WORD\nstart: WORD": ErrUnsupported,
		"start: ?x\nx: \"a\"":              ErrInvalid,
		"root ::= missing":                 ErrInvalid,
		"foo ::= \"a\"":                    ErrInvalid,
		"root ::= \"a":                     ErrInvalid,
	} {
		_, err := c.Compile(Spec{Kind: KindGrammar, Grammar: text})
		if !errors.Is(err, want) {
			t.Errorf("%q: got %v, want %v", text, err, want)
		}
	}
}
