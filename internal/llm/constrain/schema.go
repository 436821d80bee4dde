package constrain

import (
	"bytes"
	"slices"
	"strconv"
)

// schemaCompiler turns a JSON Schema into grammar fragments. Generated
// output follows the schema's own order: properties as written, every
// required one present, optional ones possibly left out.
type schemaCompiler struct {
	b        *builder
	j        *jsonBuilder
	root     *node
	refRules map[string]int32
}

func newSchemaCompiler(b *builder, cfg Config, data []byte) (*schemaCompiler, error) {
	root, err := parseNode(data)
	if err != nil {
		return nil, errorf(ErrInvalid, "the JSON schema is not valid JSON: %v", err)
	}
	return &schemaCompiler{b: b, j: newJSONBuilder(b, cfg), root: root, refRules: map[string]int32{}}, nil
}

func (s *schemaCompiler) compileRoot() (frag, error) {
	return s.schema("#", s.root)
}

// Keywords that only annotate, and those whose constraint the compiler
// enforces; any other keyword of the specification is refused by name,
// since output might otherwise fail validation. Keywords outside the
// specification are ignored, as validators ignore them.
var (
	annotationKeywords = set("$schema", "$id", "$comment", "$defs", "definitions", "$anchor",
		"title", "description", "default", "examples", "deprecated", "readOnly", "writeOnly",
		"strict", "nullable", "discriminator", "x-order")
	handledKeywords = set("type", "enum", "const", "anyOf", "oneOf", "allOf", "$ref",
		"properties", "required", "additionalProperties",
		"items", "prefixItems", "minItems", "maxItems",
		"minLength", "maxLength", "pattern", "format",
		"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")
	refusedKeywords = set("not", "if", "then", "else", "dependentRequired", "dependentSchemas",
		"dependencies", "patternProperties", "propertyNames", "unevaluatedProperties",
		"unevaluatedItems", "additionalItems", "contains", "minContains", "maxContains",
		"uniqueItems", "minProperties", "maxProperties", "contentEncoding",
		"contentMediaType", "contentSchema", "$dynamicRef", "$dynamicAnchor", "$recursiveRef",
		"$recursiveAnchor", "$vocabulary")
)

func set(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

func (s *schemaCompiler) schema(path string, n *node) (frag, error) {
	if n.kind == nodeBool {
		if !n.bool {
			return frag{}, errorf(ErrInvalid, "the schema at %s admits no value", path)
		}
		return s.j.anyValue(), nil
	}
	if n.kind != nodeObject {
		return frag{}, errorf(ErrInvalid, "the schema at %s is not an object or a boolean", path)
	}
	var constraining []string
	for i, k := range n.keys {
		switch {
		case refusedKeywords[k] && !harmless(k, n.vals[i]):
			return frag{}, unsupportedKeyword(path, k)
		case handledKeywords[k]:
			constraining = append(constraining, k)
		}
	}
	if _, ok := n.get("allOf"); ok {
		merged, err := s.mergeAllOf(path, n)
		if err != nil {
			return frag{}, err
		}
		return s.schema(path, merged)
	}
	// Keywords that stand for the whole schema accept only annotations
	// beside them.
	for _, whole := range []string{"$ref", "const", "enum", "anyOf", "oneOf"} {
		if _, ok := n.get(whole); !ok {
			continue
		}
		for _, k := range constraining {
			if k != whole && !(k == "type" && (whole == "enum" || whole == "const")) {
				return frag{}, errorf(ErrUnsupported, "JSON Schema keyword %q at %s together with %q", k, path, whole)
			}
		}
		switch whole {
		case "$ref":
			return s.ref(path, n)
		case "const", "enum":
			return s.enum(path, n)
		default:
			return s.anyOf(path+"/"+whole, n, whole)
		}
	}
	types, err := schemaTypes(path, n)
	if err != nil {
		return frag{}, err
	}
	if types == nil {
		return s.j.anyValue(), nil
	}
	alts := make([]frag, 0, len(types))
	for _, t := range types {
		f, err := s.typed(path, n, t)
		if err != nil {
			return frag{}, err
		}
		alts = append(alts, f)
	}
	return s.b.alt(alts...), nil
}

// harmless reports whether a refused keyword has a value that constrains
// nothing (uniqueItems: false).
func harmless(keyword string, v *node) bool {
	return keyword == "uniqueItems" && v.kind == nodeBool && !v.bool
}

var typeNames = []string{"object", "array", "string", "number", "integer", "boolean", "null"}

// schemaTypes is the list of types the schema admits: its "type", or the
// one its keywords imply, or nil for any value.
func schemaTypes(path string, n *node) ([]string, error) {
	t, ok := n.get("type")
	if !ok {
		for _, k := range n.keys {
			switch k {
			case "properties", "required", "additionalProperties":
				return []string{"object"}, nil
			case "items", "prefixItems", "minItems", "maxItems":
				return []string{"array"}, nil
			case "minLength", "maxLength", "pattern", "format":
				return []string{"string"}, nil
			case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf":
				return []string{"number"}, nil
			}
		}
		return nil, nil
	}
	var names []string
	switch t.kind {
	case nodeString:
		names = []string{t.str}
	case nodeArray:
		for _, it := range t.items {
			if it.kind != nodeString {
				return nil, errorf(ErrInvalid, "%s/type: a type name must be a string", path)
			}
			names = append(names, it.str)
		}
	default:
		return nil, errorf(ErrInvalid, "%s/type: must be a string or an array of strings", path)
	}
	if len(names) == 0 {
		return nil, errorf(ErrInvalid, "%s/type: the list of types is empty", path)
	}
	for _, name := range names {
		known := false
		for _, tn := range typeNames {
			known = known || name == tn
		}
		if !known {
			return nil, errorf(ErrInvalid, "%s/type: unknown type %q", path, name)
		}
	}
	return names, nil
}

func (s *schemaCompiler) typed(path string, n *node, t string) (frag, error) {
	b := s.b
	switch t {
	case "null":
		return b.literal("null"), nil
	case "boolean":
		return b.alt(b.literal("true"), b.literal("false")), nil
	case "integer":
		return s.integer(path, n)
	case "number":
		return s.number(path, n)
	case "string":
		return s.str(path, n)
	case "array":
		return s.array(path, n)
	}
	return s.object(path, n)
}

// count reads a non-negative integer keyword; def when absent.
func count(path string, n *node, keyword string, def int) (int, error) {
	v, ok := n.get(keyword)
	if !ok {
		return def, nil
	}
	if v.kind == nodeNumber {
		if i, err := strconv.ParseInt(v.num.String(), 10, 32); err == nil && i >= 0 {
			return int(i), nil
		}
		if f, err := v.num.Float64(); err == nil && f >= 0 && f == float64(int(f)) && f < 1<<31 {
			return int(f), nil
		}
	}
	return 0, errorf(ErrInvalid, "%s/%s: must be a non-negative integer", path, keyword)
}

func (s *schemaCompiler) literalValue(v *node) frag {
	var buf bytes.Buffer
	v.compact(&buf)
	return s.b.literal(buf.String())
}

// enum compiles enum and const as a choice between literal values; with a
// type beside them, values of other types are left out.
func (s *schemaCompiler) enum(path string, n *node) (frag, error) {
	values := []*node{}
	if c, ok := n.get("const"); ok {
		values = append(values, c)
	} else {
		e, _ := n.get("enum")
		if e.kind != nodeArray || len(e.items) == 0 {
			return frag{}, errorf(ErrInvalid, "%s/enum: must be a non-empty array", path)
		}
		values = e.items
	}
	types, err := schemaTypes(path, n)
	if err != nil {
		return frag{}, err
	}
	alts := make([]frag, 0, len(values))
	for _, v := range values {
		if types == nil || slices.Contains(types, v.typeName()) || v.typeName() == "integer" && slices.Contains(types, "number") {
			alts = append(alts, s.literalValue(v))
		}
	}
	if len(alts) == 0 {
		return frag{}, errorf(ErrInvalid, "%s: no value of enum or const has the schema's type", path)
	}
	return s.b.alt(alts...), nil
}

// anyOf compiles anyOf, and oneOf whose branches are disjoint, as a
// choice between branches.
func (s *schemaCompiler) anyOf(path string, n *node, keyword string) (frag, error) {
	list, _ := n.get(keyword)
	if list.kind != nodeArray || len(list.items) == 0 {
		return frag{}, errorf(ErrInvalid, "%s: must be a non-empty array", path)
	}
	if keyword == "oneOf" {
		if err := s.disjointBranches(path, list.items); err != nil {
			return frag{}, err
		}
	}
	alts := make([]frag, 0, len(list.items))
	for i, branch := range list.items {
		f, err := s.schema(path+"/"+strconv.Itoa(i), branch)
		if err != nil {
			return frag{}, err
		}
		alts = append(alts, f)
	}
	return s.b.alt(alts...), nil
}
