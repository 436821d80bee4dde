package constrain

import "math/big"

// oneOf admits a value valid under exactly one branch. Compiled as a
// choice between branches it is exact only when no value is valid under
// two of them, so the compiler takes it when it can show the branches
// disjoint and refuses it, naming it, otherwise: by their types (integer
// within number), by their enum or const values, or, for objects, by a
// property every branch requires with const or enum values no other
// branch shares (a discriminator).

// disjointBranches returns an error naming the first two branches of a
// oneOf that may share a value.
func (s *schemaCompiler) disjointBranches(path string, branches []*node) error {
	sigs := make([]branchSignature, len(branches))
	for i, b := range branches {
		sigs[i] = s.signature(b, 0)
	}
	for i := range sigs {
		for j := i + 1; j < len(sigs); j++ {
			if !sigs[i].disjoint(sigs[j]) {
				return errorf(ErrUnsupported, "JSON Schema keyword %q at %s: branches %d and %d may both match one value, which oneOf forbids and a choice between branches cannot rule out; use anyOf, or branches of different types, distinct const or enum values, or a required property with distinct const values", "oneOf", path, i, j)
			}
		}
	}
	return nil
}

// branchSignature is what tells values of a schema apart: the types it
// admits (nil: any), its enum or const values (nil: not a list), and the
// const or enum values of its required properties that have them.
type branchSignature struct {
	types         []string
	values        []*node
	discriminator map[string][]*node
}

// signature reads a branch, following $ref a few levels.
func (s *schemaCompiler) signature(n *node, depth int) branchSignature {
	var sig branchSignature
	if n == nil || n.kind != nodeObject {
		return sig // true (any value) or malformed: overlaps everything
	}
	if r, ok := n.get("$ref"); ok && r.kind == nodeString && depth < 8 {
		if target, err := s.resolve(r.str); err == nil {
			return s.signature(target, depth+1)
		}
		return sig
	}
	sig.values = literals(n)
	if types, err := schemaTypes("", n); err == nil {
		sig.types = types
	}
	if sig.values != nil {
		sig.types = nil
		for _, v := range sig.values {
			sig.types = append(sig.types, v.typeName())
		}
	}
	props, _ := n.get("properties")
	required, _ := n.get("required")
	if props == nil || required == nil || required.kind != nodeArray {
		return sig
	}
	for _, r := range required.items {
		if r.kind != nodeString {
			continue
		}
		if p, ok := props.get(r.str); ok {
			if vals := literals(p); vals != nil {
				if sig.discriminator == nil {
					sig.discriminator = map[string][]*node{}
				}
				sig.discriminator[r.str] = vals
			}
		}
	}
	return sig
}

// literals is a schema's const (as one value) or enum values, nil when it
// has neither.
func literals(n *node) []*node {
	if c, ok := n.get("const"); ok {
		return []*node{c}
	}
	if e, ok := n.get("enum"); ok && e.kind == nodeArray {
		return e.items
	}
	return nil
}

func (a branchSignature) disjoint(b branchSignature) bool {
	if a.values != nil && b.values != nil {
		for _, x := range a.values {
			for _, y := range b.values {
				if sameValue(x, y) {
					return false
				}
			}
		}
		return true
	}
	if a.types != nil && b.types != nil && !typesOverlap(a.types, b.types) {
		return true
	}
	for key, xs := range a.discriminator {
		ys, ok := b.discriminator[key]
		if !ok {
			continue
		}
		shared := false
		for _, x := range xs {
			for _, y := range ys {
				shared = shared || sameValue(x, y)
			}
		}
		if !shared {
			return true
		}
	}
	return false
}

func typesOverlap(a, b []string) bool {
	for _, x := range a {
		for _, y := range b {
			if x == y || x == "integer" && y == "number" || x == "number" && y == "integer" {
				return true
			}
		}
	}
	return false
}

// sameValue is JSON equality: numbers by value, objects regardless of
// member order.
func sameValue(a, b *node) bool {
	if a.kind != b.kind {
		return false
	}
	switch a.kind {
	case nodeNull:
		return true
	case nodeBool:
		return a.bool == b.bool
	case nodeString:
		return a.str == b.str
	case nodeNumber:
		x, okx := new(big.Rat).SetString(a.num.String())
		y, oky := new(big.Rat).SetString(b.num.String())
		return okx && oky && x.Cmp(y) == 0
	case nodeArray:
		if len(a.items) != len(b.items) {
			return false
		}
		for i := range a.items {
			if !sameValue(a.items[i], b.items[i]) {
				return false
			}
		}
		return true
	}
	if len(a.keys) != len(b.keys) {
		return false
	}
	for i, k := range a.keys {
		v, ok := b.get(k)
		if !ok || !sameValue(a.vals[i], v) {
			return false
		}
	}
	return true
}
