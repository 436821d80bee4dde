// Package jinja is a Jinja template engine for chat templates: a lexer,
// parser and evaluator that render Hugging Face chat templates the way
// Python's Jinja2 does inside transformers (an immutable sandbox with
// trim_blocks and lstrip_blocks, the loopcontrols extension, and the
// raise_exception, strftime_now and Python-style tojson that transformers
// adds).
//
// What it follows from Python rather than from JavaScript ports:
//
//   - values print as Python's str(): True, None, 1.0, ['a', 1], {'k': 'v'};
//   - a for-loop iteration, a macro call and a with block have scopes of their
//     own (set inside them is gone after); namespace() attributes are the only
//     state that outlives them;
//   - undefined values are falsy, print as "" and iterate as empty, and fail
//     when used otherwise (an attribute of an undefined value, arithmetic);
//   - strings, lists and dicts have Python's non-mutating methods (strip with
//     characters, split with maxsplit, startswith with tuples, format, get,
//     items, ...); list.append and other mutations fail as in the sandbox;
//   - tojson is json.dumps(ensure_ascii=False): ", " and ": " separators,
//     keys in their order, no HTML escaping, floats as Python writes them;
//   - equality and ordering are Python's (1 == 1.0 == True, chained
//     comparisons, list and tuple differ).
//
// Statements: if/elif/else, for (tuple targets, loop filter, else, loop.*),
// set (tuples, namespace attributes, blocks with filters), macro (defaults,
// varargs, kwargs, caller), call, filter, with, raw, break, continue,
// generation. Not supported: include, import, extends, block and recursive
// loops (chat templates have no loader).
//
// Limits bound each render (output size, steps, macro depth, list sizes,
// value nesting) so that a hostile template ends with an error wrapping
// ErrLimit; parsing bounds nesting too. Errors name their line and column.
package jinja
