// Package hostile sweeps every route of a running weft server, as listed by its
// own /openapi.json, on SQLite and on PostgreSQL, with hostile requests: no or
// wrong credentials, another tenant's project, malformed and mistyped bodies,
// oversized and deeply nested bodies, huge numbers, and hostile text — SQL and
// LIKE metacharacters, NUL, invalid UTF-8, lone surrogates, 100,000-character
// strings — in every place a client's text can go.
package hostile

import (
	"encoding/json"
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
	Responses map[string]struct {
		Content map[string]struct {
			Schema *schema `json:"schema"`
		} `json:"content"`
	} `json:"responses"`
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
	Examples   []any              `json:"examples"`
	// AdditionalProperties is a bool or, for a map, its values' schema.
	AdditionalProperties any `json:"additionalProperties"`
}

// alternative is the first alternative of a oneOf or anyOf that is not null.
func (s *schema) alternative() *schema {
	for _, alt := range append(append([]*schema{}, s.OneOf...), s.AnyOf...) {
		if !alt.is("null") {
			return alt
		}
	}
	return nil
}

// freeForm reports whether s allows JSON of any shape, or an object of any
// members.
func (s *schema) freeForm() bool {
	if s.Properties != nil || s.Items != nil || len(s.OneOf)+len(s.AnyOf) > 0 || len(s.Enum) > 0 {
		return false
	}
	if s.Type == nil {
		return true
	}
	_, isMap := s.AdditionalProperties.(map[string]any)
	return s.is("object") && !isMap
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

// ignoresUnknownMembers reports whether the route's JSON body is OTLP/JSON,
// whose receivers ignore the members they do not know (OTLP's JSON
// encoding): text there is neither refused nor stored.
func (r route) ignoresUnknownMembers() bool { return r.path == "/otel/v1/traces" }

// malformedStatus is the status of a malformed request: 400 on the routes
// whose errors come in the OpenAI envelope (chat) and on OTLP's (a
// google.rpc.Status), else FastAPI's 422.
func (r route) malformedStatus() int {
	if r.ignoresUnknownMembers() {
		return 400
	}
	for _, c := range r.op.Responses["default"].Content {
		if c.Schema != nil && strings.HasSuffix(c.Schema.Ref, "/OpenAIErrorBody") {
			return 400
		}
	}
	return 422
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

// collectIDs gathers the resource ids (string values of "id" or "*_id" keys)
// in a JSON answer, or in each line of a JSON-lines answer.
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
			if s, ok := x.(string); ok && (k == "id" || strings.HasSuffix(k, "_id")) && s != "" && len(s) <= 100 && !strings.Contains(s, "/") {
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
