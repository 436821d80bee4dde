package jinja

import (
	"math"
	"strconv"
	"strings"
)

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
