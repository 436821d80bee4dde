package localtrainer

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/weftlabs/weft/internal/llm/chattemplate"
	"github.com/weftlabs/weft/internal/llm/tokenizer"
	"github.com/weftlabs/weft/training"
)

// Template is what turning conversations into training sequences needs of the
// base model: its tokenizer and chat template (read by [LoadTemplate]) and the
// ids that end a turn. Prompts are rendered as the engine renders them for a chat completion
// (default template arguments, no added special tokens), so that training sees
// exactly the tokens the model was sampled from.
type Template struct {
	tokenizer *tokenizer.Tokenizer
	chat      *chattemplate.Template
	// EndOfTurn are the ids that end an assistant turn (the engine's
	// end-of-sequence ids, e.g. Qwen's <|im_end|>).
	EndOfTurn []int

	spellings spellings // built on first use
}

// Sequence is one tokenised stretch of a conversation: the tokens a model
// reads, which of them are trained, and the log-probabilities the sampler gave
// them (NaN where unknown). All three have one entry per token.
type Sequence struct {
	IDs      []int
	Trained  []bool
	Logprobs []float64
}

// TrainedTokens is the number of trained tokens.
func (s *Sequence) TrainedTokens() int {
	n := 0
	for _, t := range s.Trained {
		if t {
			n++
		}
	}
	return n
}

func (s *Sequence) add(ids []int, trained bool, logprobs []float64) {
	s.IDs = append(s.IDs, ids...)
	for i := range ids {
		s.Trained = append(s.Trained, trained)
		lp := math.NaN()
		if logprobs != nil {
			lp = logprobs[i]
		}
		s.Logprobs = append(s.Logprobs, lp)
	}
}

// ErrConversation is wrapped by every error about a job's data or config that
// cannot be trained (a conversation the template cannot render, an unknown
// token, a bad schedule); it wraps training.ErrUntrainable, so such a job
// fails at once instead of being retried.
var ErrConversation = training.ErrUntrainable

// turn is one entry of a conversation: a message as the template sees it,
// and for a sampled choice the tokens and log-probabilities the sampler
// reported (nil when it reported none).
type turn struct {
	msg      chattemplate.Message
	choice   bool
	sampled  []int
	logprobs []float64
}

// Trajectory tokenises one history of an RL trajectory (its
// messages_and_choices and tools). Only the choices (entries with a
// "message") are trained; plain messages, assistant ones included, are
// context. A choice's tokens are the sampled ones, read back from its
// logprobs (named by id, or by their bytes: see sampledTokens), and keep
// their log-probabilities; a choice without logprobs is rendered by the
// template like a written reply and gets unknown log-probabilities.
func (t *Template) Trajectory(messagesAndChoices, tools []json.RawMessage) ([]Sequence, error) {
	turns, err := t.turns(messagesAndChoices)
	if err != nil {
		return nil, err
	}
	return t.sequences(turns, tools, func(tr turn) bool { return tr.choice })
}

// Conversation tokenises a supervised example: every assistant message (or
// choice) is trained, each as the template writes it up to and including the
// end of its turn.
func (t *Template) Conversation(messages, tools []json.RawMessage) ([]Sequence, error) {
	turns, err := t.turns(messages)
	if err != nil {
		return nil, err
	}
	for i := range turns {
		turns[i].sampled, turns[i].logprobs = nil, nil
	}
	return t.sequences(turns, tools, func(tr turn) bool { return tr.msg.Role == "assistant" })
}

// sequences renders the conversation turn by turn. Each trained turn follows
// the prompt the engine would have rendered for it; consecutive turns share a
// sequence while each prompt extends the tokens before it, and start a new one
// when the template rewrites history (Qwen3 drops earlier reasoning, for
// example), so that every trained token is scored after exactly the context it
// was produced in.
func (t *Template) sequences(turns []turn, rawTools []json.RawMessage, trained func(turn) bool) ([]Sequence, error) {
	tools, err := chattemplate.WireTools(rawTools)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrConversation, err)
	}
	msgs := make([]chattemplate.Message, len(turns))
	for i, tr := range turns {
		msgs[i] = tr.msg
	}
	var out []Sequence
	var cur Sequence
	flush := func() {
		if cur.TrainedTokens() > 0 {
			out = append(out, cur)
		}
		cur = Sequence{}
	}
	for k, tr := range turns {
		if !trained(tr) {
			continue
		}
		prompt, err := t.render(msgs[:k], tools, true)
		if err != nil {
			return nil, err
		}
		var context, turnIDs []int
		var turnTrained []bool
		if tr.sampled != nil {
			context = t.tokenizer.Encode(prompt, false)
			turnIDs = tr.sampled
		} else {
			full, err := t.render(msgs[:k+1], tools, false)
			if err != nil {
				return nil, err
			}
			if !strings.HasPrefix(full, prompt) {
				return nil, fmt.Errorf("%w: the chat template writes message %d otherwise than after its generation prompt", ErrConversation, k)
			}
			context = t.tokenizer.Encode(prompt, false)
			turnIDs = t.tokenizer.Encode(full[len(prompt):], false)
			turnTrained = t.throughEndOfTurn(turnIDs)
		}
		if !slices.Equal(cur.IDs, context[:min(len(cur.IDs), len(context))]) || len(cur.IDs) > len(context) {
			flush()
		}
		cur.add(context[len(cur.IDs):], false, nil)
		if turnTrained == nil {
			cur.add(turnIDs, true, tr.logprobs)
			continue
		}
		for i, id := range turnIDs {
			cur.add([]int{id}, turnTrained[i], nil)
		}
	}
	flush()
	return out, nil
}

// throughEndOfTurn marks the tokens of a written turn up to and including
// its first end-of-turn token; what the template adds after it (a newline) is
// context.
func (t *Template) throughEndOfTurn(ids []int) []bool {
	marks := make([]bool, len(ids))
	for i, id := range ids {
		marks[i] = true
		if slices.Contains(t.EndOfTurn, id) {
			break
		}
	}
	return marks
}

func (t *Template) render(msgs []chattemplate.Message, tools []json.RawMessage, generationPrompt bool) (string, error) {
	text, err := t.chat.Render(chattemplate.Input{Messages: msgs, Tools: tools, AddGenerationPrompt: generationPrompt})
	if err != nil {
		return "", fmt.Errorf("%w: chat template: %v", ErrConversation, err)
	}
	return text, nil
}

// wireChoice is a chat completion choice as a trajectory stores it.
type wireChoice struct {
	Message  *chattemplate.WireMessage `json:"message"`
	Logprobs *struct {
		Content []wireLogprob `json:"content"`
		Refusal []wireLogprob `json:"refusal"`
	} `json:"logprobs"`
}

// turns reads messages_and_choices: an entry with "message" is a choice,
// one with "role" a plain message.
func (t *Template) turns(items []json.RawMessage) ([]turn, error) {
	out := make([]turn, len(items))
	for i, raw := range items {
		var c wireChoice
		if err := json.Unmarshal(raw, &c); err != nil {
			return nil, fmt.Errorf("%w: entry %d: %v", ErrConversation, i, err)
		}
		wire := c.Message
		if wire == nil {
			wire = &chattemplate.WireMessage{}
			if err := json.Unmarshal(raw, wire); err != nil {
				return nil, fmt.Errorf("%w: entry %d: %v", ErrConversation, i, err)
			}
		} else {
			out[i].choice = true
			if wire.Role == "" {
				wire.Role = "assistant"
			}
		}
		msg, err := wire.Message()
		if err != nil {
			return nil, fmt.Errorf("%w: entry %d: %v", ErrConversation, i, err)
		}
		if out[i].choice && msg.NullContent && msg.Parts == nil {
			// A choice that only called tools: its content is "" in later
			// prompts, as the client replays it.
			msg.NullContent = false
		}
		out[i].msg = msg
		if c.Logprobs == nil {
			continue
		}
		entries := c.Logprobs.Content
		if len(entries) == 0 {
			entries = c.Logprobs.Refusal
		}
		if len(entries) == 0 {
			continue
		}
		ids, logprobs, err := t.sampledTokens(entries, msg)
		if err != nil {
			return nil, fmt.Errorf("%w: entry %d, %v", ErrConversation, i, err)
		}
		out[i].sampled, out[i].logprobs = ids, logprobs
	}
	return out, nil
}
