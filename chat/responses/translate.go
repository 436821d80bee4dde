package responses

import (
	"encoding/json"
	"strings"
)

// chatRequest is the chat-completion request a Responses request becomes.
type chatRequest struct {
	Model               string              `json:"model"`
	Messages            []chatMessage       `json:"messages"`
	Tools               []chatTool          `json:"tools,omitempty"`
	ToolChoice          json.RawMessage     `json:"tool_choice,omitempty"`
	ParallelToolCalls   *bool               `json:"parallel_tool_calls,omitempty"`
	ResponseFormat      *chatResponseFormat `json:"response_format,omitempty"`
	MaxCompletionTokens *int64              `json:"max_completion_tokens,omitempty"`
	Temperature         *float64            `json:"temperature,omitempty"`
	TopP                *float64            `json:"top_p,omitempty"`
	Logprobs            *bool               `json:"logprobs,omitempty"`
	TopLogprobs         *int64              `json:"top_logprobs,omitempty"`
	ReasoningEffort     *string             `json:"reasoning_effort,omitempty"`
	User                *string             `json:"user,omitempty"`
	Stream              bool                `json:"stream,omitempty"`
	StreamOptions       *chatStreamOptions  `json:"stream_options,omitempty"`
}

type chatStreamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type chatMessage struct {
	Role string `json:"role"`
	// Content is a string, a list of parts, or absent for an assistant
	// message of tool calls only.
	Content          any            `json:"content,omitempty"`
	ReasoningContent string         `json:"reasoning_content,omitempty"`
	ToolCalls        []chatToolCall `json:"tool_calls,omitempty"`
	ToolCallID       string         `json:"tool_call_id,omitempty"`
}

type chatPart struct {
	Type     string        `json:"type"`
	Text     string        `json:"text,omitempty"`
	ImageURL *chatImageURL `json:"image_url,omitempty"`
}

type chatImageURL struct {
	URL    string `json:"url"`
	Detail string `json:"detail,omitempty"`
}

type chatToolCall struct {
	Index    *int   `json:"index,omitempty"`
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type chatTool struct {
	Type     string       `json:"type"`
	Function chatFunction `json:"function"`
}

type chatFunction struct {
	Name        string          `json:"name"`
	Description *string         `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
	Strict      *bool           `json:"strict,omitempty"`
}

type chatResponseFormat struct {
	Type       string          `json:"type"`
	JSONSchema *chatJSONSchema `json:"json_schema,omitempty"`
}

type chatJSONSchema struct {
	Name        string          `json:"name"`
	Description *string         `json:"description,omitempty"`
	Schema      json.RawMessage `json:"schema"`
	Strict      *bool           `json:"strict,omitempty"`
}

// ChatRequest is the chat-completion request body that answers r: the
// instructions as a system message, then history (the items of the
// previous responses of its chain, oldest first) and input as messages.
// A stream asks for usage in its last chunk. An item whose content weft
// cannot pass on (a file, audio) is ErrInvalid.
func (r *Request) ChatRequest(history, input []InputItem, stream bool) ([]byte, error) {
	c := chatRequest{
		Model: r.Model, ParallelToolCalls: r.ParallelToolCalls, MaxCompletionTokens: r.MaxOutputTokens,
		Temperature: r.Temperature, TopP: r.TopP, User: r.User, Stream: stream,
	}
	if stream {
		c.StreamOptions = &chatStreamOptions{IncludeUsage: true}
	}
	if r.TopLogprobs != nil && *r.TopLogprobs > 0 {
		yes := true
		c.Logprobs, c.TopLogprobs = &yes, r.TopLogprobs
	}
	if r.Reasoning != nil {
		c.ReasoningEffort = r.Reasoning.Effort
	}
	if r.Instructions != nil {
		c.Messages = append(c.Messages, chatMessage{Role: "system", Content: *r.Instructions})
	}
	var err error
	if c.Messages, err = appendMessages(c.Messages, history); err != nil {
		return nil, err
	}
	if c.Messages, err = appendMessages(c.Messages, input); err != nil {
		return nil, err
	}
	for _, t := range r.Tools {
		c.Tools = append(c.Tools, chatTool{Type: "function", Function: chatFunction{
			Name: t.Name, Description: t.Description, Parameters: t.Parameters, Strict: t.Strict}})
	}
	if c.ToolChoice, err = r.chatToolChoice(); err != nil {
		return nil, err
	}
	if r.Text != nil && r.Text.Format != nil {
		switch f := r.Text.Format; f.Type {
		case "json_object":
			c.ResponseFormat = &chatResponseFormat{Type: "json_object"}
		case "json_schema":
			c.ResponseFormat = &chatResponseFormat{Type: "json_schema", JSONSchema: &chatJSONSchema{
				Name: f.Name, Description: f.Description, Schema: f.Schema, Strict: f.Strict}}
		}
	}
	return json.Marshal(c)
}

// chatToolChoice translates tool_choice: the strings as they are, a
// function named at the top level ({"type":"function","name"}) as chat's
// {"type":"function","function":{"name"}}.
func (r *Request) chatToolChoice() (json.RawMessage, error) {
	if isNull(r.ToolChoice) {
		return nil, nil
	}
	var s string
	if json.Unmarshal(r.ToolChoice, &s) == nil {
		switch s {
		case "none", "auto", "required":
			return r.ToolChoice, nil
		}
		return nil, invalid("tool_choice", "Invalid value: '%s'. Supported values are: 'none', 'auto' and 'required'.", s)
	}
	var f struct {
		Type string `json:"type"`
		Name string `json:"name"`
	}
	if json.Unmarshal(r.ToolChoice, &f) != nil || f.Type != "function" || f.Name == "" {
		return nil, invalid("tool_choice", "Only 'none', 'auto', 'required' and {\"type\": \"function\", \"name\": ...} are supported.")
	}
	return json.Marshal(map[string]any{"type": "function", "function": map[string]string{"name": f.Name}})
}

// appendMessages appends the chat messages of items: a message as itself
// (developer as system, parts as chat's parts), consecutive function calls
// as one assistant message's tool calls (joining the assistant message
// just before them), a call's output as a tool message, and reasoning as
// the reasoning_content of the assistant message that follows it.
func appendMessages(msgs []chatMessage, items []InputItem) ([]chatMessage, error) {
	var reasoning []string
	for i, it := range items {
		switch it.Type {
		case "reasoning":
			for _, p := range it.Summary {
				reasoning = append(reasoning, p.Text)
			}
			var content []TextPart
			if !isNull(it.Content) && json.Unmarshal(it.Content, &content) == nil {
				for _, p := range content {
					reasoning = append(reasoning, p.Text)
				}
			}
		case "message":
			content, err := chatContent(it.Content, it.Role == "assistant", i)
			if err != nil {
				return nil, err
			}
			role := it.Role
			if role == "developer" {
				role = "system"
			}
			m := chatMessage{Role: role, Content: content}
			if role == "assistant" {
				m.ReasoningContent, reasoning = strings.Join(reasoning, "\n"), nil
			}
			msgs = append(msgs, m)
		case "function_call":
			call := chatToolCall{ID: it.CallID, Type: "function"}
			call.Function.Name, call.Function.Arguments = it.Name, it.Arguments
			if n := len(msgs); n > 0 && msgs[n-1].Role == "assistant" && i > 0 &&
				(items[i-1].Type == "function_call" || items[i-1].Type == "message") {
				msgs[n-1].ToolCalls = append(msgs[n-1].ToolCalls, call)
				continue
			}
			msgs = append(msgs, chatMessage{Role: "assistant", ReasoningContent: strings.Join(reasoning, "\n"), ToolCalls: []chatToolCall{call}})
			reasoning = nil
		case "function_call_output":
			content, err := chatContent(it.Output, true, i)
			if err != nil {
				return nil, err
			}
			msgs = append(msgs, chatMessage{Role: "tool", ToolCallID: it.CallID, Content: content})
		}
	}
	return msgs, nil
}

// chatContent is a message's content for chat: a string as it is; parts as
// chat's text and image_url parts, or, when flat (assistant and tool
// messages, whose templates take text), their texts joined.
func chatContent(raw json.RawMessage, flat bool, i int) (any, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var parts []TextPart
	if err := json.Unmarshal(raw, &parts); err != nil {
		return nil, invalid("input", "Invalid content of input[%d]: expected a string or a list of content parts.", i)
	}
	var out []chatPart
	var text strings.Builder
	for _, p := range parts {
		switch p.Type {
		case "input_text", "output_text", "text":
			out = append(out, chatPart{Type: "text", Text: p.Text})
			text.WriteString(p.Text)
		case "refusal":
			out = append(out, chatPart{Type: "text", Text: p.Refusal})
			text.WriteString(p.Refusal)
		case "input_image":
			if p.ImageURL == nil || flat {
				return nil, invalid("input", "input[%d]: an input_image needs an image_url, in a user message.", i)
			}
			out = append(out, chatPart{Type: "image_url", ImageURL: &chatImageURL{URL: *p.ImageURL, Detail: p.Detail}})
		default:
			return nil, invalid("input", "Content part type '%s' of input[%d] is not supported.", p.Type, i)
		}
	}
	if flat {
		return text.String(), nil
	}
	return out, nil
}
