package callquery

import (
	"errors"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// Weave converts a dynamic field (a value inside inputs, output, attributes
// or summary, whose type the database does not know) before comparing it
// with a literal. These rules are part of the language: the SQL compiler
// and any other evaluator read them from here.

// ComparisonCast is the conversion a comparison with lit applies to a
// dynamic field on its other side: the literal's own kind for a boolean,
// integer or double, none ("") for a string, null or a nil literal.
func ComparisonCast(lit *Literal) Cast {
	if lit == nil {
		return ""
	}
	switch lit.Value.(type) {
	case bool:
		return ToBool
	case int64:
		return ToInt
	case float64:
		return ToDouble
	}
	return ""
}

// ListCast is the conversion $in applies to a dynamic field compared with
// list: the literals' shared kind when they are all of one, double for
// integers and doubles together, none ("") otherwise or when an element is
// not a literal.
func ListCast(list []Expr) Cast {
	var shared Cast
	for _, e := range list {
		l, ok := e.(*Literal)
		cast := ComparisonCast(l)
		if !ok || cast == "" {
			return ""
		}
		switch {
		case shared == "" || shared == cast:
			shared = cast
		case (shared == ToInt && cast == ToDouble) || (shared == ToDouble && cast == ToInt):
			shared = ToDouble
		default:
			return ""
		}
	}
	return shared
}

// TextInt, TextDouble and TextBool are $convert of a dynamic field's text
// to int, double and bool (and so the cast a comparison infers), for an
// evaluator that holds the text itself; ok false is null. int: an optional
// sign and digits within the int64 range. double: a JSON number within the
// double range (white space around it allowed). bool: "true" 1, "false" 0,
// and an int text from 0 to 255 itself.
func TextInt(s string) (n int64, ok bool) {
	digits := strings.TrimLeft(s, "+-")
	if len(s)-len(digits) > 1 || digits == "" || strings.Trim(digits, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimPrefix(s, "+"), 10, 64)
	return n, err == nil
}

// TextDouble: see TextInt.
func TextDouble(s string) (float64, bool) {
	t := strings.Trim(s, " \t\r\n")
	if !jsonNumber.MatchString(t) {
		return 0, false
	}
	f, err := strconv.ParseFloat(t, 64)
	if math.IsInf(f, 0) || (err != nil && !errors.Is(err, strconv.ErrRange)) {
		return 0, false
	}
	return f, true
}

// TextBool: see TextInt.
func TextBool(s string) (int64, bool) {
	switch s {
	case "true":
		return 1, true
	case "false":
		return 0, true
	}
	n, ok := TextInt(s)
	return n, ok && n >= 0 && n <= 255
}

// jsonNumber is the text of a JSON number.
var jsonNumber = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)
