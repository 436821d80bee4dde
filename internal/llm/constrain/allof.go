package constrain

import (
	"bytes"
	"slices"
	"strconv"
)

// allOf is compiled by merging its schemas into one: properties are
// united (a property several schemas declare must satisfy each of them),
// required names are united, types intersected, and each schema's
// additionalProperties still governs the names it does not declare. Any
// other keyword may appear in several schemas only with the same value;
// schemas that cannot be merged this way are refused by name.

// maxAllOfDepth bounds how many $ref an allOf may follow while merging.
const maxAllOfDepth = 16

// mergeAllOf is n with its allOf folded in.
func (s *schemaCompiler) mergeAllOf(path string, n *node) (*node, error) {
	parts, err := s.allOfParts(path, n, 0)
	if err != nil {
		return nil, err
	}
	var objects []*node
	for _, p := range parts {
		switch {
		case p.kind == nodeBool && !p.bool:
			return nil, errorf(ErrInvalid, "the schema at %s/allOf admits no value", path)
		case p.kind == nodeObject:
			objects = append(objects, p)
		case p.kind != nodeBool:
			return nil, errorf(ErrInvalid, "%s/allOf: a schema must be an object or a boolean", path)
		}
	}
	merged := &node{kind: nodeObject}
	put := func(k string, v *node) {
		merged.keys = append(merged.keys, k)
		merged.vals = append(merged.vals, v)
	}

	// Properties: every name any schema declares, with every schema that
	// constrains its value there.
	var names []string
	declared := map[string][]*node{}
	for _, o := range objects {
		if p, ok := o.get("properties"); ok && p.kind == nodeObject {
			for _, k := range p.keys {
				if _, seen := declared[k]; !seen {
					names = append(names, k)
					declared[k] = nil
				}
			}
		}
	}
	forbidden := map[string]bool{}
	var extras []*node
	extrasForbidden := false
	for _, o := range objects {
		props, _ := o.get("properties")
		extra, hasExtra := o.get("additionalProperties")
		for _, name := range names {
			if v, ok := props.get(name); ok {
				declared[name] = append(declared[name], v)
				continue
			}
			switch {
			case !hasExtra:
			case extra.kind == nodeBool && !extra.bool:
				forbidden[name] = true
			case extra.kind != nodeBool:
				declared[name] = append(declared[name], extra)
			}
		}
		if hasExtra {
			switch {
			case extra.kind == nodeBool && !extra.bool:
				extrasForbidden = true
			case extra.kind != nodeBool:
				extras = append(extras, extra)
			}
		}
	}
	var required []*node
	requiredNames := map[string]bool{}
	for _, o := range objects {
		if r, ok := o.get("required"); ok && r.kind == nodeArray {
			for _, it := range r.items {
				if it.kind == nodeString && !requiredNames[it.str] {
					requiredNames[it.str] = true
					required = append(required, it)
				}
			}
		}
	}

	// Every other keyword: once, or the same everywhere.
	types, err := intersectTypes(path, objects)
	if err != nil {
		return nil, err
	}
	if types != nil {
		put("type", types)
	}
	done := set("type", "properties", "additionalProperties", "required")
	for _, o := range objects {
		for i, k := range o.keys {
			if done[k] || !handledKeywords[k] && !refusedKeywords[k] {
				continue
			}
			if v, ok := merged.get(k); ok {
				if !sameJSON(v, o.vals[i]) {
					return nil, errorf(ErrUnsupported, "JSON Schema keyword %q at %s: schemas with different %q cannot be merged", "allOf", path, k)
				}
				continue
			}
			put(k, o.vals[i])
		}
	}
	if _, ok := merged.get("prefixItems"); ok {
		if err := sameOwner(path, objects, "prefixItems", "items"); err != nil {
			return nil, err
		}
	}

	if len(names) > 0 {
		props := &node{kind: nodeObject}
		for _, name := range names {
			if forbidden[name] {
				if requiredNames[name] {
					return nil, errorf(ErrInvalid, "%s/allOf: %q is required but not allowed", path, name)
				}
				continue
			}
			schemas := declared[name]
			v := schemas[0]
			if len(schemas) > 1 {
				v = &node{kind: nodeObject, keys: []string{"allOf"}, vals: []*node{{kind: nodeArray, items: schemas}}}
			}
			props.keys = append(props.keys, name)
			props.vals = append(props.vals, v)
		}
		put("properties", props)
	}
	switch {
	case extrasForbidden:
		put("additionalProperties", &node{kind: nodeBool})
	case len(extras) == 1:
		put("additionalProperties", extras[0])
	case len(extras) > 1:
		put("additionalProperties", &node{kind: nodeObject, keys: []string{"allOf"}, vals: []*node{{kind: nodeArray, items: extras}}})
	}
	if len(required) > 0 {
		put("required", &node{kind: nodeArray, items: required})
	}
	return merged, nil
}

// allOfParts lists the schemas n's allOf joins: n's own keywords, and each
// of allOf's schemas, with references followed and nested allOf flattened.
func (s *schemaCompiler) allOfParts(path string, n *node, depth int) ([]*node, error) {
	if depth > maxAllOfDepth {
		return nil, errorf(ErrUnsupported, "JSON Schema keyword %q at %s: references nested more than %d deep", "allOf", path, maxAllOfDepth)
	}
	if n.kind != nodeObject {
		return []*node{n}, nil
	}
	if r, ok := n.get("$ref"); ok && onlyAnnotationsBeside(n, "$ref") {
		if r.kind != nodeString {
			return nil, errorf(ErrInvalid, "%s/$ref: must be a string", path)
		}
		target, err := s.resolve(r.str)
		if err != nil {
			return nil, errorf(ErrUnsupported, "JSON Schema keyword %q at %s: %v", "$ref", path, err)
		}
		return s.allOfParts(r.str, target, depth+1)
	}
	list, ok := n.get("allOf")
	if !ok {
		return []*node{n}, nil
	}
	if list.kind != nodeArray || len(list.items) == 0 {
		return nil, errorf(ErrInvalid, "%s/allOf: must be a non-empty array", path)
	}
	var parts []*node
	if own := withoutKey(n, "allOf"); !onlyAnnotationsBeside(own, "") {
		parts = append(parts, own)
	}
	for i, item := range list.items {
		sub, err := s.allOfParts(path+"/allOf/"+strconv.Itoa(i), item, depth+1)
		if err != nil {
			return nil, err
		}
		parts = append(parts, sub...)
	}
	return parts, nil
}

// onlyAnnotationsBeside reports whether every keyword of n other than
// keyword constrains nothing.
func onlyAnnotationsBeside(n *node, keyword string) bool {
	for _, k := range n.keys {
		if k != keyword && (handledKeywords[k] || refusedKeywords[k]) {
			return false
		}
	}
	return true
}

func withoutKey(n *node, key string) *node {
	out := &node{kind: nodeObject}
	for i, k := range n.keys {
		if k != key {
			out.keys = append(out.keys, k)
			out.vals = append(out.vals, n.vals[i])
		}
	}
	return out
}

// intersectTypes is the types every schema admits, as a "type" value; nil
// when no schema names a type.
func intersectTypes(path string, objects []*node) (*node, error) {
	var common []string
	named := false
	for _, o := range objects {
		if _, ok := o.get("type"); !ok {
			continue
		}
		names, err := schemaTypes(path, o)
		if err != nil {
			return nil, err
		}
		if !named {
			common, named = names, true
			continue
		}
		var kept []string
		for _, c := range common {
			switch {
			case slices.Contains(names, c):
				kept = append(kept, c)
			case c == "number" && slices.Contains(names, "integer"):
				kept = append(kept, "integer")
			case c == "integer" && slices.Contains(names, "number"):
				kept = append(kept, "integer")
			}
		}
		common = slices.Compact(kept)
	}
	if !named {
		return nil, nil
	}
	if len(common) == 0 {
		return nil, errorf(ErrInvalid, "%s/allOf: the schemas admit no common type", path)
	}
	out := &node{kind: nodeArray}
	for _, c := range common {
		out.items = append(out.items, &node{kind: nodeString, str: c})
	}
	return out, nil
}

// sameOwner refuses keywords that read each other (prefixItems and items)
// coming from different schemas.
func sameOwner(path string, objects []*node, a, b string) error {
	var ownerA, ownerB *node
	for _, o := range objects {
		if _, ok := o.get(a); ok && ownerA == nil {
			ownerA = o
		}
		if _, ok := o.get(b); ok && ownerB == nil {
			ownerB = o
		}
	}
	if ownerA != nil && ownerB != nil && ownerA != ownerB {
		return errorf(ErrUnsupported, "JSON Schema keyword %q at %s: %q and %q from different schemas", "allOf", path, a, b)
	}
	return nil
}

func sameJSON(a, b *node) bool {
	var x, y bytes.Buffer
	a.compact(&x)
	b.compact(&y)
	return bytes.Equal(x.Bytes(), y.Bytes())
}
