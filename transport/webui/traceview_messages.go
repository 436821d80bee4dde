package webui

import (
	"bytes"
	"encoding/json"
	"html/template"
	"strconv"
	"strings"
)

// chatMessage is one message of a conversation as the detail pane draws it,
// whichever provider's shape it was recorded in.
type chatMessage struct {
	Role string
	// Name is the author's name, or the function a tool message answers.
	Name string
	// ToolCallID names the tool call a tool message answers.
	ToolCallID string
	Parts      []chatPart
}

// chatPart is one part of a message's content.
type chatPart struct {
	// Kind is "text", "thinking", "refusal", "image", "tool_call",
	// "tool_result" or "data" (a part of a shape not drawn here, shown as a
	// JSON tree).
	Kind string
	Text string // text kinds: the text, rendered as Markdown
	// Image is the picture of an image part.
	Image *imageSource
	// ToolName and ToolID name a tool call, or the call a result answers.
	ToolName, ToolID string
	// Data is a tool call's arguments, a structured tool result or the JSON
	// of a "data" part.
	Data *jsonNode
	// Result is the content of a tool result given as parts.
	Result  []chatPart
	IsError bool
}

// chatInputs finds the conversation of a chat request in a call's inputs:
// OpenAI and Anthropic messages ({"messages": [...]}, with Anthropic's
// "system" before them), Gemini contents ({"contents": ...}, with the
// config's system instruction) or an OpenAI Responses input ({"input":
// ...}). It returns nil when the inputs hold none of these; the JSON tree is
// shown either way.
func chatInputs(inputs json.RawMessage) []chatMessage {
	var in struct {
		Messages []json.RawMessage `json:"messages"`
		System   json.RawMessage   `json:"system"`
		Contents json.RawMessage   `json:"contents"`
		Config   struct {
			SystemInstruction json.RawMessage `json:"system_instruction"`
			SystemCamel       json.RawMessage `json:"systemInstruction"`
		} `json:"config"`
		Input json.RawMessage `json:"input"`
	}
	if json.Unmarshal(inputs, &in) != nil {
		return nil
	}
	switch {
	case len(in.Messages) > 0:
		msgs := messagesOf(in.Messages)
		if msgs == nil {
			return nil
		}
		if system := contentParts(in.System); len(system) > 0 {
			msgs = append([]chatMessage{{Role: "system", Parts: system}}, msgs...)
		}
		return msgs
	case len(in.Contents) > 0:
		msgs := geminiContents(in.Contents)
		if msgs == nil {
			return nil
		}
		system := in.Config.SystemInstruction
		if len(system) == 0 {
			system = in.Config.SystemCamel
		}
		if sys := geminiContents(system); len(sys) == 1 {
			sys[0].Role = "system"
			msgs = append(sys, msgs...)
		}
		return msgs
	case len(in.Input) > 0:
		if text, ok := jsonString(in.Input); ok {
			return []chatMessage{{Role: "user", Parts: []chatPart{{Kind: "text", Text: text}}}}
		}
		var items []json.RawMessage
		if json.Unmarshal(in.Input, &items) != nil {
			return nil
		}
		return responseItems(items)
	}
	return nil
}

// chatOutput finds the reply of a chat call in its output: OpenAI choices,
// an Anthropic message, Gemini candidates or an OpenAI Responses output;
// nil when the output is none of these.
func chatOutput(output json.RawMessage) []chatMessage {
	var out struct {
		Choices []struct {
			Message json.RawMessage `json:"message"`
		} `json:"choices"`
		Candidates []struct {
			Content json.RawMessage `json:"content"`
		} `json:"candidates"`
		Output  []json.RawMessage `json:"output"`
		Role    string            `json:"role"`
		Content json.RawMessage   `json:"content"`
	}
	if json.Unmarshal(output, &out) != nil {
		return nil
	}
	switch {
	case len(out.Choices) > 0:
		var msgs []json.RawMessage
		for _, c := range out.Choices {
			if len(c.Message) == 0 {
				return nil
			}
			msgs = append(msgs, c.Message)
		}
		return messagesOf(msgs)
	case len(out.Candidates) > 0:
		var msgs []chatMessage
		for _, c := range out.Candidates {
			m, ok := geminiContent(c.Content)
			if !ok {
				return nil
			}
			msgs = append(msgs, m)
		}
		return msgs
	case len(out.Output) > 0:
		return responseItems(out.Output)
	case out.Role != "" && bytes.HasPrefix(bytes.TrimSpace(out.Content), []byte("[")):
		return messagesOf([]json.RawMessage{output})
	}
	return nil
}

// wireMessage is an OpenAI or Anthropic message.
type wireMessage struct {
	Role       string          `json:"role"`
	Name       string          `json:"name"`
	Content    json.RawMessage `json:"content"`
	Refusal    string          `json:"refusal"`
	ToolCallID string          `json:"tool_call_id"`
	ToolCalls  []struct {
		ID       string `json:"id"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
	// FunctionCall is the pre-tools OpenAI shape.
	FunctionCall *struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function_call"`
}

// messagesOf converts OpenAI or Anthropic messages, or returns nil when one
// has no role or is not an object: such data is shown as JSON only.
func messagesOf(raw []json.RawMessage) []chatMessage {
	if len(raw) == 0 {
		return nil
	}
	out := make([]chatMessage, 0, len(raw))
	for _, r := range raw {
		var m wireMessage
		if json.Unmarshal(r, &m) != nil || m.Role == "" {
			return nil
		}
		msg := chatMessage{Role: m.Role, Name: m.Name, ToolCallID: m.ToolCallID}
		msg.Parts = contentParts(m.Content)
		if m.Refusal != "" {
			msg.Parts = append(msg.Parts, chatPart{Kind: "refusal", Text: m.Refusal})
		}
		for _, tc := range m.ToolCalls {
			msg.Parts = append(msg.Parts, chatPart{Kind: "tool_call", ToolName: tc.Function.Name, ToolID: tc.ID, Data: argumentsTree(tc.Function.Arguments)})
		}
		if fc := m.FunctionCall; fc != nil {
			msg.Parts = append(msg.Parts, chatPart{Kind: "tool_call", ToolName: fc.Name, Data: argumentsTree(fc.Arguments)})
		}
		out = append(out, msg)
	}
	return out
}

// contentParts reads a message content: a string, or an array of OpenAI or
// Anthropic content blocks.
func contentParts(raw json.RawMessage) []chatPart {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if text, ok := jsonString(raw); ok {
		if text == "" {
			return nil
		}
		return []chatPart{{Kind: "text", Text: text}}
	}
	var blocks []json.RawMessage
	if json.Unmarshal(raw, &blocks) != nil {
		return []chatPart{{Kind: "data", Data: jsonTree(raw)}}
	}
	parts := make([]chatPart, 0, len(blocks))
	for _, b := range blocks {
		parts = append(parts, contentBlock(b))
	}
	return parts
}

// contentBlock reads one content block of the OpenAI (chat or Responses) or
// Anthropic shape.
func contentBlock(raw json.RawMessage) chatPart {
	if text, ok := jsonString(raw); ok {
		return chatPart{Kind: "text", Text: text}
	}
	var b struct {
		Type     string          `json:"type"`
		Text     string          `json:"text"`
		Thinking string          `json:"thinking"`
		Refusal  string          `json:"refusal"`
		ImageURL json.RawMessage `json:"image_url"` // {"url": …} (chat) or "…" (Responses)
		Source   struct {
			Type      string `json:"type"`
			MediaType string `json:"media_type"`
			Data      string `json:"data"`
			URL       string `json:"url"`
		} `json:"source"`
		ID        string          `json:"id"`
		Name      string          `json:"name"`
		Input     json.RawMessage `json:"input"`
		ToolUseID string          `json:"tool_use_id"`
		Content   json.RawMessage `json:"content"`
		IsError   bool            `json:"is_error"`
	}
	if json.Unmarshal(raw, &b) != nil {
		return chatPart{Kind: "data", Data: jsonTree(raw)}
	}
	switch b.Type {
	case "text", "input_text", "output_text":
		return chatPart{Kind: "text", Text: b.Text}
	case "thinking":
		return chatPart{Kind: "thinking", Text: b.Thinking}
	case "refusal":
		return chatPart{Kind: "refusal", Text: b.Refusal}
	case "image_url", "input_image":
		var u struct {
			URL string `json:"url"`
		}
		if s, ok := jsonString(b.ImageURL); ok {
			u.URL = s
		} else {
			_ = json.Unmarshal(b.ImageURL, &u)
		}
		return chatPart{Kind: "image", Image: imageOfURL(u.URL)}
	case "image":
		if b.Source.Type == "url" {
			return chatPart{Kind: "image", Image: imageOfURL(b.Source.URL)}
		}
		return chatPart{Kind: "image", Image: imageOfBase64(b.Source.MediaType, b.Source.Data)}
	case "tool_use":
		return chatPart{Kind: "tool_call", ToolName: b.Name, ToolID: b.ID, Data: jsonTree(b.Input)}
	case "tool_result":
		return chatPart{Kind: "tool_result", ToolID: b.ToolUseID, Result: contentParts(b.Content), IsError: b.IsError}
	}
	return chatPart{Kind: "data", Data: jsonTree(raw)}
}

// responseItems reads OpenAI Responses items: messages, function calls and
// their outputs.
func responseItems(items []json.RawMessage) []chatMessage {
	var out []chatMessage
	for _, raw := range items {
		var it struct {
			Type      string          `json:"type"`
			Role      string          `json:"role"`
			Content   json.RawMessage `json:"content"`
			Name      string          `json:"name"`
			Arguments string          `json:"arguments"`
			CallID    string          `json:"call_id"`
			Output    json.RawMessage `json:"output"`
		}
		if json.Unmarshal(raw, &it) != nil {
			return nil
		}
		switch {
		case it.Role != "":
			out = append(out, chatMessage{Role: it.Role, Parts: contentParts(it.Content)})
		case it.Type == "function_call":
			out = append(out, chatMessage{Role: "assistant", Parts: []chatPart{{Kind: "tool_call", ToolName: it.Name, ToolID: it.CallID, Data: argumentsTree(it.Arguments)}}})
		case it.Type == "function_call_output":
			out = append(out, chatMessage{Role: "tool", ToolCallID: it.CallID, Parts: contentParts(it.Output)})
		case it.Type == "reasoning":
			continue
		default:
			return nil
		}
	}
	return out
}

// geminiContents reads Gemini contents: a string, a list of strings and
// parts, one Content or a list of Contents ({role, parts}).
func geminiContents(raw json.RawMessage) []chatMessage {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if text, ok := jsonString(raw); ok {
		return []chatMessage{{Role: "user", Parts: []chatPart{{Kind: "text", Text: text}}}}
	}
	if raw[0] == '{' {
		if m, ok := geminiContent(raw); ok {
			return []chatMessage{m}
		}
		return nil
	}
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) != nil || len(list) == 0 {
		return nil
	}
	var msgs []chatMessage
	var loose []chatPart // strings and bare parts make one user message
	for _, item := range list {
		if m, ok := geminiContent(item); ok {
			msgs = append(msgs, m)
			continue
		}
		loose = append(loose, geminiPart(item))
	}
	if len(loose) > 0 {
		msgs = append(msgs, chatMessage{Role: "user", Parts: loose})
	}
	return msgs
}

// geminiContent reads one Content, {role, parts: [...]}.
func geminiContent(raw json.RawMessage) (chatMessage, bool) {
	var c struct {
		Role  string            `json:"role"`
		Parts []json.RawMessage `json:"parts"`
	}
	if json.Unmarshal(raw, &c) != nil || c.Parts == nil {
		return chatMessage{}, false
	}
	if c.Role == "" {
		c.Role = "user"
	}
	m := chatMessage{Role: c.Role}
	for _, p := range c.Parts {
		m.Parts = append(m.Parts, geminiPart(p))
	}
	return m, true
}

// geminiPart reads one Gemini part; the SDKs write snake_case or camelCase.
func geminiPart(raw json.RawMessage) chatPart {
	if text, ok := jsonString(raw); ok {
		return chatPart{Kind: "text", Text: text}
	}
	var p map[string]json.RawMessage
	if json.Unmarshal(raw, &p) != nil {
		return chatPart{Kind: "data", Data: jsonTree(raw)}
	}
	field := func(snake, camel string) json.RawMessage {
		if v, ok := p[snake]; ok && string(v) != "null" {
			return v
		}
		if v, ok := p[camel]; ok && string(v) != "null" {
			return v
		}
		return nil
	}
	if t := field("text", "text"); t != nil {
		text, _ := jsonString(t)
		var thought bool
		_ = json.Unmarshal(field("thought", "thought"), &thought)
		if thought {
			return chatPart{Kind: "thinking", Text: text}
		}
		return chatPart{Kind: "text", Text: text}
	}
	if d := field("inline_data", "inlineData"); d != nil {
		var blob map[string]string
		_ = json.Unmarshal(d, &blob)
		mime := blob["mime_type"]
		if mime == "" {
			mime = blob["mimeType"]
		}
		return chatPart{Kind: "image", Image: imageOfBase64(mime, blob["data"])}
	}
	if d := field("file_data", "fileData"); d != nil {
		var f map[string]string
		_ = json.Unmarshal(d, &f)
		uri := f["file_uri"]
		if uri == "" {
			uri = f["fileUri"]
		}
		return chatPart{Kind: "image", Image: imageOfURL(uri)}
	}
	if fc := field("function_call", "functionCall"); fc != nil {
		var call struct {
			ID   string          `json:"id"`
			Name string          `json:"name"`
			Args json.RawMessage `json:"args"`
		}
		_ = json.Unmarshal(fc, &call)
		return chatPart{Kind: "tool_call", ToolName: call.Name, ToolID: call.ID, Data: jsonTree(orNull(call.Args))}
	}
	if fr := field("function_response", "functionResponse"); fr != nil {
		var res struct {
			ID       string          `json:"id"`
			Name     string          `json:"name"`
			Response json.RawMessage `json:"response"`
		}
		_ = json.Unmarshal(fr, &res)
		return chatPart{Kind: "tool_result", ToolName: res.Name, ToolID: res.ID, Data: jsonTree(orNull(res.Response))}
	}
	return chatPart{Kind: "data", Data: jsonTree(raw)}
}

// argumentsTree shows tool-call arguments, a JSON text, as a tree; text that
// is not JSON stays a string.
func argumentsTree(args string) *jsonNode {
	if json.Valid([]byte(args)) {
		return jsonTree([]byte(args))
	}
	return scalarNode("", "string", args)
}

// jsonString reports whether raw is a JSON string, and its value.
func jsonString(raw json.RawMessage) (string, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '"' {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

func orNull(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return json.RawMessage("null")
	}
	return raw
}

// imageSource is a picture the trace refers to. Src is what the page may
// load: an inline raster data URL or a path of this server; an image
// elsewhere is never fetched by the page, only linked (External).
type imageSource struct {
	Src      template.URL
	External string
	// File links to stored content that is not drawn (Note names it).
	File template.URL
	// Note says why an image is not drawn (too large, unknown type).
	Note string
}

// maxInlineImageBytes bounds an inline image drawn on the page.
const maxInlineImageBytes = 4 << 20

// imageOfURL is the picture of an image URL as a message gives it.
func imageOfURL(u string) *imageSource {
	switch {
	case strings.HasPrefix(u, "data:"):
		if len(u) > maxInlineImageBytes {
			return &imageSource{Note: "inline image of " + strconv.Itoa(len(u)>>10) + " KiB, not drawn"}
		}
		if inlineImage(u) {
			// A base64 raster data URL (checked above) draws a picture and
			// runs nothing; html/template would refuse any data URL.
			return &imageSource{Src: template.URL(u)} //nolint:gosec // see above
		}
		return &imageSource{Note: "inline data of a type not drawn"}
	case linkAllowed(u):
		return &imageSource{External: u}
	}
	return &imageSource{Note: "image at " + truncate(u, 200)}
}

// imageOfBase64 is the picture of base64 data of a media type.
func imageOfBase64(mediaType, data string) *imageSource {
	return imageOfURL("data:" + mediaType + ";base64," + data)
}
