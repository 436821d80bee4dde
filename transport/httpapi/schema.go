package httpapi

import (
	"reflect"
	"strings"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/validation"
)

// Client JSON that is stored exactly as sent (call inputs, feedback payloads,
// table rows) is declared json.RawMessage, which huma documents and validates
// as "any value". The reference types many of these fields dict[str, Any], so a
// non-object must be pydantic's 422 before any handler runs, and the OpenAPI
// document should say "object". A domain field says so with a struct tag
// beside its json tag:
//
//	Inputs json.RawMessage `json:"inputs,omitempty" type:"object"`
//
// On a slice the tag types its items (rows: list[dict[str, Any]]); nullable
// keeps its usual meaning.
const typeTag = "type"

// metadataSchemas is the operation metadata key holding the registry of the
// operation's schemas, so that an error renderer can look up the schema a
// validation failure points at.
const metadataSchemas = "weft.schemas"

// typeTaggedFields gives every schema property whose Go field carries the
// type tag that type. It runs once, after every route is registered: huma has
// built the schemas by then, and reads them only while validating requests.
func typeTaggedFields(registry huma.Registry, prefix string) {
	for name, schema := range registry.Map() {
		t := registry.TypeFromRef(prefix + name)
		for t != nil && t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t == nil || t.Kind() != reflect.Struct || schema.Properties == nil {
			continue
		}
		for _, f := range reflect.VisibleFields(t) {
			typ := f.Tag.Get(typeTag)
			jsonName, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			prop := schema.Properties[jsonName]
			if typ == "" || jsonName == "" || jsonName == "-" || !f.IsExported() || prop == nil || !mergedInto(t, f) {
				continue
			}
			if prop.Type == huma.TypeArray && prop.Items != nil {
				prop = prop.Items
			}
			prop.Type = typ
			if typ == huma.TypeObject {
				prop.AdditionalProperties = true
			}
			prop.PrecomputeMessages()
		}
	}
}

// mergedInto reports whether f, a visible field of t, is a member of t's JSON
// object: declared in t, or promoted through embedded structs that have no
// JSON name of their own (one with a name is a nested object).
func mergedInto(t reflect.Type, f reflect.StructField) bool {
	for i := 1; i < len(f.Index); i++ {
		embedded := t.FieldByIndex(f.Index[:i])
		if name, _, _ := strings.Cut(embedded.Tag.Get("json"), ","); name != "" {
			return false
		}
	}
	return true
}

// Pydantic's words for an object that is not one: a dict field, or a nested
// model (which names its class).
const (
	msgDictType  = "Input should be a valid dictionary"
	msgModelType = "Input should be a valid dictionary or instance of "
)

// nameObjectMismatches rewrites huma's "expected object" of each detail into
// pydantic's words, which differ between a dict field and a nested model: the
// schema at the detail's location tells which. body is the request body's
// schema.
func nameObjectMismatches(registry huma.Registry, body *huma.Schema, errs []error) {
	if registry == nil || body == nil {
		return
	}
	for _, err := range errs {
		detail, ok := err.(*huma.ErrorDetail)
		if !ok || detail.Message != validation.MsgExpectedObject {
			continue
		}
		if model := modelAt(registry, body, splitLocation(detail.Location)); model != "" {
			detail.Message = msgModelType + model
		} else {
			detail.Message = msgDictType
		}
	}
}

// modelAt is the name of the Go type whose schema sits at loc (["body", …]),
// or "" when none does (a free-form object, or a location not in the schema).
func modelAt(registry huma.Registry, s *huma.Schema, loc []any) string {
	if len(loc) > 0 && loc[0] == "body" {
		loc = loc[1:]
	}
	ref := ""
	for {
		for s != nil && s.Ref != "" {
			ref = s.Ref
			s = registry.SchemaFromRef(s.Ref)
		}
		if s == nil {
			return ""
		}
		if len(loc) == 0 {
			break
		}
		ref = ""
		switch step := loc[0].(type) {
		case int:
			s = s.Items
		case string:
			s = s.Properties[step]
		}
		loc = loc[1:]
	}
	if ref == "" || len(s.Properties) == 0 {
		return ""
	}
	if t := registry.TypeFromRef(ref); t != nil && t.Name() != "" {
		return t.Name()
	}
	return ref[strings.LastIndexByte(ref, '/')+1:]
}

// requestBodySchema is the JSON body schema of op, or nil.
func requestBodySchema(op *huma.Operation) *huma.Schema {
	if op == nil || op.RequestBody == nil {
		return nil
	}
	if mt := op.RequestBody.Content["application/json"]; mt != nil {
		return mt.Schema
	}
	return nil
}
