package ref

import "testing"

// Any string either fails to parse with a classified error, or parses to a ref
// whose rendering parses back to the same ref.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"trace:///e/p/object/name:digest",
		"weave:///e/p/op/op.name:v3/attr/rows/id/abc",
		"trace:///e/p/table/0123abcd",
		"trace:///e/p/call/0190-aaaa/key/x%2Fy/index/3",
		"trace:///e/p/object/n%3Ame:d/key/%E2%9C%93",
		"wandb-artifact:///e/p/m:step3",
		"trace:///", "trace:////", "weave:///e/p/obj/x:1", "", "\x00", "trace:///e/p/object/:",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := Parse(s)
		if err != nil {
			return
		}
		again, err := Parse(r.String())
		if err != nil {
			t.Fatalf("Parse(%q) = %+v, whose String %q does not parse: %v", s, r, r.String(), err)
		}
		if again.String() != r.String() {
			t.Fatalf("round trip of %q changed it: %q then %q", s, r.String(), again.String())
		}
	})
}
