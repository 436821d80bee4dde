// Package modelserver is an OpenAI-compatible model server written for the
// end-to-end tests: a weft server under test routes chat completions to it
// (through -chat-config) so the tests need no real model.
package modelserver

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Server is an OpenAI-compatible model server: it
// answers /v1/chat/completions deterministically from the request (n choices,
// tool calls when tools are given, logprobs when asked, JSON when a schema is
// asked) and streams in vLLM's exact SSE shape.
type Server struct {
	*httptest.Server
	// Requests counts the requests served.
	Requests atomic.Int64
	// Last is the most recent request body ([]byte).
	Last atomic.Value
	// Cancelled receives once per streamed request whose client went away.
	Cancelled chan struct{}
}

// PromptTokens is the prompt_tokens of every answer; completion_tokens is
// one per word of the content, times n.
const PromptTokens = 7

// New starts a model server, closed when the test ends. Its API base is URL+"/v1".
func New(t testing.TB) *Server {
	t.Helper()
	m := &Server{Cancelled: make(chan struct{}, 16)}
	m.Server = httptest.NewServer(http.HandlerFunc(m.serve))
	t.Cleanup(m.Close)
	return m
}

// Failing starts a server that answers every request with 500, counting them in hits.
func Failing(t testing.TB, hits *atomic.Int64) *httptest.Server {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(500)
		_, _ = io.WriteString(w, `{"error":{"message":"engine crashed","type":"InternalServerError","param":null,"code":500}}`)
	}))
	t.Cleanup(s.Close)
	return s
}

// chatRequest is the part of a chat completion request the server reads.
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

// Image is the picture the model server "generates" for /v1/images/generations.
const Image = "\x89PNG\r\n\x1a\n test picture"

func (m *Server) serve(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/picture.png":
		w.Header().Set("Content-Type", "image/png")
		_, _ = io.WriteString(w, Image)
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
	m.Requests.Add(1)
	raw, _ := io.ReadAll(r.Body)
	m.Last.Store(raw)
	switch r.URL.Path {
	case "/v1/embeddings":
		m.embeddings(w, raw)
		return
	case "/v1/completions":
		m.completions(w, raw)
		return
	}
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
	usage := map[string]int{"prompt_tokens": PromptTokens, "completion_tokens": len(words) * req.N, "total_tokens": PromptTokens + len(words)*req.N}
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
			m.Cancelled <- struct{}{}
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

// Vector is the embedding the model server answers for the i-th input of
// words words.
func Vector(i, words int) []float32 {
	return []float32{float32(i + 1), 0.5, -0.25, float32(words)}
}

// embeddings answers /v1/embeddings: Vector for each input (text or a
// list of token ids, one word a token), as floats or base64, with usage.
func (m *Server) embeddings(w http.ResponseWriter, raw []byte) {
	var req struct {
		Model          string          `json:"model"`
		Input          json.RawMessage `json:"input"`
		EncodingFormat string          `json:"encoding_format"`
	}
	if err := json.Unmarshal(raw, &req); err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	var words []int
	var text string
	var texts []string
	var one []int
	var ids [][]int
	switch {
	case json.Unmarshal(req.Input, &text) == nil:
		words = append(words, len(strings.Fields(text)))
	case json.Unmarshal(req.Input, &texts) == nil:
		for _, t := range texts {
			words = append(words, len(strings.Fields(t)))
		}
	case json.Unmarshal(req.Input, &one) == nil:
		words = append(words, len(one))
	case json.Unmarshal(req.Input, &ids) == nil:
		for _, l := range ids {
			words = append(words, len(l))
		}
	default:
		http.Error(w, "bad input", 400)
		return
	}
	data := []map[string]any{}
	total := 0
	for i, n := range words {
		total += n
		var embedding any = Vector(i, n)
		if req.EncodingFormat == "base64" {
			buf := make([]byte, 0, 16)
			for _, x := range Vector(i, n) {
				buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(x))
			}
			embedding = base64.StdEncoding.EncodeToString(buf)
		}
		data = append(data, map[string]any{"object": "embedding", "index": i, "embedding": embedding})
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "model": req.Model, "data": data,
		"usage": map[string]int{"prompt_tokens": total, "total_tokens": total}})
}

// TextCompletion is the text the model server completes every prompt with,
// one token a word.
const TextCompletion = " Hello from the model"

// completions answers /v1/completions: TextCompletion for each prompt (a
// string or a list of them) and each of its n choices, after the prompt
// with echo, with logprobs when asked, streamed in vLLM's shape.
func (m *Server) completions(w http.ResponseWriter, raw []byte) {
	var req struct {
		Model         string          `json:"model"`
		Prompt        json.RawMessage `json:"prompt"`
		N             int             `json:"n"`
		Echo          bool            `json:"echo"`
		Logprobs      *int            `json:"logprobs"`
		Stream        bool            `json:"stream"`
		StreamOptions map[string]bool `json:"stream_options"`
	}
	if err := json.Unmarshal(raw, &req); err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	req.N = max(req.N, 1)
	var prompts []string
	if json.Unmarshal(req.Prompt, &prompts) != nil {
		var one string
		_ = json.Unmarshal(req.Prompt, &one)
		prompts = []string{one}
	}
	words := strings.SplitAfter(strings.TrimPrefix(TextCompletion, " "), " ")
	for i := range words {
		words[i] = " " + strings.TrimSpace(words[i])
	}
	logprobs := func(tokens []string) any {
		if req.Logprobs == nil {
			return nil
		}
		lp := map[string]any{"tokens": tokens, "token_logprobs": []float64{}, "top_logprobs": []map[string]float64{}, "text_offset": []int{}}
		for _, tok := range tokens {
			lp["token_logprobs"] = append(lp["token_logprobs"].([]float64), -0.5)
			lp["top_logprobs"] = append(lp["top_logprobs"].([]map[string]float64), map[string]float64{tok: -0.5})
			lp["text_offset"] = append(lp["text_offset"].([]int), 0)
		}
		return lp
	}
	completionTokens := len(words) * req.N * len(prompts)
	usage := map[string]int{"prompt_tokens": PromptTokens * len(prompts), "completion_tokens": completionTokens, "total_tokens": PromptTokens*len(prompts) + completionTokens}
	if !req.Stream {
		choices := []map[string]any{}
		for p, prompt := range prompts {
			for i := range req.N {
				text := TextCompletion
				if req.Echo {
					text = prompt + text
				}
				choices = append(choices, map[string]any{"index": p*req.N + i, "text": text, "logprobs": logprobs(words), "finish_reason": "length", "stop_reason": nil})
			}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"id": "cmpl-test", "object": "text_completion", "created": 1, "model": req.Model, "choices": choices, "usage": usage})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	send := func(choices []map[string]any, usage any) {
		b, _ := json.Marshal(map[string]any{"id": "cmpl-test", "object": "text_completion", "created": 1, "model": req.Model, "choices": choices, "usage": usage})
		fmt.Fprintf(w, "data: %s\n\n", b)
		w.(http.Flusher).Flush()
	}
	for p, prompt := range prompts {
		for i := range req.N {
			index := p*req.N + i
			if req.Echo {
				send([]map[string]any{{"index": index, "text": prompt, "logprobs": nil, "finish_reason": nil}}, nil)
			}
			for k, word := range words {
				var finish any
				if k == len(words)-1 {
					finish = "length"
				}
				send([]map[string]any{{"index": index, "text": word, "logprobs": logprobs([]string{word}), "finish_reason": finish}}, nil)
			}
		}
	}
	if req.StreamOptions["include_usage"] {
		send([]map[string]any{}, usage)
	}
	_, _ = io.WriteString(w, "data: [DONE]\n\n")
}
