// Package jsondiff compares two JSON documents structurally: objects member
// by member (whatever their order), arrays element by element aligned by a
// longest common subsequence (so an inserted element shows as one addition,
// not as every later element changed), scalars by value. It keeps member
// order and number text as sent, for showing the result to people.
//
// The web UI's call and trace diff uses it, and so can any other comparison
// of stored JSON (object versions, dataset rows).
package jsondiff

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// Op says how a member differs.
type Op string

const (
	// Equal: the same on both sides.
	Equal Op = "equal"
	// Added: only on the right.
	Added Op = "added"
	// Removed: only on the left.
	Removed Op = "removed"
	// Changed: a scalar with another value, or a value of another kind.
	Changed Op = "changed"
	// Modified: a container (object or array of the same kind on both
	// sides) some of whose members differ.
	Modified Op = "modified"
)

// Node is one member of the comparison.
type Node struct {
	// Key is the member name, or the element's index ("" at the root). An
	// element present on the right has its right index; a removed one its
	// left index.
	Key string
	Op  Op
	// Left and Right are the member on each side (nil where absent).
	Left, Right *Value
	// Children compare the members of two containers of the same kind
	// (Equal or Modified nodes), in the left's order with the right's new
	// members placed where they appear.
	Children []*Node
}

// Value is one side of a member.
type Value struct {
	// Kind is "object", "array", "string", "number", "bool" or "null".
	Kind string
	// Text is a scalar's text (a string unquoted) or a container's compact
	// JSON, as sent.
	Text string
	// Len is the number of members of a container.
	Len int
}

// Counts sums the leaves that differ under a node.
type Counts struct {
	Added, Removed, Changed int
}

// Counts returns how many members were added, removed and changed under n
// (a changed container counts once per changed member inside it).
func (n *Node) Counts() Counts {
	var c Counts
	switch n.Op {
	case Added:
		c.Added++
	case Removed:
		c.Removed++
	case Changed:
		c.Changed++
	case Modified:
		for _, ch := range n.Children {
			cc := ch.Counts()
			c.Added += cc.Added
			c.Removed += cc.Removed
			c.Changed += cc.Changed
		}
	}
	return c
}

// Config bounds a comparison.
type Config struct {
	// MaxDepth is the deepest nesting compared. Defaults to DefaultMaxDepth.
	MaxDepth int
	// MaxAlignCells bounds the table of an array alignment (left length ×
	// right length); longer arrays are compared index by index. Defaults to
	// DefaultMaxAlignCells.
	MaxAlignCells int
}

// Defaults of Config.
const (
	DefaultMaxDepth      = 128
	DefaultMaxAlignCells = 1 << 20
)

// ErrInvalidJSON: a side is not one JSON value.
var ErrInvalidJSON = errors.New("jsondiff: invalid JSON")

// Diff compares left and right with the default Config. An empty side
// counts as absent: the root is then Added or Removed.
func Diff(left, right []byte) (*Node, error) { return Config{}.Diff(left, right) }

// Diff compares left and right.
func (cfg Config) Diff(left, right []byte) (*Node, error) {
	if cfg.MaxDepth <= 0 {
		cfg.MaxDepth = DefaultMaxDepth
	}
	if cfg.MaxAlignCells <= 0 {
		cfg.MaxAlignCells = DefaultMaxAlignCells
	}
	var l, r *value
	var err error
	if len(bytes.TrimSpace(left)) > 0 {
		if l, err = parse(left, cfg.MaxDepth); err != nil {
			return nil, fmt.Errorf("%w: left: %v", ErrInvalidJSON, err)
		}
	}
	if len(bytes.TrimSpace(right)) > 0 {
		if r, err = parse(right, cfg.MaxDepth); err != nil {
			return nil, fmt.Errorf("%w: right: %v", ErrInvalidJSON, err)
		}
	}
	switch {
	case l == nil && r == nil:
		return &Node{Op: Equal}, nil
	case l == nil:
		return &Node{Op: Added, Right: r.public()}, nil
	case r == nil:
		return &Node{Op: Removed, Left: l.public()}, nil
	}
	return cfg.compare("", l, r), nil
}

// value is a parsed JSON value that keeps member order and number text.
type value struct {
	kind    string
	text    string // scalars
	raw     []byte // compact JSON of the value
	keys    []string
	members []*value
	canon   string // order-independent form, for equality
}

func (v *value) public() *Value {
	text := v.text
	if v.kind == "object" || v.kind == "array" {
		text = string(v.raw)
	}
	return &Value{Kind: v.kind, Text: text, Len: len(v.members)}
}

func (cfg Config) compare(key string, l, r *value) *Node {
	n := &Node{Key: key, Left: l.public(), Right: r.public()}
	switch {
	case l.canon == r.canon:
		n.Op = Equal
	case l.kind != r.kind || (l.kind != "object" && l.kind != "array"):
		n.Op = Changed
	case l.kind == "object":
		n.Op = Modified
		n.Children = cfg.compareObjects(l, r)
	default:
		n.Op = Modified
		n.Children = cfg.compareArrays(l, r)
	}
	return n
}

// compareObjects pairs members by name: the left's members in order, each
// right member missing on the left placed after the left member that
// precedes it on the right.
func (cfg Config) compareObjects(l, r *value) []*Node {
	rightIndex := make(map[string]int, len(r.keys))
	for i, k := range r.keys {
		rightIndex[k] = i
	}
	leftIndex := make(map[string]bool, len(l.keys))
	for _, k := range l.keys {
		leftIndex[k] = true
	}
	// Right-only members, grouped by the nearest preceding shared member.
	after := map[string][]int{}
	prev := ""
	var leading []int
	for i, k := range r.keys {
		if leftIndex[k] {
			prev = k
			continue
		}
		if prev == "" {
			leading = append(leading, i)
		} else {
			after[prev] = append(after[prev], i)
		}
	}
	var out []*Node
	for _, i := range leading {
		out = append(out, &Node{Key: r.keys[i], Op: Added, Right: r.members[i].public()})
	}
	for i, k := range l.keys {
		if j, ok := rightIndex[k]; ok {
			out = append(out, cfg.compare(k, l.members[i], r.members[j]))
			for _, a := range after[k] {
				out = append(out, &Node{Key: r.keys[a], Op: Added, Right: r.members[a].public()})
			}
			continue
		}
		out = append(out, &Node{Key: k, Op: Removed, Left: l.members[i].public()})
	}
	return out
}

// compareArrays aligns equal elements by a longest common subsequence; the
// unmatched elements between two matches are compared pairwise in order,
// the surplus on either side added or removed.
func (cfg Config) compareArrays(l, r *value) []*Node {
	var pairs []Pair
	if len(l.members)*len(r.members) <= cfg.MaxAlignCells {
		pairs = Align(len(l.members), len(r.members), func(i, j int) bool { return l.members[i].canon == r.members[j].canon })
	}
	var out []*Node
	li, ri := 0, 0
	flush := func(lEnd, rEnd int) {
		for li < lEnd && ri < rEnd {
			out = append(out, cfg.compare(strconv.Itoa(ri), l.members[li], r.members[ri]))
			li++
			ri++
		}
		for ; li < lEnd; li++ {
			out = append(out, &Node{Key: strconv.Itoa(li), Op: Removed, Left: l.members[li].public()})
		}
		for ; ri < rEnd; ri++ {
			out = append(out, &Node{Key: strconv.Itoa(ri), Op: Added, Right: r.members[ri].public()})
		}
	}
	for _, p := range pairs {
		flush(p.Left, p.Right)
		out = append(out, cfg.compare(strconv.Itoa(p.Right), l.members[p.Left], r.members[p.Right]))
		li, ri = p.Left+1, p.Right+1
	}
	flush(len(l.members), len(r.members))
	return out
}

// Pair is one matched pair of an alignment: Left and Right index.
type Pair struct{ Left, Right int }

// Align returns a longest common subsequence of two sequences of lengths n
// and m, as matched index pairs in increasing order, with eq saying whether
// left i and right j match. It takes n×m steps and memory; callers bound the
// lengths.
func Align(n, m int, eq func(i, j int) bool) []Pair {
	if n == 0 || m == 0 {
		return nil
	}
	// lengths[i][j] is the LCS length of left[i:] and right[j:].
	lengths := make([][]int32, n+1)
	for i := range lengths {
		lengths[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if eq(i, j) {
				lengths[i][j] = lengths[i+1][j+1] + 1
			} else {
				lengths[i][j] = max(lengths[i+1][j], lengths[i][j+1])
			}
		}
	}
	var pairs []Pair
	for i, j := 0, 0; i < n && j < m; {
		switch {
		case eq(i, j):
			pairs = append(pairs, Pair{i, j})
			i++
			j++
		case lengths[i+1][j] >= lengths[i][j+1]:
			i++
		default:
			j++
		}
	}
	return pairs
}

// parse reads one JSON value, keeping member order and number text.
func parse(raw []byte, maxDepth int) (*value, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	v, err := parseValue(dec, 0, maxDepth)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("trailing data after the value")
	}
	return v, nil
}

func parseValue(dec *json.Decoder, depth, maxDepth int) (*value, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		if depth >= maxDepth {
			return nil, fmt.Errorf("nested deeper than %d", maxDepth)
		}
		v := &value{kind: "object"}
		if t == '[' {
			v.kind = "array"
		}
		for dec.More() {
			key := ""
			if v.kind == "object" {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				key, _ = k.(string)
			}
			m, err := parseValue(dec, depth+1, maxDepth)
			if err != nil {
				return nil, err
			}
			if v.kind == "object" {
				// A repeated name: the last one counts, as for JSON parsers.
				if i := slices.Index(v.keys, key); i >= 0 {
					v.keys = slices.Delete(v.keys, i, i+1)
					v.members = slices.Delete(v.members, i, i+1)
				}
				v.keys = append(v.keys, key)
			}
			v.members = append(v.members, m)
		}
		if _, err := dec.Token(); err != nil {
			return nil, err
		}
		v.finish()
		return v, nil
	case string:
		b, _ := json.Marshal(t)
		return &value{kind: "string", text: t, raw: b, canon: "s" + string(b)}, nil
	case json.Number:
		return &value{kind: "number", text: t.String(), raw: []byte(t.String()), canon: "n" + canonNumber(t.String())}, nil
	case bool:
		s := strconv.FormatBool(t)
		return &value{kind: "bool", text: s, raw: []byte(s), canon: "b" + s}, nil
	case nil:
		return &value{kind: "null", text: "null", raw: []byte("null"), canon: "null"}, nil
	}
	return nil, errors.New("unexpected token")
}

// finish computes a container's compact text and canonical form.
func (v *value) finish() {
	var raw, canon strings.Builder
	if v.kind == "array" {
		raw.WriteByte('[')
		canon.WriteByte('[')
		for i, m := range v.members {
			if i > 0 {
				raw.WriteByte(',')
				canon.WriteByte(',')
			}
			raw.Write(m.raw)
			canon.WriteString(m.canon)
		}
		raw.WriteByte(']')
		canon.WriteByte(']')
	} else {
		raw.WriteByte('{')
		order := make([]int, len(v.keys))
		for i := range order {
			order[i] = i
		}
		slices.SortFunc(order, func(a, b int) int { return strings.Compare(v.keys[a], v.keys[b]) })
		for i := range v.keys {
			if i > 0 {
				raw.WriteByte(',')
			}
			k, _ := json.Marshal(v.keys[i])
			raw.Write(k)
			raw.WriteByte(':')
			raw.Write(v.members[i].raw)
		}
		raw.WriteByte('}')
		canon.WriteByte('{')
		for n, i := range order {
			if n > 0 {
				canon.WriteByte(',')
			}
			k, _ := json.Marshal(v.keys[i])
			canon.Write(k)
			canon.WriteByte(':')
			canon.WriteString(v.members[i].canon)
		}
		canon.WriteByte('}')
	}
	v.raw = []byte(raw.String())
	v.canon = canon.String()
}

// canonNumber makes numbers that are equal as numbers compare equal (1,
// 1.0 and 1e0); a number too large for a float64 keeps its text.
func canonNumber(s string) string {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return s
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}
