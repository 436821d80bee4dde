package trace

import (
	"errors"
	"maps"
	"slices"
	"strings"

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
	// SortCost orders by the priced cost of the call's own usage, the total
	// of summary.weave.costs (priced with the project's prices and the
	// built-in ones, as IncludeCosts prices it); calls with nothing priced
	// have none.
	SortCost = "summary.weave.costs"
	// SortReactions orders by the number of reactions given to the call
	// (feedback of type wandb.reaction.1 or trace.reaction.1 on its ref, in
	// either scheme); a call without any has 0.
	SortReactions = "feedback.reactions"
)

// reactionCount counts the reactions of a call: feedback rows of its own
// project whose trace_ref is the call's ref in either scheme, read through
// the feedback table's (project_id, trace_ref) index. The project is bound
// (the query's own), not taken from c, so that Citus sees that the subquery
// reads one shard wherever the query places it.
const reactionCount = `(SELECT count(*) FROM feedback AS f WHERE f.project_id = ?
	AND f.trace_ref IN ('weave:///' || c.project_id || '/call/' || c.id, 'trace:///' || c.project_id || '/call/' || c.id)
	AND f.feedback_type IN ('wandb.reaction.1', 'trace.reaction.1'))`

// sortKey is one ORDER BY term of a sort field. Derived fields put the calls
// that have no value last in either direction (a stored column keeps the
// database's own order of NULLs).
type sortKey struct {
	expr      database.Expr
	nullsLast bool
	// numeric keys page by cursor: their value, a number, is read with each
	// call and bound back as it was read (CallsCursor.Key).
	numeric bool
}

// sortKeyOf resolves a sort field: a stored column, a derived field, or
// "inputs.<member>[.<member>…]" / "output[.<member>…]", the JSON value at
// that path (compared as the database compares JSON values), of the calls of
// projectID. book prices SortCost; it is nil for every other field.
func (s *Store) sortKeyOf(field, projectID string, book *priceBook) (sortKey, error) {
	if col, ok := sortColumns[field]; ok {
		return sortKey{expr: database.Expr{SQL: col}}, nil
	}
	switch field {
	case SortLatency:
		return sortKey{expr: database.Expr{SQL: s.dialect.Elapsed("c.started_at", "c.ended_at")}, nullsLast: true, numeric: true}, nil
	case SortStatus:
		return sortKey{expr: s.statusExpr(), nullsLast: true}, nil
	case SortTotalTokens:
		return sortKey{expr: database.Expr{SQL: s.dialect.JSONObjectArraySum("c.usage", usageTotal)}, nullsLast: true, numeric: true}, nil
	case SortCost:
		return sortKey{expr: book.costSQL(s.dialect), nullsLast: true, numeric: true}, nil
	case SortReactions:
		return sortKey{expr: database.Expr{SQL: reactionCount, Args: []any{projectID}}, numeric: true}, nil
	}
	root, path, err := SplitField(field)
	if err != nil {
		return sortKey{}, weft.WithFields(ErrInvalidQuery, map[string]any{"param": "sort_by"},
			"cannot sort by %q (%v); sortable fields: %v, %s, %s, %s, %s, %s, inputs.<member> and output[.<member>]",
			clip(field), err, slices.Sorted(maps.Keys(sortColumns)), SortLatency, SortStatus, SortTotalTokens, SortCost, SortReactions)
	}
	column := map[string]string{"inputs": "c.inputs", "output": "c.output"}[root]
	return sortKey{expr: s.dialect.JSONValue(s.dialect.JSONDoc(column), path), nullsLast: true}, nil
}

// SplitField splits a field of a call's JSON, "inputs.<member>[.<member>…]"
// or "output[.<member>…]", into its root ("inputs" or "output") and its
// member names, a path that passes [database.CheckMemberPath]. Any other
// field is an error saying why.
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
	if err := database.CheckMemberPath(path); err != nil {
		return "", nil, err
	}
	return root, path, nil
}
