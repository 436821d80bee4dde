package trace_test

import (
	"testing"

	"github.com/weftlabs/weft/trace/callquery"
)

// TestTextCasts checks callquery's conversions of a field's text, which
// eval_results/query's filters use, against this package's evaluator of the
// language (which the fuzzer holds the databases to).
func TestTextCasts(t *testing.T) {
	for _, s := range []string{"", "0", "7", "-7", "+7", "+-7", "007", "255", "256", "-1", "1.5", "1e3", "-0.0", " 2 ", "2 ", "1e400",
		"9223372036854775807", "9223372036854775808", "true", "false", "True", "abc", "0x10", ".5", "5.", "-", "1e-400", "NaN", "Infinity"} {
		want := func(to callquery.Cast) any {
			v, err := (&evaluator{}).convert(memValue{v: s}, &callquery.Literal{Value: s}, to)
			if err != nil {
				t.Fatalf("evaluator: %v", err)
			}
			if _, null := v.v.(typedNull); null {
				return nil
			}
			return v.v
		}
		got := func(v any, ok bool) any {
			if !ok {
				return nil
			}
			return v
		}
		if g, w := got(callquery.TextInt(s)), want(callquery.ToInt); g != w {
			t.Errorf("TextInt(%q) = %v, want %v", s, g, w)
		}
		if g, w := got(callquery.TextDouble(s)), want(callquery.ToDouble); g != w {
			t.Errorf("TextDouble(%q) = %v, want %v", s, g, w)
		}
		if g, w := got(callquery.TextBool(s)), want(callquery.ToBool); g != w {
			t.Errorf("TextBool(%q) = %v, want %v", s, g, w)
		}
	}
}
