package training

import (
	"encoding/json"
	"strings"
	"testing"
)

// A dataset row is a conversation: its messages, and the answer its output
// holds (a string, an assistant message, a chat completion) as the
// assistant's turn unless the messages end with it.
func TestRowConversation(t *testing.T) {
	user := `{"role":"user","content":"hi"}`
	for _, c := range []struct {
		name, row, want, err string
	}{
		{"string output", `{"messages":[` + user + `],"output":"hello"}`,
			`{"messages":[` + user + `,{"content":"hello","role":"assistant"}]}`, ""},
		{"chat completion output", `{"messages":[` + user + `],"model":"m","output":{"id":"c","choices":[{"index":0,"message":{"role":"assistant","content":"hey","refusal":null,"tool_calls":[]}}]}}`,
			`{"messages":[` + user + `,{"content":"hey","role":"assistant"}]}`, ""},
		{"message output with tools", `{"messages":[` + user + `],"tools":[{"type":"function","function":{"name":"f"}}],"output":{"role":"assistant","content":null,"tool_calls":[{"id":"1","type":"function","function":{"name":"f","arguments":"{}"}}]}}`,
			`{"messages":[` + user + `,{"content":null,"role":"assistant","tool_calls":[{"id":"1","type":"function","function":{"name":"f","arguments":"{}"}}]}],"tools":[{"type":"function","function":{"name":"f"}}]}`, ""},
		{"answered already", `{"messages":[` + user + `,{"role":"assistant","content":"yo"}],"output":null}`,
			`{"messages":[` + user + `,{"role":"assistant","content":"yo"}]}`, ""},
		{"no messages", `{"question":"hi","output":"hello"}`, "", "no messages"},
		{"no answer", `{"messages":[` + user + `],"output":{"score":1}}`, "", "output holds no answer"},
		{"null output", `{"messages":[` + user + `],"output":null}`, "", "output holds no answer"},
		{"not an object", `[1]`, "", "not a JSON object"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := rowConversation(json.RawMessage(c.row))
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("got %s, %v; want an error saying %q", got, err, c.err)
				}
				return
			}
			if err != nil || string(got) != c.want {
				t.Fatalf("got %s, %v\nwant %s", got, err, c.want)
			}
		})
	}
}

// Only a Dataset whose rows are a table of its own project is read as one.
func TestDatasetTable(t *testing.T) {
	for _, c := range []struct {
		val, digest string
		ok          bool
	}{
		{`{"_type":"Dataset","_class_name":"Dataset","rows":"weave:///a/p/table/abc"}`, "abc", true},
		{`{"_type":"Dataset","_class_name":"Dataset","rows":"weave:///b/p/table/abc"}`, "", false},
		{`{"_type":"Dataset","_class_name":"Dataset","rows":"weave:///a/p/object/x:abc"}`, "", false},
		{`{"_type":"CustomWeaveType","files":{"train.jsonl":"d"}}`, "", false},
	} {
		if digest, ok := datasetTable("a/p", json.RawMessage(c.val)); digest != c.digest || ok != c.ok {
			t.Errorf("%s: %q %v, want %q %v", c.val, digest, ok, c.digest, c.ok)
		}
	}
}
