package localtrainer

import (
	"fmt"

	"github.com/weftlabs/weft/internal/llm/engine"
	"github.com/weftlabs/weft/internal/llm/tokenizer"
)

// Engine is what the trainer reads of a model served in-process
// (chat/inprocess.Server.Models has it): where its files are, its context
// length and the ids that end its turns.
type Engine interface {
	Dir() string
	EOSTokenIDs() []int
	MaxModelLen() int
}

// Served is the base model an engine serves, trained on the same files and
// rendered with the same tokenizer, chat template and end-of-turn ids, up
// to the engine's context length. The tokenizer and template are read
// from the model's files again, as the engine read them: the trainer keeps
// a copy of its own, as it does of the weights (see [Trainer]).
func Served(e Engine) (BaseModel, error) {
	tmpl, err := LoadTemplate(e.Dir(), e.EOSTokenIDs())
	if err != nil {
		return BaseModel{}, err
	}
	return BaseModel{Dir: e.Dir(), MaxLen: e.MaxModelLen(), Template: tmpl}, nil
}

// LoadTemplate reads the tokenizer and chat template of a Hugging Face
// model directory as the engine reads them; endOfTurn are the ids that
// end an assistant turn (the engine's end-of-sequence ids).
func LoadTemplate(dir string, endOfTurn []int) (*Template, error) {
	tok, err := tokenizer.Load(dir)
	if err != nil {
		return nil, fmt.Errorf("localtrainer: %s: %w", dir, err)
	}
	chat, err := engine.LoadChatTemplate(dir)
	if err != nil {
		return nil, fmt.Errorf("localtrainer: %w", err)
	}
	return &Template{tokenizer: tok, chat: chat, EndOfTurn: endOfTurn}, nil
}
