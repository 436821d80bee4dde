package chat

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// The options of an upstream of a registered kind (Upstream.Options): the
// routing file writes them beside the upstream's own keys, and each kind
// says what they are (UpstreamKind.Options), so that chat knows none of
// them.

// UnmarshalYAML decodes an upstream's own keys and keeps the others, in
// the file's order and with their lines, for the options of its kind.
func (u *Upstream) UnmarshalYAML(node *yaml.Node) error {
	type upstream Upstream // without this method
	var decoded struct {
		upstream `yaml:",inline"`
		Other    map[string]yaml.Node `yaml:",inline"`
	}
	if err := node.Decode(&decoded); err != nil {
		return err
	}
	*u = Upstream(decoded.upstream)
	if len(decoded.Other) == 0 {
		return nil
	}
	u.optionKeys = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: node.Line, Column: node.Column}
	for i := 0; i+1 < len(node.Content); i += 2 {
		if _, other := decoded.Other[node.Content[i].Value]; other {
			u.optionKeys.Content = append(u.optionKeys.Content, node.Content[i], node.Content[i+1])
		}
	}
	return nil
}

// decodeOptions makes u.Options the kind's options: decoded from the
// routing file's other keys over what a route built in code set, and of
// the kind's type.
func (u *Upstream) decodeOptions(kind UpstreamKind) error {
	if kind.Options == nil {
		if u.Options != nil {
			return fmt.Errorf("kind %s takes no options", kind.Name)
		}
		return refuseKeys(u.optionKeys, reflect.TypeFor[Upstream]())
	}
	t := reflect.TypeOf(kind.Options)
	options := reflect.New(t)
	switch {
	case u.Options == nil:
		options.Elem().Set(reflect.ValueOf(kind.Options))
	case reflect.TypeOf(u.Options) == t:
		options.Elem().Set(reflect.ValueOf(u.Options))
	default:
		return fmt.Errorf("the options of kind %s are a %s, not a %T", kind.Name, t, u.Options)
	}
	if u.optionKeys != nil {
		if err := checkKnownKeys(u.optionKeys, t); err != nil {
			return err
		}
		if err := u.optionKeys.Decode(options.Interface()); err != nil {
			return err
		}
		u.optionKeys = nil // decoded: Options holds them
	}
	u.Options = options.Elem().Interface()
	return nil
}

// refuseOptions refuses options on a remote upstream (kind vllm or
// openai), naming the kind whose option a key of the file is.
func (u *Upstream) refuseOptions(kinds map[string]UpstreamKind) error {
	if u.Options != nil {
		return fmt.Errorf("kind %s takes no options", u.Kind)
	}
	if u.optionKeys == nil {
		return nil
	}
	key := u.optionKeys.Content[0]
	for _, name := range slices.Sorted(maps.Keys(kinds)) {
		if kind := kinds[name]; kind.Options != nil && knownKeys(reflect.TypeOf(kind.Options))[key.Value] != nil {
			return fmt.Errorf("line %d: %s is for kind %s only", key.Line, key.Value, kind.Name)
		}
	}
	return refuseKeys(u.optionKeys, reflect.TypeFor[Upstream]())
}

// refuseKeys fails on the first key of node (a mapping; nil for none) as
// a strict decoder of t does.
func refuseKeys(node *yaml.Node, t reflect.Type) error {
	if node == nil || len(node.Content) == 0 {
		return nil
	}
	key := node.Content[0]
	return fmt.Errorf("line %d: field %s not found in type %s", key.Line, key.Value, t)
}

// checkKnownKeys refuses a key of node that no field of t is decoded from,
// at any depth, as a yaml.Decoder with KnownFields does: decoding a
// yaml.Node does not check it.
func checkKnownKeys(node *yaml.Node, t reflect.Type) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(reflect.TypeFor[yaml.Unmarshaler]()) {
		return nil // it reads its node itself
	}
	switch {
	case node.Kind == yaml.SequenceNode && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array):
		for _, item := range node.Content {
			if err := checkKnownKeys(item, t.Elem()); err != nil {
				return err
			}
		}
	case node.Kind == yaml.MappingNode && t.Kind() == reflect.Struct:
		fields := knownKeys(t)
		for i := 0; i+1 < len(node.Content); i += 2 {
			key := node.Content[i]
			field := fields[key.Value]
			if field == nil {
				return refuseKeys(&yaml.Node{Content: node.Content[i : i+2]}, t)
			}
			if err := checkKnownKeys(node.Content[i+1], field); err != nil {
				return err
			}
		}
	}
	return nil
}

// knownKeys are the keys yaml decodes fields of struct t from, with each
// field's type: a field's yaml name (its lower-cased name without one),
// an inline struct's keys, none for "-" or an unexported field.
func knownKeys(t reflect.Type) map[string]reflect.Type {
	keys := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, flags, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		switch {
		case name == "-" || (!f.IsExported() && !f.Anonymous):
		case strings.Contains(flags, "inline") && f.Type.Kind() == reflect.Struct:
			maps.Copy(keys, knownKeys(f.Type))
		case name == "":
			keys[strings.ToLower(f.Name)] = f.Type
		default:
			keys[name] = f.Type
		}
	}
	return keys
}
