package otlp

import "strings"

// Chat messages arrive in as many shapes as there are conventions. Every one
// is rewritten to the OpenAI chat shape the SDK-traced chats have — {role,
// content, tool_calls: [{id, type: "function", function: {name,
// arguments}}], tool_call_id} — so that the UI shows all chats alike. Parts
// that are not text (images, reasoning, files) are kept as typed parts of an
// array content.

// message is one chat message in the OpenAI shape.
type message = map[string]any

// normalizeMessages rewrites a list of messages of any dict shape; tool
// results carried as parts of one message become one tool message each.
func normalizeMessages(list []any) []any {
	out := make([]any, 0, len(list))
	for _, item := range list {
		m := mapOf(item)
		if m == nil {
			if s, ok := item.(string); ok {
				out = append(out, message{"role": "user", "content": s})
			}
			continue
		}
		out = append(out, normalizeMessage(m)...)
	}
	return out
}

// normalizeMessage rewrites one message: the GenAI parts shape ({role,
// parts}), the Vercel AI SDK shape ({role, content: [{type: "text" |
// "tool-call" | "tool-result" …}]}), or one already in the OpenAI shape.
func normalizeMessage(m map[string]any) []any {
	role := strOf(m["role"])
	if role == "" {
		role = "user"
	}
	if parts, ok := m["parts"].([]any); ok {
		return fromParts(role, parts, m)
	}
	if parts, ok := m["content"].([]any); ok && hasVercelParts(parts) {
		return fromParts(role, parts, m)
	}
	out := message{"role": role}
	if c, ok := m["content"]; ok {
		out["content"] = contentOf(c)
	} else {
		out["content"] = nil
	}
	if calls := toolCallsOf(m["tool_calls"]); len(calls) > 0 {
		out["tool_calls"] = calls
	}
	for _, k := range []string{"tool_call_id", "name"} {
		if s := strOf(m[k]); s != "" {
			out[k] = s
		}
	}
	if id := strOf(m["id"]); id != "" && role == "tool" && out["tool_call_id"] == nil {
		out["tool_call_id"] = id
	}
	return []any{out}
}

// contentOf keeps string content, parses a JSON array of typed parts sent
// as text (what OpenLLMetry writes for multi-part messages), and keeps other
// values: text that merely looks like a JSON array stays text.
func contentOf(c any) any {
	l, ok := parseJSONText(c).([]any)
	if !ok || len(l) == 0 {
		return c
	}
	for _, p := range l {
		if strOf(mapOf(p)["type"]) == "" {
			return c
		}
	}
	return l
}

func hasVercelParts(parts []any) bool {
	for _, p := range parts {
		switch strOf(mapOf(p)["type"]) {
		case "tool-call", "tool-result", "reasoning", "file", "image":
			return true
		}
	}
	return false
}

// fromParts builds messages from typed parts (GenAI: text, tool_call,
// tool_call_response, reasoning, blob/uri; Vercel: text, tool-call,
// tool-result, reasoning, file, image).
func fromParts(role string, parts []any, m map[string]any) []any {
	var texts []string
	var others []any
	var calls []any
	var toolResults []any
	for _, p := range parts {
		part := mapOf(p)
		if part == nil {
			if s, ok := p.(string); ok {
				texts = append(texts, s)
			}
			continue
		}
		switch strOf(part["type"]) {
		case "text":
			t := part["content"]
			if t == nil {
				t = part["text"]
			}
			texts = append(texts, text(t))
		case "tool_call", "tool-call":
			args := part["arguments"]
			for _, k := range []string{"args", "input"} {
				if args == nil {
					args = part[k]
				}
			}
			calls = append(calls, toolCall(firstStr(part, "id", "toolCallId"), firstStr(part, "name", "toolName"), args))
		case "tool_call_response", "tool-result":
			result := part["response"]
			for _, k := range []string{"result", "output"} {
				if result == nil {
					result = part[k]
				}
			}
			toolResults = append(toolResults, message{"role": "tool", "tool_call_id": firstStr(part, "id", "toolCallId"), "content": text(unwrapVercelOutput(result))})
		default:
			others = append(others, part)
		}
	}
	var out []any
	if len(texts) > 0 || len(calls) > 0 || len(others) > 0 || len(toolResults) == 0 {
		msg := message{"role": role}
		switch {
		case len(others) > 0:
			content := make([]any, 0, len(texts)+len(others))
			for _, t := range texts {
				content = append(content, map[string]any{"type": "text", "text": t})
			}
			msg["content"] = append(content, others...)
		case len(texts) > 0:
			msg["content"] = strings.Join(texts, "\n")
		default:
			msg["content"] = nil
		}
		if len(calls) > 0 {
			msg["tool_calls"] = calls
		}
		if name := strOf(m["name"]); name != "" {
			msg["name"] = name
		}
		out = append(out, msg)
	}
	return append(out, toolResults...)
}

// unwrapVercelOutput reads the AI SDK's tool output wrapper ({type: "text"
// | "json", value}).
func unwrapVercelOutput(v any) any {
	m := mapOf(v)
	if m == nil {
		return v
	}
	if t := strOf(m["type"]); (t == "text" || t == "json") && len(m) == 2 {
		if val, ok := m["value"]; ok {
			return val
		}
	}
	return v
}

func firstStr(m map[string]any, keys ...string) string {
	for _, k := range keys {
		if s := strOf(m[k]); s != "" {
			return s
		}
	}
	return ""
}

// toolCall is one OpenAI tool call; arguments are JSON text, as OpenAI sends
// them.
func toolCall(id, name string, args any) map[string]any {
	argText := "{}"
	if args != nil {
		argText = text(args)
	}
	return map[string]any{"id": id, "type": "function", "function": map[string]any{"name": name, "arguments": argText}}
}

// toolCallsOf rewrites tool calls in the OpenAI shape or the flat {id, name,
// arguments} shape of the older events.
func toolCallsOf(v any) []any {
	list := listOf(v)
	out := make([]any, 0, len(list))
	for _, item := range list {
		c := mapOf(item)
		if c == nil {
			continue
		}
		if fn := mapOf(c["function"]); fn != nil {
			out = append(out, toolCall(strOf(c["id"]), strOf(fn["name"]), fn["arguments"]))
			continue
		}
		args := c["arguments"]
		for _, k := range []string{"args", "input"} {
			if args == nil {
				args = c[k]
			}
		}
		out = append(out, toolCall(firstStr(c, "id", "toolCallId"), firstStr(c, "name", "toolName"), args))
	}
	return out
}

// choices wraps output messages as an OpenAI chat completion's choices.
func choices(msgs []any, finish []string) []any {
	out := make([]any, 0, len(msgs))
	for i, m := range msgs {
		c := map[string]any{"index": i, "message": m}
		if i < len(finish) && finish[i] != "" {
			c["finish_reason"] = finish[i]
		}
		out = append(out, c)
	}
	return out
}

// flatMessage builds a message from a flattened one: OpenInference's
// message.role / message.content / message.contents.N.message_content.* /
// message.tool_calls.N.tool_call.*, or OpenLLMetry's role / content /
// tool_calls.N.{id,name,arguments}. prefix is "message." for OpenInference,
// "" for OpenLLMetry.
func flatMessage(flat map[string]any, prefix string) message {
	role := strOf(flat[prefix+"role"])
	if role == "" {
		role = "user"
	}
	m := message{"role": role}
	if c, ok := flat[prefix+"content"]; ok {
		m["content"] = contentOf(c)
	} else if parts := indexed(flat, prefix+"contents."); len(parts) > 0 {
		content := make([]any, 0, len(parts))
		for _, p := range parts {
			typ := strOf(p["message_content.type"])
			if typ == "" || typ == "text" {
				content = append(content, map[string]any{"type": "text", "text": strOf(p["message_content.text"])})
				continue
			}
			part := map[string]any{"type": typ}
			if url := strOf(p["message_content.image.image.url"]); url != "" {
				part["type"], part["image_url"] = "image_url", map[string]any{"url": url}
			}
			content = append(content, part)
		}
		m["content"] = content
	} else {
		m["content"] = nil
	}
	var calls []any
	for _, tc := range indexed(flat, prefix+"tool_calls.") {
		if prefix != "" { // OpenInference: tool_call.id, tool_call.function.name/arguments
			calls = append(calls, toolCall(strOf(tc["tool_call.id"]), strOf(tc["tool_call.function.name"]), tc["tool_call.function.arguments"]))
			continue
		}
		calls = append(calls, toolCall(strOf(tc["id"]), strOf(tc["name"]), tc["arguments"]))
	}
	if name := strOf(flat[prefix+"function_call.name"]); name != "" {
		calls = append(calls, toolCall("", name, flat[prefix+"function_call.arguments"]))
	}
	if len(calls) > 0 {
		m["tool_calls"] = calls
	}
	if id := strOf(flat[prefix+"tool_call_id"]); id != "" {
		m["tool_call_id"] = id
	}
	if name := strOf(flat[prefix+"name"]); name != "" {
		m["name"] = name
	}
	return m
}
