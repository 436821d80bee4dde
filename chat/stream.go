package chat

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"sort"
)

var (
	dataPrefix  = []byte("data:")
	doneFrame   = []byte("data: [DONE]\n\n")
	donePayload = []byte("[DONE]")
)

// relayStream copies an upstream SSE stream to w event by event, flushing
// after each, and collects the data payloads for tracing when collect is
// set (a call traced as another API's has its output from EndTrace and
// needs none: a copy a token less). The stream always
// ends with data: [DONE]; an upstream that breaks off mid-stream is reported
// as one error event first. It returns the payloads and why the relay ended
// early ("" when the upstream finished).
func relayStream(w io.Writer, flush func() error, upstream io.Reader, collect bool) (frames [][]byte, failure string) {
	reader := bufio.NewReaderSize(upstream, 32<<10)
	sawDone := false
	pending := false // bytes written since the last flush
	for {
		line, err := reader.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// A line longer than the buffer: keep reading it whole.
			long := append([]byte(nil), line...)
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = reader.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		}
		if len(line) > 0 {
			if payload, ok := bytes.CutPrefix(line, dataPrefix); ok {
				payload = bytes.TrimSpace(payload)
				if bytes.Equal(payload, donePayload) {
					sawDone = true
				} else if collect && len(payload) > 0 {
					frames = append(frames, append([]byte(nil), payload...))
				}
			}
			if _, werr := w.Write(line); werr != nil {
				return frames, "client disconnected: " + werr.Error()
			}
			pending = true
			if len(bytes.TrimSpace(line)) == 0 { // end of an event
				if ferr := flush(); ferr != nil {
					return frames, "client disconnected: " + ferr.Error()
				}
				pending = false
			}
		}
		if err != nil {
			if pending {
				_, _ = w.Write([]byte("\n\n"))
			}
			if !errors.Is(err, io.EOF) {
				failure = "upstream stream failed: " + err.Error()
				_, _ = w.Write(streamErrorEvent(failure))
			}
			break
		}
		if sawDone {
			if pending { // the [DONE] event's blank line is not read
				_, _ = w.Write([]byte("\n"))
			}
			break
		}
	}
	if !sawDone {
		if failure == "" {
			failure = "upstream stream ended without [DONE]"
		}
		_, _ = w.Write(doneFrame)
	} else {
		failure = ""
	}
	_ = flush()
	return frames, failure
}

// streamErrorEvent is vLLM's mid-stream error event.
func streamErrorEvent(message string) []byte {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{
		"message": message, "type": "InternalServerError", "param": nil, "code": 500,
	}})
	return append(append([]byte("data: "), b...), '\n', '\n')
}

// chunk is the part of a chat.completion.chunk that assembly reads.
type chunk struct {
	ID                string          `json:"id"`
	Created           int64           `json:"created"`
	Model             string          `json:"model"`
	SystemFingerprint *string         `json:"system_fingerprint"`
	Usage             json.RawMessage `json:"usage"`
	Error             json.RawMessage `json:"error"`
	Choices           []struct {
		Index        int             `json:"index"`
		FinishReason *string         `json:"finish_reason"`
		StopReason   json.RawMessage `json:"stop_reason"`
		Logprobs     *struct {
			Content []json.RawMessage `json:"content"`
		} `json:"logprobs"`
		Delta struct {
			Role      string  `json:"role"`
			Content   *string `json:"content"`
			Reasoning *string `json:"reasoning"`
			Refusal   *string `json:"refusal"`
			ToolCalls []struct {
				Index    int    `json:"index"`
				ID       string `json:"id"`
				Type     string `json:"type"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
	} `json:"choices"`
}

type assembledToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type assembledChoice struct {
	Index   int `json:"index"`
	Message struct {
		Role      string              `json:"role"`
		Content   *string             `json:"content"`
		Reasoning *string             `json:"reasoning,omitempty"`
		Refusal   *string             `json:"refusal,omitempty"`
		ToolCalls []assembledToolCall `json:"tool_calls,omitempty"`
	} `json:"message"`
	Logprobs     *assembledLogprobs `json:"logprobs"`
	FinishReason *string            `json:"finish_reason"`
	StopReason   json.RawMessage    `json:"stop_reason,omitempty"`

	toolIndex map[int]int
}

type assembledLogprobs struct {
	Content []json.RawMessage `json:"content"`
}

// assembleStream rebuilds the chat.completion a stream amounts to, for the
// trace: content, reasoning and tool-call arguments joined per choice, the
// finish reason, logprobs and the usage chunk (absent usage stays absent).
func assembleStream(frames [][]byte) json.RawMessage {
	out := struct {
		ID                string             `json:"id"`
		Object            string             `json:"object"`
		Created           int64              `json:"created"`
		Model             string             `json:"model"`
		Choices           []*assembledChoice `json:"choices"`
		SystemFingerprint *string            `json:"system_fingerprint,omitempty"`
		Usage             json.RawMessage    `json:"usage,omitempty"`
		Error             json.RawMessage    `json:"error,omitempty"`
	}{Object: "chat.completion", Choices: []*assembledChoice{}}
	choices := map[int]*assembledChoice{}
	for _, frame := range frames {
		var c chunk
		if json.Unmarshal(frame, &c) != nil {
			continue
		}
		if len(c.Error) > 0 {
			out.Error = c.Error
			continue
		}
		if out.ID == "" {
			out.ID, out.Created, out.Model = c.ID, c.Created, c.Model
		}
		if c.SystemFingerprint != nil {
			out.SystemFingerprint = c.SystemFingerprint
		}
		if len(c.Usage) > 0 && string(c.Usage) != "null" {
			out.Usage = c.Usage
		}
		for _, delta := range c.Choices {
			ch := choices[delta.Index]
			if ch == nil {
				ch = &assembledChoice{Index: delta.Index, toolIndex: map[int]int{}}
				ch.Message.Role = "assistant"
				choices[delta.Index] = ch
				out.Choices = append(out.Choices, ch)
			}
			d := delta.Delta
			if d.Role != "" {
				ch.Message.Role = d.Role
			}
			ch.Message.Content = appendText(ch.Message.Content, d.Content)
			ch.Message.Reasoning = appendText(ch.Message.Reasoning, d.Reasoning)
			ch.Message.Refusal = appendText(ch.Message.Refusal, d.Refusal)
			for _, tc := range d.ToolCalls {
				i, ok := ch.toolIndex[tc.Index]
				if !ok {
					i = len(ch.Message.ToolCalls)
					ch.toolIndex[tc.Index] = i
					ch.Message.ToolCalls = append(ch.Message.ToolCalls, assembledToolCall{Type: "function"})
				}
				call := &ch.Message.ToolCalls[i]
				if tc.ID != "" {
					call.ID = tc.ID
				}
				if tc.Type != "" {
					call.Type = tc.Type
				}
				call.Function.Name += tc.Function.Name
				call.Function.Arguments += tc.Function.Arguments
			}
			if delta.Logprobs != nil {
				if ch.Logprobs == nil {
					ch.Logprobs = &assembledLogprobs{Content: []json.RawMessage{}}
				}
				ch.Logprobs.Content = append(ch.Logprobs.Content, delta.Logprobs.Content...)
			}
			if delta.FinishReason != nil {
				ch.FinishReason = delta.FinishReason
			}
			if len(delta.StopReason) > 0 && string(delta.StopReason) != "null" {
				ch.StopReason = delta.StopReason
			}
		}
	}
	sort.Slice(out.Choices, func(i, j int) bool { return out.Choices[i].Index < out.Choices[j].Index })
	b, _ := json.Marshal(out)
	return b
}

func appendText(acc, delta *string) *string {
	if delta == nil {
		return acc
	}
	if acc == nil {
		s := *delta
		return &s
	}
	s := *acc + *delta
	return &s
}

// relayFrames writes the frames a backend pushes to w as server-sent
// events, flushing after each, then data: [DONE], and collects them for
// tracing. It returns the frames and why the relay ended early ("" when
// the stream ran to its end).
func relayFrames(w io.Writer, flush func() error, frames Frames) (collected [][]byte, failure string) {
	var disconnected error
	err := frames.Stream(func(frame json.RawMessage) error {
		collected = append(collected, frame)
		event := make([]byte, 0, len(frame)+8)
		event = append(append(append(event, dataPrefix...), ' '), frame...)
		if _, err := w.Write(append(event, '\n', '\n')); err != nil {
			disconnected = err
			return err
		}
		if err := flush(); err != nil {
			disconnected = err
			return err
		}
		return nil
	})
	switch {
	case disconnected != nil:
		return collected, "client disconnected: " + disconnected.Error()
	case err != nil:
		failure = "stream failed: " + err.Error()
		_, _ = w.Write(streamErrorEvent(failure))
	}
	_, _ = w.Write(doneFrame)
	_ = flush()
	return collected, failure
}
