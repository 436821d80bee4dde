package constrain

import (
	"bytes"
	"strings"
)

// JSON Schema objects: declared, required and additional properties.

type property struct {
	name     string
	schema   *node
	required bool
}

func (s *schemaCompiler) object(path string, n *node) (frag, error) {
	b, j := s.b, s.j
	var props []property
	declared := map[string]bool{}
	if p, ok := n.get("properties"); ok {
		if p.kind != nodeObject {
			return frag{}, errorf(ErrInvalid, "%s/properties: must be an object", path)
		}
		for i, k := range p.keys {
			props = append(props, property{name: k, schema: p.vals[i]})
			declared[k] = true
		}
	}
	extra, hasExtra := n.get("additionalProperties")
	// Without properties, any member is allowed unless the schema says
	// otherwise; with properties, only they are, as in strict mode.
	extrasAllowed := len(props) == 0
	if hasExtra {
		extrasAllowed = !(extra.kind == nodeBool && !extra.bool)
	}
	if r, ok := n.get("required"); ok {
		if r.kind != nodeArray {
			return frag{}, errorf(ErrInvalid, "%s/required: must be an array", path)
		}
		for _, it := range r.items {
			if it.kind != nodeString {
				return frag{}, errorf(ErrInvalid, "%s/required: names must be strings", path)
			}
			if declared[it.str] {
				for i := range props {
					if props[i].name == it.str {
						props[i].required = true
					}
				}
				continue
			}
			if !extrasAllowed {
				return frag{}, errorf(ErrInvalid, "%s/required: %q is required but not allowed", path, it.str)
			}
			schema := &node{kind: nodeBool, bool: true}
			if hasExtra && extra.kind == nodeObject {
				schema = extra
			}
			props = append(props, property{name: it.str, schema: schema, required: true})
			declared[it.str] = true
		}
	}

	sep := func() frag { return b.seq(j.ws(), b.literal(","), j.ws()) }
	// at[i][e]: before property i, e = 1 once some member was written.
	at := make([][2]int32, len(props)+1)
	for i := range at {
		at[i] = [2]int32{b.state(), b.state()}
	}
	for i, p := range props {
		var key bytes.Buffer
		writeJSONString(&key, p.name)
		value, err := s.schema(path+"/properties/"+escapePointer(p.name), p.schema)
		if err != nil {
			return frag{}, err
		}
		member := b.seq(b.literal(key.String()), j.ws(), b.literal(":"), j.ws(), value)
		b.link(at[i][0], member.start)
		comma := sep()
		b.link(at[i][1], comma.start)
		b.link(comma.end, member.start)
		b.link(member.end, at[i+1][1])
		if !p.required {
			b.link(at[i][0], at[i+1][0])
			b.link(at[i][1], at[i+1][1])
		}
	}
	last := at[len(props)]
	if extrasAllowed {
		value := j.anyValue()
		if hasExtra && extra.kind == nodeObject {
			v, err := s.schema(path+"/additionalProperties", extra)
			if err != nil {
				return frag{}, err
			}
			value = v
		}
		member := b.seq(s.undeclaredKey(declared), j.ws(), b.literal(":"), j.ws(), value)
		b.link(last[0], member.start)
		comma := sep()
		b.link(last[1], comma.start)
		b.link(comma.end, member.start)
		b.link(member.end, last[1])
	}
	// The white space after "{" is the only gap of an object with no
	// members: one gap, one bound.
	done := b.state()
	empty, end := b.literal("}"), b.seq(j.ws(), b.literal("}"))
	b.link(last[0], empty.start)
	b.link(last[1], end.start)
	b.link(empty.end, done)
	b.link(end.end, done)
	open := b.seq(b.literal("{"), j.ws())
	b.link(open.end, at[0][0])
	return frag{open.start, done}, nil
}

// keyBytes are the bytes an undeclared member name is written with:
// printable ASCII that needs no escaping. With no escapes, a name can only
// spell a declared one by being written the same way, which the trie
// below rules out, so no output has a duplicate key.
const keyLo, keyHi = 0x20, 0x7E

// undeclaredKey is a JSON string, of printable ASCII without escapes, that
// is none of the declared names: a trie of the names where leaving the
// trie leads to a state that accepts anything.
func (s *schemaCompiler) undeclaredKey(declared map[string]bool) frag {
	b := s.b
	start, end := b.state(), b.state()
	keyByte := func(from int32, lo, hi byte, to int32) {
		for _, r := range [][2]byte{{lo, min(hi, '"'-1)}, {max(lo, '"'+1), min(hi, '\\'-1)}, {max(lo, '\\'+1), hi}} {
			if r[0] <= r[1] {
				b.g.edges[from] = append(b.g.edges[from], edge{kind: edgeByte, lo: r[0], hi: r[1], to: to})
			}
		}
	}
	closeQuote := func(from int32) {
		b.g.edges[from] = append(b.g.edges[from], edge{kind: edgeByte, lo: '"', hi: '"', to: end})
	}
	// free(n) is the state after n bytes once the name has left the trie:
	// any name goes from there, up to Config.MaxStringLength bytes.
	limit := s.j.cfg.MaxStringLength
	var free []int32
	freeAt := func(n int) int32 {
		if limit <= 0 {
			n = 0
		}
		for len(free) <= n {
			st := b.state()
			free = append(free, st)
			closeQuote(st)
		}
		return free[n]
	}
	wireFree := func() {
		for n := 0; n < len(free); n++ {
			if limit <= 0 {
				keyByte(free[n], keyLo, keyHi, free[n])
			} else if n < limit {
				keyByte(free[n], keyLo, keyHi, freeAt(n+1))
			}
		}
	}
	type trieNode struct {
		state    int32
		depth    int
		children map[byte]*trieNode
		name     bool
	}
	newNode := func(depth int) *trieNode {
		return &trieNode{state: b.state(), depth: depth, children: map[byte]*trieNode{}}
	}
	root := newNode(0)
	for name := range declared {
		if strings.ContainsAny(name, "\"\\") || !isPrintableASCII(name) {
			continue // not writable without escapes: cannot collide
		}
		cur := root
		for i := 0; i < len(name); i++ {
			next, ok := cur.children[name[i]]
			if !ok {
				next = newNode(i + 1)
				cur.children[name[i]] = next
			}
			cur = next
		}
		cur.name = true
	}
	var wire func(t *trieNode)
	wire = func(t *trieNode) {
		if !t.name {
			closeQuote(t.state)
		}
		if limit > 0 && t.depth >= limit {
			return
		}
		lo := byte(keyLo)
		for c := byte(keyLo); ; c++ {
			if child, ok := t.children[c]; ok {
				if lo < c {
					keyByte(t.state, lo, c-1, freeAt(t.depth+1))
				}
				b.g.edges[t.state] = append(b.g.edges[t.state], edge{kind: edgeByte, lo: c, hi: c, to: child.state})
				wire(child)
				lo = c + 1
			}
			if c == keyHi {
				break
			}
		}
		if lo <= keyHi {
			keyByte(t.state, lo, keyHi, freeAt(t.depth+1))
		}
	}
	wire(root)
	wireFree()
	b.g.edges[start] = append(b.g.edges[start], edge{kind: edgeByte, lo: '"', hi: '"', to: root.state})
	return frag{start, end}
}

func isPrintableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < keyLo || s[i] > keyHi {
			return false
		}
	}
	return true
}
