// Package constrain makes a model's output follow a constraint — one of a
// list of choices, a regular expression, a JSON Schema, any JSON object, a
// grammar — by masking, at every decoding step, the tokens that could not
// continue a valid output. Nothing is generated and then checked: every
// output the mask lets through is valid by construction.
//
// # How
//
// A constraint compiles to a byte-level grammar: rules whose automata
// consume bytes and call each other (so that recursive JSON Schemas work).
// It runs as a deterministic automaton built lazily over sets of grammar
// positions; a state's transitions are computed on first use and kept,
// within a budget (Config.MaxDFAStates): past it the tables are dropped
// and rebuilt, each matcher walking its tokens again. The
// Vocabulary arranges a tokenizer's tokens, as the raw bytes they write,
// in a trie once; the allowed tokens of a state are found by one walk of
// that trie, cutting every subtree whose prefix the automaton refuses, and
// the resulting mask is kept per state, so that a state seen again (the
// middle of a string, the next array item) costs a copy. Compiled
// constraints are cached by their canonical text.
//
// # Bounds
//
// What one compile may cost is bounded, since a constraint is request
// text: its automaton within Config.MaxStates, a hard stop taken where
// states are made (and a repeat whose copies cannot fit stops after its
// second copy, so a schema asking for millions of states is refused in
// milliseconds), its time within Config.MaxCompileTime, and the compiles
// running at once to Config.MaxCompiles.
//
// # JSON output
//
// Output follows the schema's order: properties as written, every required
// one present, optional ones possibly left out. With properties declared
// and additionalProperties unset, no other member is generated (the strict
// reading serving stacks use); an undeclared member's name is printable
// ASCII without escapes and never one of the declared names, so no output
// has a duplicate key. White space between tokens is bounded
// (Config.MaxWhitespace, or a Spec's lower MaxWhitespace; an empty object
// or array has one gap), numbers' digits too (integers are written without
// a fraction), and \u escapes never name surrogates. A JSON Schema keyword
// the compiler cannot enforce is an error naming it (ErrUnsupported), never
// silently dropped; annotations and keywords outside the specification are
// ignored, as validators ignore them. anyOf is compiled as a choice between
// branches, and so is oneOf when its branches are shown disjoint (by type,
// const or enum values, or a discriminating required property; otherwise
// it is refused, since a value matching two branches would be invalid);
// allOf by merging its schemas (see mergeAllOf).
//
// Integer ranges are exact: the digits run through an automaton of the
// range, and multipleOf through a remainder beside it. Number ranges are
// sound: integers in the range, and fractions only after an integer part
// whose whole unit interval lies in the range (no exponent). String
// formats (date-time, date, time, email, uuid, ipv4, ipv6, uri, hostname)
// are regular languages every validator accepts; a pattern or format with
// minLength or maxLength runs beside a count of characters.
//
// # Grammars
//
// Grammars are EBNF as GBNF and Lark write it (see compileEBNF): rules,
// alternatives, repetition, strings, character classes and regular
// expressions; Lark directives and rule modifiers are refused by name.
//
// # Using it from a decoder
//
//	vocab := constrain.NewVocabulary(tok, eosIDs, n)   // once per model
//	compiler := constrain.NewCompiler(vocab, constrain.Config{})
//	c, err := compiler.Compile(constrain.Spec{Kind: constrain.KindJSONSchema, Schema: schema})
//	m := c.NewMatcher()                                 // per sequence
//	mask := make([]uint64, vocab.MaskWords())
//	for {
//		m.Mask(mask)                                    // before sampling
//		id := sampler.NextMasked(logits, history, mask)
//		m.Advance(id)
//	}
package constrain
