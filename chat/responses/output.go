package responses

import (
	"encoding/json"
	"time"
)

// NewResponse is the response r starts as: in progress, no output, the
// request's settings echoed as OpenAI echoes them.
func NewResponse(r *Request, now time.Time) *Response {
	resp := &Response{
		ID: newID("resp"), Object: "response", CreatedAt: now.Unix(), Status: "in_progress",
		Instructions: r.Instructions, MaxOutputTokens: r.MaxOutputTokens, Model: r.Model,
		Output: []OutputItem{}, ParallelToolCalls: r.ParallelToolCalls == nil || *r.ParallelToolCalls,
		PreviousResponseID: r.PreviousResponseID, Reasoning: r.Reasoning, Store: r.Stored(),
		Temperature: r.Temperature, ToolChoice: r.ToolChoice, Tools: r.Tools, TopP: r.TopP,
		Truncation: "disabled", User: r.User, Metadata: r.Metadata,
		Text: TextConfig{Format: &TextFormat{Type: "text"}},
	}
	if r.Text != nil && r.Text.Format != nil {
		resp.Text = *r.Text
	}
	if resp.ToolChoice == nil {
		resp.ToolChoice = json.RawMessage(`"auto"`)
	}
	if resp.Tools == nil {
		resp.Tools = []Tool{}
	}
	if resp.Metadata == nil {
		resp.Metadata = map[string]string{}
	}
	return resp
}

// chatChunk is a chat-completion stream chunk, or a whole chat completion
// (whose choices carry message where a chunk's carry delta), or an error
// event of a stream.
type chatChunk struct {
	Choices []struct {
		Delta        *chatDelta `json:"delta"`
		Message      *chatDelta `json:"message"`
		FinishReason *string    `json:"finish_reason"`
	} `json:"choices"`
	Usage *chatUsage `json:"usage"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

type chatDelta struct {
	Content          *string        `json:"content"`
	Reasoning        *string        `json:"reasoning"`
	ReasoningContent *string        `json:"reasoning_content"`
	Refusal          *string        `json:"refusal"`
	ToolCalls        []chatToolCall `json:"tool_calls"`
}

type chatUsage struct {
	PromptTokens        int64 `json:"prompt_tokens"`
	CompletionTokens    int64 `json:"completion_tokens"`
	TotalTokens         int64 `json:"total_tokens"`
	PromptTokensDetails *struct {
		CachedTokens int64 `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails *struct {
		ReasoningTokens int64 `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

func (u *chatUsage) usage() *Usage {
	out := &Usage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens, TotalTokens: u.TotalTokens}
	if u.PromptTokensDetails != nil {
		out.InputTokensDetails.CachedTokens = u.PromptTokensDetails.CachedTokens
	}
	if u.CompletionTokensDetails != nil {
		out.OutputTokensDetails.ReasoningTokens = u.CompletionTokensDetails.ReasoningTokens
	}
	return out
}

// FromChat is the finished Response of a whole chat completion (body) to
// resp's request: the same items, in the same order, as the stream of the
// same answer ends with.
func FromChat(resp *Response, body []byte, now time.Time) (*Response, error) {
	b := &builder{resp: resp}
	if err := b.chunk(body); err != nil {
		return nil, err
	}
	return b.finish(now), nil
}

// builder assembles a response's output items from chat deltas, emitting
// the Responses stream events when emit is set. Items are opened as their
// first delta arrives and closed when an item of another kind (or another
// tool call) begins, or at the end.
type builder struct {
	resp *Response
	emit func(event any) error
	seq  int
	// open is the item receiving deltas (nil when none); openCall is the
	// chat tool-call index of an open function call.
	open     OutputItem
	openCall int
	text     []byte // the open message's or reasoning item's text so far
	// delta is the text delta event being sent: a stream sends one per
	// token, and a pointer to it passes through send without allocating.
	delta        textDeltaEvent
	finishReason string
	failure      string
}

// next numbers the next event.
func (b *builder) next() int {
	n := b.seq
	b.seq++
	return n
}

func (b *builder) send(event any) error {
	if b.emit == nil {
		return nil
	}
	return b.emit(event)
}

// chunk applies one chat chunk (or whole completion): its reasoning, then
// content, then tool calls, its finish reason and usage.
func (b *builder) chunk(data []byte) error {
	if content, finish, ok := textChunk(data); ok {
		if content != "" {
			if err := b.textDelta(content); err != nil {
				return err
			}
		}
		if finish != nil {
			b.finishReason = *finish
		}
		return nil
	}
	var c chatChunk
	if err := json.Unmarshal(data, &c); err != nil {
		return invalid("upstream", "The model's answer is not a chat completion: %v.", err)
	}
	if c.Error != nil {
		b.failure = c.Error.Message
		return nil
	}
	if c.Usage != nil {
		b.resp.Usage = c.Usage.usage()
	}
	if len(c.Choices) == 0 {
		return nil
	}
	ch := c.Choices[0]
	d := ch.Delta
	if d == nil {
		d = ch.Message
	}
	if d != nil {
		reasoning := d.Reasoning
		if reasoning == nil {
			reasoning = d.ReasoningContent
		}
		if reasoning != nil && *reasoning != "" {
			if err := b.reasoningDelta(*reasoning); err != nil {
				return err
			}
		}
		for _, text := range []*string{d.Content, d.Refusal} {
			if text != nil && *text != "" {
				if err := b.textDelta(*text); err != nil {
					return err
				}
			}
		}
		for i, tc := range d.ToolCalls {
			index := i
			if tc.Index != nil {
				index = *tc.Index
			}
			if err := b.callDelta(index, tc); err != nil {
				return err
			}
		}
	}
	if ch.FinishReason != nil {
		b.finishReason = *ch.FinishReason
	}
	return nil
}

func (b *builder) index() int { return len(b.resp.Output) - 1 }

// add appends an item as the open one and announces it.
func (b *builder) add(item OutputItem) error {
	b.resp.Output = append(b.resp.Output, item)
	b.open, b.text = item, b.text[:0]
	return b.send(itemEvent{Type: "response.output_item.added", SequenceNumber: b.next(), OutputIndex: b.index(), Item: item})
}

func (b *builder) reasoningDelta(delta string) error {
	if _, ok := b.open.(*ReasoningItem); !ok {
		if err := b.closeOpen("completed"); err != nil {
			return err
		}
		item := &ReasoningItem{Type: "reasoning", ID: newID("rs"), Summary: []ReasoningText{}, Content: []ReasoningText{}, Status: "in_progress"}
		if err := b.add(item); err != nil {
			return err
		}
		if err := b.send(partEvent{Type: "response.content_part.added", SequenceNumber: b.next(), ItemID: item.ID,
			OutputIndex: b.index(), Part: ReasoningText{Type: "reasoning_text", Text: ""}}); err != nil {
			return err
		}
	}
	b.text = append(b.text, delta...)
	return b.send(reasoningDeltaEvent{Type: "response.reasoning_text.delta", SequenceNumber: b.next(),
		ItemID: b.open.itemID(), OutputIndex: b.index(), Delta: delta})
}

func (b *builder) textDelta(delta string) error {
	if _, ok := b.open.(*OutputMessage); !ok {
		if err := b.closeOpen("completed"); err != nil {
			return err
		}
		item := &OutputMessage{Type: "message", ID: newID("msg"), Status: "in_progress", Role: "assistant", Content: []OutputText{}}
		if err := b.add(item); err != nil {
			return err
		}
		if err := b.send(partEvent{Type: "response.content_part.added", SequenceNumber: b.next(), ItemID: item.ID,
			OutputIndex: b.index(), Part: outputText("")}); err != nil {
			return err
		}
	}
	b.text = append(b.text, delta...)
	b.delta = textDeltaEvent{Type: "response.output_text.delta", SequenceNumber: b.next(),
		ItemID: b.open.itemID(), OutputIndex: b.index(), Delta: delta, Logprobs: []any{}}
	return b.send(&b.delta)
}

func (b *builder) callDelta(index int, tc chatToolCall) error {
	call, ok := b.open.(*FunctionCall)
	if !ok || b.openCall != index {
		if err := b.closeOpen("completed"); err != nil {
			return err
		}
		callID := tc.ID
		if callID == "" {
			callID = newID("call")
		}
		call = &FunctionCall{Type: "function_call", ID: newID("fc"), CallID: callID, Name: tc.Function.Name, Status: "in_progress"}
		b.openCall = index
		if err := b.add(call); err != nil {
			return err
		}
	}
	if tc.Function.Arguments == "" {
		return nil
	}
	call.Arguments += tc.Function.Arguments
	return b.send(argsDeltaEvent{Type: "response.function_call_arguments.delta", SequenceNumber: b.next(),
		ItemID: call.ID, OutputIndex: b.index(), Delta: tc.Function.Arguments})
}

func outputText(text string) OutputText {
	return OutputText{Type: "output_text", Text: text, Annotations: []any{}}
}

// closeOpen finishes the open item with status and sends its done events.
func (b *builder) closeOpen(status string) error {
	item := b.open
	if item == nil {
		return nil
	}
	b.open = nil
	at := b.index()
	text := string(b.text)
	var events []any
	switch it := item.(type) {
	case *ReasoningItem:
		part := ReasoningText{Type: "reasoning_text", Text: text}
		it.Content, it.Status = []ReasoningText{part}, status
		events = append(events,
			reasoningDoneEvent{Type: "response.reasoning_text.done", SequenceNumber: b.next(), ItemID: it.ID, OutputIndex: at, Text: text},
			partEvent{Type: "response.content_part.done", SequenceNumber: b.next(), ItemID: it.ID, OutputIndex: at, Part: part})
	case *OutputMessage:
		part := outputText(text)
		it.Content, it.Status = []OutputText{part}, status
		events = append(events,
			textDoneEvent{Type: "response.output_text.done", SequenceNumber: b.next(), ItemID: it.ID, OutputIndex: at, Text: text, Logprobs: []any{}},
			partEvent{Type: "response.content_part.done", SequenceNumber: b.next(), ItemID: it.ID, OutputIndex: at, Part: part})
	case *FunctionCall:
		it.Status = status
		events = append(events, argsDoneEvent{Type: "response.function_call_arguments.done", SequenceNumber: b.next(),
			ItemID: it.ID, OutputIndex: at, Name: it.Name, Arguments: it.Arguments})
	}
	events = append(events, itemEvent{Type: "response.output_item.done", SequenceNumber: b.next(), OutputIndex: at, Item: item})
	for _, e := range events {
		if err := b.send(e); err != nil {
			return err
		}
	}
	return nil
}

// finish closes the open item and settles the response's status: failed
// when the generation reported an error, incomplete when it stopped at
// max_output_tokens (the last item then incomplete too), else completed.
func (b *builder) finish(now time.Time) *Response {
	resp := b.resp
	status := "completed"
	switch {
	case b.failure != "":
		status = "failed"
		resp.Error = &ResponseError{Code: "server_error", Message: b.failure}
	case b.finishReason == "length":
		status = "incomplete"
		resp.IncompleteDetails = &IncompleteDetails{Reason: "max_output_tokens"}
	}
	itemStatus := status
	if status == "failed" {
		itemStatus = "incomplete"
	}
	_ = b.closeOpen(itemStatus) // the done events of a failed emit are lost with the stream
	resp.Status = status
	if status != "failed" {
		t := now.Unix()
		resp.CompletedAt = &t
	}
	return resp
}
