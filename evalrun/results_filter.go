package evalrun

import (
	"cmp"
	"strconv"
	"strings"

	"github.com/weftlabs/weft/trace/callquery"
)

// rowEvaluator evaluates a filter of eval_results/query on one grouped row,
// with the semantics package callquery states for the calls query language:
// three-valued logic, a field's text converted as a comparison with a
// boolean, integer or double literal infers, text compared by code point and
// numbers by value. Its fields are those of resultsField, read in the
// filter's scope.
type rowEvaluator struct {
	row   *ResultsRow
	scope *string
}

// tri is a three-valued truth.
type tri int8

const (
	triFalse tri = iota
	triNull
	triTrue
)

func triOf(b bool) tri {
	if b {
		return triTrue
	}
	return triFalse
}

// cond evaluates x as a condition.
func (e *rowEvaluator) cond(x callquery.Expr) tri {
	switch x := x.(type) {
	case *callquery.And:
		out := triTrue
		for _, t := range x.Terms {
			out = min(out, e.cond(t))
		}
		return out
	case *callquery.Or:
		out := triFalse
		for _, t := range x.Terms {
			out = max(out, e.cond(t))
		}
		return out
	case *callquery.Not:
		return 2 - e.cond(x.Term)
	case *callquery.Compare:
		return e.compare(x)
	case *callquery.In:
		return e.in(x)
	case *callquery.Contains:
		s, ok1 := e.value(x.Input).(string)
		t, ok2 := e.value(x.Substr).(string)
		if !ok1 || !ok2 {
			return triFalse
		}
		if x.CaseInsensitive {
			s, t = asciiLower(s), asciiLower(t)
		}
		return triOf(strings.Contains(s, t))
	}
	switch v := e.value(x).(type) {
	case bool:
		return triOf(v)
	case int64:
		return triOf(v != 0)
	case float64:
		return triOf(v != 0)
	}
	return triNull
}

// value evaluates an operand: nil (null), bool, int64, float64 or string.
func (e *rowEvaluator) value(x callquery.Expr) any {
	switch x := x.(type) {
	case *callquery.Literal:
		return x.Value
	case *callquery.FieldRef:
		if x.Field.Kind == callquery.Column {
			return e.row.RowDigest
		}
		if text, ok := fieldText(e.row, x.Field, e.scope); ok {
			return text
		}
		return nil
	case *callquery.Convert:
		return e.convert(x.Input, x.To)
	}
	switch e.cond(x) {
	case triTrue:
		return true
	case triFalse:
		return false
	}
	return nil
}

// convert evaluates $convert of input to a type.
func (e *rowEvaluator) convert(input callquery.Expr, to callquery.Cast) any {
	v := e.value(input)
	if to == callquery.ToExists {
		if f, ok := input.(*callquery.FieldRef); ok && f.Field.Kind == callquery.Dynamic {
			return v != nil && v != ""
		}
		return v != nil
	}
	switch v := v.(type) {
	case string:
		var n any
		var ok bool
		switch to {
		case callquery.ToInt:
			n, ok = callquery.TextInt(v)
		case callquery.ToDouble:
			n, ok = callquery.TextDouble(v)
		case callquery.ToBool:
			n, ok = callquery.TextBool(v)
		case callquery.ToString:
			return v
		}
		if !ok {
			return nil
		}
		return n
	case bool:
		b := int64(0)
		if v {
			b = 1
		}
		switch to {
		case callquery.ToString:
			return strconv.FormatBool(v)
		case callquery.ToDouble:
			return float64(b)
		}
		return b
	case int64:
		switch to {
		case callquery.ToString:
			return strconv.FormatInt(v, 10)
		case callquery.ToDouble:
			return float64(v)
		case callquery.ToBool:
			if v < 0 || v > 255 {
				return nil
			}
		}
		return v
	case float64:
		switch to {
		case callquery.ToDouble:
			return v
		case callquery.ToString:
			return nil
		}
		if v != float64(int64(v)) || (to == callquery.ToBool && (v < 0 || v > 255)) {
			return nil
		}
		return int64(v)
	}
	return nil
}

// operand evaluates one side of a comparison, converting a dynamic field as
// the literal on the other side infers.
func (e *rowEvaluator) operand(x, other callquery.Expr) any {
	if f, ok := x.(*callquery.FieldRef); ok && f.Field.Kind == callquery.Dynamic {
		if lit, ok := other.(*callquery.Literal); ok {
			if cast := callquery.ComparisonCast(lit); cast != "" {
				return e.convert(x, cast)
			}
		}
	}
	return e.value(x)
}

func isNullLiteral(x callquery.Expr) bool {
	l, ok := x.(*callquery.Literal)
	return ok && l.Value == nil
}

func (e *rowEvaluator) compare(x *callquery.Compare) tri {
	if isNullLiteral(x.Left) || isNullLiteral(x.Right) {
		other := x.Left
		if isNullLiteral(x.Left) {
			other = x.Right
		}
		if x.Op != callquery.Eq {
			return triNull
		}
		return triOf(e.value(other) == nil)
	}
	c, ok := compareValues(e.operand(x.Left, x.Right), e.operand(x.Right, x.Left))
	if !ok {
		return triNull
	}
	switch x.Op {
	case callquery.Eq:
		return triOf(c == 0)
	case callquery.Gt:
		return triOf(c > 0)
	case callquery.Gte:
		return triOf(c >= 0)
	case callquery.Lt:
		return triOf(c < 0)
	}
	return triOf(c <= 0)
}

func (e *rowEvaluator) in(x *callquery.In) tri {
	left := e.value(x.Left)
	if f, ok := x.Left.(*callquery.FieldRef); ok && f.Field.Kind == callquery.Dynamic {
		if cast := callquery.ListCast(x.List); cast != "" {
			left = e.convert(x.Left, cast)
		}
	}
	if left == nil {
		return triNull
	}
	for _, item := range x.List {
		if c, ok := compareValues(left, e.value(item)); ok && c == 0 {
			return triTrue
		}
	}
	return triFalse
}

// compareValues orders two values of one kind (numbers, booleans as 0 and 1,
// or text); ok false when they do not compare.
func compareValues(l, r any) (int, bool) {
	if l == nil || r == nil {
		return 0, false
	}
	if a, ok := l.(string); ok {
		b, ok := r.(string)
		return strings.Compare(a, b), ok
	}
	a, okA := number(l)
	b, okB := number(r)
	if !okA || !okB {
		return 0, false
	}
	if ai, ok := a.(int64); ok {
		if bi, ok := b.(int64); ok {
			return cmp.Compare(ai, bi), true
		}
	}
	return cmp.Compare(asFloat(a), asFloat(b)), true
}

// number reads a number or boolean as int64 or float64.
func number(v any) (any, bool) {
	switch v := v.(type) {
	case bool:
		if v {
			return int64(1), true
		}
		return int64(0), true
	case int64, float64:
		return v, true
	}
	return nil, false
}

func asFloat(v any) float64 {
	if n, ok := v.(int64); ok {
		return float64(n)
	}
	return v.(float64)
}

// asciiLower folds ASCII letters only, as case_insensitive does.
func asciiLower(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'A' && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}, s)
}
