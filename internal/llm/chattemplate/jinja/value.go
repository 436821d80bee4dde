package jinja

import (
	"fmt"
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Value is a template value. Its dynamic type is one of: nil (Python's
// None), Undefined, bool, int64, float64, string, *List, *Dict, *Namespace
// or *Func. Values handed to a template are never modified by it.
type Value = any

// bigInt is an integer beyond int64, kept exact as Python keeps the JSON
// integers it decodes; templates print, compare and serialize it but do no
// arithmetic with it.
type bigInt struct{ n *big.Int }

// Undefined is what looking up a missing variable, key or attribute gives:
// falsy, printed as "", iterable as empty, an error when used otherwise —
// Jinja's default Undefined.
type Undefined struct {
	name string // what was looked up, for error messages
}

// List is a Python list, or a tuple when Tuple is set (they print and
// compare differently).
type List struct {
	Items []Value
	Tuple bool
	// view is the Python type of a list-like result that prints its own
	// way: "dict_items", "dict_keys", "dict_values", or a range's repr.
	view string
}

// NewList makes a list of the given items.
func NewList(items ...Value) *List { return &List{Items: items} }

// Dict is a mapping with string keys that keeps insertion order, as Python
// dicts (and the JSON they come from) do.
type Dict struct {
	keys []string
	m    map[string]Value
	// display, when set, is how the value prints: the loop object prints as
	// Python's <LoopContext 1/3>.
	display string
}

// NewDict makes an empty dict.
func NewDict() *Dict { return &Dict{m: map[string]Value{}} }

// Set adds or replaces a key; a new key goes last.
func (d *Dict) Set(k string, v Value) {
	if _, ok := d.m[k]; !ok {
		d.keys = append(d.keys, k)
	}
	d.m[k] = v
}

// Get returns the value of a key.
func (d *Dict) Get(k string) (Value, bool) {
	v, ok := d.m[k]
	return v, ok
}

// Keys returns the keys in order.
func (d *Dict) Keys() []string { return d.keys }

// Len is the number of keys.
func (d *Dict) Len() int { return len(d.keys) }

func (d *Dict) copyDict() *Dict {
	c := &Dict{keys: append([]string(nil), d.keys...), m: make(map[string]Value, len(d.m))}
	for k, v := range d.m {
		c.m[k] = v
	}
	return c
}

// Namespace is the mutable object namespace() makes; "set ns.x = ..." is the
// only assignment that outlives a loop iteration.
type Namespace struct {
	attrs *Dict
}

// Func is a callable: a global function, a bound method or a macro.
type Func struct {
	name string
	fn   func(r *renderer, call node, args []Value, kwargs *Dict) Value
}

func typeName(v Value) string {
	switch v := v.(type) {
	case nil:
		return "NoneType"
	case Undefined:
		return "Undefined"
	case bool:
		return "bool"
	case int64, bigInt:
		return "int"
	case float64:
		return "float"
	case string:
		return "str"
	case *List:
		if v.Tuple {
			return "tuple"
		}
		if strings.HasPrefix(v.view, "range") {
			return "range"
		}
		if v.view != "" {
			return v.view
		}
		return "list"
	case *lazySeq:
		return v.kind
	case *Dict:
		return "dict"
	case *Namespace:
		return "Namespace"
	case *Func:
		return "function"
	}
	return fmt.Sprintf("%T", v)
}

func truthy(v Value) bool {
	switch v := v.(type) {
	case nil, Undefined:
		return false
	case bool:
		return v
	case int64:
		return v != 0
	case float64:
		return v != 0
	case string:
		return v != ""
	case *List:
		return len(v.Items) > 0
	case *Dict:
		return v.Len() > 0
	case bigInt:
		return v.n.Sign() != 0
	}
	return true
}

// str is Python's str() of a value, which is what printing it writes.
func str(v Value) string {
	switch v := v.(type) {
	case string:
		return v
	case Undefined:
		return ""
	case nil:
		return "None"
	case bool:
		if v {
			return "True"
		}
		return "False"
	case int64:
		return strconv.FormatInt(v, 10)
	case float64:
		return floatRepr(v)
	case bigInt:
		return v.n.String()
	}
	return repr(v)
}

// maxValueDepth bounds how deeply the functions that walk values (printing,
// comparing, hashing) recurse: values can nest deeply or, through a
// namespace holding itself, without end.
const maxValueDepth = 1000

func tooDeep() {
	panic(failure{&RenderError{Msg: fmt.Sprintf("value nested more than %d deep (or containing itself)", maxValueDepth), Err: ErrLimit}})
}

// repr is Python's repr(), used for the items of printed containers.
func repr(v Value) string { return reprDepth(v, 0) }

func reprDepth(v Value, depth int) string {
	if depth > maxValueDepth {
		tooDeep()
	}
	switch v := v.(type) {
	case string:
		return quotePy(v)
	case Undefined:
		return "Undefined"
	case *lazySeq:
		return v.String()
	case *List:
		if strings.HasPrefix(v.view, "range(") {
			return v.view
		}
		var b strings.Builder
		if v.view != "" {
			b.WriteString(v.view + "(")
		}
		open, close := "[", "]"
		if v.Tuple {
			open, close = "(", ")"
		}
		b.WriteString(open)
		for i, it := range v.Items {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(reprDepth(it, depth+1))
		}
		if v.Tuple && len(v.Items) == 1 {
			b.WriteString(",")
		}
		b.WriteString(close)
		if v.view != "" {
			b.WriteString(")")
		}
		return b.String()
	case *Dict:
		if v.display != "" {
			return v.display
		}
		var b strings.Builder
		b.WriteString("{")
		for i, k := range v.keys {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(quotePy(k))
			b.WriteString(": ")
			b.WriteString(reprDepth(v.m[k], depth+1))
		}
		b.WriteString("}")
		return b.String()
	case *Namespace:
		return "<Namespace " + reprDepth(v.attrs, depth+1) + ">"
	case *Func:
		return "<function " + v.name + ">"
	}
	return str(v)
}

// quotePy quotes a string as Python's repr does.
func quotePy(s string) string {
	q := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 && strings.IndexByte(s, '"') < 0 {
		q = '"'
	}
	var b strings.Builder
	b.WriteByte(q)
	for _, r := range s {
		switch {
		case r == rune(q) || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == ' ' || (r < utf8.RuneSelf && r >= 0x20 && r != 0x7f):
			b.WriteRune(r)
		case r < 0x100 && !unicode.IsPrint(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case !unicode.IsPrint(r) && r < 0x10000:
			fmt.Fprintf(&b, `\u%04x`, r)
		case !unicode.IsPrint(r):
			fmt.Fprintf(&b, `\U%08x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte(q)
	return b.String()
}

// floatRepr is Python's repr() of a float: the shortest digits that round
// trip, in exponent form below 1e-4 and from 1e16 on.
func floatRepr(f float64) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	e := strconv.FormatFloat(f, 'e', -1, 64) // d.ddde±XX
	mant, expStr, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(expStr)
	if exp < -4 || exp >= 16 {
		sign := "+"
		if exp < 0 {
			sign, exp = "-", -exp
		}
		return fmt.Sprintf("%se%s%02d", mant, sign, exp)
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.ContainsAny(s, ".") {
		s += ".0"
	}
	return s
}

// number converts bools and numbers for arithmetic; ok is false otherwise.
func number(v Value) (i int64, f float64, isFloat, ok bool) {
	switch v := v.(type) {
	case bool:
		if v {
			return 1, 1, false, true
		}
		return 0, 0, false, true
	case int64:
		return v, float64(v), false, true
	case float64:
		return 0, v, true, true
	}
	return 0, 0, false, false
}

// equal is Python's ==.
func equal(a, b Value) bool { return equalDepth(a, b, 0) }

func equalDepth(a, b Value, depth int) bool {
	if depth > maxValueDepth {
		tooDeep()
	}
	if c, ok := compareBig(a, b); ok {
		return c == 0
	}
	if ai, af, aFloat, ok := number(a); ok {
		bi, bf, bFloat, ok := number(b)
		if !ok {
			return false
		}
		if aFloat || bFloat {
			return af == bf
		}
		return ai == bi
	}
	switch a := a.(type) {
	case nil:
		return b == nil
	case Undefined:
		_, ok := b.(Undefined)
		return ok
	case string:
		bs, ok := b.(string)
		return ok && a == bs
	case *List:
		bl, ok := b.(*List)
		if !ok || a.Tuple != bl.Tuple || len(a.Items) != len(bl.Items) {
			return false
		}
		for i := range a.Items {
			if !equalDepth(a.Items[i], bl.Items[i], depth+1) {
				return false
			}
		}
		return true
	case *Dict:
		bd, ok := b.(*Dict)
		if !ok || a.Len() != bd.Len() {
			return false
		}
		for k, v := range a.m {
			w, ok := bd.m[k]
			if !ok || !equalDepth(v, w, depth+1) {
				return false
			}
		}
		return true
	}
	return a == b
}

// compare orders two values as Python's < does; ok is false when Python
// would raise a TypeError.
func compare(a, b Value) (int, bool) { return compareDepth(a, b, 0) }

func compareDepth(a, b Value, depth int) (int, bool) {
	if depth > maxValueDepth {
		tooDeep()
	}
	if c, ok := compareBig(a, b); ok {
		return c, true
	}
	if ai, af, aFloat, ok := number(a); ok {
		bi, bf, bFloat, ok := number(b)
		if !ok {
			return 0, false
		}
		if aFloat || bFloat {
			switch {
			case af < bf:
				return -1, true
			case af > bf:
				return 1, true
			}
			return 0, true
		}
		switch {
		case ai < bi:
			return -1, true
		case ai > bi:
			return 1, true
		}
		return 0, true
	}
	switch a := a.(type) {
	case string:
		if bs, ok := b.(string); ok {
			return strings.Compare(a, bs), true
		}
	case *List:
		if bl, ok := b.(*List); ok && a.Tuple == bl.Tuple {
			for i := 0; i < len(a.Items) && i < len(bl.Items); i++ {
				if equalDepth(a.Items[i], bl.Items[i], depth+1) {
					continue
				}
				return compareDepth(a.Items[i], bl.Items[i], depth+1)
			}
			return compareInts(len(a.Items), len(bl.Items)), true
		}
	}
	return 0, false
}

// compareBig orders numbers when at least one is a bigInt.
func compareBig(a, b Value) (int, bool) {
	_, aBig := a.(bigInt)
	_, bBig := b.(bigInt)
	if !aBig && !bBig {
		return 0, false
	}
	toFloat := func(v Value) (*big.Float, bool) {
		if x, ok := v.(bigInt); ok {
			return new(big.Float).SetInt(x.n), true
		}
		i, f, isFloat, ok := number(v)
		if !ok || math.IsNaN(f) {
			return nil, false
		}
		if isFloat {
			return big.NewFloat(f), true
		}
		return new(big.Float).SetInt64(i), true
	}
	x, ok1 := toFloat(a)
	y, ok2 := toFloat(b)
	if !ok1 || !ok2 {
		return 0, false
	}
	return x.Cmp(y), true
}

func compareInts(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// hashKey identifies a value for unique(); ok is false for unhashable ones.
func hashKey(v Value) (string, bool) { return hashKeyDepth(v, 0) }

func hashKeyDepth(v Value, depth int) (string, bool) {
	if depth > maxValueDepth {
		tooDeep()
	}
	switch v := v.(type) {
	case nil, string, Undefined:
		return fmt.Sprintf("%T:%v", v, v), true
	case bigInt:
		return "n:" + v.n.String(), true
	case bool:
		if v {
			return hashKey(int64(1))
		}
		return hashKey(int64(0))
	case int64:
		return "n:" + strconv.FormatFloat(float64(v), 'g', -1, 64) + ":" + strconv.FormatInt(v, 10), true
	case float64:
		if v == math.Trunc(v) && math.Abs(v) < 1<<62 {
			return "n:" + strconv.FormatFloat(v, 'g', -1, 64) + ":" + strconv.FormatInt(int64(v), 10), true
		}
		return "n:" + strconv.FormatFloat(v, 'g', -1, 64), true
	case *List:
		if !v.Tuple {
			return "", false
		}
		parts := make([]string, len(v.Items))
		for i, it := range v.Items {
			k, ok := hashKeyDepth(it, depth+1)
			if !ok {
				return "", false
			}
			parts[i] = k
		}
		return "t:(" + strings.Join(parts, ",") + ")", true
	}
	return "", false
}

// sortValues sorts stably with Python's ordering; it reports the first pair
// that cannot be compared.
func sortValues(items []Value, key func(Value) Value, reverse bool) (err error) {
	sort.SliceStable(items, func(i, j int) bool {
		a, b := key(items[i]), key(items[j])
		c, ok := compare(a, b)
		if !ok && err == nil {
			err = fmt.Errorf("'<' not supported between instances of '%s' and '%s'", typeName(a), typeName(b))
		}
		if reverse {
			return c > 0
		}
		return c < 0
	})
	return err
}
