package constrain

// jsonBuilder builds the pieces of JSON text every JSON constraint shares:
// white space, strings, numbers and values of any shape.
type jsonBuilder struct {
	b   *builder
	cfg Config

	charRule  int32 // one character of a string's content
	valueRule int32 // any JSON object or array
}

func newJSONBuilder(b *builder, cfg Config) *jsonBuilder {
	return &jsonBuilder{b: b, cfg: cfg, charRule: -1, valueRule: -1}
}

// stringChars are the characters a JSON string holds unescaped: all but
// the quote, the backslash and control characters.
var stringChars = []rune{0x20, 0x21, 0x23, 0x5B, 0x5D, 0x10FFFF}

// ws is the white space allowed between two JSON tokens: up to
// Config.MaxWhitespace bytes of space, tab and newline. The bound keeps a
// model that favours white space from wandering forever.
func (j *jsonBuilder) ws() frag {
	return j.b.repeat(0, j.cfg.MaxWhitespace, func() frag {
		return j.b.runeClass([]rune{'\t', '\n', ' ', ' '})
	})
}

// char is one character of string content, escaped or not. Escapes
// \uXXXX never name a surrogate, so that every escape is one character
// whichever way a reader counts.
func (j *jsonBuilder) char() frag {
	b := j.b
	hex := func() frag { return b.runeClass([]rune{'0', '9', 'A', 'F', 'a', 'f'}) }
	unicodeEscape := b.seq(b.literal("u"), b.alt(
		b.seq(b.runeClass([]rune{'0', '9', 'A', 'C', 'E', 'F', 'a', 'c', 'e', 'f'}), hex(), hex(), hex()),
		b.seq(b.runeClass([]rune{'D', 'D', 'd', 'd'}), b.runeClass([]rune{'0', '7'}), hex(), hex()),
	))
	escape := b.seq(b.literal(`\`), b.alt(b.runeClass([]rune{'"', '"', '/', '/', '\\', '\\', 'b', 'b', 'f', 'f', 'n', 'n', 'r', 'r', 't', 't'}), unicodeEscape))
	return b.alt(b.runeClass(stringChars), escape)
}

func (j *jsonBuilder) callChar() frag {
	if j.charRule < 0 {
		j.charRule = j.b.newRule("json-char")
		j.b.define(j.charRule, j.char())
	}
	return j.b.call(j.charRule)
}

// str is a JSON string of between lo and hi characters (hi < 0: any).
func (j *jsonBuilder) str(lo, hi int) frag {
	b := j.b
	if hi < 0 && j.cfg.MaxStringLength > 0 {
		hi = max(lo, j.cfg.MaxStringLength)
	}
	var body frag
	if lo == 0 && hi < 0 {
		body = b.star(j.char())
	} else {
		body = b.repeat(lo, hi, j.callChar)
	}
	return b.seq(b.literal(`"`), body, b.literal(`"`))
}

// integer is a JSON integer without a fraction or exponent.
func (j *jsonBuilder) integer() frag {
	b := j.b
	digits := b.repeat(0, j.cfg.IntegerDigits-1, func() frag { return b.byteRange('0', '9') })
	return b.seq(b.opt(b.literal("-")), b.alt(b.literal("0"), b.seq(b.byteRange('1', '9'), digits)))
}

// number is any JSON number, its digits bounded.
func (j *jsonBuilder) number() frag {
	b := j.b
	digit := func() frag { return b.byteRange('0', '9') }
	exponent := b.seq(b.runeClass([]rune{'E', 'E', 'e', 'e'}), b.opt(b.runeClass([]rune{'+', '+', '-', '-'})), b.repeat(1, j.cfg.ExponentDigits, digit))
	return b.seq(j.integer(), b.opt(j.fraction()), b.opt(exponent))
}

// fraction is a number's decimal point and fraction digits.
func (j *jsonBuilder) fraction() frag {
	b := j.b
	return b.seq(b.literal("."), b.repeat(1, j.cfg.FractionDigits, func() frag { return b.byteRange('0', '9') }))
}

// anyValue is any JSON value, objects and arrays nested up to
// Config.MaxNesting; scalars are always offered, so that the bound never
// leaves a value with nothing to be.
func (j *jsonBuilder) anyValue() frag {
	b := j.b
	if j.valueRule < 0 {
		j.valueRule = b.newRule("json-container")
		b.g.rules[j.valueRule].recursive = true
		b.define(j.valueRule, b.alt(j.anyObject(), j.anyArray()))
	}
	return b.alt(b.call(j.valueRule), j.str(0, -1), j.number(),
		b.literal("true"), b.literal("false"), b.literal("null"))
}

// anyObject is a JSON object with any members.
func (j *jsonBuilder) anyObject() frag {
	b := j.b
	member := func() frag {
		return b.seq(j.str(0, -1), j.ws(), b.literal(":"), j.ws(), j.anyValue())
	}
	more := b.star(b.seq(j.ws(), b.literal(","), j.ws(), member()))
	return j.brackets("{", "}", b.seq(member(), more), true)
}

// anyArray is a JSON array of any values.
func (j *jsonBuilder) anyArray() frag {
	return j.array(j.anyValue, 0, -1)
}

// array is a JSON array of between lo and hi items (hi < 0: any number)
// that item builds.
func (j *jsonBuilder) array(item func() frag, lo, hi int) frag {
	b := j.b
	if hi == 0 {
		return j.emptyBrackets("[", "]")
	}
	next := func() frag { return b.seq(j.ws(), b.literal(","), j.ws(), item()) }
	restHi := hi - 1
	if hi < 0 {
		restHi = -1
	}
	return j.brackets("[", "]", b.seq(item(), b.repeat(max(lo-1, 0), restHi, next)), lo == 0)
}

// brackets is body between open and close with white space inside each
// bracket, body left out when mayBeEmpty: "[", white space, then body and
// white space, then "]". The gap of an empty pair is one gap, bounded
// once, not the two that would meet around a missing body.
func (j *jsonBuilder) brackets(open, close string, body frag, mayBeEmpty bool) frag {
	b := j.b
	inner := b.seq(body, j.ws())
	if mayBeEmpty {
		inner = b.opt(inner)
	}
	return b.seq(b.literal(open), j.ws(), inner, b.literal(close))
}

// emptyBrackets is an empty pair: open, white space, close.
func (j *jsonBuilder) emptyBrackets(open, close string) frag {
	return j.b.seq(j.b.literal(open), j.ws(), j.b.literal(close))
}
