package chat

import (
	"strings"
	"testing"
)

// testOptions are the options of a kind a test registers: nested, listed,
// inline and pointed-to structs, each checked key by key.
type testOptions struct {
	Path   string           `yaml:"path"`
	Nested testNested       `yaml:"nested"`
	List   []testNested     `yaml:"list"`
	Shared testInline       `yaml:",inline"`
	Maybe  *testNested      `yaml:"maybe"`
	Sizes  map[string]int64 `yaml:"sizes"`
}

type testNested struct {
	Depth int `yaml:"depth"`
}

type testInline struct {
	Flag bool `yaml:"flag"`
}

// An upstream's keys beyond its own are decoded into its kind's options as
// strictly as a KnownFields decoder would, at every depth, each refused key
// named with its line; a remote upstream refuses them, naming the kind
// whose key it is; a route built in code keeps the options it sets.
func TestUpstreamOptions(t *testing.T) {
	t.Parallel()
	var prepared []testOptions
	kind := UpstreamKind{Name: "test", Options: testOptions{}, Prepare: func(route *Route, u *Upstream) error {
		prepared = append(prepared, u.Options.(testOptions))
		return nil
	}}
	r, err := ParseRouting([]byte(`models:
  - name: m
    upstreams:
      - kind: test
        path: /p
        nested: {depth: 2}
        list: [{depth: 3}]
        flag: true
        maybe: {depth: 4}
        sizes: {any: 5}
`), nil, kind)
	if err != nil {
		t.Fatal(err)
	}
	got := r.Models[0].Upstreams[0].Options.(testOptions)
	if got.Path != "/p" || got.Nested.Depth != 2 || len(got.List) != 1 || got.List[0].Depth != 3 || !got.Shared.Flag ||
		got.Maybe == nil || got.Maybe.Depth != 4 || got.Sizes["any"] != 5 || len(prepared) != 1 {
		t.Fatalf("%+v (prepared %d)", got, len(prepared))
	}
	for _, tc := range []struct{ text, want string }{
		{"models:\n  - name: m\n    upstreams:\n      - kind: test\n        pth: /p\n", "line 5: field pth not found in type chat.testOptions"},
		{"models:\n  - name: m\n    upstreams:\n      - kind: test\n        nested:\n          depht: 1\n", "line 6: field depht not found in type chat.testNested"},
		{"models:\n  - name: m\n    upstreams:\n      - kind: test\n        list:\n          - {depth: 1}\n          - {dept: 1}\n", "line 7: field dept not found in type chat.testNested"},
		{"models:\n  - name: m\n    upstreams:\n      - kind: test\n        maybe: {deep: 1}\n", "line 5: field deep not found in type chat.testNested"},
		{"models:\n  - name: m\n    upstreams:\n      - url: http://x/v1\n        nested: {depth: 1}\n", "line 5: nested is for kind test only"},
		{"models:\n  - name: m\n    upstreams:\n      - url: http://x/v1\n        bogus: 1\n", "line 5: field bogus not found in type chat.Upstream"},
		{"models:\n  - name: m\n    upstreams:\n      - kind: test\n        nested: {depth: deep}\n", "cannot unmarshal"},
	} {
		if _, err := ParseRouting([]byte(tc.text), nil, kind); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.text, err, tc.want)
		}
	}

	prepared = nil
	if err := r.Add(Route{Name: "code", Upstreams: []Upstream{{Kind: "test", Options: testOptions{Path: "/code"}}}}, kind); err != nil ||
		len(prepared) != 1 || prepared[0].Path != "/code" {
		t.Fatalf("a route built in code: %v %+v", err, prepared)
	}
	if err := r.Add(Route{Name: "none", Upstreams: []Upstream{{Kind: "test"}}}, kind); err != nil || len(prepared) != 2 || prepared[1].Path != "" || prepared[1].Nested.Depth != 0 {
		t.Fatalf("a route built in code without options: %v %+v", err, prepared)
	}
	for name, u := range map[string]Upstream{
		"wrong":  {Kind: "test", Options: &testOptions{}},
		"remote": {URL: "http://x/v1", Options: testOptions{}},
	} {
		if err := r.Add(Route{Name: name, Upstreams: []Upstream{u}}, kind); err == nil {
			t.Errorf("%s: options %T accepted", name, u.Options)
		}
	}
}
