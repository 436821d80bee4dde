package jinja

import (
	"math"
	"strconv"
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

// Expressions, by Jinja's precedence: conditional, or, and, not, comparison,
// + -, ~, * / // %, **, unary - +, then primaries with their postfixes,
// filters and tests.

func (p *parser) expression(withCond bool) expr {
	p.enter(p.peek().off)
	defer p.leave()
	x := p.or()
	if !withCond {
		return x
	}
	for p.isName("if") {
		off := p.next().off
		c := &condExpr{at: at{off}, then: x, cond: p.or()}
		if p.skipName("else") {
			c.else_ = p.expression(true)
		}
		x = c
	}
	return x
}

// tuple parses an expression that may be a bare tuple: "a, b".
func (p *parser) tuple(withCond bool) expr {
	off := p.peek().off
	x := p.expression(withCond)
	if !p.isOp(",") {
		return x
	}
	items := []expr{x}
	for p.skipOp(",") {
		if !p.startsExpression() {
			break
		}
		items = append(items, p.expression(withCond))
	}
	return &tupleExpr{at{off}, items}
}

func (p *parser) startsExpression() bool {
	t := p.peek()
	switch t.kind {
	case tokName, tokString, tokInt, tokFloat:
		return true
	case tokOp:
		return t.val == "(" || t.val == "[" || t.val == "{" || t.val == "-" || t.val == "+"
	}
	return false
}

func (p *parser) or() expr {
	x := p.and()
	for p.isName("or") {
		off := p.next().off
		x = &orExpr{at{off}, x, p.and()}
	}
	return x
}

func (p *parser) and() expr {
	x := p.not()
	for p.isName("and") {
		off := p.next().off
		x = &andExpr{at{off}, x, p.not()}
	}
	return x
}

func (p *parser) not() expr {
	if p.isName("not") {
		off := p.next().off
		p.enter(off)
		defer p.leave()
		return &notExpr{at{off}, p.not()}
	}
	return p.compare()
}

func (p *parser) compare() expr {
	off := p.peek().off
	x := p.math1()
	var ops []string
	var rest []expr
	for {
		t := p.peek()
		switch {
		case t.kind == tokOp && (t.val == "==" || t.val == "!=" || t.val == "<" || t.val == "<=" || t.val == ">" || t.val == ">="):
			p.i++
			ops = append(ops, t.val)
		case t.kind == tokName && t.val == "in":
			p.i++
			ops = append(ops, "in")
		case t.kind == tokName && t.val == "not" && p.toks[p.i+1].kind == tokName && p.toks[p.i+1].val == "in":
			p.i += 2
			ops = append(ops, "notin")
		default:
			if ops == nil {
				return x
			}
			return &compareExpr{at{off}, x, ops, rest}
		}
		rest = append(rest, p.math1())
	}
}

func (p *parser) math1() expr {
	x := p.concat()
	for p.isOp("+") || p.isOp("-") {
		t := p.next()
		x = &binaryExpr{at{t.off}, t.val, x, p.concat()}
	}
	return x
}

func (p *parser) concat() expr {
	x := p.math2()
	for p.isOp("~") {
		t := p.next()
		x = &binaryExpr{at{t.off}, "~", x, p.math2()}
	}
	return x
}

func (p *parser) math2() expr {
	x := p.pow()
	for p.isOp("*") || p.isOp("/") || p.isOp("//") || p.isOp("%") {
		t := p.next()
		x = &binaryExpr{at{t.off}, t.val, x, p.pow()}
	}
	return x
}

func (p *parser) pow() expr {
	x := p.unary(true)
	for p.isOp("**") {
		t := p.next()
		x = &binaryExpr{at{t.off}, "**", x, p.unary(true)}
	}
	return x
}

func (p *parser) unary(withFilter bool) expr {
	t := p.peek()
	var x expr
	if t.kind == tokOp && (t.val == "-" || t.val == "+") {
		p.i++
		p.enter(t.off)
		x = &unaryExpr{at{t.off}, t.val, p.unary(false)}
		p.leave()
	} else {
		x = p.postfix(p.primary())
	}
	if withFilter {
		x = p.filterAndTests(x)
	}
	return x
}

func (p *parser) primary() expr {
	t := p.next()
	a := at{t.off}
	switch t.kind {
	case tokName:
		switch t.val {
		case "true", "True":
			return &constExpr{a, true}
		case "false", "False":
			return &constExpr{a, false}
		case "none", "None":
			return &constExpr{a, nil}
		}
		return &nameExpr{a, t.val}
	case tokString:
		s := t.val
		for p.peek().kind == tokString {
			s += p.next().val
		}
		return &constExpr{a, s}
	case tokInt:
		return &constExpr{a, p.parseInt(t)}
	case tokFloat:
		f, err := strconv.ParseFloat(strings.ReplaceAll(t.val, "_", ""), 64)
		if err != nil && !math.IsInf(f, 0) {
			p.fail(t.off, "invalid number "+t.val)
		}
		return &constExpr{a, f}
	case tokOp:
		p.enter(t.off)
		defer p.leave()
		switch t.val {
		case "(":
			if p.skipOp(")") {
				return &tupleExpr{a, nil}
			}
			x := p.expression(true)
			if p.isOp(",") {
				items := []expr{x}
				for p.skipOp(",") {
					if p.isOp(")") {
						break
					}
					items = append(items, p.expression(true))
				}
				x = &tupleExpr{a, items}
			}
			p.expectOp(")")
			return x
		case "[":
			l := &listExpr{at: a}
			for !p.skipOp("]") {
				if len(l.items) > 0 {
					p.expectOp(",")
					if p.skipOp("]") {
						break
					}
				}
				l.items = append(l.items, p.expression(true))
			}
			return l
		case "{":
			d := &dictExpr{at: a}
			for !p.skipOp("}") {
				if len(d.keys) > 0 {
					p.expectOp(",")
					if p.skipOp("}") {
						break
					}
				}
				d.keys = append(d.keys, p.expression(true))
				p.expectOp(":")
				d.values = append(d.values, p.expression(true))
			}
			return d
		}
	}
	p.fail(t.off, "unexpected "+describe(t))
	return nil
}

func (p *parser) parseInt(t token) Value {
	s := strings.ReplaceAll(t.val, "_", "")
	base := 10
	if len(s) > 1 && s[0] == '0' {
		switch s[1] {
		case 'x', 'X':
			base, s = 16, s[2:]
		case 'o', 'O':
			base, s = 8, s[2:]
		case 'b', 'B':
			base, s = 2, s[2:]
		}
	}
	n, err := strconv.ParseInt(s, base, 64)
	if err != nil {
		p.fail(t.off, "integer literal "+t.val+" is invalid or too large")
	}
	return n
}

func (p *parser) postfix(x expr) expr {
	for {
		t := p.peek()
		if t.kind != tokOp {
			return x
		}
		switch t.val {
		case ".":
			p.i++
			n := p.next()
			switch n.kind {
			case tokName:
				x = &attrExpr{at{t.off}, x, n.val}
			case tokInt:
				x = &itemExpr{at{t.off}, x, &constExpr{at{n.off}, p.parseInt(n)}}
			default:
				p.fail(n.off, "expected an attribute name after '.', got "+describe(n))
			}
		case "[":
			p.i++
			p.enter(t.off)
			x = p.subscript(t.off, x)
			p.leave()
		case "(":
			p.enter(t.off)
			x = p.call(x)
			p.leave()
		default:
			return x
		}
	}
}

func (p *parser) subscript(off int, x expr) expr {
	var parts [3]expr
	idx, isSlice := 0, false
	for !p.skipOp("]") {
		if p.skipOp(":") {
			isSlice = true
			idx++
			if idx > 2 {
				p.fail(p.peek().off, "too many ':' in slice")
			}
			continue
		}
		if parts[idx] != nil {
			p.fail(p.peek().off, "expected ':' or ']' in subscript, got "+describe(p.peek()))
		}
		parts[idx] = p.expression(true)
		if idx == 0 && p.isOp(",") {
			p.fail(p.peek().off, "tuple subscripts are not supported")
		}
	}
	if !isSlice {
		if parts[0] == nil {
			p.fail(off, "expected an index in '[]'")
		}
		return &itemExpr{at{off}, x, parts[0]}
	}
	return &sliceExpr{at{off}, x, parts[0], parts[1], parts[2]}
}

func (p *parser) call(fn expr) *callExpr {
	c := &callExpr{at: at{p.expectOp("(").off}, fn: fn}
	c.args, c.kwargs, c.star, c.dstar = p.arguments()
	return c
}

// arguments parses a call's arguments after its "(", through the ")".
func (p *parser) arguments() (args []expr, kwargs []kwarg, star, dstar expr) {
	first := true
	for !p.skipOp(")") {
		if !first {
			p.expectOp(",")
			if p.skipOp(")") {
				break
			}
		}
		first = false
		switch {
		case p.skipOp("*"):
			star = p.expression(true)
		case p.skipOp("**"):
			dstar = p.expression(true)
		case p.peek().kind == tokName && p.toks[p.i+1].kind == tokOp && p.toks[p.i+1].val == "=":
			name := p.next().val
			p.i++
			kwargs = append(kwargs, kwarg{name, p.expression(true)})
		default:
			if len(kwargs) > 0 || dstar != nil {
				p.fail(p.peek().off, "positional argument follows keyword argument")
			}
			args = append(args, p.expression(true))
		}
	}
	return args, kwargs, star, dstar
}

func (p *parser) dottedName() (int, string) {
	t := p.expectName()
	name := t.val
	for p.isOp(".") && p.toks[p.i+1].kind == tokName {
		p.i++
		name += "." + p.next().val
	}
	return t.off, name
}

// filterChain parses "| f | g(args)"; the first "|" is optional (filter
// blocks start right at the name). The first filter applies to x.
func (p *parser) filterChain(x expr) []*filterExpr {
	var chain []*filterExpr
	for len(chain) == 0 || p.isOp("|") {
		p.skipOp("|")
		off, name := p.dottedName()
		f := &filterExpr{at: at{off}, x: x, name: name}
		if p.isOp("(") {
			p.i++
			var star, dstar expr
			f.args, f.kwargs, star, dstar = p.arguments()
			if star != nil || dstar != nil {
				p.fail(off, "*args and **kwargs are not supported in filter arguments")
			}
		}
		chain = append(chain, f)
		x = f
	}
	return chain
}

func (p *parser) filterAndTests(x expr) expr {
	for {
		switch {
		case p.isOp("|"):
			chain := p.filterChain(x)
			x = chain[len(chain)-1]
		case p.isName("is"):
			x = p.test(x)
		case p.isOp("("):
			// a filter's or test's result may be called: x|attr('m')()
			x = p.call(x)
		default:
			return x
		}
	}
}

// test parses "is [not] name [args]". As in Jinja, a single argument may go
// without parentheses: "x is divisibleby 3", "x is sameas none".
func (p *parser) test(x expr) expr {
	off := p.next().off
	t := &testExpr{at: at{off}, x: x}
	t.negate = p.skipName("not")
	_, t.name = p.dottedName()
	n := p.peek()
	switch {
	case p.isOp("("):
		p.i++
		var star, dstar expr
		t.args, t.kwargs, star, dstar = p.arguments()
		if star != nil || dstar != nil {
			p.fail(off, "*args and **kwargs are not supported in test arguments")
		}
	case n.kind == tokString || n.kind == tokInt || n.kind == tokFloat || p.isOp("[") || p.isOp("{") ||
		(n.kind == tokName && n.val != "else" && n.val != "or" && n.val != "and"):
		if n.kind == tokName && n.val == "is" {
			p.fail(n.off, "You cannot chain multiple tests with is")
		}
		t.args = []expr{p.postfix(p.primary())}
	}
	return t
}
