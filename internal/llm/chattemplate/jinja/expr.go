package jinja

import (
	"math"
	"strings"
	"unicode/utf8"
)

func (r *renderer) eval(e expr, f *frame) Value {
	r.step(e)
	switch e := e.(type) {
	case *constExpr:
		return e.v
	case *nameExpr:
		return r.lookup(f, e.name)
	case *listExpr:
		items := make([]Value, len(e.items))
		for i, x := range e.items {
			items[i] = r.eval(x, f)
		}
		return &List{Items: items}
	case *tupleExpr:
		items := make([]Value, len(e.items))
		for i, x := range e.items {
			items[i] = r.eval(x, f)
		}
		return &List{Items: items, Tuple: true}
	case *dictExpr:
		d := NewDict()
		for i, kx := range e.keys {
			k, ok := r.eval(kx, f).(string)
			if !ok {
				r.fail(kx, "dict keys must be strings here")
			}
			d.Set(k, r.eval(e.values[i], f))
		}
		return d
	case *attrExpr:
		return r.getattr(e, r.eval(e.x, f), e.name)
	case *itemExpr:
		return r.getitem(e, r.eval(e.x, f), r.eval(e.index, f))
	case *sliceExpr:
		return r.slice(e, f)
	case *callExpr:
		fn := r.eval(e.fn, f)
		args, kwargs := r.callArgs(e, f)
		return r.callValue(e, fn, args, kwargs)
	case *filterExpr:
		return r.applyFilter(e, r.eval(e.x, f), f)
	case *testExpr:
		ok := r.applyTest(e, r.eval(e.x, f), f)
		return ok != e.negate
	case *unaryExpr:
		v := r.eval(e.x, f)
		i, fl, isFloat, ok := number(v)
		if !ok {
			r.operandError(e, v)
			r.fail(e, "bad operand type for unary %s: '%s'", e.op, typeName(v))
		}
		if e.op == "+" {
			if isFloat {
				return fl
			}
			return i
		}
		if isFloat {
			return -fl
		}
		if i == math.MinInt64 {
			r.fail(e, "integer overflow")
		}
		return -i
	case *binaryExpr:
		return r.binary(e, r.eval(e.l, f), r.eval(e.r, f))
	case *andExpr:
		if l := r.eval(e.l, f); !truthy(l) {
			return l
		}
		return r.eval(e.r, f)
	case *orExpr:
		if l := r.eval(e.l, f); truthy(l) {
			return l
		}
		return r.eval(e.r, f)
	case *notExpr:
		return !truthy(r.eval(e.x, f))
	case *compareExpr:
		left := r.eval(e.first, f)
		for i, op := range e.ops {
			right := r.eval(e.rest[i], f)
			if !r.compareOp(e, op, left, right) {
				return false
			}
			left = right
		}
		return true
	case *condExpr:
		if truthy(r.eval(e.cond, f)) {
			return r.eval(e.then, f)
		}
		if e.else_ == nil {
			return Undefined{name: "the inline if expression evaluated to false and no else section was defined"}
		}
		return r.eval(e.else_, f)
	}
	r.fail(e, "unexpected expression")
	return nil
}

// operandError fails on an undefined operand with Jinja's undefined message.
func (r *renderer) operandError(n node, vs ...Value) {
	for _, v := range vs {
		if u, ok := v.(Undefined); ok {
			r.undefinedError(n, u)
		}
	}
}

func (r *renderer) callArgs(e *callExpr, f *frame) ([]Value, *Dict) {
	args := make([]Value, 0, len(e.args))
	for _, a := range e.args {
		args = append(args, r.eval(a, f))
	}
	if e.star != nil {
		args = append(args, r.iterate(e.star, r.eval(e.star, f))...)
	}
	var kwargs *Dict
	if len(e.kwargs) > 0 || e.dstar != nil {
		kwargs = NewDict()
		for _, kw := range e.kwargs {
			if _, dup := kwargs.Get(kw.name); dup {
				r.fail(e, "got multiple values for keyword argument '%s'", kw.name)
			}
			kwargs.Set(kw.name, r.eval(kw.value, f))
		}
		if e.dstar != nil {
			d, ok := r.eval(e.dstar, f).(*Dict)
			if !ok {
				r.fail(e.dstar, "argument after ** must be a mapping")
			}
			for _, k := range d.keys {
				kwargs.Set(k, d.m[k])
			}
		}
	}
	return args, kwargs
}

func (r *renderer) callValue(n node, fn Value, args []Value, kwargs *Dict) Value {
	switch fn := fn.(type) {
	case *Func:
		return fn.fn(r, n, args, kwargs)
	case Undefined:
		r.undefinedError(n, fn)
	}
	r.fail(n, "'%s' object is not callable", typeName(fn))
	return nil
}

// getattr is Jinja's obj.name: methods and attributes first, then items.
func (r *renderer) getattr(n node, obj Value, name string) Value {
	switch o := obj.(type) {
	case Undefined:
		r.undefinedError(n, o)
	case *Dict:
		if o.display == "" { // the loop object has attributes only
			if m := r.method(n, o, name); m != nil {
				return m
			}
		}
		if v, ok := o.m[name]; ok {
			return v
		}
	case *Namespace:
		if v, ok := o.attrs.m[name]; ok {
			return v
		}
	default:
		if m := r.method(n, obj, name); m != nil {
			return m
		}
	}
	return Undefined{name: "'" + typeName(obj) + " object' has no attribute '" + name + "'"}
}

// getitem is Jinja's obj[key]: items first, then attributes for string keys.
func (r *renderer) getitem(n node, obj, key Value) Value {
	switch o := obj.(type) {
	case Undefined:
		r.undefinedError(n, o)
	case *Dict:
		if k, ok := key.(string); ok {
			if v, ok := o.m[k]; ok {
				return v
			}
		}
	case *List:
		if i, ok := indexKey(key); ok {
			if i < 0 {
				i += int64(len(o.Items))
			}
			if i >= 0 && i < int64(len(o.Items)) {
				return o.Items[i]
			}
			return Undefined{name: typeName(o) + " index out of range"}
		}
	case string:
		if i, ok := indexKey(key); ok {
			runes := []rune(o)
			if i < 0 {
				i += int64(len(runes))
			}
			if i >= 0 && i < int64(len(runes)) {
				return string(runes[i])
			}
			return Undefined{name: "string index out of range"}
		}
	}
	if k, ok := key.(string); ok {
		return r.getattr(n, obj, k)
	}
	return Undefined{name: "'" + typeName(obj) + " object' has no element " + repr(key)}
}

func indexKey(k Value) (int64, bool) {
	switch k := k.(type) {
	case int64:
		return k, true
	case bool:
		if k {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}

func (r *renderer) slice(e *sliceExpr, f *frame) Value {
	obj := r.eval(e.x, f)
	bound := func(x expr) (int64, bool) {
		if x == nil {
			return 0, false
		}
		v := r.eval(x, f)
		if v == nil {
			return 0, false
		}
		i, ok := indexKey(v)
		if !ok {
			r.fail(x, "slice indices must be integers or None")
		}
		return i, true
	}
	start, hasStart := bound(e.start)
	stop, hasStop := bound(e.stop)
	step, hasStep := bound(e.step)
	if !hasStep {
		step = 1
	}
	if step == 0 {
		r.fail(e, "slice step cannot be zero")
	}
	var length int64
	var runes []rune
	switch o := obj.(type) {
	case *List:
		length = int64(len(o.Items))
	case string:
		runes = []rune(o)
		length = int64(len(runes))
	case Undefined:
		r.undefinedError(e, o)
	case *Dict:
		r.fail(e, "unhashable type: 'slice'")
	default:
		// Jinja's getitem turns the TypeError of slicing a number or None
		// into an undefined value.
		return Undefined{name: "'" + typeName(obj) + "' object is not subscriptable"}
	}
	idx := sliceIndices(length, start, stop, step, hasStart, hasStop)
	switch o := obj.(type) {
	case *List:
		items := make([]Value, len(idx))
		for i, j := range idx {
			items[i] = o.Items[j]
		}
		return &List{Items: items, Tuple: o.Tuple}
	default:
		var b strings.Builder
		for _, j := range idx {
			b.WriteRune(runes[j])
		}
		return b.String()
	}
}

// sliceIndices resolves a Python slice against a length.
func sliceIndices(length, start, stop, step int64, hasStart, hasStop bool) []int64 {
	clamp := func(i, lo, hi int64) int64 {
		if i < lo {
			return lo
		}
		if i > hi {
			return hi
		}
		return i
	}
	if step > 0 {
		if !hasStart {
			start = 0
		} else if start < 0 {
			start = clamp(start+length, 0, length)
		} else {
			start = clamp(start, 0, length)
		}
		if !hasStop {
			stop = length
		} else if stop < 0 {
			stop = clamp(stop+length, 0, length)
		} else {
			stop = clamp(stop, 0, length)
		}
	} else {
		if !hasStart {
			start = length - 1
		} else if start < 0 {
			start = clamp(start+length, -1, length-1)
		} else {
			start = clamp(start, -1, length-1)
		}
		if !hasStop {
			stop = -1
		} else if stop < 0 {
			stop = clamp(stop+length, -1, length-1)
		} else {
			stop = clamp(stop, -1, length-1)
		}
	}
	var idx []int64
	for i := start; (step > 0 && i < stop) || (step < 0 && i > stop); i += step {
		idx = append(idx, i)
	}
	return idx
}

func (r *renderer) compareOp(n node, op string, a, b Value) bool {
	switch op {
	case "==":
		return equal(a, b)
	case "!=":
		return !equal(a, b)
	case "in":
		return r.contains(n, b, a)
	case "notin":
		return !r.contains(n, b, a)
	}
	r.operandError(n, a, b)
	c, ok := compare(a, b)
	if !ok {
		r.fail(n, "'%s' not supported between instances of '%s' and '%s'", op, typeName(a), typeName(b))
	}
	switch op {
	case "<":
		return c < 0
	case "<=":
		return c <= 0
	case ">":
		return c > 0
	}
	return c >= 0
}

// contains is Python's "item in container".
func (r *renderer) contains(n node, container, item Value) bool {
	switch c := container.(type) {
	case string:
		s, ok := item.(string)
		if !ok {
			if u, isU := item.(Undefined); isU {
				r.undefinedError(n, u)
			}
			r.fail(n, "'in <string>' requires string as left operand, not %s", typeName(item))
		}
		return strings.Contains(c, s)
	case *List:
		for _, it := range c.Items {
			if equal(it, item) {
				return true
			}
		}
		return false
	case *Dict:
		s, ok := item.(string)
		if !ok {
			return false
		}
		_, found := c.m[s]
		return found
	case *lazySeq:
		return c.containsItem(item)
	case Undefined:
		return false
	}
	r.fail(n, "argument of type '%s' is not iterable", typeName(container))
	return false
}

func (r *renderer) binary(e *binaryExpr, a, b Value) Value {
	if e.op == "~" {
		s := str(a) + str(b)
		r.checkString(e, len(s))
		return s
	}
	if s, ok := a.(string); ok && e.op == "%" {
		return r.percentFormat(e, s, b)
	}
	r.operandError(e, a, b)
	ai, af, aFloat, aNum := number(a)
	bi, bf, bFloat, bNum := number(b)
	if aNum && bNum {
		return r.arith(e, ai, af, aFloat, bi, bf, bFloat)
	}
	switch e.op {
	case "+":
		switch x := a.(type) {
		case string:
			if y, ok := b.(string); ok {
				r.checkString(e, len(x)+len(y))
				return x + y
			}
		case *List:
			if y, ok := b.(*List); ok && x.Tuple == y.Tuple {
				r.checkItems(e, len(x.Items)+len(y.Items))
				items := make([]Value, 0, len(x.Items)+len(y.Items))
				return &List{Items: append(append(items, x.Items...), y.Items...), Tuple: x.Tuple}
			}
		}
	case "*":
		seq, count := a, bi
		if aNum {
			seq, count = b, ai
		}
		if (aNum && !aFloat) || (bNum && !bFloat) {
			if count < 0 {
				count = 0
			}
			switch s := seq.(type) {
			case string:
				if count > 0 && int64(len(s)) > int64(r.limits.MaxOutputBytes)/count {
					r.checkString(e, r.limits.MaxOutputBytes+1)
				}
				return strings.Repeat(s, int(count))
			case *List:
				if count > 0 && int64(len(s.Items)) > int64(r.limits.MaxItems)/count {
					r.checkItems(e, r.limits.MaxItems+1)
				}
				items := make([]Value, 0, len(s.Items)*int(count))
				for k := int64(0); k < count; k++ {
					items = append(items, s.Items...)
				}
				return &List{Items: items, Tuple: s.Tuple}
			}
		}
	case "%":
		if s, ok := a.(string); ok {
			return r.percentFormat(e, s, b)
		}
	}
	r.fail(e, "unsupported operand type(s) for %s: '%s' and '%s'", e.op, typeName(a), typeName(b))
	return nil
}

func (r *renderer) arith(e *binaryExpr, ai int64, af float64, aFloat bool, bi int64, bf float64, bFloat bool) Value {
	isFloat := aFloat || bFloat
	overflow := func() { r.fail(e, "integer overflow") }
	switch e.op {
	case "+":
		if isFloat {
			return af + bf
		}
		s := ai + bi
		if (s > ai) != (bi > 0) {
			overflow()
		}
		return s
	case "-":
		if isFloat {
			return af - bf
		}
		s := ai - bi
		if (s < ai) != (bi > 0) {
			overflow()
		}
		return s
	case "*":
		if isFloat {
			return af * bf
		}
		if ai != 0 && bi != 0 {
			p := ai * bi
			if p/bi != ai || (ai == -1 && bi == math.MinInt64) || (bi == -1 && ai == math.MinInt64) {
				overflow()
			}
			return p
		}
		return int64(0)
	case "/":
		if bf == 0 {
			r.fail(e, "division by zero")
		}
		return af / bf
	case "//":
		if bf == 0 {
			r.fail(e, "integer division or modulo by zero")
		}
		if isFloat {
			return math.Floor(af / bf)
		}
		if ai == math.MinInt64 && bi == -1 {
			overflow()
		}
		q := ai / bi
		if (ai%bi != 0) && ((ai < 0) != (bi < 0)) {
			q--
		}
		return q
	case "%":
		if bf == 0 {
			r.fail(e, "integer division or modulo by zero")
		}
		if isFloat {
			m := math.Mod(af, bf)
			if m != 0 && (m < 0) != (bf < 0) {
				m += bf
			}
			return m
		}
		if bi == -1 {
			return int64(0)
		}
		m := ai % bi
		if m != 0 && (m < 0) != (bi < 0) {
			m += bi
		}
		return m
	case "**":
		if isFloat || bi < 0 {
			if af == 0 && bf < 0 {
				r.fail(e, "0.0 cannot be raised to a negative power")
			}
			return math.Pow(af, bf)
		}
		result := int64(1)
		base, exp := ai, bi
		for exp > 0 {
			if exp&1 == 1 {
				if result != 0 && base != 0 && absInt(result) > math.MaxInt64/absInt(base) {
					overflow()
				}
				result *= base
			}
			exp >>= 1
			if exp > 0 {
				if base != 0 && absInt(base) > math.MaxInt64/absInt(base) {
					overflow()
				}
				base *= base
			}
		}
		return result
	}
	r.fail(e, "unsupported operator %s", e.op)
	return nil
}

func absInt(i int64) int64 {
	if i < 0 {
		return -i
	}
	return i
}

func runeLen(s string) int { return utf8.RuneCountInString(s) }
