// Package callquery reads Weave's calls query language: the {"$expr": …}
// that /calls/stream_query and /calls/query_stats take in their "query"
// member, and the field names of sort_by. It parses and checks; the trace
// store compiles the result to SQL, and the same semantics, stated here, are
// what every database answers.
//
// # Expressions
//
// Operations: $and and $or (a non-empty list), $not (a list of one), $eq,
// $gt, $gte, $lt, $lte (a list of two), $in ([operand, [operands…]]) and
// $contains ({"input", "substr", "case_insensitive"}). Operands: an
// operation, {"$literal": string, number, true, false or null},
// {"$getField": field} and {"$convert": {"input": operand, "to": "int",
// "double", "bool", "string" or "exists"}}. Anything else — another operator,
// a literal object or list, an unknown field, a malformed path — is an error
// that names it; nothing is silently ignored.
//
// # Fields
//
//   - Columns: id, project_id, trace_id, parent_id, thread_id, turn_id,
//     op_name, display_name, exception, wb_user_id and wb_run_id (text),
//     wb_run_step and wb_run_step_end (integers), started_at, ended_at and
//     deleted_at (times). The pf_ spellings of the user and run fields are the
//     same columns.
//   - Dynamic fields: inputs, output, attributes and summary, followed by a
//     dotted path. "\." is a dot inside a member name; a segment of digits
//     only is an array index and any other segment a member name.
//   - Derived fields: summary.weave.status, summary.weave.latency_ms and
//     summary.weave.trace_name, as the call's summary shows them.
//   - Feedback fields: feedback.[<type>].payload[.<path>],
//     feedback.[<type>].runnable_ref and feedback.[<type>].trigger_ref, over
//     the feedback rows of the call whose type is <type> ([*]: any type).
//
// # Values and comparisons
//
// A dynamic field reads as text, as Weave's JSON_VALUE does: a string as
// itself, a number as the client wrote it, true and false as "true" and
// "false", an object or array as its JSON text without insignificant
// whitespace, and a missing value or null as "" (so {"$eq": [field, null]} is
// false for a dynamic field). Compared with an integer, double or boolean
// literal, a dynamic field is first converted as $convert would (Weave's
// inferred cast); compared with a string it is compared as text. Text compares
// by code point; numbers by value; times as instants, a literal compared with
// a time column being read as Unix seconds (a number) or an ISO 8601 date or
// date-time (a string). Comparing values of different kinds, or with null
// other than by $eq, gives null.
//
// $convert: to "int", text of optional sign and digits within the int64 range
// (else null); to "double", text that is a JSON number within the double
// range; to "bool", "true" is 1, "false" 0 and an integer text from 0 to 255
// itself; to "string", integers and booleans as their text; "exists" is true
// when a dynamic field has a non-null value at its path and, for any other
// operand, when the operand is not null. Numbers convert through their text.
//
// Logic is three-valued: a comparison with a null operand is null, $not of
// null is null, and a call matches only when the whole expression is true.
// $contains is true or false: false when either side is not text.
// case_insensitive folds ASCII letters only.
//
// A feedback field has one value per feedback row of its type on the call
// ("" when there is none): an operation over it is true when it is true for
// any row, null when it is null for some row and true for none, and false
// otherwise. {"$eq": [feedback field, null]} is true when the call has no
// feedback row of that type.
//
// # Sorting
//
// sort_by takes the same fields. A dynamic or feedback field sorts calls that
// have a value first (in both directions), then by the value as a double
// (numbers first), then by its text; a feedback field sorts by its newest
// row.
package callquery
