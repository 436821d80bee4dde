package webui

import (
	"encoding/json"
	"strings"
)

// chatMessage is one message of a chat shown as text: the role, the text
// parts joined, and each tool call as "name(arguments)".
type chatMessage struct {
	Role      string
	Text      string
	ToolCalls []string
	// Parts counts the non-text parts (images, audio) not drawn here.
	OtherParts int
}

// wireMessage is a message in the OpenAI shape ({role, content, tool_calls})
// or the Anthropic one ({role, content: [{type, text | name, input}]}).
type wireMessage struct {
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	ToolCalls []struct {
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
}

// contentPart is one part of an array content.
type contentPart struct {
	Type  string          `json:"type"`
	Text  string          `json:"text"`
	Name  string          `json:"name"`  // Anthropic tool_use
	Input json.RawMessage `json:"input"` // Anthropic tool_use
}

// chatInputs finds the messages of a chat request in a call's inputs
// ({"messages": [...]}, as the OpenAI and Anthropic integrations record
// them); nil when the inputs are not one.
func chatInputs(inputs json.RawMessage) []chatMessage {
	var in struct {
		Messages []wireMessage `json:"messages"`
	}
	if json.Unmarshal(inputs, &in) != nil {
		return nil
	}
	return messagesOf(in.Messages)
}

// chatOutput finds the reply of a chat call in its output: OpenAI choices
// ({"choices": [{"message": …}]}) or an Anthropic message ({"role":
// "assistant", "content": [...]}); nil when the output is neither.
func chatOutput(output json.RawMessage) []chatMessage {
	var out struct {
		Choices []struct {
			Message *wireMessage `json:"message"`
		} `json:"choices"`
		wireMessage
	}
	if json.Unmarshal(output, &out) != nil {
		return nil
	}
	if len(out.Choices) > 0 {
		var msgs []wireMessage
		for _, c := range out.Choices {
			if c.Message == nil {
				return nil
			}
			msgs = append(msgs, *c.Message)
		}
		return messagesOf(msgs)
	}
	if out.Role != "" && len(out.Content) > 0 && out.Content[0] == '[' {
		return messagesOf([]wireMessage{out.wireMessage})
	}
	return nil
}

// messagesOf converts messages, or returns nil when one has no role or a
// content of an unknown shape: such data is shown as JSON instead.
func messagesOf(in []wireMessage) []chatMessage {
	if len(in) == 0 {
		return nil
	}
	out := make([]chatMessage, 0, len(in))
	for _, m := range in {
		if m.Role == "" {
			return nil
		}
		msg := chatMessage{Role: m.Role}
		for _, tc := range m.ToolCalls {
			msg.ToolCalls = append(msg.ToolCalls, tc.Function.Name+"("+tc.Function.Arguments+")")
		}
		content := strings.TrimSpace(string(m.Content))
		switch {
		case content == "" || content == "null":
		case content[0] == '"':
			if json.Unmarshal(m.Content, &msg.Text) != nil {
				return nil
			}
		case content[0] == '[':
			var parts []contentPart
			if json.Unmarshal(m.Content, &parts) != nil {
				return nil
			}
			var texts []string
			for _, p := range parts {
				switch p.Type {
				case "text", "input_text", "output_text":
					texts = append(texts, p.Text)
				case "tool_use":
					msg.ToolCalls = append(msg.ToolCalls, p.Name+"("+string(p.Input)+")")
				default:
					msg.OtherParts++
				}
			}
			msg.Text = strings.Join(texts, "\n")
		default:
			return nil
		}
		out = append(out, msg)
	}
	return out
}
