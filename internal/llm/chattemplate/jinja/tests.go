package jinja

import "math"

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
	case "sameas", "eq", "equalto", "==", "ne", "!=", "lt", "lessthan", "<", "le", "<=", "gt", "greaterthan", ">", "ge", ">=", "in", "divisibleby":
		if len(args) > 1 {
			r.fail(n, "test '%s' takes 1 argument, %d given", name, len(args))
		}
	default:
		if len(args) > 0 {
			r.fail(n, "test '%s' takes no argument, %d given", name, len(args))
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
		case *lazySeq:
			return name == "iterable"
		}
		return false
	case "callable":
		// Jinja's Undefined has __call__ (it raises), so it counts.
		switch v.(type) {
		case *Func, Undefined:
			return true
		}
		return false
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
		r.operandError(n, v)
		i, f, isFloat, ok := number(v)
		if !ok {
			r.fail(n, "test '%s' needs a number, not %s", name, typeName(v))
		}
		div := int64(2)
		if name == "divisibleby" {
			need(1)
			div = r.intArg(n, args[0], "divisor")
			if div == 0 {
				r.fail(n, "integer division or modulo by zero")
			}
		}
		var rem float64
		if isFloat {
			rem = math.Mod(f, float64(div))
			if rem != 0 && (rem < 0) != (div < 0) {
				rem += float64(div)
			}
		} else {
			m := i % div
			if m != 0 && (m < 0) != (div < 0) {
				m += div
			}
			rem = float64(m)
		}
		switch name {
		case "odd":
			return rem == 1
		case "even":
			return rem == 0
		}
		return rem == 0
	case "lower", "upper":
		// str(value).islower() / .isupper(): at least one cased character.
		return stringClass(str(v), "is"+name)
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
