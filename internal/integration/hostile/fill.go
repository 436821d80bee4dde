package hostile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/url"
	"slices"
	"sort"
	"strings"

	"github.com/weftlabs/weft/internal/digest"
)

// A request is generated from the document as a template: every value is
// filled with something plausible for its name and schema, and every place a
// client's text can go — each string in the body, optional and nested ones
// included, each object key and string inside free-form JSON, the free-form
// value as a whole, each path, query and form parameter — is a slot that a
// hostile text can be put into, one at a time.

// hostile is one hostile text, written two ways: JSON, its JSON text inside a
// JSON body (exact bytes: encoding/json would replace invalid UTF-8), and
// text, the bytes it stands for in a URL or a form field ("" when it has no
// byte form: a lone surrogate exists only as a JSON escape).
type hostile struct {
	name string
	json string
	text string
	// badText marks text no JSON body may carry: the server must refuse the
	// body (422; 400 on the chat routes) before any storage.
	badText bool
}

func plain(name, s string) hostile {
	b, _ := json.Marshal(s)
	return hostile{name: name, json: string(b), text: s}
}

// hostiles go, one by one, into every slot of every route.
var hostiles = []hostile{
	plain("sql quote", `'; DROP TABLE users; --`),
	plain("sql dollar quote", `$$ || chr(0) || $$`),
	plain("sql double quote", `" OR ""="`),
	plain("sql like", `%' OR 1=1 --`),
	plain("percent", `%`),
	plain("underscore", `_`),
	plain("backslash", `\`),
	plain("star", `*`),
	plain("backtick", "`id`"),
	plain("template", `{{7*7}} ${7*7} %s%n`),
	plain("path traversal", `../../../../etc/passwd`),
	plain("windows path", `..\..\windows\system32`),
	plain("json operator", `$where: {"$gt": ""}`),
	plain("json path", `payload.x; DELETE FROM calls`),
	plain("nul", "nul\x00byte"),
	plain("ref with nul", "weave:///alice/p/object/n\x00ul:0"),
	plain("unicode", "emoji 🧪 and ünïcödé and \u202e"),
	plain("long", strings.Repeat("long%_", 16667)),
	{name: "invalid utf-8", json: "\"\xff\xfe\"", text: "\xff\xfe", badText: true},
	{name: "utf-8 surrogate", json: "\"\xed\xa0\x80\"", text: "\xed\xa0\x80", badText: true},
	{name: "lone high surrogate", json: `"\ud800"`, badText: true},
	{name: "lone low surrogate", json: `"x\udfff"`, badText: true},
}

// node is a generated JSON value.
type node struct {
	// where names the value in the body ("body.start.inputs").
	where string
	// text is a scalar's JSON text; for an object or array, a replacement
	// written instead of it when not empty.
	text     string
	keys     []string // an object's keys, as JSON text; nil for scalars and arrays
	optional []bool   // whether an object's member may be left out
	items    []*node  // an object's values or an array's items
	array    bool
}

// encode writes n, leaving out the optional members that keep refuses.
func (n *node) encode(b *bytes.Buffer, keep func(*node) bool) {
	switch {
	case n.text != "":
		b.WriteString(n.text)
	case n.array:
		b.WriteByte('[')
		for i, it := range n.items {
			if i > 0 {
				b.WriteByte(',')
			}
			it.encode(b, keep)
		}
		b.WriteByte(']')
	default:
		b.WriteByte('{')
		first := true
		for i, k := range n.keys {
			if n.optional[i] && !keep(n.items[i]) {
				continue
			}
			if !first {
				b.WriteByte(',')
			}
			first = false
			b.WriteString(k)
			b.WriteByte(':')
			n.items[i].encode(b, keep)
		}
		b.WriteByte('}')
	}
}

// member adds a member to object n.
func (n *node) member(key string, optional bool, value *node) {
	n.keys = append(n.keys, key)
	n.optional = append(n.optional, optional)
	n.items = append(n.items, value)
}

// slot is one place hostile text can go.
type slot struct {
	where string
	at    *string
	// inJSON: *at is JSON text (a body value or key); otherwise raw text (a
	// URL or form parameter).
	inJSON bool
	// path lists the body values from the root down to the slot: the optional
	// members a request with this slot must keep.
	path []*node
}

// keepPath keeps the optional members on the slot's path and leaves out the
// others: each optional field is swept alone beside the required ones, so
// that no other optional field's refusal hides what it reaches.
func (s slot) keepPath(n *node) bool {
	for _, p := range s.path {
		if p == n {
			return true
		}
	}
	return false
}

func keepAll(*node) bool { return true }

// optionalMembers lists the where of every optional member in n, outermost
// first.
func (n *node) optionalMembers() []string {
	if n == nil {
		return nil
	}
	var out []string
	for i, it := range n.items {
		if n.optional != nil && n.optional[i] {
			out = append(out, it.where)
		}
		out = append(out, it.optionalMembers()...)
	}
	return out
}

// put writes h into the slot and returns what undoes it, or nil when h cannot
// be written there.
func (s slot) put(h hostile) func() {
	old := *s.at
	switch {
	case s.inJSON:
		*s.at = h.json
	case h.text != "":
		*s.at = h.text
	default:
		return nil
	}
	return func() { *s.at = old }
}

// param is a URL or form parameter.
type param struct {
	name, value string
}

// request is a generated request of one route.
type request struct {
	route route
	path  []param
	query []param
	body  *node   // JSON body
	form  []param // multipart fields
	file  *param  // multipart file part: its field name and file name
	slots []slot
}

// urlPath is the path with its parameters, percent-encoded byte by byte.
func (q *request) urlPath() string {
	out := q.route.path
	for _, p := range q.path {
		out = strings.ReplaceAll(out, "{"+p.name+"}", pathEscape(p.value))
	}
	if len(q.query) > 0 {
		values := url.Values{}
		for _, p := range q.query {
			values.Set(p.name, p.value)
		}
		out += "?" + values.Encode()
	}
	return out
}

// content is the request body and its content type; keep chooses the
// optional members written.
func (q *request) content(keep func(*node) bool) (string, []byte) {
	switch {
	case q.body != nil:
		var b bytes.Buffer
		q.body.encode(&b, keep)
		return "application/json", b.Bytes()
	case q.file != nil || len(q.form) > 0:
		var b bytes.Buffer
		w := multipart.NewWriter(&b)
		for _, p := range q.form {
			_ = w.WriteField(p.name, p.value)
		}
		if q.file != nil {
			part, _ := w.CreateFormFile(q.file.name, q.file.value)
			_, _ = part.Write([]byte("file content"))
		}
		_ = w.Close()
		return w.FormDataContentType(), b.Bytes()
	}
	return "", nil
}

// generator fills requests.
type generator struct {
	doc *document
	// project is the "<entity>/<project>" to name.
	project string
	// text is put in free strings.
	text string
	// id, when set, is put in every path parameter that names a resource.
	id string
	// bodyID, when set, is put in every body field named like an id
	// ("model_id", "call_ids", …).
	bodyID string
}

// maxDepth bounds how deep generated values go (recursive schemas).
const maxDepth = 10

// request fills every parameter and the whole body of r.
func (g generator) request(r route) *request {
	q := &request{route: r}
	entity, project, _ := strings.Cut(g.project, "/")
	for _, p := range r.op.Parameters {
		var v string
		switch {
		case p.In == "path" && p.Name == "entity":
			v = entity
		case p.In == "path" && p.Name == "project":
			v = project
		case p.In == "path" && g.id != "":
			v = g.id
		case p.In == "path" || p.In == "query":
			v = g.scalarText(p.Name, g.doc.resolve(p.Schema))
		default:
			continue // headers carry no client text worth sweeping
		}
		list := &q.query
		if p.In == "path" {
			list = &q.path
		}
		*list = append(*list, param{name: p.Name, value: v})
	}
	for i := range q.path {
		q.slots = append(q.slots, slot{where: "path " + q.path[i].name, at: &q.path[i].value})
	}
	for i := range q.query {
		q.slots = append(q.slots, slot{where: "query " + q.query[i].name, at: &q.query[i].value})
	}
	switch {
	case r.jsonBody != nil:
		q.body = g.value(q, nil, "body", "", r.jsonBody)
	case r.multipart != nil:
		s := g.doc.resolve(r.multipart)
		for _, name := range sortedKeys(s.Properties) {
			prop := g.doc.resolve(s.Properties[name])
			if prop.Format == "binary" {
				q.file = &param{name: name, value: g.text + ".txt"}
				continue
			}
			q.form = append(q.form, param{name: name, value: g.scalarText(name, prop)})
		}
		for i := range q.form {
			q.slots = append(q.slots, slot{where: "form " + q.form[i].name, at: &q.form[i].value})
		}
		if q.file != nil {
			q.slots = append(q.slots, slot{where: "file name", at: &q.file.value})
		}
	}
	return q
}

// value generates a value of s, adding its slots to q; path lists the values
// above it.
func (g generator) value(q *request, path []*node, where, name string, s *schema) *node {
	s = g.doc.resolve(s)
	if len(s.Examples) > 0 {
		return g.example(q, path, where, s.Examples[0])
	}
	if alt := s.alternative(); alt != nil {
		return g.value(q, path, where, name, alt)
	}
	n := &node{where: where}
	path = append(slices.Clip(path), n)
	switch {
	case s.freeForm():
		g.freeForm(q, path, where, n)
	case s.is("object") || s.Properties != nil:
		n.keys = []string{}
		if len(path) > maxDepth {
			return n
		}
		for _, prop := range sortedKeys(s.Properties) {
			n.member(quote(prop), !slices.Contains(s.Required, prop),
				g.value(q, path, where+"."+prop, prop, s.Properties[prop]))
		}
		if extra, ok := s.AdditionalProperties.(map[string]any); ok && len(s.Properties) == 0 {
			// A map: one entry, whose key is a slot too.
			var valueSchema schema
			b, _ := json.Marshal(extra)
			_ = json.Unmarshal(b, &valueSchema)
			n.member(quote(g.scalarText(name, &schema{})), false, g.value(q, path, where+".<key>", name, &valueSchema))
			q.slots = append(q.slots, slot{where: where + " key", at: &n.keys[len(n.keys)-1], inJSON: true, path: path})
		}
	case s.is("array"):
		n.array = true
		if len(path) <= maxDepth && s.Items != nil {
			n.items = []*node{g.value(q, path, where+"[0]", strings.TrimSuffix(name, "s"), s.Items)}
		}
	case s.is("integer"):
		n.text = "1"
		if s.Minimum != nil {
			n.text = fmt.Sprint(int64(*s.Minimum))
		}
	case s.is("number"):
		n.text = "1.5"
		if s.Minimum != nil {
			n.text = fmt.Sprint(*s.Minimum)
		}
	case s.is("boolean"):
		n.text = "false"
	default:
		n.text = quote(g.scalarText(name, s))
		q.slots = append(q.slots, slot{where: where, at: &n.text, inJSON: true, path: path})
	}
	return n
}

// freeForm fills n, a free-form JSON value: strings in an object, in an array
// and in a nested object, and a key; the whole value is a slot too (a bare
// string where JSON of any shape is allowed).
func (g generator) freeForm(q *request, path []*node, where string, n *node) {
	inner := &node{}
	inner.member(quote(g.text), false, &node{text: quote(g.text)})
	list := &node{array: true, items: []*node{{text: quote(g.text)}, inner}}
	n.member(`"k"`, false, &node{text: quote(g.text)})
	n.member(`"list"`, false, list)
	q.slots = append(q.slots,
		slot{where: where, at: &n.text, inJSON: true, path: path},
		slot{where: where + ".k", at: &n.items[0].text, inJSON: true, path: path},
		slot{where: where + ".list[0]", at: &list.items[0].text, inJSON: true, path: path},
		slot{where: where + ".list[1] key", at: &inner.keys[0], inJSON: true, path: path},
		slot{where: where + ".list[1].<key>", at: &inner.items[0].text, inJSON: true, path: path},
	)
}

// example fills a documented example: its structure is kept (a query
// expression, a call record), its strings and keys are slots; a project it
// names is the generator's.
func (g generator) example(q *request, path []*node, where string, v any) *node {
	n := &node{where: where}
	path = append(slices.Clip(path), n)
	switch v := v.(type) {
	case map[string]any:
		n.keys = []string{}
		for _, k := range sortedKeys(v) {
			if k == "project_id" {
				n.member(quote(k), false, &node{text: quote(g.project)})
				continue
			}
			n.member(quote(k), false, g.example(q, path, where+"."+k, v[k]))
		}
		for i := range n.keys {
			q.slots = append(q.slots, slot{where: where + " key " + n.keys[i], at: &n.keys[i], inJSON: true, path: path})
		}
	case []any:
		n.array = true
		for i, it := range v {
			n.items = append(n.items, g.example(q, path, fmt.Sprintf("%s[%d]", where, i), it))
		}
	case string:
		n.text = quote(v)
		q.slots = append(q.slots, slot{where: where, at: &n.text, inJSON: true, path: path})
	default:
		b, _ := json.Marshal(v)
		n.text = string(b)
	}
	return n
}

// scalarText is a plausible string for a field of this name and schema, so
// that the rest of a request gets past validation while one slot is hostile.
func (g generator) scalarText(name string, s *schema) string {
	entity, project, _ := strings.Cut(g.project, "/")
	switch name {
	case "project_id":
		return g.project
	case "entity":
		return entity
	case "project":
		return project
	}
	if len(s.Enum) > 0 {
		return fmt.Sprint(s.Enum[0])
	}
	if alt := s.alternative(); alt != nil {
		return g.scalarText(name, g.doc.resolve(alt))
	}
	switch s.Format {
	case "uuid":
		return sampleUUID
	case "date-time":
		return "2026-01-02T03:04:05Z"
	}
	switch {
	case s.is("integer"), s.is("number"):
		if s.Minimum != nil {
			return fmt.Sprint(*s.Minimum)
		}
		return "1"
	case s.is("boolean"):
		return "false"
	case strings.Contains(name, "digest"):
		return sampleDigest
	case strings.HasSuffix(name, "ref") || strings.HasSuffix(name, "refs"):
		return "weave:///" + g.project + "/object/" + g.text + ":" + sampleDigest
	case g.bodyID != "" && (strings.HasSuffix(name, "_id") || strings.HasSuffix(name, "_ids")):
		return g.bodyID
	case name == "id" || name == "call_id" || name == "trace_id" || name == "parent_id" || name == "queue_id" ||
		name == "feedback_id" || name == "item_id" || name == "ids" || name == "call_ids" || name == "queue_ids":
		return sampleUUID
	}
	text := g.text
	if s.MaxLength != nil && len(text) > *s.MaxLength {
		text = text[:*s.MaxLength]
	}
	return text
}

const sampleUUID = "01936f4e-0000-7000-8000-000000000001"

// sampleDigest is a digest of the shape the server computes.
var sampleDigest = digest.Bytes([]byte("hostile sweep"))

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func pathEscape(s string) string {
	var b strings.Builder
	for _, c := range []byte(s) {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-._~", c) >= 0 {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}
