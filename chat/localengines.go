package chat

import "github.com/weftlabs/weft/internal/llm/engine"

// LocalEngines returns the engines of the models the gateway runs in-process,
// by model name: what the built-in trainer needs to train adapters of them
// (their directories, tokenizers and chat templates). The gateway owns them;
// they stay open until Close.
func (s *Gateway) LocalEngines() map[string]*engine.Engine {
	out := make(map[string]*engine.Engine, len(s.local.models))
	for name, lm := range s.local.models {
		out[name] = lm.engine
	}
	return out
}
