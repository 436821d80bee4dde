package responses

import (
	"bytes"
	"encoding/json"
	"io"
	"time"
)

// The Responses stream's events, as OpenAI's SDKs declare them.
type (
	responseEvent struct {
		Type           string    `json:"type"`
		SequenceNumber int       `json:"sequence_number"`
		Response       *Response `json:"response"`
	}
	itemEvent struct {
		Type           string     `json:"type"`
		SequenceNumber int        `json:"sequence_number"`
		OutputIndex    int        `json:"output_index"`
		Item           OutputItem `json:"item"`
	}
	partEvent struct {
		Type           string `json:"type"`
		SequenceNumber int    `json:"sequence_number"`
		ItemID         string `json:"item_id"`
		OutputIndex    int    `json:"output_index"`
		ContentIndex   int    `json:"content_index"`
		Part           any    `json:"part"`
	}
	textDeltaEvent struct {
		Type           string `json:"type"`
		SequenceNumber int    `json:"sequence_number"`
		ItemID         string `json:"item_id"`
		OutputIndex    int    `json:"output_index"`
		ContentIndex   int    `json:"content_index"`
		Delta          string `json:"delta"`
		Logprobs       []any  `json:"logprobs"`
	}
	textDoneEvent struct {
		Type           string `json:"type"`
		SequenceNumber int    `json:"sequence_number"`
		ItemID         string `json:"item_id"`
		OutputIndex    int    `json:"output_index"`
		ContentIndex   int    `json:"content_index"`
		Text           string `json:"text"`
		Logprobs       []any  `json:"logprobs"`
	}
	reasoningDeltaEvent struct {
		Type           string `json:"type"`
		SequenceNumber int    `json:"sequence_number"`
		ItemID         string `json:"item_id"`
		OutputIndex    int    `json:"output_index"`
		ContentIndex   int    `json:"content_index"`
		Delta          string `json:"delta"`
	}
	reasoningDoneEvent struct {
		Type           string `json:"type"`
		SequenceNumber int    `json:"sequence_number"`
		ItemID         string `json:"item_id"`
		OutputIndex    int    `json:"output_index"`
		ContentIndex   int    `json:"content_index"`
		Text           string `json:"text"`
	}
	argsDeltaEvent struct {
		Type           string `json:"type"`
		SequenceNumber int    `json:"sequence_number"`
		ItemID         string `json:"item_id"`
		OutputIndex    int    `json:"output_index"`
		Delta          string `json:"delta"`
	}
	argsDoneEvent struct {
		Type           string `json:"type"`
		SequenceNumber int    `json:"sequence_number"`
		ItemID         string `json:"item_id"`
		OutputIndex    int    `json:"output_index"`
		Name           string `json:"name"`
		Arguments      string `json:"arguments"`
	}
)

// Stream turns a chat-completion stream into the Responses event stream.
// Write takes the chat stream's server-sent events as they arrive (any
// split of the bytes); each chat chunk's events are written to the client
// as "event: <type>" / "data: <json>" pairs and flushed. Start sends
// response.created and response.in_progress; Finish the closing events and
// response.completed, response.incomplete or response.failed, and returns
// the finished response.
type Stream struct {
	b     builder
	w     io.Writer
	flush func()
	buf   []byte // chat SSE bytes not yet a whole event
	msg   []byte // the text delta event being written
	err   error  // the first write error: the client is gone
}

// NewStream writes resp's events to w, calling flush (when not nil) after
// each chat chunk's events.
func NewStream(resp *Response, w io.Writer, flush func()) *Stream {
	s := &Stream{w: w, flush: flush}
	s.b = builder{resp: resp, emit: s.write}
	return s
}

func (s *Stream) write(event any) error {
	if s.err != nil {
		return s.err
	}
	if delta, ok := event.(textDeltaEvent); ok {
		s.msg = appendTextDelta(s.msg[:0], &delta)
		_, s.err = s.w.Write(s.msg)
		return s.err
	}
	data, err := json.Marshal(event)
	if err != nil {
		return err
	}
	// Every event's first member is its type, a plain string.
	typ, _, _ := bytes.Cut(bytes.TrimPrefix(data, []byte(`{"type":"`)), []byte(`"`))
	msg := make([]byte, 0, len(data)+len(typ)+24)
	msg = append(msg, "event: "...)
	msg = append(msg, typ...)
	msg = append(msg, "\ndata: "...)
	msg = append(msg, data...)
	msg = append(msg, "\n\n"...)
	_, s.err = s.w.Write(msg)
	return s.err
}

func (s *Stream) flushed() {
	if s.flush != nil && s.err == nil {
		s.flush()
	}
}

// Start sends response.created and response.in_progress.
func (s *Stream) Start() error {
	resp := s.b.resp
	_ = s.write(responseEvent{Type: "response.created", SequenceNumber: s.b.next(), Response: resp})
	_ = s.write(responseEvent{Type: "response.in_progress", SequenceNumber: s.b.next(), Response: resp})
	s.flushed()
	return s.err
}

// Write consumes chat server-sent events. A chunk that is not a chat
// chunk is an error (the stream then ends as failed).
func (s *Stream) Write(p []byte) (int, error) {
	s.buf = append(s.buf, p...)
	sent := s.b.seq
	for {
		end := bytes.Index(s.buf, []byte("\n\n"))
		if end < 0 {
			break
		}
		event := s.buf[:end]
		s.buf = s.buf[end+2:]
		for _, line := range bytes.Split(event, []byte("\n")) {
			data, ok := bytes.CutPrefix(line, []byte("data:"))
			if !ok {
				continue
			}
			data = bytes.TrimSpace(data)
			if len(data) == 0 || bytes.Equal(data, []byte("[DONE]")) {
				continue
			}
			if err := s.b.chunk(data); err != nil {
				s.b.failure = err.Error()
			}
		}
	}
	if s.b.seq != sent {
		s.flushed()
	}
	if s.err != nil {
		return 0, s.err
	}
	return len(p), nil
}

// Fail ends the stream as failed with message (the chat stream broke off).
func (s *Stream) Fail(message string) {
	if s.b.failure == "" {
		s.b.failure = message
	}
}

// Finish closes the open item, sending its done events, and returns the
// finished response; Done then sends the closing response event (once the
// response is stored, so that a client that reads it can fetch it).
func (s *Stream) Finish(now time.Time) *Response {
	resp := s.b.finish(now)
	s.flushed()
	return resp
}

// Done sends response.completed, response.incomplete or response.failed,
// as the finished response's status says. It returns the first error
// writing to the client met.
func (s *Stream) Done() error {
	resp := s.b.resp
	_ = s.write(responseEvent{Type: "response." + resp.Status, SequenceNumber: s.b.next(), Response: resp})
	s.flushed()
	return s.err
}

// FlushError reports the first error writing to the client, for a chat
// relay that flushes after each event.
func (s *Stream) FlushError() error { return s.err }
