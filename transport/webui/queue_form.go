package webui

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/feedback"
	"github.com/weftlabs/weft/objects/ref"
)

// Kinds of annotation fields, chosen from the spec's JSON schema.
const (
	annotationChoice = "choice" // enum or boolean: one radio per value, keys 1–9
	annotationNumber = "number" // number or integer, with the schema's bounds
	annotationText   = "text"   // string
	annotationJSON   = "json"   // any other schema: the value typed as JSON
)

// maxChoices is the most enum values drawn as radios; a longer enum is typed.
const maxChoices = 50

// errBadAnnotation: a submitted annotation value that does not fit its field
// (HTTP 400, or 422 for the form's inline message).
var errBadAnnotation = weft.DefineError(weft.ErrInvalid, "InvalidRequest", "invalid annotation value")

// annotationField is one annotation spec of a queue as a form field.
type annotationField struct {
	// SpecRef is the spec's ref exactly as the queue lists it; it becomes the
	// annotation_ref of the stored feedback.
	SpecRef string
	// Name is the spec object's name: the feedback type is
	// "wandb.annotation.<Name>".
	Name        string
	Label       string
	Description string
	Kind        string
	// Problem says why the spec cannot be annotated (missing, not an object
	// ref); such a field is shown without a control.
	Problem string

	Options []choiceOption // annotationChoice
	// Min, Max and Step are the number input's attributes ("" when unset).
	Min, Max, Step string
	MaxLength      int    // annotationText, 0 when unbounded
	Value          string // the saved value as the control shows it
	Saved          bool   // the caller has saved a value
	ID             string // DOM id of the control, unique on the page
	SaveURL        string
	// CSRF lets the form post without script too (htmx sends the token in
	// a header).
	CSRF string

	// enum holds the JSON text of each choice, by option index.
	enum []json.RawMessage
	// integer requires a whole number.
	integer bool
}

// choiceOption is one radio of a choice field.
type choiceOption struct {
	Index   int
	Label   string
	Key     int // 1–9: the key that picks it; 0 past the ninth
	Checked bool
}

// HelpID is the id of the element describing the field.
func (f *annotationField) HelpID() string { return f.ID + "-help" }

// Range describes a number field's bounds for people ("" when unbounded).
func (f *annotationField) Range() string {
	switch {
	case f.Min != "" && f.Max != "":
		return "from " + f.Min + " to " + f.Max
	case f.Min != "":
		return "at least " + f.Min
	case f.Max != "":
		return "at most " + f.Max
	}
	return ""
}

// specValue is the part of an AnnotationSpec object the form reads.
type specValue struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

// fieldOfSpec builds the form field of one spec: specRef as the queue names
// it, val the stored spec object (nil with problem when it cannot be read).
func fieldOfSpec(specRef string, val json.RawMessage) *annotationField {
	f := &annotationField{SpecRef: specRef, Kind: annotationJSON}
	r, err := ref.Parse(specRef)
	if err != nil || r.Kind != ref.KindObject || r.Name == "" || len(r.Extra) > 0 {
		f.Label, f.Problem = specRef, "This is not a ref of an annotation spec object."
		return f
	}
	f.Name, f.Label = r.Name, r.Name
	if val == nil {
		f.Problem = "The annotation spec is missing or has been deleted."
		return f
	}
	var meta specValue
	_ = json.Unmarshal(val, &meta) // a spec of another shape only lacks its label
	if strings.TrimSpace(meta.Name) != "" {
		f.Label = meta.Name
	}
	f.Description = meta.Description
	dec := json.NewDecoder(bytes.NewReader(val))
	dec.UseNumber()
	var doc any
	if dec.Decode(&doc) != nil {
		f.Problem = "The annotation spec is not valid JSON."
		return f
	}
	schema, ok := feedback.SpecSchema(doc)
	if !ok {
		return f // anything goes: typed as JSON
	}
	s, _ := schema.(map[string]any)
	if enum, ok := s["enum"].([]any); ok && len(enum) > 0 && len(enum) <= maxChoices {
		f.Kind = annotationChoice
		for _, v := range enum {
			raw, _ := json.Marshal(v)
			label := string(raw)
			if text, ok := v.(string); ok {
				label = text
			}
			f.addOption(raw, label)
		}
		return f
	}
	switch s["type"] {
	case "boolean":
		f.Kind = annotationChoice
		f.addOption(json.RawMessage("true"), "Yes")
		f.addOption(json.RawMessage("false"), "No")
	case "number", "integer":
		f.Kind, f.integer, f.Step = annotationNumber, s["type"] == "integer", "any"
		if f.integer {
			f.Step = "1"
		}
		f.Min, f.Max = numberText(s["minimum"]), numberText(s["maximum"])
	case "string":
		f.Kind = annotationText
		if n, err := strconv.Atoi(numberText(s["maxLength"])); err == nil && n > 0 {
			f.MaxLength = n
		}
	}
	return f
}

func (f *annotationField) addOption(raw json.RawMessage, label string) {
	i := len(f.Options)
	key := 0
	if i < 9 {
		key = i + 1
	}
	f.Options = append(f.Options, choiceOption{Index: i, Label: label, Key: key})
	f.enum = append(f.enum, raw)
}

// numberText is a schema number as written, "" when it is no number.
func numberText(v any) string {
	if n, ok := v.(json.Number); ok {
		return n.String()
	}
	return ""
}

// showSaved puts a saved value (the payload's "value") into the control.
func (f *annotationField) showSaved(value json.RawMessage) {
	f.Saved = true
	switch f.Kind {
	case annotationChoice:
		for i, raw := range f.enum {
			if sameJSON(raw, value) {
				f.Options[i].Checked = true
			}
		}
	case annotationText:
		var s string
		if json.Unmarshal(value, &s) == nil {
			f.Value = s
			return
		}
		f.Value = string(value)
	default:
		f.Value = string(value)
	}
}

// sameJSON reports whether two JSON texts hold equal values.
func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// maxAnnotationText bounds a typed value before the feedback service sees it.
const maxAnnotationText = 64 << 10

// valueOf reads the submitted value of the field from the form: the option
// index of a choice ("choice"), the text of the others ("value"). An empty
// submission means the value is cleared (nil, nil).
func (f *annotationField) valueOf(choice, text string) (json.RawMessage, error) {
	switch f.Kind {
	case annotationChoice:
		if choice == "" {
			return nil, nil
		}
		i, err := strconv.Atoi(choice)
		if err != nil || i < 0 || i >= len(f.enum) {
			return nil, weft.Errorf(errBadAnnotation, "%s: choose one of the %d options", f.Label, len(f.enum))
		}
		return f.enum[i], nil
	case annotationNumber:
		text = strings.TrimSpace(text)
		if text == "" {
			return nil, nil
		}
		n, err := strconv.ParseFloat(text, 64)
		if err != nil || !json.Valid([]byte(text)) {
			return nil, weft.Errorf(errBadAnnotation, "%s: %q is not a number", f.Label, truncate(text, 40))
		}
		if f.integer && n != float64(int64(n)) {
			return nil, weft.Errorf(errBadAnnotation, "%s: %q is not a whole number", f.Label, truncate(text, 40))
		}
		return json.RawMessage(text), nil
	case annotationText:
		if text == "" {
			return nil, nil
		}
		if !utf8.ValidString(text) || len(text) > maxAnnotationText {
			return nil, weft.Errorf(errBadAnnotation, "%s: at most %d bytes of UTF-8 text", f.Label, maxAnnotationText)
		}
		return json.Marshal(text)
	default:
		text = strings.TrimSpace(text)
		if text == "" {
			return nil, nil
		}
		if len(text) > maxAnnotationText || !json.Valid([]byte(text)) {
			return nil, weft.Errorf(errBadAnnotation, "%s: type a JSON value (at most %d bytes)", f.Label, maxAnnotationText)
		}
		return json.RawMessage(text), nil
	}
}
