package constrain

import (
	"net/url"
	"strconv"
	"strings"
)

// JSON Schema references within the document ($ref, $defs).

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
