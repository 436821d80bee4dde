package callquery

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
