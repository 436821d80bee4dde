package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"
)

// mockUpstream is a fast OpenAI-compatible model server for load runs: it
// answers every chat completion at once (or, for a stream, with chunkDelay
// between chunks) with a fixed reply and honest usage.
type mockUpstream struct {
	URL        string
	chunks     int
	chunkDelay time.Duration
	server     *http.Server
}

func startMockUpstream(chunks int, chunkDelay time.Duration) (*mockUpstream, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	m := &mockUpstream{URL: "http://" + l.Addr().String() + "/v1", chunks: chunks, chunkDelay: chunkDelay}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", m.complete)
	m.server = &http.Server{Handler: mux}
	go func() { _ = m.server.Serve(l) }()
	return m, nil
}

func (m *mockUpstream) Close() { _ = m.server.Close() }

func (m *mockUpstream) complete(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model  string `json:"model"`
		Stream bool   `json:"stream"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, `{"error":{"message":"bad json","type":"BadRequestError","code":400}}`, http.StatusBadRequest)
		return
	}
	created := time.Now().Unix()
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"cmpl-load","object":"chat.completion","created":%d,"model":%q,"choices":[{"index":0,"message":{"role":"assistant","content":"Hello from the load upstream."},"finish_reason":"stop"}],"usage":{"prompt_tokens":12,"completion_tokens":7,"total_tokens":19}}`, created, req.Model)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	rc := http.NewResponseController(w)
	chunk := func(delta string, finish string) {
		finishJSON := "null"
		if finish != "" {
			finishJSON = `"` + finish + `"`
		}
		fmt.Fprintf(w, "data: {\"id\":\"cmpl-load\",\"object\":\"chat.completion.chunk\",\"created\":%d,\"model\":%q,\"choices\":[{\"index\":0,\"delta\":%s,\"finish_reason\":%s}]}\n\n", created, req.Model, delta, finishJSON)
		_ = rc.Flush()
	}
	chunk(`{"role":"assistant","content":""}`, "")
	for i := range m.chunks {
		select {
		case <-r.Context().Done():
			return
		case <-time.After(m.chunkDelay):
		}
		chunk(fmt.Sprintf(`{"content":%q}`, strings.Repeat("x", 3)+fmt.Sprint(i)), "")
	}
	chunk(`{}`, "stop")
	fmt.Fprintf(w, "data: {\"id\":\"cmpl-load\",\"object\":\"chat.completion.chunk\",\"created\":%d,\"model\":%q,\"choices\":[],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":%d,\"total_tokens\":%d}}\n\n", created, req.Model, m.chunks, 12+m.chunks)
	fmt.Fprint(w, "data: [DONE]\n\n")
	_ = rc.Flush()
}
