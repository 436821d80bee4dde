package responses

import (
	"bytes"
	"encoding/json"
	"io"
	"strconv"
	"time"
)

// The Responses stream's events, as OpenAI's SDKs declare them.
type (
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
	if delta, ok := event.(*textDeltaEvent); ok {
		s.msg = appendTextDelta(s.msg[:0], delta)
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

// writeResponse writes the event typ carrying the response whose JSON is
// resp, without encoding the response again.
func (s *Stream) writeResponse(typ string, resp []byte) error {
	if s.err != nil {
		return s.err
	}
	s.msg = appendResponseEvent(s.msg[:0], typ, s.b.next(), resp)
	_, s.err = s.w.Write(s.msg)
	return s.err
}

// appendResponseEvent appends the event typ carrying the response whose
// JSON is resp: {"type", "sequence_number", "response"}, as OpenAI's SDKs
// declare the response.* events.
func appendResponseEvent(msg []byte, typ string, seq int, resp []byte) []byte {
	msg = append(msg, "event: "...)
	msg = append(msg, typ...)
	msg = append(msg, "\ndata: {\"type\":"...)
	msg = appendJSONString(msg, typ)
	msg = append(msg, `,"sequence_number":`...)
	msg = strconv.AppendInt(msg, int64(seq), 10)
	msg = append(msg, `,"response":`...)
	msg = append(msg, resp...)
	return append(msg, "}\n\n"...)
}

func (s *Stream) flushed() {
	if s.flush != nil && s.err == nil {
		s.flush()
	}
}

// Start sends response.created and response.in_progress.
func (s *Stream) Start() error {
	data, err := json.Marshal(s.b.resp)
	if err != nil {
		return err
	}
	_ = s.writeResponse("response.created", data)
	_ = s.writeResponse("response.in_progress", data)
	s.flushed()
	return s.err
}

// Write consumes chat server-sent events. A chunk that is not a chat
// chunk is an error (the stream then ends as failed).
func (s *Stream) Write(p []byte) (int, error) {
	s.buf = append(s.buf, p...)
	sent := s.b.seq
	rest := s.buf
	for {
		event, after, ok := bytes.Cut(rest, []byte("\n\n"))
		if !ok {
			break
		}
		rest = after
		for len(event) > 0 {
			var line []byte
			line, event, _ = bytes.Cut(event, []byte("\n"))
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
	// The partial event left moves to the front, so that the buffer is
	// reused rather than regrown as the stream goes on.
	s.buf = append(s.buf[:0], rest...)
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
// as the finished response's status says, carrying resp, the finished
// response's JSON (as it was stored and traced). It returns the first
// error writing to the client met.
func (s *Stream) Done(resp []byte) error {
	_ = s.writeResponse("response."+s.b.resp.Status, resp)
	s.flushed()
	return s.err
}

// FlushError reports the first error writing to the client, for a chat
// relay that flushes after each event.
func (s *Stream) FlushError() error { return s.err }
