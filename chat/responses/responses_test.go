package responses

import (
	"bytes"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/weftlabs/weft"
)

func TestChatRequest(t *testing.T) {
	raw := `{"model":"m","instructions":"Be brief.","input":[
		{"role":"developer","content":"Use tools."},
		{"role":"user","content":[{"type":"input_text","text":"Weather "},{"type":"input_text","text":"in Paris?"},{"type":"input_image","image_url":"data:image/png;base64,AAAA","detail":"low"}]},
		{"type":"reasoning","summary":[],"content":[{"type":"reasoning_text","text":"Call the tool."}]},
		{"type":"function_call","call_id":"c1","name":"weather","arguments":"{\"city\":\"Paris\"}"},
		{"type":"function_call","call_id":"c2","name":"weather","arguments":"{\"city\":\"Lyon\"}"},
		{"type":"function_call_output","call_id":"c1","output":"sunny"},
		{"type":"function_call_output","call_id":"c2","output":[{"type":"input_text","text":"rain"}]}],
		"tools":[{"type":"function","name":"weather","description":"Weather of a city","parameters":{"type":"object"},"strict":true}],
		"tool_choice":{"type":"function","name":"weather"},
		"text":{"format":{"type":"json_schema","name":"answer","schema":{"type":"object"},"strict":true}},
		"reasoning":{"effort":"low"},"max_output_tokens":64,"temperature":0.5,"top_logprobs":2}`
	r, err := ParseRequest([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	history := []InputItem{
		{Type: "message", Role: "user", Content: json.RawMessage(`"Hi"`)},
		{Type: "message", Role: "assistant", Content: json.RawMessage(`[{"type":"output_text","text":"Hello.","annotations":[]}]`)},
	}
	input, err := r.InputItems(DefaultMaxInputItems)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range input {
		if !regexp.MustCompile(`^(msg|rs|fc|fco)_[0-9a-f]{32}$`).MatchString(it.ID) {
			t.Errorf("item id %q", it.ID)
		}
	}
	got, err := r.ChatRequest(history, input, true)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"model":"m","messages":[
		{"role":"system","content":"Be brief."},
		{"role":"user","content":"Hi"},
		{"role":"assistant","content":"Hello."},
		{"role":"system","content":"Use tools."},
		{"role":"user","content":[{"type":"text","text":"Weather "},{"type":"text","text":"in Paris?"},{"type":"image_url","image_url":{"url":"data:image/png;base64,AAAA","detail":"low"}}]},
		{"role":"assistant","reasoning_content":"Call the tool.","tool_calls":[
			{"id":"c1","type":"function","function":{"name":"weather","arguments":"{\"city\":\"Paris\"}"}},
			{"id":"c2","type":"function","function":{"name":"weather","arguments":"{\"city\":\"Lyon\"}"}}]},
		{"role":"tool","content":"sunny","tool_call_id":"c1"},
		{"role":"tool","content":"rain","tool_call_id":"c2"}],
		"tools":[{"type":"function","function":{"name":"weather","description":"Weather of a city","parameters":{"type":"object"},"strict":true}}],
		"tool_choice":{"function":{"name":"weather"},"type":"function"},
		"response_format":{"type":"json_schema","json_schema":{"name":"answer","schema":{"type":"object"},"strict":true}},
		"max_completion_tokens":64,"temperature":0.5,"logprobs":true,"top_logprobs":2,"reasoning_effort":"low",
		"stream":true,"stream_options":{"include_usage":true}}`
	var compact bytes.Buffer
	if err := json.Compact(&compact, []byte(want)); err != nil {
		t.Fatal(err)
	}
	if string(got) != compact.String() {
		t.Errorf("chat request\n got %s\nwant %s", got, compact.String())
	}
}

func TestValidateRefuses(t *testing.T) {
	for _, tc := range []struct{ body, param string }{
		{`[]`, "body"},
		{`{"input":"x"}`, "model"},
		{`{"model":"m"}`, "input"},
		{`{"model":"m","input":3}`, "input"},
		{`{"model":"m","input":"x","tools":[{"type":"web_search"}]}`, "tools"},
		{`{"model":"m","input":"x","tool_choice":"sometimes"}`, "tool_choice"},
		{`{"model":"m","input":"x","tool_choice":{"type":"file_search"}}`, "tool_choice"},
		{`{"model":"m","input":"x","background":true}`, "background"},
		{`{"model":"m","input":"x","conversation":"conv_1"}`, "conversation"},
		{`{"model":"m","input":"x","truncation":"auto"}`, "truncation"},
		{`{"model":"m","input":"x","max_output_tokens":0}`, "max_output_tokens"},
		{`{"model":"m","input":"x","text":{"format":{"type":"json_schema","schema":{}}}}`, "text.format.name"},
		{`{"model":"m","input":"x","text":{"format":{"type":"xml"}}}`, "text.format.type"},
		{`{"model":"m","input":"x","temperature":"hot"}`, "temperature"},
	} {
		_, err := ParseRequest([]byte(tc.body))
		if !errors.Is(err, ErrInvalid) || !strings.Contains(paramOf(err), tc.param) {
			t.Errorf("%s: %v (param %q), want ErrInvalid about %s", tc.body, err, paramOf(err), tc.param)
		}
	}
	for _, input := range []string{
		`[{"type":"message","role":"tool","content":"x"}]`,
		`[{"type":"input_file"}]`,
		`[{"type":"function_call","name":"f"}]`,
		`[{"role":"user","content":[{"type":"input_audio"}]}]`,
		`[{}]`,
	} {
		r, err := ParseRequest([]byte(`{"model":"m","input":` + input + `}`))
		if err != nil {
			t.Fatal(err)
		}
		items, err := r.InputItems(DefaultMaxInputItems)
		if err == nil {
			_, err = r.ChatRequest(nil, items, false)
		}
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("input %s: %v, want ErrInvalid", input, err)
		}
	}
	r, _ := ParseRequest([]byte(`{"model":"m","input":[{"role":"user","content":"a"},{"role":"user","content":"b"}]}`))
	if _, err := r.InputItems(1); !errors.Is(err, ErrInvalid) {
		t.Errorf("too many items: %v", err)
	}
}

func paramOf(err error) string {
	p, _ := weft.ErrorFields(err)["param"].(string)
	return p
}

// chatStream is a chat stream of reasoning, text and two tool calls (the
// second's arguments in two deltas), cut at max_tokens, with usage.
var chatStream = strings.Join([]string{
	`{"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}`,
	`{"choices":[{"index":0,"delta":{"reasoning":"Think"}}]}`,
	`{"choices":[{"index":0,"delta":{"reasoning":"ing."}}]}`,
	`{"choices":[{"index":0,"delta":{"content":"Hel"}}]}`,
	`{"choices":[{"index":0,"delta":{"content":"lo"}}]}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"f","arguments":"{}"}}]}}]}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"g","arguments":"{\"x\":"}}]}}]}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"1}"}}]},"finish_reason":"length"}]}`,
	`{"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":9,"total_tokens":14,"completion_tokens_details":{"reasoning_tokens":2}}}`,
	`[DONE]`,
}, "\n\ndata: ")

// whole is the same answer as one chat completion.
const whole = `{"choices":[{"index":0,"message":{"role":"assistant","content":"Hello","reasoning":"Thinking.",
	"tool_calls":[{"id":"call_a","type":"function","function":{"name":"f","arguments":"{}"}},
	{"id":"call_b","type":"function","function":{"name":"g","arguments":"{\"x\":1}"}}]},"finish_reason":"length"}],
	"usage":{"prompt_tokens":5,"completion_tokens":9,"total_tokens":14,"completion_tokens_details":{"reasoning_tokens":2}}}`

func TestStreamEvents(t *testing.T) {
	r, err := ParseRequest([]byte(`{"model":"m","input":"hi"}`))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1700000000, 0)
	var out bytes.Buffer
	s := NewStream(NewResponse(r, now), &out, nil)
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	sse := []byte("data: " + chatStream + "\n\n")
	for len(sse) > 0 { // in pieces of 7 bytes, cutting events anywhere
		n := min(7, len(sse))
		if _, err := s.Write(sse[:n]); err != nil {
			t.Fatal(err)
		}
		sse = sse[n:]
	}
	streamed := s.Finish(now)
	if err := s.Done(mustMarshal(t, streamed)); err != nil {
		t.Fatal(err)
	}
	var types []string
	for i, ev := range strings.Split(strings.TrimSuffix(out.String(), "\n\n"), "\n\n") {
		head, data, _ := strings.Cut(ev, "\ndata: ")
		var e struct {
			Type string `json:"type"`
			Seq  int    `json:"sequence_number"`
		}
		if err := json.Unmarshal([]byte(data), &e); err != nil {
			t.Fatal(err)
		}
		if head != "event: "+e.Type || e.Seq != i {
			t.Errorf("event %d: %q, type %s, sequence %d", i, head, e.Type, e.Seq)
		}
		types = append(types, strings.TrimPrefix(e.Type, "response."))
	}
	want := "created in_progress " +
		"output_item.added content_part.added reasoning_text.delta reasoning_text.delta reasoning_text.done content_part.done output_item.done " +
		"output_item.added content_part.added output_text.delta output_text.delta output_text.done content_part.done output_item.done " +
		"output_item.added function_call_arguments.delta function_call_arguments.done output_item.done " +
		"output_item.added function_call_arguments.delta function_call_arguments.delta function_call_arguments.done output_item.done " +
		"incomplete"
	if got := strings.Join(types, " "); got != want {
		t.Errorf("events\n got %s\nwant %s", got, want)
	}

	r2, _ := ParseRequest([]byte(`{"model":"m","input":"hi"}`))
	whole, err := FromChat(NewResponse(r2, now), []byte(whole), now)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := withoutIDs(t, streamed), withoutIDs(t, whole); a != b {
		t.Errorf("streamed and whole responses differ:\n%s\n%s", a, b)
	}
	if streamed.Status != "incomplete" || streamed.Usage.OutputTokensDetails.ReasoningTokens != 2 {
		t.Errorf("status %s, usage %+v", streamed.Status, streamed.Usage)
	}
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

var ids = regexp.MustCompile(`"(resp|rs|msg|fc)_[0-9a-f]{32}"`)

func withoutIDs(t *testing.T, r *Response) string {
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return ids.ReplaceAllString(string(data), `"id"`)
}

func TestStreamFailure(t *testing.T) {
	r, _ := ParseRequest([]byte(`{"model":"m","input":"hi"}`))
	var out bytes.Buffer
	s := NewStream(NewResponse(r, time.Now()), &out, nil)
	_ = s.Start()
	_, _ = s.Write([]byte("data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\ndata: {\"error\":{\"message\":\"engine stopped\"}}\n\n"))
	resp := s.Finish(time.Now())
	_ = s.Done(mustMarshal(t, resp))
	if resp.Status != "failed" || resp.Error == nil || resp.Error.Message != "engine stopped" || resp.CompletedAt != nil {
		t.Errorf("response %+v", resp)
	}
	if !strings.Contains(out.String(), "event: response.failed\n") {
		t.Errorf("stream %s", out.String())
	}
}
