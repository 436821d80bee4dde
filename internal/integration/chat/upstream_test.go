package chat_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// modelServer is an OpenAI-compatible model server written for the tests: it
// answers /v1/chat/completions deterministically from the request (n choices,
// tool calls when tools are given, logprobs when asked, JSON when a schema is
// asked) and streams in vLLM's exact SSE shape.
type modelServer struct {
	*httptest.Server
	requests atomic.Int64
	// last is the most recent request body.
	last atomic.Value
	// cancelled receives once per streamed request whose client went away.
	cancelled chan struct{}
}

const (
	promptTokens = 7
	wordTokens   = 1
)

func newModelServer(t *testing.T) *modelServer {
	t.Helper()
	m := &modelServer{cancelled: make(chan struct{}, 16)}
	m.Server = httptest.NewServer(http.HandlerFunc(m.serve))
	t.Cleanup(m.Close)
	return m
}

// failingServer answers every request with 500.
func failingServer(t *testing.T, hits *atomic.Int64) *httptest.Server {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(500)
		_, _ = io.WriteString(w, `{"error":{"message":"engine crashed","type":"InternalServerError","param":null,"code":500}}`)
	}))
	t.Cleanup(s.Close)
	return s
}

type chatRequest struct {
	Model         string           `json:"model"`
	N             int              `json:"n"`
	Stream        bool             `json:"stream"`
	StreamOptions map[string]bool  `json:"stream_options"`
	Tools         []map[string]any `json:"tools"`
	Logprobs      bool             `json:"logprobs"`
	TopLogprobs   int              `json:"top_logprobs"`
	Response      *struct {
		Type string `json:"type"`
	} `json:"response_format"`
	StructuredOutputs map[string]any `json:"structured_outputs"`
}

// imageBytes is the picture the model server "generates".
var imageBytes = []byte("\x89PNG\r\n\x1a\n test picture")

func (m *modelServer) serve(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/picture.png":
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write(imageBytes)
		return
	case "/v1/images/generations":
		var req struct {
			Prompt string `json:"prompt"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		w.Header().Set("Content-Type", "application/json")
		if req.Prompt == "forbidden" {
			w.WriteHeader(400)
			_, _ = io.WriteString(w, `{"error":{"message":"Your request was rejected by the safety system.","type":"invalid_request_error"}}`)
			return
		}
		fmt.Fprintf(w, `{"created":1,"data":[{"url":"%s/picture.png","revised_prompt":%q}],"usage":{"input_tokens":5,"output_tokens":100}}`, m.URL, req.Prompt)
		return
	}
	m.requests.Add(1)
	raw, _ := io.ReadAll(r.Body)
	m.last.Store(raw)
	var req chatRequest
	if err := json.Unmarshal(raw, &req); err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	if req.N == 0 {
		req.N = 1
	}
	content := "Hello from the model"
	if (req.Response != nil && req.Response.Type == "json_schema") || req.StructuredOutputs["json"] != nil {
		content = `{"city":"Paris"}`
	}
	words := strings.SplitAfter(content, " ")
	usage := map[string]int{"prompt_tokens": promptTokens, "completion_tokens": len(words) * req.N, "total_tokens": promptTokens + len(words)*req.N}
	var toolCall map[string]any
	if len(req.Tools) > 0 {
		name := req.Tools[0]["function"].(map[string]any)["name"]
		toolCall = map[string]any{"id": "chatcmpl-tool-1", "type": "function", "function": map[string]any{"name": name, "arguments": `{"location":"Paris"}`}}
	}
	logprob := func(token string) map[string]any {
		top := []map[string]any{}
		for i := range req.TopLogprobs {
			top = append(top, map[string]any{"token": fmt.Sprintf("t%d", i), "logprob": -float64(i), "bytes": []int{116}})
		}
		return map[string]any{"token": token, "logprob": -0.5, "bytes": []byte(token), "top_logprobs": top}
	}
	if !req.Stream {
		choices := []map[string]any{}
		for i := range req.N {
			msg := map[string]any{"role": "assistant", "content": content}
			finish := "stop"
			if toolCall != nil {
				msg = map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{toolCall}}
				finish = "tool_calls"
			}
			choice := map[string]any{"index": i, "message": msg, "finish_reason": finish, "logprobs": nil}
			if req.Logprobs {
				var content []any
				for _, w := range words {
					content = append(content, logprob(w))
				}
				choice["logprobs"] = map[string]any{"content": content}
			}
			choices = append(choices, choice)
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"id": "chatcmpl-test", "object": "chat.completion", "created": 1, "model": req.Model,
			"choices": choices, "usage": usage,
		})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	send := func(v any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "data: %s\n\n", b)
		w.(http.Flusher).Flush()
	}
	chunk := func(choices ...map[string]any) map[string]any {
		return map[string]any{"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": 1, "model": req.Model, "choices": choices}
	}
	for i := range req.N {
		send(chunk(map[string]any{"index": i, "delta": map[string]any{"role": "assistant", "content": ""}, "logprobs": nil, "finish_reason": nil}))
	}
	if req.Model == "slow" { // one word, then wait for the client to go away
		send(chunk(map[string]any{"index": 0, "delta": map[string]any{"content": "Hello"}, "finish_reason": nil}))
		select {
		case <-r.Context().Done():
			m.cancelled <- struct{}{}
		case <-time.After(30 * time.Second):
		}
		return
	}
	for _, word := range words {
		for i := range req.N {
			c := map[string]any{"index": i, "delta": map[string]any{"content": word}, "finish_reason": nil}
			if req.Logprobs {
				c["logprobs"] = map[string]any{"content": []any{logprob(word)}}
			}
			send(chunk(c))
		}
	}
	for i := range req.N {
		send(chunk(map[string]any{"index": i, "delta": map[string]any{}, "finish_reason": "stop"}))
	}
	if req.StreamOptions["include_usage"] {
		c := chunk()
		c["choices"] = []any{}
		c["usage"] = usage
		send(c)
	}
	_, _ = io.WriteString(w, "data: [DONE]\n\n")
}
