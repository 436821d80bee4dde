package feedback

import (
	_ "embed"
	"strings"
)

// emojiTableText maps each emoji (without U+FE0F) to its ":alias:", one
// "<emoji>\t<alias>" a line. It is generated from Unicode's emoji-test.txt by
// ./internal/emojigen, whose doc says where that file comes from.
//
//go:embed emoji_table.txt
var emojiTableText string

// emojiAliases answers which string is exactly one emoji and what its alias is.
type emojiAliases map[string]string

func loadEmojiAliases() emojiAliases {
	aliases := make(emojiAliases, 4096)
	for line := range strings.SplitSeq(emojiTableText, "\n") {
		emoji, alias, ok := strings.Cut(line, "\t")
		if ok && !strings.HasPrefix(line, "#") {
			aliases[emoji] = alias
		}
	}
	return aliases
}

// alias returns the alias of s when s is exactly one emoji, in any of its
// qualified or unqualified spellings.
func (a emojiAliases) alias(s string) (string, bool) {
	alias, ok := a[strings.ReplaceAll(s, "\uFE0F", "")]
	return alias, ok
}

// detone removes skin-tone modifiers (U+1F3FB…U+1F3FF).
func detone(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 0x1F3FB && r <= 0x1F3FF {
			return -1
		}
		return r
	}, s)
}
