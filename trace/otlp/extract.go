package otlp

import "strings"

// event is a span event as the extractors read it.
type event struct {
	name  string
	attrs attrs
}

// spanView is what the extractors read of one span.
type spanView struct {
	name   string
	attrs  attrs
	events []event
	model  string // the response model, else the request model; "" when none
}

// extractor reads inputs (nil: none) and output (ok false: none) in one
// convention.
type extractor func(s *spanView) (inputs map[string]any, output any, ok bool)

// extractors, in order of precedence: the first that finds inputs gives the
// inputs, the first that finds an output gives the output.
var extractors = []extractor{
	genAIMessages,
	genAIToolCall,
	genAIEvents,
	openLLMetryPrompts,
	openInferenceMessages,
	openInferenceValues,
	traceloopEntity,
	vercelAI,
	pydanticAI,
	genericIO,
}

// content runs the extractors.
func content(s *spanView) (inputs map[string]any, output any) {
	hasOutput := false
	for _, x := range extractors {
		in, out, ok := x(s)
		if inputs == nil && in != nil {
			inputs = in
		}
		if !hasOutput && ok {
			output, hasOutput = out, true
		}
		if inputs != nil && hasOutput {
			break
		}
	}
	return inputs, output
}

// chatInputs is inputs of a chat request as the SDK integrations record
// them.
func (s *spanView) chatInputs(msgs []any) map[string]any {
	in := map[string]any{"messages": msgs}
	if m := s.attrs.str(keyGenAIRequestModel); m != "" {
		in["model"] = m
	} else if s.model != "" {
		in["model"] = s.model
	}
	return in
}

// chatOutput is the output of a chat request as an OpenAI completion.
func (s *spanView) chatOutput(msgs []any, finish []string) map[string]any {
	out := map[string]any{"object": "chat.completion", "choices": choices(msgs, finish)}
	if s.model != "" {
		out["model"] = s.model
	}
	return out
}

// genAIMessages reads the current GenAI conventions: gen_ai.input.messages
// (after gen_ai.system_instructions), gen_ai.output.messages.
func genAIMessages(s *spanView) (map[string]any, any, bool) {
	var inputs map[string]any
	system, hasSystem := s.attrs.structured(keyGenAISystemInstructions)
	in, hasIn := s.attrs.structured(keyGenAIInputMessages)
	if hasSystem || hasIn {
		var msgs []any
		if hasSystem {
			msgs = append(msgs, systemMessage(system))
		}
		if l, ok := in.([]any); ok {
			msgs = append(msgs, normalizeMessages(l)...)
		} else if hasIn {
			msgs = append(msgs, message{"role": "user", "content": text(in)})
		}
		inputs = s.chatInputs(msgs)
		if tools, ok := s.attrs.structured(keyGenAIToolDefinitions); ok {
			inputs["tools"] = tools
		}
	}
	out, ok := s.attrs.structured(keyGenAIOutputMessages)
	if !ok {
		return inputs, nil, false
	}
	l, isList := out.([]any)
	if !isList {
		return inputs, out, true
	}
	var finish []string
	for _, m := range l {
		finish = append(finish, strOf(mapOf(m)["finish_reason"]))
	}
	return inputs, s.chatOutput(normalizeMessages(l), finish), true
}

// systemMessage joins system instructions (a list of parts, or text) into
// one system message.
func systemMessage(v any) message {
	l, ok := v.([]any)
	if !ok {
		return message{"role": "system", "content": text(v)}
	}
	var texts []string
	for _, p := range l {
		if part := mapOf(p); part != nil {
			if c, ok := part["content"]; ok {
				texts = append(texts, text(c))
			} else {
				texts = append(texts, text(part["text"]))
			}
		} else {
			texts = append(texts, text(p))
		}
	}
	return message{"role": "system", "content": strings.Join(texts, "\n")}
}

// genAIToolCall reads a GenAI tool execution span.
func genAIToolCall(s *spanView) (map[string]any, any, bool) {
	var inputs map[string]any
	if args, ok := s.attrs.structured(keyGenAIToolCallArguments); ok {
		inputs = objectInputs("arguments", args)
	}
	result, ok := s.attrs[keyGenAIToolCallResult]
	return inputs, parseAnyJSON(result), ok
}

// objectInputs is v itself when it is an object, else {name: v}: inputs are
// always an object.
func objectInputs(name string, v any) map[string]any {
	if m, ok := v.(map[string]any); ok {
		return m
	}
	return map[string]any{name: v}
}

// genAIEvents reads the older GenAI conventions' events
// (gen_ai.{system,user,assistant,tool}.message, gen_ai.choice) from the
// span's events or from the "events" attribute pydantic-ai writes for
// Logfire.
func genAIEvents(s *spanView) (map[string]any, any, bool) {
	evs := s.events
	for _, key := range []string{keyLogfireEvents, keyLogfireAllEvents} {
		for _, item := range listOf(s.attrs[key]) {
			if m := mapOf(item); m != nil {
				evs = append(evs, event{name: strOf(m["event.name"]), attrs: m})
			}
		}
	}
	var msgs, outs []any
	var finish []string
	for _, e := range evs {
		switch {
		case e.name == eventGenAIChoice:
			m := mapOf(e.attrs["message"])
			if m == nil {
				m = map[string]any{"content": e.attrs["content"]}
			}
			if m["role"] == nil {
				m["role"] = "assistant"
			}
			outs = append(outs, normalizeMessage(m)...)
			finish = append(finish, strOf(e.attrs["finish_reason"]))
		case strings.HasPrefix(e.name, eventGenAIPrefix) && strings.HasSuffix(e.name, eventGenAIMessageSufx):
			role := strings.TrimSuffix(strings.TrimPrefix(e.name, eventGenAIPrefix), eventGenAIMessageSufx)
			m := map[string]any{"role": role, "content": e.attrs["content"], "tool_calls": e.attrs["tool_calls"]}
			if r := strOf(e.attrs["role"]); r != "" {
				m["role"] = r
			}
			if id := strOf(e.attrs["id"]); id != "" && role == "tool" {
				m["tool_call_id"] = id
			}
			msgs = append(msgs, normalizeMessage(m)...)
		}
	}
	var inputs map[string]any
	if len(msgs) > 0 {
		inputs = s.chatInputs(msgs)
	}
	if len(outs) == 0 {
		return inputs, nil, false
	}
	return inputs, s.chatOutput(outs, finish), true
}

// openLLMetryPrompts reads gen_ai.prompt.N.* and gen_ai.completion.N.*.
func openLLMetryPrompts(s *spanView) (map[string]any, any, bool) {
	var inputs map[string]any
	if groups := indexed(s.attrs, keyGenAIPromptPrefix); len(groups) > 0 {
		msgs := make([]any, len(groups))
		for i, g := range groups {
			msgs[i] = flatMessage(g, "")
		}
		inputs = s.chatInputs(msgs)
	}
	groups := indexed(s.attrs, keyGenAICompletionPrefix)
	if len(groups) == 0 {
		return inputs, nil, false
	}
	msgs := make([]any, len(groups))
	finish := make([]string, len(groups))
	for i, g := range groups {
		m := flatMessage(g, "")
		if _, ok := g["role"]; !ok {
			m["role"] = "assistant"
		}
		msgs[i], finish[i] = m, strOf(g["finish_reason"])
	}
	return inputs, s.chatOutput(msgs, finish), true
}

// openInferenceMessages reads llm.input_messages.N.message.* and
// llm.output_messages.N.message.*.
func openInferenceMessages(s *spanView) (map[string]any, any, bool) {
	var inputs map[string]any
	if groups := indexed(s.attrs, keyOIInputMessagesPfx); len(groups) > 0 {
		msgs := make([]any, len(groups))
		for i, g := range groups {
			msgs[i] = flatMessage(g, "message.")
		}
		inputs = s.chatInputs(msgs)
	}
	groups := indexed(s.attrs, keyOIOutputMessagesPfx)
	if len(groups) == 0 {
		return inputs, nil, false
	}
	msgs := make([]any, len(groups))
	for i, g := range groups {
		msgs[i] = flatMessage(g, "message.")
	}
	return inputs, s.chatOutput(msgs, []string{s.attrs.str(keyOIFinishReason)}), true
}

// openInferenceValues reads input.value and output.value, parsed when they
// hold JSON.
func openInferenceValues(s *spanView) (map[string]any, any, bool) {
	var inputs map[string]any
	if v, ok := s.attrs[keyOIInputValue]; ok {
		inputs = objectInputs("input", parseJSONText(v))
	}
	v, ok := s.attrs[keyOIOutputValue]
	return inputs, parseJSONText(v), ok
}

// traceloopEntity reads OpenLLMetry's workflow and task spans.
func traceloopEntity(s *spanView) (map[string]any, any, bool) {
	var inputs map[string]any
	if v, ok := s.attrs.structured(keyTraceloopEntityInput); ok {
		inputs = objectInputs("input", v)
	}
	v, ok := s.attrs.structured(keyTraceloopEntityOutput)
	return inputs, v, ok
}

// vercelAI reads the AI SDK's ai.* attributes.
func vercelAI(s *spanView) (map[string]any, any, bool) {
	var inputs map[string]any
	if l := listOf(s.attrs[keyAIPromptMessages]); l != nil {
		inputs = s.chatInputs(normalizeMessages(l))
	} else if p, ok := s.attrs.structured(keyAIPrompt); ok {
		inputs = s.chatInputs(vercelPrompt(p))
	} else if args, ok := s.attrs.structured(keyAIToolCallArgs); ok {
		inputs = objectInputs("args", args)
	} else if args, ok := s.attrs.structured(keyAIToolCallInput); ok {
		inputs = objectInputs("input", args)
	}
	if inputs != nil {
		if tools := listOf(s.attrs[keyAIPromptTools]); tools != nil {
			parsed := make([]any, len(tools))
			for i, t := range tools {
				parsed[i] = parseJSONText(t)
			}
			inputs["tools"] = parsed
		}
	}
	for _, keys := range [][2]string{{keyAIResponseText, keyAIResponseTools}, {keyAIResultText, keyAIResultTools}} {
		txt, hasText := s.attrs[keys[0]]
		calls, hasCalls := s.attrs[keys[1]]
		if !hasText && !hasCalls {
			continue
		}
		m := message{"role": "assistant", "content": txt}
		if tc := toolCallsOf(calls); len(tc) > 0 {
			m["tool_calls"] = tc
			if txt == "" {
				m["content"] = nil
			}
		}
		return inputs, s.chatOutput([]any{m}, []string{s.attrs.str(keyAIResponseFinish)}), true
	}
	for _, k := range []string{keyAIResponseObject, keyAIResultObject} {
		if v, ok := s.attrs[k]; ok {
			return inputs, parseAnyJSON(v), true
		}
	}
	for _, k := range []string{keyAIToolCallResult, keyAIToolCallOutput} {
		if v, ok := s.attrs[k]; ok {
			return inputs, unwrapVercelOutput(parseAnyJSON(v)), true
		}
	}
	return inputs, nil, false
}

// vercelPrompt reads ai.prompt: {system?, prompt?: string | messages,
// messages?}.
func vercelPrompt(p any) []any {
	m, ok := p.(map[string]any)
	if !ok {
		return []any{message{"role": "user", "content": text(p)}}
	}
	var msgs []any
	if sys, ok := m["system"]; ok && sys != nil {
		msgs = append(msgs, message{"role": "system", "content": text(sys)})
	}
	switch prompt := m["prompt"].(type) {
	case string:
		msgs = append(msgs, message{"role": "user", "content": prompt})
	case []any:
		msgs = append(msgs, normalizeMessages(prompt)...)
	}
	if l, ok := m["messages"].([]any); ok {
		msgs = append(msgs, normalizeMessages(l)...)
	}
	return msgs
}

// pydanticAI reads pydantic-ai's agent run: every message of the run and
// the final result.
func pydanticAI(s *spanView) (map[string]any, any, bool) {
	var inputs map[string]any
	if l := listOf(s.attrs[keyPydanticMessages]); l != nil {
		inputs = s.chatInputs(normalizeMessages(l))
	}
	v, ok := s.attrs[keyPydanticFinal]
	return inputs, parseAnyJSON(v), ok
}

// genericIO reads the plain input/output keys some libraries write.
func genericIO(s *spanView) (map[string]any, any, bool) {
	var inputs map[string]any
	for _, k := range []string{keyMLflowSpanInputs, "input", "inputs"} {
		if v, ok := s.attrs.structured(k); ok {
			inputs = objectInputs("input", v)
			break
		}
	}
	for _, k := range []string{keyMLflowSpanOutputs, "output", "outputs"} {
		if v, ok := s.attrs.structured(k); ok {
			return inputs, v, true
		}
	}
	return inputs, nil, false
}
