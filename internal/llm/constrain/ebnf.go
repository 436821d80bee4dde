package constrain

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// compileEBNF compiles a grammar in the EBNF forms serving stacks accept:
// GBNF (`name ::= ...`) and the Lark subset (`name: ...`) — alternatives
// `|`, sequences, parentheses, `* + ?`, `{m}` / `{m,n}`, "strings" and
// 'strings', [character classes], /regular expressions/ and rule names;
// comments start with # or //. The start rule is `root` (or `start`).
// Rules may recurse; calls nest up to Config.MaxNesting. Lark directives
// (%import, %ignore, ...), rule options and templates are refused by name.
func compileEBNF(b *builder, text string) (frag, error) {
	p := &ebnfParser{b: b, src: text, rules: map[string]int32{}}
	if err := p.parse(); err != nil {
		return frag{}, err
	}
	for _, name := range []string{"root", "start"} {
		if id, ok := p.rules[name]; ok {
			return b.call(id), nil
		}
	}
	return frag{}, errorf(ErrInvalid, "grammar: no rule named root or start")
}

type ebnfParser struct {
	b     *builder
	src   string
	pos   int
	rules map[string]int32
}

func (p *ebnfParser) errorf(format string, args ...any) error {
	line := strings.Count(p.src[:min(p.pos, len(p.src))], "\n") + 1
	return errorf(ErrInvalid, "grammar line %d: %s", line, fmt.Sprintf(format, args...))
}

// skip passes white space and comments; newlines too unless stopAtNewline.
func (p *ebnfParser) skip() {
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			p.pos++
		case c == '#' || strings.HasPrefix(p.src[p.pos:], "//"):
			for p.pos < len(p.src) && p.src[p.pos] != '\n' {
				p.pos++
			}
		default:
			return
		}
	}
}

func isIdentByte(c byte, first bool) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || !first && (c >= '0' && c <= '9' || c == '-' || c == '.')
}

func (p *ebnfParser) ident() string {
	start := p.pos
	for p.pos < len(p.src) && isIdentByte(p.src[p.pos], p.pos == start) {
		p.pos++
	}
	return p.src[start:p.pos]
}

// definitionAhead reports whether a rule definition starts here, returning
// its name and moving past the `::=` or `:`.
func (p *ebnfParser) definitionAhead() (string, bool) {
	save := p.pos
	name := p.ident()
	if name == "" {
		p.pos = save
		return "", false
	}
	for p.pos < len(p.src) && (p.src[p.pos] == ' ' || p.src[p.pos] == '\t') {
		p.pos++
	}
	rest := p.src[p.pos:]
	switch {
	case strings.HasPrefix(rest, "::="):
		p.pos += 3
		return name, true
	case strings.HasPrefix(rest, ":") && !strings.HasPrefix(rest, "::"):
		p.pos++
		return name, true
	}
	p.pos = save
	return "", false
}

func (p *ebnfParser) rule(name string) int32 {
	if id, ok := p.rules[name]; ok {
		return id
	}
	id := p.b.newRule(name)
	p.b.g.rules[id].recursive = true
	p.rules[name] = id
	return id
}

func (p *ebnfParser) parse() error {
	for {
		p.skip()
		if p.pos >= len(p.src) {
			return nil
		}
		if p.src[p.pos] == '%' {
			end := p.pos + 1
			for end < len(p.src) && isIdentByte(p.src[end], end == p.pos+1) {
				end++
			}
			return errorf(ErrUnsupported, "grammar: the directive %s", p.src[p.pos:end])
		}
		if p.src[p.pos] == '?' || p.src[p.pos] == '!' {
			return errorf(ErrUnsupported, "grammar: rule modifiers (%c)", p.src[p.pos])
		}
		name, ok := p.definitionAhead()
		if !ok {
			return p.errorf("expected a rule definition (name ::= ... or name: ...)")
		}
		id := p.rule(name)
		if p.b.g.rules[id].defined {
			return p.errorf("rule %q is defined twice", name)
		}
		body, err := p.alternatives()
		if err != nil {
			return err
		}
		p.b.define(id, body)
	}
}

func (p *ebnfParser) alternatives() (frag, error) {
	var alts []frag
	for {
		seq, err := p.sequence()
		if err != nil {
			return frag{}, err
		}
		alts = append(alts, seq)
		p.skip()
		if p.pos < len(p.src) && p.src[p.pos] == '|' {
			p.pos++
			continue
		}
		return p.b.alt(alts...), nil
	}
}

func (p *ebnfParser) sequence() (frag, error) {
	var parts []frag
	for {
		p.skip()
		if p.pos >= len(p.src) {
			break
		}
		c := p.src[p.pos]
		if c == '|' || c == ')' {
			break
		}
		if isIdentByte(c, true) {
			save := p.pos
			if _, def := p.definitionAhead(); def {
				p.pos = save
				break // the next rule starts
			}
		}
		atom, err := p.postfix()
		if err != nil {
			return frag{}, err
		}
		parts = append(parts, atom)
	}
	return p.b.seq(parts...), nil
}

func (p *ebnfParser) postfix() (frag, error) {
	start := p.pos
	atom, err := p.atom()
	if err != nil {
		return frag{}, err
	}
	for p.pos < len(p.src) {
		// Each copy of a repeated atom is compiled afresh from its text.
		again := func() frag {
			save := p.pos
			p.pos = start
			f, _ := p.atom()
			p.pos = save
			return f
		}
		switch p.src[p.pos] {
		case '*':
			p.pos++
			atom = p.b.star(atom)
		case '+':
			p.pos++
			atom = p.b.seq(atom, p.b.star(again()))
		case '?':
			p.pos++
			atom = p.b.opt(atom)
		case '{':
			end := strings.IndexByte(p.src[p.pos:], '}')
			if end < 0 {
				return frag{}, p.errorf("unclosed {")
			}
			lo, hi, err := parseCount(p.src[p.pos+1 : p.pos+end])
			if err != nil {
				return frag{}, p.errorf("%v", err)
			}
			p.pos += end + 1
			atom = p.b.repeat(lo, hi, again)
		default:
			return atom, nil
		}
	}
	return atom, nil
}

func parseCount(s string) (int, int, error) {
	lo, hi, comma := strings.Cut(s, ",")
	l, err := strconv.Atoi(strings.TrimSpace(lo))
	if err != nil || l < 0 || l > maxRegexRepeat {
		return 0, 0, fmt.Errorf("bad repetition {%s}", s)
	}
	if !comma {
		return l, l, nil
	}
	if strings.TrimSpace(hi) == "" {
		return l, -1, nil
	}
	h, err := strconv.Atoi(strings.TrimSpace(hi))
	if err != nil || h < l || h > maxRegexRepeat {
		return 0, 0, fmt.Errorf("bad repetition {%s}", s)
	}
	return l, h, nil
}

func (p *ebnfParser) atom() (frag, error) {
	c := p.src[p.pos]
	switch {
	case c == '(':
		p.pos++
		f, err := p.alternatives()
		if err != nil {
			return frag{}, err
		}
		p.skip()
		if p.pos >= len(p.src) || p.src[p.pos] != ')' {
			return frag{}, p.errorf("expected )")
		}
		p.pos++
		return f, nil
	case c == '"' || c == '\'':
		end := p.pos + 1
		for end < len(p.src) && p.src[end] != c {
			if p.src[end] == '\\' {
				end++
			}
			end++
		}
		if end >= len(p.src) {
			return frag{}, p.errorf("unclosed string")
		}
		raw := p.src[p.pos+1 : end]
		p.pos = end + 1
		s, err := strconv.Unquote(`"` + strings.ReplaceAll(strings.ReplaceAll(raw, `\'`, `'`), `"`, `\"`) + `"`)
		if err != nil {
			s, err = strconv.Unquote(`"` + raw + `"`)
			if err != nil {
				return frag{}, p.errorf("bad string %s", raw)
			}
		}
		if strings.HasPrefix(p.src[p.pos:], "i") && (p.pos+1 >= len(p.src) || !isIdentByte(p.src[p.pos+1], false)) {
			p.pos++ // Lark's case-insensitive literal
			re, err := parseRegex("grammar", "(?i)"+regexQuote(s))
			if err != nil {
				return frag{}, err
			}
			return (&regexCompiler{b: p.b}).whole("grammar", re)
		}
		return p.b.literal(s), nil
	case c == '[':
		end := p.pos + 1
		for end < len(p.src) && p.src[end] != ']' {
			if p.src[end] == '\\' {
				end++
			}
			end++
		}
		if end >= len(p.src) {
			return frag{}, p.errorf("unclosed [")
		}
		class := p.src[p.pos : end+1]
		p.pos = end + 1
		re, err := parseRegex("grammar character class "+class, class)
		if err != nil {
			return frag{}, err
		}
		return (&regexCompiler{b: p.b}).whole("grammar", re)
	case c == '/':
		end := p.pos + 1
		for end < len(p.src) && p.src[end] != '/' {
			if p.src[end] == '\\' {
				end++
			}
			end++
		}
		if end >= len(p.src) {
			return frag{}, p.errorf("unclosed /regex/")
		}
		expr := p.src[p.pos+1 : end]
		p.pos = end + 1
		for p.pos < len(p.src) && unicode.IsLetter(rune(p.src[p.pos])) {
			if p.src[p.pos] != 'i' {
				return frag{}, errorf(ErrUnsupported, "grammar: regular expression flag %c", p.src[p.pos])
			}
			expr = "(?i)" + expr
			p.pos++
		}
		re, err := parseRegex("grammar /"+expr+"/", expr)
		if err != nil {
			return frag{}, err
		}
		return (&regexCompiler{b: p.b}).whole("grammar", re)
	case isIdentByte(c, true):
		name := p.ident()
		return p.b.call(p.rule(name)), nil
	}
	return frag{}, p.errorf("unexpected %q", c)
}

func regexQuote(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`\.+*?()|[]{}^$`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
