package jinja

import (
	"errors"
	"strings"
	"testing"
)

func TestSyntaxErrorsNameLineAndColumn(t *testing.T) {
	for _, c := range []struct {
		src       string
		line, col int
		msg       string
	}{
		{"{% if %}", 1, 7, "unexpected '%}'"},
		{"line one\n  {{ 1 + }}", 2, 10, "unexpected '}}'"},
		{"a\nb\n{% for x in y %}\nno end", 4, 7, "expected 'else' or 'endfor'"},
		{"{% endfor %}", 1, 4, "unknown statement 'endfor'"},
		{"{{ 'abc }}", 1, 4, "unterminated string literal"},
		{"x\n{# never closed", 2, 1, "missing end of comment tag"},
		{"{{ a | }}", 1, 8, "expected a name"},
		{"{% include 'x' %}", 1, 4, "not supported"},
		{"{{ 1 $ 2 }}", 1, 6, "unexpected character '$'"},
		{"ü{{ (1 }}", 1, 8, "unexpected '}', expected ')'"},
	} {
		_, err := Parse(c.src)
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("%q: want a SyntaxError, got %v", c.src, err)
			continue
		}
		if se.Pos.Line != c.line || se.Pos.Col != c.col || !strings.Contains(se.Msg, c.msg) {
			t.Errorf("%q: got %s: %s; want line %d, column %d: %s", c.src, se.Pos, se.Msg, c.line, c.col, c.msg)
		}
	}
}

func TestRenderErrorsNamePosition(t *testing.T) {
	tpl, err := Parse("ok\n{{ 'a' + 1 }}")
	if err != nil {
		t.Fatal(err)
	}
	_, err = tpl.Execute(nil, Options{})
	var re *RenderError
	if !errors.As(err, &re) || re.Pos != (Pos{Line: 2, Col: 8}) || !strings.Contains(re.Msg, "unsupported operand") {
		t.Fatalf("got %v", err)
	}
}

func TestRaiseException(t *testing.T) {
	tpl, err := Parse("{% if messages|length > 1 %}{{ raise_exception('Only one message: ' ~ messages|length) }}{% endif %}ok")
	if err != nil {
		t.Fatal(err)
	}
	_, err = tpl.Execute(map[string]Value{"messages": NewList("a", "b")}, Options{})
	var raised *RaiseError
	if !errors.As(err, &raised) || raised.Message != "Only one message: 2" {
		t.Fatalf("got %v", err)
	}
	out, err := tpl.Execute(map[string]Value{"messages": NewList("a")}, Options{})
	if err != nil || out != "ok" {
		t.Fatalf("got %q, %v", out, err)
	}
}

func TestLimits(t *testing.T) {
	small := Limits{MaxOutputBytes: 1 << 16, MaxSteps: 100_000, MaxCallDepth: 20, MaxItems: 10_000}
	for _, src := range []string{
		"{% for i in range(1000) %}{% for j in range(1000) %}{% endfor %}{% endfor %}",
		"{{ 'x' * 100000 }}",
		"{% for i in range(100000) %}xxxxxxxxxx{% endfor %}",
		"{% set ns = namespace(s='ab') %}{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}",
		"{% set ns = namespace(l=[1]) %}{% for i in range(40) %}{% set ns.l = ns.l + ns.l %}{% endfor %}",
		"{{ range(1000000000)|length }}",
		"{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}",
		"{{ 'a'.center(1000000000) }}",
		"{{ '%1000000000d' % 1 }}",
		"{{ 'abc'|indent(1000000000, true) }}",
		"{{ [1]|tojson(indent=1000000000) }}",
		"{{ [0] * 1000000 }}",
		"{% set ns = namespace(l=none) %}{% for i in range(5000) %}{% set ns.l = [ns.l] %}{% endfor %}{{ ns.l }}",
		"{% set ns = namespace() %}{% set ns.me = ns %}{{ ns }}",
	} {
		tpl, err := Parse(src)
		if err != nil {
			t.Fatalf("%q: %v", src, err)
		}
		_, err = tpl.Execute(nil, Options{Limits: small})
		if !errors.Is(err, ErrLimit) {
			t.Errorf("%q: want a limit error, got %v", src, err)
		}
	}
}

func TestParseDepthLimit(t *testing.T) {
	for _, src := range []string{
		"{{ " + strings.Repeat("(", 10000) + "1" + strings.Repeat(")", 10000) + " }}",
		"{{ " + strings.Repeat("[", 10000) + " }}",
		"{{ " + strings.Repeat("not ", 10000) + "x }}",
		"{{ " + strings.Repeat("-", 10000) + "x }}",
		strings.Repeat("{% if x %}", 10000),
	} {
		_, err := Parse(src)
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("%.20q...: want a syntax error, got %v", src, err)
		}
	}
}
