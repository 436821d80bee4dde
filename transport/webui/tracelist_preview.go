package webui

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"

	"github.com/weftlabs/weft/trace"
)

// maxPreviewText bounds the input and output previews of a trace list row.
const maxPreviewText = 120

// rowPreview is what a trace list row shows of a call at a glance, so that
// rows of the same op tell themselves apart: the input's and output's text
// and the models it used.
type rowPreview struct {
	Input, Output string
	Models        string
}

// previewOf reads a call's preview: for a chat call the last user message
// and the reply (in any shape the detail pane reads, traceview_messages.go),
// otherwise the first text member of the inputs and the output's text or
// JSON. Models are summary.usage's models, else inputs.model.
func previewOf(c *trace.Call) rowPreview {
	return rowPreview{Input: inputPreview(c.Inputs), Output: outputPreview(c.Output), Models: modelsOf(c)}
}

func inputPreview(inputs json.RawMessage) string {
	if msgs := chatInputs(inputs); len(msgs) > 0 {
		return truncate(messageText(lastUserMessage(msgs)), maxPreviewText)
	}
	return truncate(inputText(inputs), maxPreviewText)
}

// lastUserMessage is the last message of role "user" (what a turn of a
// conversation adds), else the last message.
func lastUserMessage(msgs []chatMessage) chatMessage {
	for _, m := range slices.Backward(msgs) {
		if m.Role == "user" {
			return m
		}
	}
	return msgs[len(msgs)-1]
}

// inputText is what a person reads first of inputs that are no chat: the
// first (by name) non-empty text member other than "self", else the inputs
// as JSON ("" when there are none).
func inputText(inputs json.RawMessage) string {
	var members map[string]json.RawMessage
	if json.Unmarshal(inputs, &members) != nil {
		return valueText(inputs)
	}
	delete(members, "self")
	for _, k := range slices.Sorted(maps.Keys(members)) {
		if s, ok := jsonString(members[k]); ok && s != "" {
			return s
		}
	}
	if len(members) == 0 {
		return ""
	}
	return valueText(inputs)
}

func outputPreview(output json.RawMessage) string {
	if msgs := chatOutput(output); len(msgs) > 0 {
		return truncate(messageText(msgs[0]), maxPreviewText)
	}
	return truncate(valueText(output), maxPreviewText)
}

// messageText is a message's text parts, or its tool calls by name.
func messageText(m chatMessage) string {
	var texts, calls []string
	for _, p := range m.Parts {
		switch p.Kind {
		case "text", "refusal":
			texts = append(texts, strings.TrimSpace(p.Text))
		case "tool_call":
			calls = append(calls, p.ToolName+"(…)")
		}
	}
	if len(texts) > 0 {
		return strings.Join(texts, " ")
	}
	return strings.Join(calls, ", ")
}

// valueText is a JSON value as one line: a string as itself, null or
// nothing as "", anything else as compact JSON.
func valueText(raw json.RawMessage) string {
	if s, ok := jsonString(raw); ok {
		return s
	}
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	return compactJSON(raw)
}

// modelsOf names the models a call used: those of its summary.usage, else
// the model its inputs asked for.
func modelsOf(c *trace.Call) string {
	var s struct {
		Usage map[string]json.RawMessage `json:"usage"`
	}
	_ = json.Unmarshal(c.Summary, &s)
	if len(s.Usage) > 0 {
		return strings.Join(slices.Sorted(maps.Keys(s.Usage)), ", ")
	}
	var in struct {
		Model json.RawMessage `json:"model"`
	}
	_ = json.Unmarshal(c.Inputs, &in)
	model, _ := jsonString(in.Model)
	return model
}
