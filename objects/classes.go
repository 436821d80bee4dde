package objects

import (
	"encoding/json"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/digest"
)

// maxObjectIDLength bounds object ids, in characters.
const maxObjectIDLength = 128

// checkObjectID accepts 1..128 letters (any script), digits, '_', '.' and '-'.
func checkObjectID(id string) error {
	if id == "" {
		return weft.Errorf(ErrInvalidObjectID, "object_id must not be empty")
	}
	if utf8.RuneCountInString(id) > maxObjectIDLength {
		return weft.Errorf(ErrInvalidObjectID, "object_id must be at most %d characters", maxObjectIDLength)
	}
	for _, r := range id {
		if !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '.' || r == '-') {
			return weft.Errorf(ErrInvalidObjectID, "object_id %q may contain only letters, digits, '_', '.' and '-'", id)
		}
	}
	return nil
}

// MakeObjectID turns a display name into an object id the way the v2 routes
// do: no name gives fallback; spaces and '/' become '_', '<' and '>' are
// dropped, and the result is lower-cased. The result may still be invalid
// (other characters are kept) and is checked when stored.
func MakeObjectID(name *string, fallback string) string {
	if name == nil || *name == "" {
		return fallback
	}
	id := strings.NewReplacer(" ", "_", "/", "_", "<", "", ">", "").Replace(*name)
	return strings.ToLower(id)
}

// builtinClasses are the classes a client may name in builtin_object_class
// for a plain dict; the server tags the value with them.
var builtinClasses = []string{
	"ActionSpec", "AnnotationSpec", "Leaderboard", "LLMStructuredCompletionModel", "Monitor",
	"Provider", "ProviderModel", "SavedView", "TestOnlyExample", "TestOnlyNestedBaseObject",
}

// processedVal is a value ready to store: the text kept, the canonical text
// hashed, and the classes derived from it.
type processedVal struct {
	stored    []byte
	canonical []byte
	kind      string
	base      *string
	leaf      *string
}

// processVal applies object class processing:
//   - a dict whose _bases end in ["Object"|"BaseObject", "BaseModel"] is a Weave
//     object: leaf class = _class_name, base class = _class_name with two
//     bases, else _bases[-3]; a builtin class given must equal _class_name;
//   - a plain dict with a builtin class is tagged with _type, _class_name and
//     _bases (unknown class → 400);
//   - anything else is stored as sent, without classes (a builtin class given
//     for a non-dict → 400).
//
// kind is "op" for a dict with _type whose weave_type.type is "Op".
func processVal(raw json.RawMessage, builtin *string) (processedVal, error) {
	v, err := digest.Parse(raw)
	if err != nil {
		return processedVal{}, weft.Errorf(ErrInvalidRequest, "val is not valid JSON: %v", err)
	}
	if err := checkFilePaths(v); err != nil {
		return processedVal{}, err
	}
	p := processedVal{stored: raw, kind: kindOf(v)}
	if builtin != nil && *builtin == "" {
		builtin = nil
	}
	switch leaf, base, isObject := weaveObjectClasses(v); {
	case isObject:
		if builtin != nil && *builtin != leaf {
			return processedVal{}, weft.Errorf(ErrInvalidRequest, "builtin_object_class %q does not match _class_name %q", *builtin, leaf)
		}
		p.leaf, p.base = &leaf, &base
	case builtin != nil:
		if v.Kind != digest.Object {
			return processedVal{}, weft.Errorf(ErrInvalidRequest, "builtin_object_class %q needs a dict value", *builtin)
		}
		if !slices.Contains(builtinClasses, *builtin) {
			return processedVal{}, weft.Errorf(ErrInvalidRequest, "Unknown object class: %s", *builtin)
		}
		members := []digest.Member{digest.M("_type", digest.Str(*builtin))}
		for _, m := range v.Members {
			if m.Key != "_type" && m.Key != "_class_name" && m.Key != "_bases" {
				members = append(members, m)
			}
		}
		members = append(members, digest.M("_class_name", digest.Str(*builtin)),
			digest.M("_bases", digest.Arr(digest.Str("BaseObject"), digest.Str("BaseModel"))))
		v = digest.Obj(members...)
		p.stored = v.Compact()
		class := *builtin
		p.leaf, p.base = &class, &class
	}
	p.canonical = v.Canonical()
	return p, nil
}

// weaveObjectClasses recognises a Weave object by its _bases.
func weaveObjectClasses(v digest.Value) (leaf, base string, ok bool) {
	bases, ok := v.Get("_bases")
	if !ok || bases.Kind != digest.Array || len(bases.Items) < 2 {
		return "", "", false
	}
	names := make([]string, len(bases.Items))
	for i, b := range bases.Items {
		if b.Kind != digest.String {
			return "", "", false
		}
		names[i] = b.Text
	}
	n := len(names)
	if names[n-1] != "BaseModel" || (names[n-2] != "Object" && names[n-2] != "BaseObject") {
		return "", "", false
	}
	className, ok := v.Get("_class_name")
	if !ok || className.Kind != digest.String {
		return "", "", false
	}
	if n == 2 {
		return className.Text, className.Text, true
	}
	return className.Text, names[n-3], true
}

// checkFilePaths rejects a CustomWeaveType whose files map names a path that
// is absolute or climbs out with "..".
func checkFilePaths(v digest.Value) error {
	if t, ok := v.Get("_type"); !ok || t.Text != "CustomWeaveType" {
		return nil
	}
	files, _ := v.Get("files")
	for _, m := range files.Members {
		if strings.HasPrefix(m.Key, "/") || strings.HasPrefix(m.Key, "\\") || slices.Contains(strings.FieldsFunc(m.Key, func(r rune) bool { return r == '/' || r == '\\' }), "..") {
			return weft.Errorf(ErrInvalidRequest, "file path %q must be relative and must not contain '..'", m.Key)
		}
	}
	return nil
}

func kindOf(v digest.Value) string {
	if _, ok := v.Get("_type"); ok {
		if wt, ok := v.Get("weave_type"); ok {
			if t, ok := wt.Get("type"); ok && t.Kind == digest.String && t.Text == "Op" {
				return kindOp
			}
		}
	}
	return kindObject
}

const (
	kindOp     = "op"
	kindObject = "object"
)
