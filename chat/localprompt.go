package chat

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/llm/chattemplate"
	"github.com/weftlabs/weft/internal/llm/chattemplate/jinja"
	"github.com/weftlabs/weft/internal/llm/tokenizer"
)

// promptModel is what turning a request into prompt tokens needs of a local
// model: its tokenizer, its chat template and its context length.
type promptModel struct {
	tokenizer   *tokenizer.Tokenizer
	template    *chattemplate.Template
	maxModelLen int
}

// chatPrompt is the prompt of a chat request as the model reads it.
type chatPrompt struct {
	// text is the rendered template; ids its tokens after truncation.
	text string
	ids  []int
	// role answers: the response role ("assistant") with a generation
	// prompt, else the last message's role.
	role string
	// last is the last message's role and text, for echo.
	lastRole, lastContent string
}

// chatInput is the part of a request that renders the prompt, shared by
// chat completions and POST /tokenize with messages.
type chatInput struct {
	Messages             json.RawMessage            `json:"messages"`
	Tools                []json.RawMessage          `json:"tools"`
	Documents            []json.RawMessage          `json:"documents"`
	ChatTemplate         *string                    `json:"chat_template"`
	ChatTemplateKwargs   map[string]json.RawMessage `json:"chat_template_kwargs"`
	AddGenerationPrompt  *bool                      `json:"add_generation_prompt"`
	ContinueFinalMessage *bool                      `json:"continue_final_message"`
	AddSpecialTokens     *bool                      `json:"add_special_tokens"`
	ReasoningEffort      *string                    `json:"reasoning_effort"`
}

// responseRole is the role of what a model generates after a generation
// prompt (vLLM's --response-role default).
const responseRole = "assistant"

// wireMessage is one message of a request.
type wireMessage struct {
	Role             string          `json:"role"`
	Content          json.RawMessage `json:"content"`
	Name             *string         `json:"name"`
	ToolCallID       *string         `json:"tool_call_id"`
	Reasoning        *string         `json:"reasoning"`
	ReasoningContent *string         `json:"reasoning_content"`
	ToolCalls        []struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
}

// render renders the conversation with the model's chat template and
// tokenizes it: the ids a completion feeds the model, before truncation.
func (m *promptModel) render(in *chatInput) (chatPrompt, error) {
	var wire []wireMessage
	if err := json.Unmarshal(in.Messages, &wire); err != nil {
		return chatPrompt{}, malformed("messages", "list_type", "Input should be a valid list of messages: "+err.Error())
	}
	messages := make([]chattemplate.Message, len(wire))
	for i, w := range wire {
		msg, err := templateMessage(i, w)
		if err != nil {
			return chatPrompt{}, err
		}
		messages[i] = msg
	}
	addPrompt := in.AddGenerationPrompt == nil || *in.AddGenerationPrompt
	continueFinal := in.ContinueFinalMessage != nil && *in.ContinueFinalMessage
	kwargs := map[string]any{}
	for k, v := range in.ChatTemplateKwargs {
		kwargs[k] = v
	}
	if e := in.ReasoningEffort; e != nil {
		kwargs["reasoning_effort"] = *e
		if _, set := in.ChatTemplateKwargs["enable_thinking"]; !set {
			kwargs["enable_thinking"] = *e != "none"
		}
	}
	tools, err := templateTools(in.Tools)
	if err != nil {
		return chatPrompt{}, err
	}
	input := chattemplate.Input{
		Messages: messages, Tools: tools, Documents: in.Documents,
		AddGenerationPrompt: addPrompt, ContinueFinalMessage: continueFinal, Kwargs: kwargs,
	}
	if in.ChatTemplate != nil {
		input.ChatTemplate = *in.ChatTemplate
	}
	text, err := m.template.Render(input)
	if err != nil {
		return chatPrompt{}, templateError(err)
	}
	p := chatPrompt{text: text, role: responseRole}
	if len(messages) > 0 {
		last := messages[len(messages)-1]
		p.lastRole, p.lastContent = last.Role, messageText(last)
		if !addPrompt {
			p.role = last.Role
		}
	}
	p.ids = m.tokenizer.Encode(text, in.AddSpecialTokens != nil && *in.AddSpecialTokens)
	return p, nil
}

// templateMessage reads one request message as the template sees it.
// Content that is not text (images, audio, ...) is refused: local models
// read text only.
func templateMessage(i int, w wireMessage) (chattemplate.Message, error) {
	msg := chattemplate.Message{Role: w.Role}
	switch {
	case len(w.Content) == 0 || bytes.Equal(w.Content, []byte("null")):
		msg.NullContent = true
	case w.Content[0] == '"':
		_ = json.Unmarshal(w.Content, &msg.Content)
	case w.Content[0] == '[':
		var parts []json.RawMessage
		if err := json.Unmarshal(w.Content, &parts); err != nil {
			return msg, malformed(fmt.Sprintf("messages.%d.content", i), "list_type", "Input should be a valid list")
		}
		msg.Parts = make([]chattemplate.ContentPart, 0, len(parts))
		for j, raw := range parts {
			part, err := textPart(raw)
			if err != nil {
				return msg, invalid(fmt.Sprintf("messages.%d.content.%d", i, j), "%v", err)
			}
			msg.Parts = append(msg.Parts, part)
		}
	default:
		return msg, malformed(fmt.Sprintf("messages.%d.content", i), "string_type", "Input should be a valid string or list of content parts")
	}
	if w.Name != nil {
		msg.Name = *w.Name
	}
	if w.ToolCallID != nil {
		msg.ToolCallID = *w.ToolCallID
	}
	msg.Reasoning = w.Reasoning
	if msg.Reasoning == nil {
		msg.Reasoning = w.ReasoningContent
	}
	for _, tc := range w.ToolCalls {
		msg.ToolCalls = append(msg.ToolCalls, chattemplate.ToolCall{ID: tc.ID, Type: tc.Type, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
	}
	return msg, nil
}

// textPart reads a content part: {"type": "text", "text": ...}, a refusal,
// or a bare string.
func textPart(raw json.RawMessage) (chattemplate.ContentPart, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return chattemplate.ContentPart{Type: "text", Text: s}, nil
	}
	var p struct {
		Type    string  `json:"type"`
		Text    *string `json:"text"`
		Refusal *string `json:"refusal"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return chattemplate.ContentPart{}, errors.New("a content part must be a string or an object")
	}
	switch {
	case (p.Type == "text" || p.Type == "") && p.Text != nil:
		return chattemplate.ContentPart{Type: "text", Text: *p.Text}, nil
	case p.Type == "refusal" && p.Refusal != nil:
		return chattemplate.ContentPart{Type: "text", Text: *p.Refusal}, nil
	}
	kind := p.Type
	if kind == "" {
		kind = "untyped"
	}
	return chattemplate.ContentPart{}, fmt.Errorf("content of type %q is not supported: local models read text only", kind)
}

// messageText is a message's content as text (parts joined with "\n"), as
// echo repeats it.
func messageText(m chattemplate.Message) string {
	if m.Parts == nil {
		return m.Content
	}
	texts := make([]string, len(m.Parts))
	for i, p := range m.Parts {
		texts[i] = p.Text
	}
	return strings.Join(texts, "\n")
}

// templateTools dumps tools as vLLM hands them to templates:
// {"type": "function", "function": {"name", "description", "parameters"}},
// absent members as null, in that order.
func templateTools(tools []json.RawMessage) ([]json.RawMessage, error) {
	if tools == nil {
		return nil, nil
	}
	out := make([]json.RawMessage, len(tools))
	for i, raw := range tools {
		var t struct {
			Type     string `json:"type"`
			Function *struct {
				Name        *string         `json:"name"`
				Description json.RawMessage `json:"description"`
				Parameters  json.RawMessage `json:"parameters"`
			} `json:"function"`
		}
		if err := json.Unmarshal(raw, &t); err != nil || t.Function == nil || t.Function.Name == nil {
			return nil, malformed(fmt.Sprintf("tools.%d.function", i), "missing", "Field required: a tool is {\"type\": \"function\", \"function\": {\"name\", ...}}")
		}
		if t.Type == "" {
			t.Type = "function"
		}
		orNull := func(v json.RawMessage) json.RawMessage {
			if len(v) == 0 {
				return json.RawMessage("null")
			}
			return v
		}
		var b bytes.Buffer
		b.WriteString(`{"type":`)
		b.WriteString(strconvQuote(t.Type))
		b.WriteString(`,"function":{"name":`)
		b.WriteString(strconvQuote(*t.Function.Name))
		b.WriteString(`,"description":`)
		b.Write(orNull(t.Function.Description))
		b.WriteString(`,"parameters":`)
		b.Write(orNull(t.Function.Parameters))
		b.WriteString("}}")
		out[i] = b.Bytes()
	}
	return out, nil
}

// templateError maps a render failure to the 400 vLLM answers: the
// template's own raise_exception message, or what went wrong.
func templateError(err error) error {
	var raise *chattemplate.RaiseError
	switch {
	case errors.As(err, &raise):
		return invalid("", "%s", raise.Message)
	case errors.Is(err, chattemplate.ErrNoTemplate):
		return invalid("", "As of transformers v4.44, default chat template is no longer allowed, so you must provide a chat template if the tokenizer does not define one.")
	case errors.Is(err, jinja.ErrLimit):
		return invalid("chat_template", "The chat template went over its rendering limits: %v", err)
	}
	return invalid("", "%v", err)
}

// fitPrompt truncates the prompt as truncate_prompt_tokens asks, checks it
// against the context length and decides max_tokens, with vLLM's messages.
// requested is max_completion_tokens, else max_tokens (nil: as many as
// fit); param names the field it came from.
func (m *promptModel) fitPrompt(ids []int, requested *int64, param string, truncate *int64, side *string) ([]int, int, error) {
	total := int64(m.maxModelLen)
	var output int64
	if requested != nil {
		output = *requested
	}
	if output > total {
		return nil, 0, invalid(param, "%s=%dcannot be greater than max_model_len=max_total_tokens=%d. Please request fewer output tokens.", param, output, total)
	}
	maxInput := total - output
	if truncate != nil {
		keep := *truncate
		if keep > maxInput {
			return nil, 0, invalid("truncate_prompt_tokens", "truncate_prompt_tokens=%d cannot be greater than max_model_len - %s = %d. Please request a smaller truncation size.", keep, param, maxInput)
		}
		if keep < 0 {
			keep = maxInput
		}
		if keep < int64(len(ids)) {
			if side != nil && *side == "right" {
				ids = ids[:keep]
			} else {
				ids = ids[int64(len(ids))-keep:]
			}
		}
	}
	if int64(len(ids)) > maxInput {
		return nil, 0, weft.WithFields(ErrBadRequest, map[string]any{"param": "input_tokens"},
			"You passed %d input tokens and requested %d output tokens. However, the model's context length is only %d tokens, resulting in a maximum input length of %d tokens. Please reduce the length of the input prompt.",
			len(ids), output, total, maxInput)
	}
	maxTokens := total - int64(len(ids))
	if requested != nil {
		maxTokens = min(maxTokens, *requested)
	}
	if maxTokens < 1 {
		return nil, 0, invalid("max_tokens", "max_tokens must be at least 1, got %d.", maxTokens)
	}
	return ids, int(maxTokens), nil
}
