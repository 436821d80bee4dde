package trace

import (
	"errors"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/database"
	"github.com/weftlabs/weft/trace/callquery"
)

// nonNullColumns are the columns every visible call has: sorted by them, no
// NULLs need placing (and the indexes that read them in order serve both
// directions).
var nonNullColumns = map[string]bool{"id": true, "project_id": true, "trace_id": true, "op_name": true, "started_at": true}

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

// sortKey is how a sort field orders calls: one expression, with the calls
// that have no value last in either direction when nullsLast is set, or, for
// the fields Weave orders in steps, several terms.
type sortKey struct {
	expr      database.Expr
	nullsLast bool
	// numeric keys page by cursor: their value, a number, is read with each
	// call and bound back as it was read (CallsCursor.Key).
	numeric bool
	// terms, when set, order instead of expr: each in the sort's direction
	// unless it has one of its own.
	terms []sortTerm
}

// sortTerm is one ORDER BY term of a sortKey of several.
type sortTerm struct {
	expr      database.Expr
	direction string // "" for the sort's
	nullsLast bool
}

// sortKeyOf resolves a sort field of the calls of projectID: weft's own
// (SortLatency, SortStatus, SortTotalTokens, SortCost, SortReactions), or any
// field of the query language (package callquery), ordered as Weave orders
// it. book prices SortCost; it is nil for every other field. Fields read
// through expand (the request's expand_columns) are refused.
func (s *Store) sortKeyOf(field, projectID string, book *priceBook, expand []string) (sortKey, error) {
	switch field {
	case SortLatency:
		return sortKey{expr: database.Expr{SQL: s.dialect.Elapsed("c.started_at", "c.ended_at")}, nullsLast: true, numeric: true}, nil
	case SortStatus:
		return sortKey{expr: statusExpr(s.dialect), nullsLast: true}, nil
	case SortTotalTokens:
		return sortKey{expr: database.Expr{SQL: s.dialect.JSONObjectArraySum("c.usage", usageTotal)}, nullsLast: true, numeric: true}, nil
	case SortCost:
		return sortKey{expr: book.costSQL(s.dialect), nullsLast: true, numeric: true}, nil
	case SortReactions:
		return sortKey{expr: database.Expr{SQL: reactionCount, Args: []any{projectID}}, numeric: true}, nil
	}
	f, err := callquery.ParseField(field)
	if err != nil {
		return sortKey{}, weft.WithFields(ErrInvalidQuery, map[string]any{"param": "sort_by"}, "cannot sort by %q: %v", clip(field), err)
	}
	c := &queryCompiler{dialect: s.dialect, projectID: projectID, expand: expand}
	if err := c.checkExpanded(f.Name); err != nil {
		return sortKey{}, weft.WithFields(ErrInvalidQuery, map[string]any{"param": "sort_by"}, "%v", err)
	}
	switch f.Kind {
	case callquery.Column:
		return sortKey{expr: database.Expr{SQL: "c." + f.Column}, nullsLast: !nonNullColumns[f.Column]}, nil
	case callquery.Derived:
		expr, _ := c.derived(f.Derived)
		if f.Derived == callquery.TraceName {
			expr.SQL = s.dialect.ByteOrder(expr.SQL)
		}
		return sortKey{expr: expr, nullsLast: true}, nil
	case callquery.Dynamic:
		doc := s.dialect.JSONTextDoc("c." + f.Root)
		present := s.dialect.JSONPresent(doc, jsonSteps(f.Path))
		return weaveValueOrder(s.dialect, present, s.dialect.JSONText(doc, jsonSteps(f.Path), "sv")), nil
	}
	// A feedback field sorts by its newest row.
	newest := c.newestFeedback(f)
	return weaveValueOrder(s.dialect, database.Expr{SQL: "(" + newest.SQL + " <> '')", Args: newest.Args}, newest), nil
}

// newestFeedback is the text of the feedback field f in the newest of the
// call's feedback rows of its type ("" when it has none): what a call sorts
// and groups by.
func (c *queryCompiler) newestFeedback(f callquery.Field) database.Expr {
	text := c.dialect.JSONText(c.dialect.JSONTextDoc("f.payload"), jsonSteps(f.Path), "sv")
	if f.FeedbackColumn != "payload" {
		text = database.Expr{SQL: "f." + f.FeedbackColumn}
	}
	rows := c.feedbackRows("f", f.FeedbackType)
	return database.Expr{
		SQL:  "coalesce((SELECT " + text.SQL + " FROM feedback AS f WHERE " + rows.SQL + " ORDER BY f.created_at DESC, f.id DESC LIMIT 1), '')",
		Args: concat(text.Args, rows.Args),
	}
}

// newestFeedbackByCall is a relation (call_id, value) of newestFeedback
// for every call of the project that has a feedback row of f's type: what
// many calls are grouped by, joined by call id rather than probed per call.
// Both ref schemes of a call name it after a prefix of one length.
func (c *queryCompiler) newestFeedbackByCall(f callquery.Field) database.Expr {
	text := c.dialect.JSONText(c.dialect.JSONTextDoc("f.payload"), jsonSteps(f.Path), "sv")
	if f.FeedbackColumn != "payload" {
		text = database.Expr{SQL: "f." + f.FeedbackColumn}
	}
	weave, otel := "weave:///"+c.projectID+"/call/", "trace:///"+c.projectID+"/call/"
	n := utf8.RuneCountInString(weave)
	rows := database.Expr{SQL: "f.project_id = ? AND substr(f.trace_ref, 1, ?) IN (?, ?)", Args: []any{c.projectID, n, weave, otel}}
	if f.FeedbackType != callquery.AnyFeedbackType {
		rows.SQL += " AND f.feedback_type = ?"
		rows.Args = append(rows.Args, f.FeedbackType)
	}
	return database.Expr{
		SQL: "(SELECT r.call_id, r.value FROM (SELECT substr(f.trace_ref, ?) AS call_id, " + text.SQL + " AS value," +
			" ROW_NUMBER() OVER (PARTITION BY substr(f.trace_ref, ?) ORDER BY f.created_at DESC, f.id DESC) AS rn" +
			" FROM feedback AS f WHERE " + rows.SQL + ") AS r WHERE r.rn = 1)",
		Args: slices.Concat([]any{n + 1}, text.Args, []any{n + 1}, rows.Args),
	}
}

// weaveValueOrder orders by a value read as text, as Weave orders dynamic
// fields: the calls where present holds first (in either direction), then by
// the text as a double (numbers first, in either direction), then by the
// text in code point order.
func weaveValueOrder(d database.Dialect, present, text database.Expr) sortKey {
	number := d.Let(text, "sn", database.Expr{SQL: d.FloatOfText("sn")})
	return sortKey{terms: []sortTerm{
		{expr: database.Expr{SQL: "CASE WHEN " + present.SQL + " THEN 1 ELSE 0 END", Args: present.Args}, direction: "desc"},
		{expr: number, nullsLast: true},
		{expr: database.Expr{SQL: d.ByteOrder(text.SQL), Args: text.Args}},
	}}
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
