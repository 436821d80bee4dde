package constrain

import (
	"bytes"
	"net/url"
	"slices"
	"strconv"
	"strings"
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

func (s *schemaCompiler) str(path string, n *node) (frag, error) {
	lo, err := count(path, n, "minLength", 0)
	if err != nil {
		return frag{}, err
	}
	hi, err := count(path, n, "maxLength", -1)
	if err != nil {
		return frag{}, err
	}
	if hi >= 0 && hi < lo {
		return frag{}, errorf(ErrInvalid, "%s: maxLength is below minLength", path)
	}
	if hi > maxRegexRepeat || lo > maxRegexRepeat {
		return frag{}, errorf(ErrUnsupported, "%s: string lengths above %d", path, maxRegexRepeat)
	}
	content, hasFormat, err := s.format(path, n)
	if err != nil {
		return frag{}, err
	}
	p, hasPattern := n.get("pattern")
	switch {
	case hasPattern && hasFormat:
		return frag{}, errorf(ErrUnsupported, "JSON Schema keyword %q at %s together with %q", "pattern", path, "format")
	case hasPattern:
		if p.kind != nodeString {
			return frag{}, errorf(ErrInvalid, "%s/pattern: must be a string", path)
		}
		re, err := parseRegex(path+"/pattern", p.str)
		if err != nil {
			return frag{}, err
		}
		// Characters that would need escaping are left out, so the raw
		// text between the quotes is the string the pattern sees.
		rc := &regexCompiler{b: s.b, keep: stringChars}
		if content, err = rc.search(path+"/pattern", re); err != nil {
			return frag{}, err
		}
	case !hasFormat:
		return s.j.str(lo, hi), nil
	}
	if lo > 0 || hi >= 0 {
		// The pattern's automaton runs beside a count of characters.
		bounded, ok := s.b.product(content, charCounter(lo, hi))
		if !ok {
			return frag{}, errorf(ErrInvalid, "%s: no string of the pattern or format has a length within minLength and maxLength", path)
		}
		content = bounded
	}
	return s.b.seq(s.b.literal(`"`), content, s.b.literal(`"`)), nil
}

func (s *schemaCompiler) array(path string, n *node) (frag, error) {
	lo, err := count(path, n, "minItems", 0)
	if err != nil {
		return frag{}, err
	}
	hi, err := count(path, n, "maxItems", -1)
	if err != nil {
		return frag{}, err
	}
	if hi >= 0 && hi < lo {
		return frag{}, errorf(ErrInvalid, "%s: maxItems is below minItems", path)
	}
	if lo > maxRegexRepeat || hi > maxRegexRepeat {
		return frag{}, errorf(ErrUnsupported, "%s: array lengths above %d", path, maxRegexRepeat)
	}
	var prefix []*node
	if p, ok := n.get("prefixItems"); ok {
		if p.kind != nodeArray {
			return frag{}, errorf(ErrInvalid, "%s/prefixItems: must be an array", path)
		}
		prefix = p.items
	}
	items, hasItems := n.get("items")
	noMore := hasItems && items.kind == nodeBool && !items.bool
	if noMore && lo > len(prefix) {
		return frag{}, errorf(ErrInvalid, "%s: minItems exceeds the items allowed", path)
	}
	b, j := s.b, s.j
	var firstErr error
	item := func(i int) frag {
		var f frag
		var err error
		switch {
		case i < len(prefix):
			f, err = s.schema(path+"/prefixItems/"+strconv.Itoa(i), prefix[i])
		case hasItems:
			f, err = s.schema(path+"/items", items)
		default:
			f = j.anyValue()
		}
		if err != nil && firstErr == nil {
			firstErr = err
		}
		return f
	}
	sep := func() frag { return b.seq(j.ws(), b.literal(","), j.ws()) }
	// rest(i) is elements i onwards; element i > 0 follows a comma.
	var rest func(i int) frag
	rest = func(i int) frag {
		if hi >= 0 && i >= hi || noMore && i >= len(prefix) || firstErr != nil {
			return b.empty()
		}
		if i < len(prefix) {
			e := item(i)
			if i > 0 {
				e = b.seq(sep(), e)
			}
			e = b.seq(e, rest(i+1))
			if i >= lo && i > 0 {
				e = b.opt(e)
			}
			return e
		}
		more := func() frag { return b.seq(sep(), item(i)) }
		need, limit := max(lo-i, 0), -1
		if hi >= 0 {
			limit = hi - i
		}
		if i > 0 {
			return b.repeat(need, limit, more)
		}
		tailLimit := -1
		if limit >= 0 {
			tailLimit = limit - 1
		}
		return b.seq(item(i), b.repeat(max(need-1, 0), tailLimit, more))
	}
	// rest(0) is never empty: an empty array is "[", one gap, "]".
	if hi == 0 || noMore && len(prefix) == 0 {
		return j.emptyBrackets("[", "]"), nil
	}
	body := rest(0)
	if firstErr != nil {
		return frag{}, firstErr
	}
	return j.brackets("[", "]", body, lo == 0), nil
}

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

// ref compiles a $ref within the document ("#", "#/$defs/name", any JSON
// pointer) as a rule of its own, so that recursive schemas work.
func (s *schemaCompiler) ref(path string, n *node) (frag, error) {
	r, _ := n.get("$ref")
	if r.kind != nodeString {
		return frag{}, errorf(ErrInvalid, "%s/$ref: must be a string", path)
	}
	if id, ok := s.refRules[r.str]; ok {
		return s.b.call(id), nil
	}
	target, err := s.resolve(r.str)
	if err != nil {
		return frag{}, errorf(ErrUnsupported, "JSON Schema keyword %q at %s: %v", "$ref", path, err)
	}
	id := s.b.newRule(r.str)
	s.b.g.rules[id].recursive = true
	s.refRules[r.str] = id
	body, err := s.schema(r.str, target)
	if err != nil {
		return frag{}, err
	}
	s.b.define(id, body)
	return s.b.call(id), nil
}

func (s *schemaCompiler) resolve(ref string) (*node, error) {
	if !strings.HasPrefix(ref, "#") {
		return nil, errorf(ErrUnsupported, "only references within the schema (#...) are supported, not %q", ref)
	}
	frag, err := url.PathUnescape(ref[1:])
	if err != nil {
		return nil, err
	}
	cur := s.root
	if frag == "" {
		return cur, nil
	}
	if !strings.HasPrefix(frag, "/") {
		return nil, errorf(ErrUnsupported, "anchor references like %q", ref)
	}
	for _, tok := range strings.Split(frag[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch cur.kind {
		case nodeObject:
			next, ok := cur.get(tok)
			if !ok {
				return nil, errorf(ErrInvalid, "reference %q points at nothing", ref)
			}
			cur = next
		case nodeArray:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(cur.items) {
				return nil, errorf(ErrInvalid, "reference %q points at nothing", ref)
			}
			cur = cur.items[i]
		default:
			return nil, errorf(ErrInvalid, "reference %q points at nothing", ref)
		}
	}
	return cur, nil
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}
