package responses

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

// BenchmarkStreamOverhead: the work a Responses stream adds to a chat
// stream of the same generation (256 content deltas of a word each, usage
// last). chat_ns is relaying the chat stream's bytes as chat does (a write
// per line); responses_ns is translating them into the Responses events
// and writing those, both measured alternately in each iteration;
// responses_ns/token is the translation's cost per token. The ratio of a
// Responses stream to a chat stream of the same generation end to end
// (HTTP, gateway, tracing) is BenchmarkResponsesStreamOverhead's x_chat in
// package chat.
func BenchmarkStreamOverhead(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}` + "\n\n")
	for i := range 256 {
		fmt.Fprintf(&sb, `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":" word%d"},"logprobs":null,"finish_reason":null}]}`+"\n\n", i)
	}
	sb.WriteString(`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}]}` + "\n\n")
	sb.WriteString(`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":256,"total_tokens":261}}` + "\n\n")
	sb.WriteString("data: [DONE]\n\n")
	var lines [][]byte
	for _, l := range strings.SplitAfter(sb.String(), "\n") {
		lines = append(lines, []byte(l))
	}
	r, err := ParseRequest([]byte(`{"model":"m","input":"hi","stream":true}`))
	if err != nil {
		b.Fatal(err)
	}
	var chat, resp time.Duration
	for b.Loop() {
		start := time.Now()
		for _, l := range lines {
			_, _ = io.Discard.Write(l)
		}
		chat += time.Since(start)
		start = time.Now()
		s := NewStream(NewResponse(r, start), io.Discard, nil)
		_ = s.Start()
		for _, l := range lines {
			_, _ = s.Write(l)
		}
		done, _ := json.Marshal(s.Finish(start))
		_ = s.Done(done)
		resp += time.Since(start)
	}
	b.ReportMetric(float64(chat.Nanoseconds())/float64(b.N), "chat_ns")
	b.ReportMetric(float64(resp.Nanoseconds())/float64(b.N), "responses_ns")
	b.ReportMetric(float64(resp.Nanoseconds())/float64(b.N)/256, "responses_ns/token")
}
