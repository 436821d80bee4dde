package feedback

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/objects"
)

// AnnotationSpecs reads the AnnotationSpec objects that annotation feedback
// names, so that the annotated value can be checked against the spec's schema.
type AnnotationSpecs interface {
	// ReadAnnotationSpec returns the stored value of the object version
	// projectID/name:version. An unknown or deleted version is an error
	// wrapping weft.ErrNotFound.
	ReadAnnotationSpec(ctx context.Context, projectID, name, version string) (json.RawMessage, error)
}

// ObjectSpecs is the AnnotationSpecs over an objects service: the usual one,
// for a server that stores its objects in weft's object store.
func ObjectSpecs(objs objects.Service) AnnotationSpecs { return objectSpecs{objs: objs} }

type objectSpecs struct {
	objs objects.Service
}

// ReadAnnotationSpec implements AnnotationSpecs.
func (o objectSpecs) ReadAnnotationSpec(ctx context.Context, projectID, name, version string) (json.RawMessage, error) {
	res, err := o.objs.ObjRead(ctx, &objects.ObjReadReq{ProjectID: projectID, ObjectID: name, Digest: version})
	if err != nil {
		return nil, err
	}
	return res.Obj.Val, nil
}

// specSchemaURL is where a spec's schema is registered in its compiler; every
// compile uses a fresh compiler, so one name serves all specs.
const specSchemaURL = "mem:///annotation-spec.json"

// valueSchemas compiles the schemas of the annotation specs one request
// names, each spec once. A nil schema means the spec constrains nothing.
type valueSchemas struct {
	specs AnnotationSpecs
	byRef map[string]*jsonschema.Schema
}

// check reads the spec row.AnnotationRef names and requires the payload's
// value to satisfy its schema. Specs that are missing, deleted or carry a
// schema that does not compile are ErrAnnotationSpec (400); a value that does
// not match is ErrInvalidAnnotationValue (400).
func (v *valueSchemas) check(ctx context.Context, row *feedbackRow) error {
	specRef := *row.AnnotationRef
	schema, seen := v.byRef[specRef]
	if !seen {
		var err error
		if schema, err = v.compile(ctx, specRef); err != nil {
			return err
		}
		if v.byRef == nil {
			v.byRef = map[string]*jsonschema.Schema{}
		}
		v.byRef[specRef] = schema
	}
	if schema == nil {
		return nil
	}
	var payload struct {
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal([]byte(row.Payload), &payload); err != nil {
		return weft.Errorf(ErrInvalidFeedback, "payload: %v", err)
	}
	value, err := jsonschema.UnmarshalJSON(bytes.NewReader(payload.Value))
	if err != nil {
		return weft.Errorf(ErrInvalidFeedback, "payload value: %v", err)
	}
	err = schema.Validate(value)
	var invalid *jsonschema.ValidationError
	if errors.As(err, &invalid) {
		return weft.Errorf(ErrInvalidAnnotationValue, "value %s does not satisfy the schema of annotation spec %s: %s",
			truncate(string(payload.Value)), truncate(specRef), describeViolations(invalid))
	}
	return err
}

// compile reads the spec specRef names and compiles its schema.
func (v *valueSchemas) compile(ctx context.Context, specRef string) (*jsonschema.Schema, error) {
	r, _ := parseRef(specRef) // checkRefs parsed it already
	val, err := v.specs.ReadAnnotationSpec(ctx, r.projectID, r.name, r.digest)
	if errors.Is(err, weft.ErrNotFound) {
		return nil, weft.Errorf(ErrAnnotationSpec, "annotation spec %s not found or has been deleted", truncate(specRef))
	}
	if err != nil {
		return nil, err
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(val))
	if err != nil {
		return nil, weft.Errorf(ErrAnnotationSpec, "annotation spec %s is not valid JSON: %v", truncate(specRef), err)
	}
	schema, found := SpecSchema(doc)
	if !found {
		return nil, nil
	}
	compiled, err := compileSpecSchema(schema)
	if err != nil {
		return nil, weft.Errorf(ErrAnnotationSpec, "annotation spec %s has an unusable schema: %v", truncate(specRef), err)
	}
	return compiled, nil
}

// CheckSpecSchema reports why a spec's schema (JSON text) could not check
// annotation values, or nil when it can: the check feedback on the spec
// gets, for a form that writes specs to make before it publishes one.
func CheckSpecSchema(schema []byte) error {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return weft.Errorf(ErrAnnotationSpec, "the schema is not valid JSON: %v", err)
	}
	if _, err := compileSpecSchema(doc); err != nil {
		return weft.Errorf(ErrAnnotationSpec, "the schema is unusable: %v", err)
	}
	return nil
}

// compileSpecSchema compiles a spec's schema (decoded by jsonschema) on its
// own: it may refer to no file or URL.
func compileSpecSchema(schema any) (*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	c.UseLoader(refuseLoader{}) // a spec's schema must not read files or URLs
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource(specSchemaURL, schema); err != nil {
		return nil, err
	}
	compiled, err := c.Compile(specSchemaURL)
	if err != nil {
		return nil, errors.New(strings.ReplaceAll(err.Error(), "\n", " "))
	}
	return compiled, nil
}

// SpecSchema finds the JSON schema in a spec's value (decoded with numbers as
// json.Number). AnnotationSpec keeps it in field_schema; json_schema (alone or
// inside field_schema) and a bare enum list are accepted too. A spec without
// any constrains nothing. The web UI builds its annotation form from the same
// schema the values are checked against.
func SpecSchema(doc any) (any, bool) {
	spec, ok := doc.(map[string]any)
	if !ok {
		return nil, false
	}
	for _, key := range []string{"field_schema", "json_schema"} {
		schema, ok := spec[key]
		if !ok || schema == nil {
			continue
		}
		if wrapper, ok := schema.(map[string]any); ok && wrapper["json_schema"] != nil {
			return wrapper["json_schema"], true
		}
		return schema, true
	}
	if enum, ok := spec["enum"]; ok && enum != nil {
		return map[string]any{"enum": enum}, true
	}
	return nil, false
}

// describeViolations lists where and how a value breaks its schema, on one line.
func describeViolations(err *jsonschema.ValidationError) string {
	var parts []string
	var walk func(unit jsonschema.OutputUnit)
	walk = func(unit jsonschema.OutputUnit) {
		if unit.Error != nil && len(unit.Errors) == 0 {
			message := unit.Error.String()
			if unit.InstanceLocation != "" {
				message = fmt.Sprintf("at value%s: %s", unit.InstanceLocation, message)
			}
			parts = append(parts, message)
		}
		for _, cause := range unit.Errors {
			walk(cause)
		}
	}
	walk(*err.BasicOutput())
	if len(parts) == 0 {
		return strings.ReplaceAll(err.Error(), "\n", " ")
	}
	return strings.Join(parts, "; ")
}

// refuseLoader loads nothing: specs are self-contained schemas.
type refuseLoader struct{}

func (refuseLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("schema references %s; only self-contained schemas are allowed", url)
}
