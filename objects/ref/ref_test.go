package ref_test

import (
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/weftlabs/weft/objects/ref"
)

func TestParseAndRender(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in     string
		want   ref.Ref
		render string // "" = same as in
	}{
		{"trace:///e/p/object/ds:abc", ref.Ref{Scheme: "trace", Entity: "e", Project: "p", Kind: ref.KindObject, Name: "ds", Version: "abc"}, ""},
		{"weave:///e/p/op/openai.chat.completions.create:v3", ref.Ref{Scheme: "weave", Entity: "e", Project: "p", Kind: ref.KindOp, Name: "openai.chat.completions.create", Version: "v3"}, ""},
		{"weave:///e/p/table/e3b0c442", ref.Ref{Scheme: "weave", Entity: "e", Project: "p", Kind: ref.KindTable, Digest: "e3b0c442"}, ""},
		{"trace:///e/p/call/0192f0aa-0000-7000-8000-000000000000", ref.Ref{Scheme: "trace", Entity: "e", Project: "p", Kind: ref.KindCall, ID: "0192f0aa-0000-7000-8000-000000000000"}, ""},
		{"weave:///e/p/object/ds:d1/attr/rows/id/rowdigest", ref.Ref{Scheme: "weave", Entity: "e", Project: "p", Kind: ref.KindObject, Name: "ds", Version: "d1", Extra: []string{"attr", "rows", "id", "rowdigest"}}, ""},
		{"trace:///e/p/object/m:d/key/a%2Fb%20c/index/2", ref.Ref{Scheme: "trace", Entity: "e", Project: "p", Kind: ref.KindObject, Name: "m", Version: "d", Extra: []string{"key", "a/b c", "index", "2"}}, ""},
		{"trace:///e/p/object/m:d/key/caf%C3%A9~x", ref.Ref{Scheme: "trace", Entity: "e", Project: "p", Kind: ref.KindObject, Name: "m", Version: "d", Extra: []string{"key", "café~x"}}, ""},
		{"trace:///e/p/object/m:d/", ref.Ref{Scheme: "trace", Entity: "e", Project: "p", Kind: ref.KindObject, Name: "m", Version: "d"}, "trace:///e/p/object/m:d"},
	}
	for _, tc := range tests {
		got, err := ref.Parse(tc.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Parse(%q) = %+v; want %+v", tc.in, got, tc.want)
		}
		render := tc.render
		if render == "" {
			render = tc.in
		}
		if s := got.String(); s != render {
			t.Errorf("String() = %q; want %q", s, render)
		}
	}
}

func TestSchemesAreAliases(t *testing.T) {
	t.Parallel()
	a, _ := ref.Parse("trace:///e/p/object/x:1/key/k")
	b, _ := ref.Parse("weave:///e/p/object/x:1/key/k")
	if a.WithScheme("").String() != b.WithScheme("").String() {
		t.Fatalf("%v and %v differ beyond the scheme", a, b)
	}
}

func TestParseRejects(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		"", "http://e/p/object/x:1", "trace://e/p/object/x:1", "trace:///e/p", "trace:///e/p/object/x",
		"trace:///e/p/object/x:1:2", "trace:///e/p/object/:1", "trace:///e/p/object/x:1/key",
		"trace:///e/p/object/x:1/bogus/v", "trace:///e/p/object/x:1/index/one", "trace:///e/p/object/x:1/key/%zz",
		"trace:///e/p/table/a/b", "trace:///e/p/widget/x", "trace:////p/object/x:1",
	} {
		if _, err := ref.Parse(in); !errors.Is(err, ref.ErrInvalid) {
			t.Errorf("Parse(%q) error = %v; want ErrInvalid", in, err)
		}
	}
}

func TestEscape(t *testing.T) {
	t.Parallel()
	if got := ref.Escape("a b/c:d?é_.-~"); got != "a%20b%2Fc%3Ad%3F%C3%A9_.-~" {
		t.Fatalf("Escape = %q", got)
	}
}

func ExampleParse() {
	r, _ := ref.Parse("weave:///acme/chat/object/prompts:v2/key/system%20prompt")
	fmt.Println(r.ProjectID(), r.Kind, r.Name, r.Version, r.Extra)
	fmt.Println(r.WithScheme(ref.SchemeTrace))
	// Output:
	// acme/chat object prompts v2 [key system prompt]
	// trace:///acme/chat/object/prompts:v2/key/system%20prompt
}
