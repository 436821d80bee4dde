package trace

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/database"
)

// sortColumns are the stored columns calls may be sorted by.
var sortColumns = map[string]string{
	"id": "c.id", "trace_id": "c.trace_id", "parent_id": "c.parent_id", "op_name": "c.op_name",
	"display_name": "c.display_name", "started_at": "c.started_at", "ended_at": "c.ended_at",
	"thread_id": "c.thread_id", "turn_id": "c.turn_id", "pf_user_id": "c.pf_user_id", "wb_user_id": "c.pf_user_id",
}

// Sort fields derived from a call rather than stored in a column of their own.
const (
	// SortLatency orders by ended_at - started_at; running calls have none.
	SortLatency = "summary.weave.latency_ms"
	// SortStatus orders by the status name (StatusDescendantError,
	// StatusError, StatusRunning, StatusSuccess sort in that order).
	SortStatus = "summary.weave.status"
	// SortTotalTokens orders by the call's own total tokens over its models.
	SortTotalTokens = "summary.usage.total_tokens"
)

// maxSortPathDepth bounds the members of an inputs.* or output.* sort field.
const maxSortPathDepth = 16

// sortKey is one ORDER BY term of a sort field. Derived fields put the calls
// that have no value last in either direction (a stored column keeps the
// database's own order of NULLs).
type sortKey struct {
	expr      database.Expr
	nullsLast bool
}

// sortKeyOf resolves a sort field: a stored column, a derived field, or
// "inputs.<member>[.<member>…]" / "output[.<member>…]", the JSON value at
// that path (compared as the database compares JSON values).
func (s *Store) sortKeyOf(field string) (sortKey, error) {
	if col, ok := sortColumns[field]; ok {
		return sortKey{expr: database.Expr{SQL: col}}, nil
	}
	switch field {
	case SortLatency:
		return sortKey{expr: database.Expr{SQL: s.dialect.Elapsed("c.started_at", "c.ended_at")}, nullsLast: true}, nil
	case SortStatus:
		return sortKey{expr: s.statusExpr(), nullsLast: true}, nil
	case SortTotalTokens:
		return sortKey{expr: database.Expr{SQL: s.dialect.JSONObjectArraySum("c.usage", 3)}, nullsLast: true}, nil
	}
	root, path, err := SplitField(field)
	if err != nil {
		return sortKey{}, weft.WithFields(ErrInvalidQuery, map[string]any{"param": "sort_by"},
			"cannot sort by %q (%v); sortable fields: %v, %s, %s, %s, inputs.<member> and output[.<member>]",
			clip(field), err, slices.Sorted(maps.Keys(sortColumns)), SortLatency, SortStatus, SortTotalTokens)
	}
	column := map[string]string{"inputs": "c.inputs", "output": "c.output"}[root]
	return sortKey{expr: s.dialect.JSONValue(s.dialect.JSONDoc(column), path), nullsLast: true}, nil
}

// SplitField splits a field of a call's JSON, "inputs.<member>[.<member>…]"
// or "output[.<member>…]", into its root ("inputs" or "output") and its
// member names. A member is not empty, is UTF-8 and holds no quote,
// backslash or NUL;
// at most 16 of them. Any other field is an error saying why.
func SplitField(field string) (root string, path []string, err error) {
	root, rest, dotted := strings.Cut(field, ".")
	switch {
	case root != "inputs" && root != "output":
		return "", nil, errors.New("a field is inputs.<member> or output[.<member>]")
	case root == "inputs" && rest == "":
		return "", nil, errors.New("inputs needs a member")
	case dotted:
		path = strings.Split(rest, ".")
	}
	if len(path) > maxSortPathDepth {
		return "", nil, fmt.Errorf("deeper than %d members", maxSortPathDepth)
	}
	for _, member := range path {
		if member == "" || strings.ContainsAny(member, "\"\\\x00") || !utf8.ValidString(member) {
			return "", nil, errors.New("a member name is not empty, is UTF-8 and holds no quote, backslash or NUL")
		}
	}
	return root, path, nil
}
