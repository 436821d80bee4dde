package jinja

import (
	"strings"
)

// maxParseDepth bounds how deeply expressions and blocks may nest, so that a
// hostile template cannot exhaust the stack while being parsed.
const maxParseDepth = 200

type parser struct {
	src   string
	toks  []token
	i     int
	depth int
}

func (p *parser) fail(off int, msg string) {
	panic(failure{&SyntaxError{Pos: position(p.src, off), Msg: msg}})
}

func (p *parser) peek() token { return p.toks[p.i] }

func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tokEOF {
		p.i++
	}
	return t
}

func (p *parser) enter(off int) {
	p.depth++
	if p.depth > maxParseDepth {
		p.fail(off, "template nested too deeply")
	}
}

func (p *parser) leave() { p.depth-- }

func (p *parser) isOp(op string) bool {
	t := p.peek()
	return t.kind == tokOp && t.val == op
}

func (p *parser) isName(name string) bool {
	t := p.peek()
	return t.kind == tokName && t.val == name
}

func (p *parser) skipOp(op string) bool {
	if p.isOp(op) {
		p.i++
		return true
	}
	return false
}

func (p *parser) skipName(name string) bool {
	if p.isName(name) {
		p.i++
		return true
	}
	return false
}

func describe(t token) string {
	switch t.kind {
	case tokEOF:
		return "end of template"
	case tokData:
		return "template data"
	case tokBlockEnd:
		return "'%}'"
	case tokVarEnd:
		return "'}}'"
	case tokBlockBegin:
		return "'{%'"
	case tokVarBegin:
		return "'{{'"
	case tokString:
		return "string literal"
	case tokInt, tokFloat:
		return "number " + t.val
	}
	return "'" + t.val + "'"
}

func (p *parser) expectOp(op string) token {
	t := p.next()
	if t.kind != tokOp || t.val != op {
		p.fail(t.off, "expected '"+op+"', got "+describe(t))
	}
	return t
}

func (p *parser) expectName() token {
	t := p.next()
	if t.kind != tokName {
		p.fail(t.off, "expected a name, got "+describe(t))
	}
	return t
}

func (p *parser) expectBlockEnd() {
	t := p.next()
	if t.kind != tokBlockEnd {
		p.fail(t.off, "expected end of statement '%}', got "+describe(t))
	}
}

// parse builds the tree of a whole template.
func parse(src string) []node {
	p := &parser{src: src, toks: lex(src)}
	body, end := p.subparse(nil)
	if end != "" {
		p.fail(p.peek().off, "unexpected '"+end+"'")
	}
	return body
}

// subparse reads statements until one of the end tags (with the "{%" and tag
// name consumed, the rest of the tag left to the caller) or the end of the
// template. It returns the end tag met, "" at the end of the template.
func (p *parser) subparse(ends []string) ([]node, string) {
	var body []node
	for {
		t := p.next()
		switch t.kind {
		case tokEOF:
			if len(ends) > 0 {
				p.fail(t.off, "unexpected end of template, expected '"+strings.Join(ends, "' or '")+"'")
			}
			return body, ""
		case tokData:
			body = append(body, &dataNode{at{t.off}, t.val})
		case tokVarBegin:
			x := p.expression(true)
			if e := p.next(); e.kind != tokVarEnd {
				p.fail(e.off, "expected end of print statement '}}', got "+describe(e))
			}
			body = append(body, &printNode{at{t.off}, x})
		case tokBlockBegin:
			name := p.peek()
			if name.kind != tokName {
				p.fail(name.off, "expected a statement name, got "+describe(name))
			}
			for _, e := range ends {
				if name.val == e {
					p.i++
					return body, e
				}
			}
			p.i++
			body = append(body, p.statement(name))
		default:
			p.fail(t.off, "unexpected "+describe(t))
		}
	}
}

func (p *parser) statement(name token) node {
	p.enter(name.off)
	defer p.leave()
	a := at{name.off}
	switch name.val {
	case "if":
		return p.ifStatement(a)
	case "for":
		return p.forStatement(a)
	case "set":
		return p.setStatement(a)
	case "macro":
		return p.macroStatement(a)
	case "call":
		return p.callStatement(a)
	case "filter":
		filters := p.filterChain(nil)
		p.expectBlockEnd()
		body, _ := p.subparse([]string{"endfilter"})
		p.expectBlockEnd()
		return &filterBlockNode{a, filters, body}
	case "with":
		return p.withStatement(a)
	case "break":
		p.expectBlockEnd()
		return &breakNode{a}
	case "continue":
		p.expectBlockEnd()
		return &continueNode{a}
	case "generation":
		// transformers' AssistantTracker tag: the body renders as is.
		p.expectBlockEnd()
		body, _ := p.subparse([]string{"endgeneration"})
		p.expectBlockEnd()
		return &filterBlockNode{a, nil, body}
	case "include", "import", "from", "extends", "block":
		p.fail(name.off, "'"+name.val+"' is not supported in chat templates (they have no loader)")
	}
	p.fail(name.off, "unknown statement '"+name.val+"'")
	return nil
}

func (p *parser) ifStatement(a at) node {
	n := &ifNode{at: a, cond: p.expression(true)}
	p.expectBlockEnd()
	var end string
	n.body, end = p.subparse([]string{"elif", "else", "endif"})
	switch end {
	case "elif":
		n.else_ = []node{p.ifStatement(at{p.toks[p.i-1].off})}
		return n
	case "else":
		p.expectBlockEnd()
		n.else_, _ = p.subparse([]string{"endif"})
	}
	p.expectBlockEnd()
	return n
}

func (p *parser) assignTargets() ([]string, bool) {
	var names []string
	tuple := false
	paren := p.skipOp("(")
	for {
		names = append(names, p.expectName().val)
		if !p.skipOp(",") {
			break
		}
		tuple = true
		if t := p.peek(); t.kind != tokName {
			break
		}
	}
	if paren {
		p.expectOp(")")
		tuple = true
	}
	return names, tuple
}

func (p *parser) forStatement(a at) node {
	n := &forNode{at: a}
	n.targets, n.tuple = p.assignTargets()
	if t := p.next(); t.kind != tokName || t.val != "in" {
		p.fail(t.off, "expected 'in' in for loop, got "+describe(t))
	}
	n.iter = p.tuple(false)
	if p.skipName("if") {
		n.cond = p.expression(true)
	}
	if p.isName("recursive") {
		p.fail(p.peek().off, "recursive loops are not supported")
	}
	p.expectBlockEnd()
	var end string
	n.body, end = p.subparse([]string{"else", "endfor"})
	if end == "else" {
		p.expectBlockEnd()
		n.else_, _ = p.subparse([]string{"endfor"})
	}
	p.expectBlockEnd()
	return n
}

func (p *parser) setStatement(a at) node {
	n := &setNode{at: a}
	first := p.expectName()
	if p.skipOp(".") {
		n.targets = []string{first.val}
		n.attr = p.expectName().val
	} else {
		p.i--
		n.targets, n.tuple = p.assignTargets()
	}
	if p.skipOp("=") {
		n.value = p.tuple(true)
		p.expectBlockEnd()
		return n
	}
	if n.tuple || n.attr != "" {
		p.fail(p.peek().off, "expected '=' after a tuple or attribute target")
	}
	if p.isOp("|") {
		n.filters = p.filterChain(nil)
	}
	p.expectBlockEnd()
	n.body, _ = p.subparse([]string{"endset"})
	p.expectBlockEnd()
	return n
}

func (p *parser) params() []param {
	var ps []param
	p.expectOp("(")
	for !p.skipOp(")") {
		if len(ps) > 0 {
			p.expectOp(",")
			if p.skipOp(")") {
				break
			}
		}
		pr := param{name: p.expectName().val}
		if p.skipOp("=") {
			pr.def = p.expression(true)
		} else if len(ps) > 0 && ps[len(ps)-1].def != nil {
			p.fail(p.peek().off, "non-default argument follows default argument")
		}
		ps = append(ps, pr)
	}
	return ps
}

func (p *parser) macroStatement(a at) node {
	n := &macroNode{at: a, name: p.expectName().val}
	n.params = p.params()
	p.expectBlockEnd()
	n.body, _ = p.subparse([]string{"endmacro"})
	p.expectBlockEnd()
	return n
}

func (p *parser) callStatement(a at) node {
	n := &callBlockNode{at: a}
	if p.isOp("(") {
		n.params = p.params()
	}
	x := p.expression(true)
	call, ok := x.(*callExpr)
	if !ok {
		p.fail(x.offset(), "expected a call after 'call'")
	}
	n.call = call
	p.expectBlockEnd()
	n.body, _ = p.subparse([]string{"endcall"})
	p.expectBlockEnd()
	return n
}

func (p *parser) withStatement(a at) node {
	n := &withNode{at: a}
	for !p.isBlockEnd() {
		if len(n.names) > 0 {
			p.expectOp(",")
		}
		n.names = append(n.names, p.expectName().val)
		p.expectOp("=")
		n.values = append(n.values, p.expression(true))
	}
	p.expectBlockEnd()
	n.body, _ = p.subparse([]string{"endwith"})
	p.expectBlockEnd()
	return n
}

func (p *parser) isBlockEnd() bool { return p.peek().kind == tokBlockEnd }
