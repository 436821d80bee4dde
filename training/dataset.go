package training

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"

	"github.com/weftlabs/weft/objects/ref"
)

// datasetTable returns the digest of the rows table of a Weave Dataset
// value (its rows a table ref of the same project; a table of another
// project is not read).
func datasetTable(projectID string, val json.RawMessage) (string, bool) {
	var ds struct {
		ClassName string `json:"_class_name"`
		Type      string `json:"_type"`
		Rows      string `json:"rows"`
	}
	if json.Unmarshal(val, &ds) != nil || (ds.ClassName != "Dataset" && ds.Type != "Dataset") {
		return "", false
	}
	r, err := ref.Parse(ds.Rows)
	if err != nil || r.Kind != ref.KindTable || r.ProjectID() != projectID || len(r.Extra) > 0 {
		return "", false
	}
	return r.Digest, true
}

// datasetRows streams the rows of a Dataset's table as JSON lines of
// conversations ([rowConversation]): the reader the SFT data is copied
// from, under the same caps as a download.
func (s *Store) datasetRows(ctx context.Context, name, projectID, table string) io.ReadCloser {
	pr, pw := io.Pipe()
	go func() {
		n := 0
		err := s.cfg.Objects.ReadTable(ctx, projectID, table, func(row json.RawMessage) error {
			n++
			line, err := rowConversation(row)
			if err != nil {
				return dataErrorf("row %d of dataset %s: %v", n, name, err)
			}
			_, err = pw.Write(append(line, '\n'))
			return err
		})
		var dataErr *dataError
		if err != nil && !errors.As(err, &dataErr) && !errors.Is(err, io.ErrClosedPipe) && ctx.Err() == nil {
			err = dataErrorf("dataset %s could not be read: %v", name, err)
		}
		pw.CloseWithError(err)
	}()
	return pr
}

// conversationError is what is wrong with a dataset row as a conversation.
type conversationError string

func (e conversationError) Error() string { return string(e) }

// rowConversation reads a dataset row as a conversation to train on: its
// messages (and tools), and, when the last message is not the assistant's,
// the answer its output holds — a string, an assistant message or a chat
// completion (its first choice's message) — as the assistant's turn. A row
// a call became (package datasets) is such a row.
func rowConversation(row json.RawMessage) ([]byte, error) {
	var r struct {
		Messages []json.RawMessage `json:"messages"`
		Tools    json.RawMessage   `json:"tools"`
		Output   json.RawMessage   `json:"output"`
	}
	if err := json.Unmarshal(row, &r); err != nil {
		return nil, conversationError("not a JSON object")
	}
	if len(r.Messages) == 0 {
		return nil, conversationError("no messages (a row to train on holds messages, and the answer in output unless the last message is the assistant's)")
	}
	var last struct {
		Role string `json:"role"`
	}
	_ = json.Unmarshal(r.Messages[len(r.Messages)-1], &last)
	if last.Role != "assistant" {
		answer, err := assistantTurn(r.Output)
		if err != nil {
			return nil, err
		}
		r.Messages = append(r.Messages, answer)
	}
	conv := map[string]any{"messages": r.Messages}
	if len(r.Tools) > 0 && !bytes.Equal(r.Tools, []byte("null")) {
		conv["tools"] = r.Tools
	}
	return json.Marshal(conv)
}

// assistantTurn is the assistant's message an output holds.
func assistantTurn(output json.RawMessage) (json.RawMessage, error) {
	output = bytes.TrimSpace(output)
	var text string
	if len(output) > 0 && output[0] == '"' && json.Unmarshal(output, &text) == nil {
		return json.Marshal(map[string]string{"role": "assistant", "content": text})
	}
	var v struct {
		Role      string          `json:"role"`
		Content   json.RawMessage `json:"content"`
		ToolCalls json.RawMessage `json:"tool_calls"`
		Choices   []struct {
			Message json.RawMessage `json:"message"`
		} `json:"choices"`
	}
	if json.Unmarshal(output, &v) == nil && len(v.Choices) > 0 && len(v.Choices[0].Message) > 0 {
		msg := v.Choices[0].Message
		v.Role = ""
		if json.Unmarshal(msg, &v) != nil {
			return nil, conversationError("output.choices[0].message is not a message")
		}
	}
	if v.Role != "assistant" {
		return nil, conversationError("output holds no answer (a string, an assistant message or a chat completion)")
	}
	msg := map[string]json.RawMessage{"role": json.RawMessage(`"assistant"`), "content": orJSONNull(v.Content)}
	if len(v.ToolCalls) > 0 && !bytes.Equal(v.ToolCalls, []byte("null")) && !bytes.Equal(v.ToolCalls, []byte("[]")) {
		msg["tool_calls"] = v.ToolCalls
	}
	return json.Marshal(msg)
}

func orJSONNull(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return json.RawMessage("null")
	}
	return raw
}
