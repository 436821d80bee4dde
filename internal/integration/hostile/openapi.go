// Package hostile sweeps every route of a running weft server, as listed by its
// own /openapi.json, with hostile requests: no or wrong credentials, another
// tenant's project, malformed and mistyped bodies, oversized and deeply nested
// bodies, invalid UTF-8, NUL bytes, huge numbers, SQL metacharacters and path
// tricks in every string.
package hostile

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// document is the part of an OpenAPI 3.1 document the sweep reads.
type document struct {
	Paths      map[string]map[string]operation `json:"paths"`
	Components struct {
		Schemas map[string]*schema `json:"schemas"`
	} `json:"components"`
}

type operation struct {
	OperationID string                 `json:"operationId"`
	Security    *[]map[string][]string `json:"security"`
	Parameters  []struct {
		Name     string  `json:"name"`
		In       string  `json:"in"`
		Required bool    `json:"required"`
		Schema   *schema `json:"schema"`
	} `json:"parameters"`
	RequestBody *struct {
		Content map[string]struct {
			Schema *schema `json:"schema"`
		} `json:"content"`
	} `json:"requestBody"`
}

type schema struct {
	Ref        string             `json:"$ref"`
	Type       any                `json:"type"` // a string, or a list such as ["string","null"]
	Properties map[string]*schema `json:"properties"`
	Required   []string           `json:"required"`
	Items      *schema            `json:"items"`
	Enum       []any              `json:"enum"`
	Format     string             `json:"format"`
	Minimum    *float64           `json:"minimum"`
	Maximum    *float64           `json:"maximum"`
	MinLength  *int               `json:"minLength"`
	MaxLength  *int               `json:"maxLength"`
	OneOf      []*schema          `json:"oneOf"`
	AnyOf      []*schema          `json:"anyOf"`
}

// route is one operation to sweep.
type route struct {
	method, path string
	op           operation
	// jsonBody is the request body schema when the body is JSON.
	jsonBody *schema
	// multipart is set when the body is a multipart form.
	multipart *schema
}

func (r route) String() string { return r.method + " " + r.path }

// secured reports whether the operation needs credentials.
func (r route) secured() bool { return r.op.Security == nil || len(*r.op.Security) > 0 }

// projectScoped reports whether the request names a project: a project_id or
// entity/project body field, or {entity}/{project} in the path.
func (r route) projectScoped(doc *document) bool {
	if strings.Contains(r.path, "{entity}") && strings.Contains(r.path, "{project}") {
		return true
	}
	if r.jsonBody != nil {
		props := doc.resolve(r.jsonBody).Properties
		_, hasProject := props["project_id"]
		_, hasEntity := props["entity"]
		_, hasProj := props["project"]
		return hasProject || (hasEntity && hasProj)
	}
	if r.multipart != nil {
		_, ok := doc.resolve(r.multipart).Properties["project_id"]
		return ok
	}
	for _, p := range r.op.Parameters {
		if p.Name == "project_id" && (p.In == "query" || p.In == "header") {
			return true
		}
	}
	return false
}

// idParams lists the path parameters that name a resource (not the project).
func (r route) idParams() []string {
	var names []string
	for _, p := range r.op.Parameters {
		if p.In == "path" && p.Name != "entity" && p.Name != "project" {
			names = append(names, p.Name)
		}
	}
	return names
}

func parseDocument(b []byte) (*document, []route, error) {
	var doc document
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, nil, err
	}
	var routes []route
	for path, methods := range doc.Paths {
		for method, op := range methods {
			r := route{method: strings.ToUpper(method), path: path, op: op}
			if op.RequestBody != nil {
				for ct, c := range op.RequestBody.Content {
					switch {
					case strings.Contains(ct, "json"):
						r.jsonBody = c.Schema
					case strings.Contains(ct, "multipart"):
						r.multipart = c.Schema
					}
				}
			}
			routes = append(routes, r)
		}
	}
	sort.Slice(routes, func(i, j int) bool { return routes[i].String() < routes[j].String() })
	return &doc, routes, nil
}

func (d *document) resolve(s *schema) *schema {
	for s != nil && s.Ref != "" {
		s = d.Components.Schemas[strings.TrimPrefix(s.Ref, "#/components/schemas/")]
	}
	if s == nil {
		return &schema{}
	}
	return s
}

func (s *schema) is(t string) bool {
	switch v := s.Type.(type) {
	case string:
		return v == t
	case []any:
		for _, x := range v {
			if x == t {
				return true
			}
		}
	}
	return false
}

// filler decides the values of a generated body.
type filler struct {
	doc *document
	// project is the "<entity>/<project>" to name.
	project string
	// text is put in every free string field.
	text string
	// id, when set, is put in every path parameter that names a resource.
	id string
}

// value generates a value for s that satisfies its declared shape, with f.text in
// free strings and f.project wherever a project is named.
func (f filler) value(name string, s *schema, depth int) any {
	s = f.doc.resolve(s)
	entity, project, _ := strings.Cut(f.project, "/")
	switch name {
	case "project_id":
		return f.project
	case "entity":
		return entity
	case "project":
		return project
	}
	if len(s.Enum) > 0 {
		return s.Enum[0]
	}
	if len(s.OneOf) > 0 {
		return f.value(name, s.OneOf[0], depth)
	}
	if len(s.AnyOf) > 0 {
		return f.value(name, s.AnyOf[0], depth)
	}
	switch {
	case s.is("object") || s.Properties != nil:
		obj := map[string]any{}
		if depth > 6 {
			return obj
		}
		for _, req := range s.Required {
			obj[req] = f.value(req, s.Properties[req], depth+1)
		}
		for _, naming := range []string{"project_id", "entity", "project"} { // name the project even where optional
			if prop, ok := s.Properties[naming]; ok && depth == 0 {
				obj[naming] = f.value(naming, prop, depth+1)
			}
		}
		return obj
	case s.is("array"):
		if depth > 6 || s.Items == nil {
			return []any{}
		}
		return []any{f.value(name, s.Items, depth+1)}
	case s.is("integer"):
		if s.Minimum != nil {
			return int64(*s.Minimum)
		}
		return 1
	case s.is("number"):
		if s.Minimum != nil {
			return *s.Minimum
		}
		return 1.5
	case s.is("boolean"):
		return false
	case s.is("string"):
		switch s.Format {
		case "uuid":
			return "01936f4e-0000-7000-8000-000000000001"
		case "date-time":
			return "2026-01-02T03:04:05Z"
		}
		text := f.text
		if s.MaxLength != nil && len(text) > *s.MaxLength {
			text = text[:*s.MaxLength]
		}
		return text
	}
	return f.text
}

// path fills the path parameters of r.
func (f filler) path(r route) string {
	entity, project, _ := strings.Cut(f.project, "/")
	out := r.path
	for _, p := range r.op.Parameters {
		if p.In != "path" {
			continue
		}
		var v string
		switch p.Name {
		case "entity":
			v = entity
		case "project":
			v = project
		default:
			v = fmt.Sprint(f.value(p.Name, p.Schema, 0))
			if f.id != "" {
				v = f.id
			}
		}
		out = strings.ReplaceAll(out, "{"+p.Name+"}", pathEscape(v))
	}
	return out
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

// collectIDs gathers the resource ids (UUID-shaped values of "id" or "*_id"
// keys) in a JSON answer, or in each line of a JSON-lines answer.
func collectIDs(body []byte, into map[string]bool) {
	for _, line := range strings.Split(string(body), "\n") {
		var v any
		if json.Unmarshal([]byte(line), &v) == nil {
			walkIDs(v, into)
		}
	}
}

func walkIDs(v any, into map[string]bool) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if s, ok := x.(string); ok && (k == "id" || strings.HasSuffix(k, "_id")) && len(s) == 36 && strings.Count(s, "-") == 4 {
				into[s] = true
			}
			walkIDs(x, into)
		}
	case []any:
		for _, x := range v {
			walkIDs(x, into)
		}
	}
}
