package chat

import (
	"errors"
	"testing"

	"github.com/weftlabs/weft"
)

// A text completion batch of more prompts, or asking for more tokens
// (prompts × max(n, best_of) × max_tokens, vLLM's 16 when left out), than
// the limits allow is a 400 naming its param; one within them passes.
func TestTextCompletionLimits(t *testing.T) {
	t.Parallel()
	limits := TextLimits{MaxPrompts: 3, MaxTokens: 100}
	for _, tc := range []struct{ body, param string }{
		{`{"model":"m","prompt":["a","b","c"],"max_tokens":33}`, ""},
		{`{"model":"m","prompt":[[1],[2],[3]],"n":2,"max_tokens":16}`, ""},
		{`{"model":"m","prompt":"a","best_of":6}`, ""},
		{`{"model":"m","prompt":["a","b","c","d"],"max_tokens":1}`, "prompt"},
		{`{"model":"m","prompt":[[1],[2],[3],[4]],"max_tokens":1}`, "prompt"},
		{`{"model":"m","prompt":["a","b","c"],"max_tokens":34}`, "max_tokens"},
		{`{"model":"m","prompt":"a","n":2,"best_of":7}`, "max_tokens"},
		{`{"model":"m","prompt":[1,2,3],"max_tokens":101}`, "max_tokens"},
		{`{"model":"m","prompt":"a","n":16384,"max_tokens":9223372036854775807}`, "max_tokens"},
	} {
		_, err := ParseTextRequest([]byte(tc.body), ModelInfo{}, limits)
		switch {
		case tc.param == "" && err != nil:
			t.Errorf("%s: %v", tc.body, err)
		case tc.param != "" && (!errors.Is(err, ErrBadRequest) || weft.ErrorFields(err)["param"] != tc.param):
			t.Errorf("%s: %v, want a 400 on %s", tc.body, err, tc.param)
		}
	}
}
