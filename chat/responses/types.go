package responses

import "encoding/json"

// Request is the body of POST /v1/responses: the fields of OpenAI's
// ResponseCreateParams this package serves. Pointers tell "absent or null"
// from a value. Fields that ask for what a self-hosted model cannot do
// (background runs, conversations, stored prompts, hosted tools) are
// refused by Validate rather than ignored.
type Request struct {
	Model string `json:"model"`
	// Input is a string (one user message) or a list of input items.
	Input              json.RawMessage `json:"input"`
	Instructions       *string         `json:"instructions"`
	PreviousResponseID *string         `json:"previous_response_id"`
	Tools              []Tool          `json:"tools"`
	// ToolChoice is "none", "auto", "required" or {"type":"function","name"}.
	ToolChoice        json.RawMessage   `json:"tool_choice"`
	ParallelToolCalls *bool             `json:"parallel_tool_calls"`
	Text              *TextConfig       `json:"text"`
	Reasoning         *Reasoning        `json:"reasoning"`
	MaxOutputTokens   *int64            `json:"max_output_tokens"`
	Temperature       *float64          `json:"temperature"`
	TopP              *float64          `json:"top_p"`
	TopLogprobs       *int64            `json:"top_logprobs"`
	Stream            *bool             `json:"stream"`
	Store             *bool             `json:"store"`
	Metadata          map[string]string `json:"metadata"`
	User              *string           `json:"user"`
	Truncation        *string           `json:"truncation"`
	Include           []string          `json:"include"`

	// Refused when set (see Validate).
	Background   *bool           `json:"background"`
	Conversation json.RawMessage `json:"conversation"`
	Prompt       json.RawMessage `json:"prompt"`
}

// Streaming reports whether the client asked for a stream.
func (r *Request) Streaming() bool { return r.Stream != nil && *r.Stream }

// Stored reports whether the response is to be stored (store defaults to
// true).
func (r *Request) Stored() bool { return r.Store == nil || *r.Store }

// Tool is one entry of tools: a function tool (the only kind served).
type Tool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description *string         `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
	Strict      *bool           `json:"strict"`
}

// TextConfig is text: the output's format.
type TextConfig struct {
	Format    *TextFormat `json:"format,omitempty"`
	Verbosity *string     `json:"verbosity,omitempty"`
}

// TextFormat is text.format: {"type":"text"}, {"type":"json_object"} or a
// JSON schema the output must match.
type TextFormat struct {
	Type        string          `json:"type"`
	Name        string          `json:"name,omitempty"`
	Schema      json.RawMessage `json:"schema,omitempty"`
	Description *string         `json:"description,omitempty"`
	Strict      *bool           `json:"strict,omitempty"`
}

// Reasoning is reasoning: the effort a reasoning model spends.
type Reasoning struct {
	Effort  *string `json:"effort"`
	Summary *string `json:"summary"`
}

// InputItem is one item of a request's input, or of a stored response's
// output read back as the next response's history: a message (role and
// content as a string or parts), a function call, a function call's output
// or a reasoning item. Fields of the other kinds are empty.
type InputItem struct {
	Type   string `json:"type"`
	ID     string `json:"id,omitempty"`
	Status string `json:"status,omitempty"`
	// message
	Role    string          `json:"role,omitempty"`
	Content json.RawMessage `json:"content,omitempty"`
	// function_call, function_call_output
	CallID    string          `json:"call_id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Arguments string          `json:"arguments,omitempty"`
	Output    json.RawMessage `json:"output,omitempty"`
	// reasoning
	Summary []TextPart `json:"summary,omitempty"`
}

// TextPart is a part of a message's or a reasoning item's content:
// input_text, output_text, refusal, summary_text, reasoning_text (Text),
// or input_image (ImageURL, Detail).
type TextPart struct {
	Type     string  `json:"type"`
	Text     string  `json:"text,omitempty"`
	Refusal  string  `json:"refusal,omitempty"`
	ImageURL *string `json:"image_url,omitempty"`
	Detail   string  `json:"detail,omitempty"`
}

// Response is OpenAI's Response object. Every field the SDKs declare as
// required is always present (null where there is no value).
type Response struct {
	ID                 string             `json:"id"`
	Object             string             `json:"object"`
	CreatedAt          int64              `json:"created_at"`
	CompletedAt        *int64             `json:"completed_at"`
	Status             string             `json:"status"`
	Error              *ResponseError     `json:"error"`
	IncompleteDetails  *IncompleteDetails `json:"incomplete_details"`
	Instructions       *string            `json:"instructions"`
	MaxOutputTokens    *int64             `json:"max_output_tokens"`
	Model              string             `json:"model"`
	Output             []OutputItem       `json:"output"`
	ParallelToolCalls  bool               `json:"parallel_tool_calls"`
	PreviousResponseID *string            `json:"previous_response_id"`
	Reasoning          *Reasoning         `json:"reasoning"`
	Store              bool               `json:"store"`
	Temperature        *float64           `json:"temperature"`
	Text               TextConfig         `json:"text"`
	ToolChoice         json.RawMessage    `json:"tool_choice"`
	Tools              []Tool             `json:"tools"`
	TopP               *float64           `json:"top_p"`
	Truncation         string             `json:"truncation"`
	Usage              *Usage             `json:"usage"`
	User               *string            `json:"user"`
	Metadata           map[string]string  `json:"metadata"`
	Background         bool               `json:"background"`
}

// ResponseError is a failed response's error.
type ResponseError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// IncompleteDetails says why a response stopped short.
type IncompleteDetails struct {
	Reason string `json:"reason"`
}

// Usage is a response's token counts.
type Usage struct {
	InputTokens         int64               `json:"input_tokens"`
	InputTokensDetails  InputTokensDetails  `json:"input_tokens_details"`
	OutputTokens        int64               `json:"output_tokens"`
	OutputTokensDetails OutputTokensDetails `json:"output_tokens_details"`
	TotalTokens         int64               `json:"total_tokens"`
}

// InputTokensDetails counts the prompt's cached tokens.
type InputTokensDetails struct {
	CachedTokens int64 `json:"cached_tokens"`
}

// OutputTokensDetails counts the output's reasoning tokens.
type OutputTokensDetails struct {
	ReasoningTokens int64 `json:"reasoning_tokens"`
}

// OutputItem is an item of a response's output: *OutputMessage,
// *FunctionCall or *ReasoningItem.
type OutputItem interface {
	itemID() string
}

// OutputMessage is an assistant message of the output.
type OutputMessage struct {
	Type    string       `json:"type"` // "message"
	ID      string       `json:"id"`
	Status  string       `json:"status"`
	Role    string       `json:"role"` // "assistant"
	Content []OutputText `json:"content"`
}

// OutputText is the output_text part of an output message.
type OutputText struct {
	Type        string `json:"type"` // "output_text"
	Text        string `json:"text"`
	Annotations []any  `json:"annotations"`
	Logprobs    []any  `json:"logprobs,omitempty"`
}

// FunctionCall is a call of a function tool the model made.
type FunctionCall struct {
	Type      string `json:"type"` // "function_call"
	ID        string `json:"id"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	Status    string `json:"status"`
}

// ReasoningItem is the model's reasoning, as reasoning_text content.
type ReasoningItem struct {
	Type    string          `json:"type"` // "reasoning"
	ID      string          `json:"id"`
	Summary []ReasoningText `json:"summary"`
	Content []ReasoningText `json:"content"`
	Status  string          `json:"status,omitempty"`
}

// ReasoningText is a reasoning_text (or summary_text) part.
type ReasoningText struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

func (m *OutputMessage) itemID() string { return m.ID }
func (f *FunctionCall) itemID() string  { return f.ID }
func (r *ReasoningItem) itemID() string { return r.ID }

// ItemList is the answer of GET /v1/responses/{id}/input_items.
type ItemList struct {
	Object  string            `json:"object"` // "list"
	Data    []json.RawMessage `json:"data"`
	FirstID *string           `json:"first_id"`
	LastID  *string           `json:"last_id"`
	HasMore bool              `json:"has_more"`
}

// Deleted is the answer of DELETE /v1/responses/{id}.
type Deleted struct {
	ID      string `json:"id"`
	Object  string `json:"object"` // "response"
	Deleted bool   `json:"deleted"`
}
