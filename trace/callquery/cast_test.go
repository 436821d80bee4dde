package callquery

import "testing"

func TestListCast(t *testing.T) {
	lit := func(v any) Expr { return &Literal{Value: v} }
	for _, c := range []struct {
		name string
		list []Expr
		want Cast
	}{
		{"integers", []Expr{lit(int64(1)), lit(int64(2))}, ToInt},
		{"integers and doubles", []Expr{lit(int64(1)), lit(2.5)}, ToDouble},
		{"booleans", []Expr{lit(true), lit(false)}, ToBool},
		{"strings", []Expr{lit("a"), lit("b")}, ""},
		{"mixed kinds", []Expr{lit(true), lit(int64(1))}, ""},
		{"a null", []Expr{lit(int64(1)), lit(nil)}, ""},
		{"a field", []Expr{lit(int64(1)), &FieldRef{}}, ""},
		{"empty", nil, ""},
	} {
		if got := ListCast(c.list); got != c.want {
			t.Errorf("%s: ListCast = %q, want %q", c.name, got, c.want)
		}
	}
}
