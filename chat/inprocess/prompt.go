package inprocess

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/chat"
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
	// trustRequestTemplate allows a request's own chat template (see
	// LocalOptions.TrustRequestChatTemplate).
	trustRequestTemplate bool
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

// render renders the conversation with the model's chat template and
// tokenizes it: the ids a completion feeds the model, before truncation.
func (m *promptModel) render(in *chatInput) (chatPrompt, error) {
	if _, inKwargs := in.ChatTemplateKwargs["chat_template"]; (in.ChatTemplate != nil || inKwargs) && !m.trustRequestTemplate {
		return chatPrompt{}, chat.Invalid("chat_template", "Chat template is passed with request, but trust_request_chat_template is not set. Refused request with untrusted chat template.")
	}
	var wire []chattemplate.WireMessage
	if err := json.Unmarshal(in.Messages, &wire); err != nil {
		return chatPrompt{}, chat.Malformed("messages", "list_type", "Input should be a valid list of messages: "+err.Error())
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
	} else if raw, ok := in.ChatTemplateKwargs["chat_template"]; ok {
		// As the template's own keyword argument, it replaces the
		// model's template too.
		if err := json.Unmarshal(raw, &input.ChatTemplate); err != nil {
			return chatPrompt{}, chat.Malformed("chat_template_kwargs.chat_template", "string_type", "Input should be a valid string")
		}
		delete(kwargs, "chat_template")
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

// templateMessage reads one request message as the template sees it, with
// the request error a bad message gets.
func templateMessage(i int, w chattemplate.WireMessage) (chattemplate.Message, error) {
	msg, err := w.Message()
	var ce *chattemplate.ContentError
	switch {
	case err == nil:
		return msg, nil
	case !errors.As(err, &ce):
		return msg, err
	case ce.Part >= 0:
		return msg, chat.Invalid(fmt.Sprintf("messages.%d.content.%d", i, ce.Part), "%v", ce.Err)
	case ce.List:
		return msg, chat.Malformed(fmt.Sprintf("messages.%d.content", i), "list_type", "Input should be a valid list")
	}
	return msg, chat.Malformed(fmt.Sprintf("messages.%d.content", i), "string_type", "Input should be a valid string or list of content parts")
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

// templateTools dumps tools as vLLM hands them to templates (see
// chattemplate.WireTools), with the request error a bad tool gets.
func templateTools(tools []json.RawMessage) ([]json.RawMessage, error) {
	out, err := chattemplate.WireTools(tools)
	var te *chattemplate.ToolError
	if errors.As(err, &te) {
		return nil, chat.Malformed(fmt.Sprintf("tools.%d.function", te.Index), "missing", "Field required: a tool is {\"type\": \"function\", \"function\": {\"name\", ...}}")
	}
	return out, err
}

// templateError maps a render failure to the 400 vLLM answers: the
// template's own raise_exception message, or what went wrong.
func templateError(err error) error {
	var raise *chattemplate.RaiseError
	switch {
	case errors.As(err, &raise):
		return chat.Invalid("", "%s", raise.Message)
	case errors.Is(err, chattemplate.ErrNoTemplate):
		return chat.Invalid("", "As of transformers v4.44, default chat template is no longer allowed, so you must provide a chat template if the tokenizer does not define one.")
	case errors.Is(err, jinja.ErrLimit):
		return chat.Invalid("chat_template", "The chat template went over its rendering limits: %v", err)
	}
	return chat.Invalid("", "%v", err)
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
		return nil, 0, chat.Invalid(param, "%s=%dcannot be greater than max_model_len=max_total_tokens=%d. Please request fewer output tokens.", param, output, total)
	}
	maxInput := total - output
	if truncate != nil {
		keep := *truncate
		if keep > maxInput {
			return nil, 0, chat.Invalid("truncate_prompt_tokens", "truncate_prompt_tokens=%d cannot be greater than max_model_len - %s = %d. Please request a smaller truncation size.", keep, param, maxInput)
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
		return nil, 0, weft.WithFields(chat.ErrBadRequest, map[string]any{"param": "input_tokens"},
			"You passed %d input tokens and requested %d output tokens. However, the model's context length is only %d tokens, resulting in a maximum input length of %d tokens. Please reduce the length of the input prompt.",
			len(ids), output, total, maxInput)
	}
	maxTokens := total - int64(len(ids))
	if requested != nil {
		maxTokens = min(maxTokens, *requested)
	}
	if maxTokens < 1 {
		return nil, 0, chat.Invalid("max_tokens", "max_tokens must be at least 1, got %d.", maxTokens)
	}
	return ids, int(maxTokens), nil
}
