package trace

import (
	"slices"
	"strings"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/database"
)

// statusCondition is the SQL condition that holds for calls whose status (as
// rebuildSummary derives it) is one of statuses. It is built only from the
// fixed fragments below: no request text reaches the SQL. wholeTrace also
// reads a root of project projectID as having failed descendants when
// another call of its trace raised (CallsFilter.TraceStatuses).
func statusCondition(d database.Dialect, statuses []string, wholeTrace bool, projectID string) (database.Expr, error) {
	failed := failedCondition
	errors := descendantErrors(d)
	descendantFailed := database.Expr{SQL: "COALESCE(" + errors.SQL + ", 0) > 0", Args: errors.Args}
	if wholeTrace {
		descendantFailed = database.Expr{SQL: "(" + descendantFailed.SQL + " OR " + failedInTrace + ")",
			Args: append(slices.Clone(errors.Args), projectID)}
	}
	prefilter := ""
	if wholeTrace {
		// The status column written with each call (and rolled up to its
		// root, see Store.rollUp) says so first: it is read from the row,
		// where the trace's calls are probed only for the few it keeps, so
		// a page of a rare status stops scanning a million roots' traces.
		prefilter = "c.status = '" + StatusDescendantError + "' AND "
	}
	conditions := map[string]database.Expr{
		StatusError:           {SQL: failed},
		StatusRunning:         {SQL: "(NOT " + failed + " AND c.ended_at IS NULL)"},
		StatusDescendantError: {SQL: "(" + prefilter + "NOT " + failed + " AND c.ended_at IS NOT NULL AND " + descendantFailed.SQL + ")", Args: descendantFailed.Args},
		StatusSuccess:         {SQL: "(NOT " + failed + " AND c.ended_at IS NOT NULL AND NOT (" + descendantFailed.SQL + "))", Args: descendantFailed.Args},
	}
	var parts []string
	var args []any
	for _, status := range statuses {
		cond, ok := conditions[status]
		if !ok {
			return database.Expr{}, weft.WithFields(ErrInvalidQuery, map[string]any{"param": "filter"},
				"unknown status %q; statuses: %s, %s, %s, %s", clip(status), StatusSuccess, StatusError, StatusRunning, StatusDescendantError)
		}
		if !slices.Contains(parts, cond.SQL) {
			parts = append(parts, cond.SQL)
			args = append(args, cond.Args...)
		}
	}
	return database.Expr{SQL: "(" + strings.Join(parts, " OR ") + ")", Args: args}, nil
}

// statusExpr is the status of a call as SQL text, for sorting: the same
// derivation as statusCondition's.
func statusExpr(d database.Dialect) database.Expr {
	errors := descendantErrors(d)
	return database.Expr{
		SQL: "(CASE WHEN " + failedCondition + " THEN '" + StatusError + "' WHEN c.ended_at IS NULL THEN '" + StatusRunning +
			"' WHEN COALESCE(" + errors.SQL + ", 0) > 0 THEN '" + StatusDescendantError + "' ELSE '" + StatusSuccess + "' END)",
		Args: errors.Args,
	}
}

// failedCondition holds for a call that raised.
const failedCondition = "(c.exception IS NOT NULL AND c.exception <> '')"

// failedInTrace holds for a trace root another visible call of whose trace
// raised; it reads the calls_trace index (project_id, trace_id), a few rows
// per root. The exception test is written as COALESCE so that it does not
// imply the predicate of the calls_failed partial index: PostgreSQL would
// otherwise probe each root through every failed call of the project
// (1.2 s instead of 20 ms for a page of a 1,000,000-call project). Its one
// argument is the project (named as a value, so that Citus routes the
// subquery to the project's shard as it does the query).
const failedInTrace = "(c.parent_id IS NULL AND EXISTS (SELECT 1 FROM calls AS d WHERE d.project_id = ?" +
	" AND d.trace_id = c.trace_id AND d.id <> c.id AND d.started_at IS NOT NULL AND d.deleted_at IS NULL" +
	" AND COALESCE(d.exception, '') <> ''))"

// descendantErrors is summary.status_counts.error, read only when it is a
// JSON number, as rebuildSummary reads it.
func descendantErrors(d database.Dialect) database.Expr {
	return d.JSONScalar(d.JSONDoc("c.summary"), []string{"status_counts", "error"}, "number")
}
