package localtrainer

import (
	"github.com/weftlabs/weft/internal/llm/chattemplate"
	"github.com/weftlabs/weft/internal/llm/tokenizer"
)

// Engine is what the trainer reads of a model an engine serves (internal/llm/engine's
// Engine has it): where its files are and how it renders prompts.
type Engine interface {
	Dir() string
	Tokenizer() *tokenizer.Tokenizer
	ChatTemplate() *chattemplate.Template
	EOSTokenIDs() []int
	MaxModelLen() int
}

// Served is the base model an engine serves, trained on the same files and
// rendered with the same tokenizer, template and end-of-turn ids, up to the
// engine's context length.
func Served(e Engine) BaseModel {
	return BaseModel{Dir: e.Dir(), MaxLen: e.MaxModelLen(),
		Template: &Template{Tokenizer: e.Tokenizer(), Chat: e.ChatTemplate(), EndOfTurn: e.EOSTokenIDs()}}
}
