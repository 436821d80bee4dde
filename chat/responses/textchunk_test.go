package responses

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

// The text chunks read by scanning are read as decoding reads them: the
// common ones take the scan (ok), and every other chunk, or one the scan
// is not sure of, goes the general way (not ok).
func TestTextChunkAgreesWithDecode(t *testing.T) {
	t.Parallel()
	const head = `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","system_fingerprint":null,`
	for _, tc := range []struct {
		chunk string
		fast  bool
	}{
		{head + `"choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}`, true},
		{head + `"choices":[{"index":0,"delta":{"content":" word"},"logprobs":null,"finish_reason":null}]}`, true},
		{head + `"choices":[{"index":0,"delta":{"content":"é \"q\" \\ \n \u00e9 <b>&"},"finish_reason":null}]}`, true},
		{head + `"choices":[{"index":0,"delta":{"content":"usage"},"finish_reason":null}],"usage":null}`, true},
		{head + `"choices":[{"index":0,"delta":{},"logprobs":{"content":[{"token":"a","logprob":-1.5e-3}]},"finish_reason":"stop","stop_reason":null,"token_ids":[1,2]}]}`, true},
		{" { \"choices\" : [ { \"delta\" : { \"content\" : \"x\" } , \"finish_reason\" : \"length\" } ] } ", true},
		{head + `"choices":[{"index":0,"delta":{"content":"` + "\xff" + `"},"finish_reason":null}]}`, true},
		{head + `"choices":[{"index":0,"delta":{"content":"\q"},"finish_reason":null}]}`, false},
		{head + `"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}`, false},
		{head + `"choices":[{"index":0,"delta":{"reasoning_content":"hmm"},"finish_reason":null}]}`, false},
		{head + `"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{"}}]},"finish_reason":null}]}`, false},
		{head + `"choices":[{"index":0,"delta":{"refusal":"no"},"finish_reason":null}]}`, false},
		{head + `"choices":[{"index":0,"delta":{"content":"a"}},{"index":1,"delta":{"content":"b"}}]}`, false},
		{head + `"choices":[{"index":0,"delta":{"content":"a","content":"b"}}]}`, false},
		{head + `"choices":[{"index":0,"delta":{"content":"a"}}],"choices":[]}`, false},
		{head + `"choices":[{"index":0,"delta":null,"message":{"content":"whole"}}]}`, false},
		{`{"error":{"message":"boom"}}`, false},
		{head + `"choices":[{"index":0,"delta":{"content":"a"},"finish_reason":null}]`, false},
		{head + `"choices":[{"index":0,"delta":{"content":"a"},"finish_reason":nul}]}`, false},
		{head + `"choices":[{"index":0,"delta":{"content":"a"},"n":1.}]}`, false},
		{head + `"choices":[{"index":0,"delta":{"content":"a"}}]} x`, false},
	} {
		content, finish, ok := textChunk([]byte(tc.chunk))
		if ok != tc.fast {
			t.Errorf("%s: scanned %v, want %v", tc.chunk, ok, tc.fast)
			continue
		}
		if !ok {
			continue
		}
		var c chatChunk
		if err := json.Unmarshal([]byte(tc.chunk), &c); err != nil {
			t.Fatalf("%s: %v", tc.chunk, err)
		}
		d := c.Choices[0].Delta
		want := ""
		if d.Content != nil {
			want = *d.Content
		}
		if content != want || (finish == nil) != (c.Choices[0].FinishReason == nil) || (finish != nil && *finish != *c.Choices[0].FinishReason) ||
			c.Usage != nil || c.Error != nil || d.Reasoning != nil || d.ReasoningContent != nil || d.Refusal != nil || d.ToolCalls != nil {
			t.Errorf("%s: scanned %q %v, decoded %+v", tc.chunk, content, finish, c)
		}
	}
}

// The text delta event is written with the bytes json.Marshal makes of it.
func TestTextDeltaEventBytes(t *testing.T) {
	t.Parallel()
	for _, delta := range []string{" word", "", "é", `"q" \ </b> & ` + "\n\t\x01", "\u2028", "\xff"} {
		e := textDeltaEvent{Type: "response.output_text.delta", SequenceNumber: 42, ItemID: "msg_1", OutputIndex: 1, ContentIndex: 0, Delta: delta, Logprobs: []any{}}
		data, _ := json.Marshal(e)
		want := append(append([]byte("event: response.output_text.delta\ndata: "), data...), "\n\n"...)
		if got := appendTextDelta(nil, &e); !bytes.Equal(got, want) {
			t.Errorf("%q: %s, want %s", delta, got, want)
		}
	}
}

// The response.* events are written with the bytes json.Marshal makes of
// them, the response's own JSON reused.
func TestResponseEventBytes(t *testing.T) {
	t.Parallel()
	r, err := ParseRequest([]byte(`{"model":"m","input":"hi","instructions":"Say <b>&</b> \u2028.","metadata":{"k":"v"}}`))
	if err != nil {
		t.Fatal(err)
	}
	resp := NewResponse(r, time.Unix(1700000000, 0))
	resp.Output = append(resp.Output, &OutputMessage{Type: "message", ID: "msg_1", Status: "completed", Role: "assistant",
		Content: []OutputText{outputText("é \"q\" <x>\n")}})
	type responseEvent struct {
		Type           string    `json:"type"`
		SequenceNumber int       `json:"sequence_number"`
		Response       *Response `json:"response"`
	}
	for _, typ := range []string{"response.created", "response.in_progress", "response.completed", "response.incomplete", "response.failed"} {
		data, _ := json.Marshal(responseEvent{Type: typ, SequenceNumber: 17, Response: resp})
		want := append(append([]byte("event: "+typ+"\ndata: "), data...), "\n\n"...)
		body, _ := json.Marshal(resp)
		if got := appendResponseEvent(nil, typ, 17, body); !bytes.Equal(got, want) {
			t.Errorf("%s: %s, want %s", typ, got, want)
		}
	}
}
