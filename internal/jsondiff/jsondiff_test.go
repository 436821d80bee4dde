package jsondiff

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// flat lists every node below the root as "path op left→right", depth first.
func flat(n *Node) []string {
	var out []string
	var walk func(prefix string, n *Node)
	walk = func(prefix string, n *Node) {
		for _, c := range n.Children {
			p := prefix + "/" + c.Key
			l, r := "-", "-"
			if c.Left != nil {
				l = c.Left.Text
			}
			if c.Right != nil {
				r = c.Right.Text
			}
			out = append(out, fmt.Sprintf("%s %s %s→%s", p, c.Op, l, r))
			walk(p, c)
		}
	}
	walk("", n)
	return out
}

func TestDiff(t *testing.T) {
	for _, tc := range []struct {
		name, left, right string
		root              Op
		want              []string
		counts            Counts
	}{
		{
			name: "objects compare by member whatever the order; numbers by value",
			left: `{"a":1,"b":{"x":true,"y":[1,2]}}`, right: `{"b":{"y":[1,2],"x":true},"a":1.0}`,
			root: Equal,
		},
		{
			name: "changed, removed and added members, the new one placed after its predecessor on the right",
			left: `{"model":"gpt-4o","temperature":0.2,"seed":7}`, right: `{"model":"gpt-4o-mini","temperature":0.2,"top_p":1}`,
			root: Modified,
			want: []string{
				"/model changed gpt-4o→gpt-4o-mini",
				"/temperature equal 0.2→0.2",
				"/top_p added -→1",
				"/seed removed 7→-",
			},
			counts: Counts{Added: 1, Removed: 1, Changed: 1},
		},
		{
			name: "an inserted element is one addition, not every later element changed",
			left: `["a","b","c","d"]`, right: `["a","x","b","c","d"]`,
			root: Modified,
			want: []string{
				"/0 equal a→a",
				"/1 added -→x",
				"/2 equal b→b",
				"/3 equal c→c",
				"/4 equal d→d",
			},
			counts: Counts{Added: 1},
		},
		{
			name:  "elements between matches are compared pairwise, deep",
			left:  `[{"role":"user","content":"hi"},{"role":"assistant","content":"hello"}]`,
			right: `[{"role":"user","content":"hi"},{"role":"assistant","content":"hey"},{"role":"user","content":"bye"}]`,
			root:  Modified,
			want: []string{
				`/0 equal {"role":"user","content":"hi"}→{"role":"user","content":"hi"}`,
				`/1 modified {"role":"assistant","content":"hello"}→{"role":"assistant","content":"hey"}`,
				"/1/role equal assistant→assistant",
				"/1/content changed hello→hey",
				`/2 added -→{"role":"user","content":"bye"}`,
			},
			counts: Counts{Added: 1, Changed: 1},
		},
		{
			name: "a value of another kind is changed, not descended into",
			left: `{"a":{"b":1}}`, right: `{"a":[1]}`,
			root:   Modified,
			want:   []string{`/a changed {"b":1}→[1]`},
			counts: Counts{Changed: 1},
		},
		{
			name: "a removed element keeps its left index",
			left: `[1,2,3]`, right: `[1,3]`,
			root:   Modified,
			want:   []string{"/0 equal 1→1", "/1 removed 2→-", "/1 equal 3→3"},
			counts: Counts{Removed: 1},
		},
		{
			name: "a string that looks like a number is no number",
			left: `{"n":"1"}`, right: `{"n":1}`,
			root: Modified, want: []string{"/n changed 1→1"}, counts: Counts{Changed: 1},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Diff([]byte(tc.left), []byte(tc.right))
			if err != nil {
				t.Fatal(err)
			}
			if d.Op != tc.root {
				t.Fatalf("root %s, want %s", d.Op, tc.root)
			}
			if got := flat(d); strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			if c := d.Counts(); c != tc.counts {
				t.Fatalf("counts %+v, want %+v", c, tc.counts)
			}
		})
	}
}

func TestDiffSides(t *testing.T) {
	d, err := Diff(nil, []byte(`{"a":1}`))
	if err != nil || d.Op != Added || d.Right.Kind != "object" || d.Right.Len != 1 {
		t.Fatalf("absent left: %+v %v", d, err)
	}
	if _, err := Diff([]byte(`{"a":`), []byte(`1`)); !errors.Is(err, ErrInvalidJSON) {
		t.Fatalf("truncated JSON: %v", err)
	}
	if _, err := Diff([]byte(`1 2`), []byte(`1`)); !errors.Is(err, ErrInvalidJSON) {
		t.Fatalf("two values: %v", err)
	}
	deep := strings.Repeat("[", 200) + strings.Repeat("]", 200)
	if _, err := Diff([]byte(deep), []byte(`1`)); !errors.Is(err, ErrInvalidJSON) {
		t.Fatalf("too deep: %v", err)
	}
	// Past MaxAlignCells arrays compare index by index.
	d, err = Config{MaxAlignCells: 1}.Diff([]byte(`["a","b"]`), []byte(`["x","a","b"]`))
	if err != nil {
		t.Fatal(err)
	}
	if c := d.Counts(); c != (Counts{Changed: 2, Added: 1}) {
		t.Fatalf("index-wise: %+v", c)
	}
}

func TestAlign(t *testing.T) {
	left, right := strings.Split("chat,tool,tool,chat", ","), strings.Split("chat,tool,chat,summarize", ",")
	pairs := Align(len(left), len(right), func(i, j int) bool { return left[i] == right[j] })
	if fmt.Sprint(pairs) != "[{0 0} {1 1} {3 2}]" {
		t.Fatalf("alignment: %v", pairs)
	}
	if Align(0, 3, nil) != nil {
		t.Fatal("empty side")
	}
}

// FuzzDiff checks, for any two documents, that comparing succeeds or reports
// invalid JSON, that a document equals itself, and that a comparison is
// Equal exactly when nothing was counted as different.
func FuzzDiff(f *testing.F) {
	f.Add([]byte(`{"a":[1,2,{"b":null}]}`), []byte(`{"a":[1,{"b":false},2],"c":"x"}`))
	f.Add([]byte(`[1,1,1]`), []byte(`[1]`))
	f.Add([]byte(`"s"`), []byte(`1e400`))
	f.Fuzz(func(t *testing.T, left, right []byte) {
		d, err := Diff(left, right)
		if err != nil {
			if !errors.Is(err, ErrInvalidJSON) {
				t.Fatalf("error of another kind: %v", err)
			}
			return
		}
		if (d.Op == Equal) != (d.Counts() == Counts{}) {
			t.Fatalf("op %s with counts %+v", d.Op, d.Counts())
		}
		self, err := Diff(left, left)
		if err != nil || self.Op != Equal {
			t.Fatalf("a document differs from itself: %v %v", self, err)
		}
	})
}
