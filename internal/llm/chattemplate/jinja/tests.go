package jinja

func (r *renderer) applyTest(e *testExpr, v Value, f *frame) bool {
	args := make([]Value, len(e.args))
	for i, a := range e.args {
		args[i] = r.eval(a, f)
	}
	return r.test(e, e.name, v, args)
}

// test runs Jinja's builtin test name on v.
func (r *renderer) test(n node, name string, v Value, args []Value) bool {
	need := func(k int) {
		if len(args) < k {
			r.fail(n, "test '%s' needs %d argument(s)", name, k)
		}
	}
	switch name {
	case "defined":
		_, u := v.(Undefined)
		return !u
	case "undefined":
		_, u := v.(Undefined)
		return u
	case "none":
		return v == nil
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "true":
		b, ok := v.(bool)
		return ok && b
	case "false":
		b, ok := v.(bool)
		return ok && !b
	case "integer":
		switch v.(type) {
		case int64, bigInt:
			return true
		}
		return false
	case "float":
		_, ok := v.(float64)
		return ok
	case "number":
		if _, big := v.(bigInt); big {
			return true
		}
		_, _, _, ok := number(v)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "mapping":
		_, ok := v.(*Dict)
		return ok
	case "iterable", "sequence":
		switch v.(type) {
		case string, *List, *Dict, Undefined:
			return true
		}
		return false
	case "callable":
		_, ok := v.(*Func)
		return ok
	case "escaped":
		return false
	case "sameas":
		need(1)
		return sameAs(v, args[0])
	case "eq", "equalto", "==":
		need(1)
		return equal(v, args[0])
	case "ne", "!=":
		need(1)
		return !equal(v, args[0])
	case "lt", "lessthan", "<", "le", "<=", "gt", "greaterthan", ">", "ge", ">=":
		need(1)
		op := map[string]string{"lt": "<", "lessthan": "<", "le": "<=", "gt": ">", "greaterthan": ">", "ge": ">="}[name]
		if op == "" {
			op = name
		}
		return r.compareOp(n, op, v, args[0])
	case "in":
		need(1)
		return r.contains(n, args[0], v)
	case "odd", "even", "divisibleby":
		i, ok := v.(int64)
		if !ok {
			if u, isU := v.(Undefined); isU {
				r.undefinedError(n, u)
			}
			r.fail(n, "test '%s' needs an integer, not %s", name, typeName(v))
		}
		switch name {
		case "odd":
			return i%2 != 0
		case "even":
			return i%2 == 0
		}
		need(1)
		d := r.intArg(n, args[0], "divisor")
		if d == 0 {
			r.fail(n, "integer division or modulo by zero")
		}
		return i%d == 0
	case "lower", "upper":
		s, ok := v.(string)
		if !ok {
			s = str(v)
		}
		if name == "lower" {
			return pyLower(s) == s
		}
		return pyUpper(s) == s
	}
	r.fail(n, "no test named '%s'", name)
	return false
}

// sameAs is Python's "is": identity for containers, value for the rest.
func sameAs(a, b Value) bool {
	switch a := a.(type) {
	case *List, *Dict, *Namespace, *Func:
		return a == b
	case Undefined:
		_, ok := b.(Undefined)
		return ok
	}
	return a == b
}
