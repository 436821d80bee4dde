package httpapi

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strconv"
	"strings"

	"github.com/danielgtaylor/huma/v2"
)

// Neither database can keep a NUL byte in a text column (PostgreSQL refuses it,
// and the query builder refuses to send it), so a NUL in any string that becomes
// a column — an id, a name, a ref — is bad input, answered 422 before a handler
// runs. Free-form JSON (inputs, outputs, payloads, values) is kept as raw text in
// which a NUL stays the escape \u0000, so it is unaffected.

// unmarshalJSON decodes request bodies and rejects NUL bytes in the decoded
// strings of typed fields.
func unmarshalJSON(data []byte, v any) error {
	if err := json.Unmarshal(data, v); err != nil {
		return err
	}
	if _, untyped := v.(*any); untyped { // huma's first, schema-validation pass
		return nil
	}
	if loc := findNUL(reflect.ValueOf(v), "body"); loc != "" {
		return &huma.ErrorDetail{Location: loc, Message: "NUL bytes (\\u0000) are not allowed in this field"}
	}
	return nil
}

// findNUL returns the location of the first string holding a NUL byte inside v,
// or "". Interface values (free-form JSON) and byte slices (raw JSON) are not
// searched.
func findNUL(v reflect.Value, loc string) string {
	switch v.Kind() {
	case reflect.String:
		if strings.IndexByte(v.String(), 0) >= 0 {
			return loc
		}
	case reflect.Pointer:
		if !v.IsNil() {
			return findNUL(v.Elem(), loc)
		}
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			field := t.Field(i)
			if !field.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(field.Tag.Get("json"), ",")
			if name == "-" {
				continue
			}
			if name == "" {
				name = field.Name
			}
			if found := findNUL(v.Field(i), loc+"."+name); found != "" {
				return found
			}
		}
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return ""
		}
		for i := range v.Len() {
			if found := findNUL(v.Index(i), loc+"["+strconv.Itoa(i)+"]"); found != "" {
				return found
			}
		}
	case reflect.Map:
		if v.Type().Key().Kind() != reflect.String {
			return ""
		}
		iter := v.MapRange()
		for iter.Next() {
			key := iter.Key().String()
			if strings.IndexByte(key, 0) >= 0 {
				return loc
			}
			if iter.Value().Kind() != reflect.Interface {
				if found := findNUL(iter.Value(), loc+"."+key); found != "" {
					return found
				}
			}
		}
	}
	return ""
}

// rejectNULInURL answers 422 for a NUL byte in the path or query, which would
// otherwise reach the database as an id or a filter.
func rejectNULInURL(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.IndexByte(r.URL.Path, 0) >= 0 || strings.Contains(strings.ToLower(r.URL.RawQuery), "%00") {
			writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"detail": []validationItem{{
				Loc: []any{"path"}, Msg: "NUL bytes are not allowed in the URL", Type: "value_error"}}})
			return
		}
		next.ServeHTTP(w, r)
	})
}
