package chat

import (
	"encoding/json"
	"testing"
)

// Patching rewrites only the edited members and keeps every other byte.
func TestPatchObject(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		raw   string
		edits map[string]json.RawMessage
		want  string
	}{
		{`{"model":"a","x":1}`, map[string]json.RawMessage{"model": json.RawMessage(`"b"`)}, `{"model":"b","x":1}`},
		{` { "messages" : [ {"content":"}{,\"]"} ] , "model":"a" , "n" : 2 } `, map[string]json.RawMessage{"model": json.RawMessage(`"b"`)},
			`{"messages" : [ {"content":"}{,\"]"} ],"model":"b","n" : 2}`},
		{`{"engine_xargs":{"k":[1,{"a":null}]},"z":true}`, map[string]json.RawMessage{"engine_xargs": nil, "vllm_xargs": json.RawMessage(`{"k":1}`)}, `{"z":true,"vllm_xargs":{"k":1}}`},
		{`{"mo\u0064el":"a","model":"c"}`, map[string]json.RawMessage{"model": json.RawMessage(`"b"`)}, `{"model":"b"}`},
		{`{}`, map[string]json.RawMessage{"model": json.RawMessage(`"b"`), "a": nil}, `{"model":"b"}`},
	} {
		members, ok := topLevelMembers([]byte(tc.raw))
		if !ok {
			t.Fatalf("%s: not an object", tc.raw)
		}
		got := string(patchObject([]byte(tc.raw), members, tc.edits))
		if got != tc.want || !json.Valid([]byte(got)) {
			t.Errorf("patch %s:\n got %s\nwant %s", tc.raw, got, tc.want)
		}
	}
	for _, notObject := range []string{`[]`, `"x"`, `1`} {
		if _, ok := topLevelMembers([]byte(notObject)); ok {
			t.Errorf("%s taken for an object", notObject)
		}
	}
}
