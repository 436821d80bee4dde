package trace

import (
	"slices"
	"strings"

	"github.com/weftlabs/weft"
)

// statusCondition is the SQL condition that holds for calls whose status (as
// rebuildSummary derives it) is one of statuses. It is built only from the
// fixed fragments below: no request text reaches the SQL.
func (s *Store) statusCondition(statuses []string) (string, error) {
	failed := "(c.exception IS NOT NULL AND c.exception <> '')"
	// summary.status_counts.error > 0, read only when it is a JSON number,
	// as rebuildSummary reads it.
	descendantFailed := "COALESCE(CASE WHEN json_type(c.summary, '$.status_counts.error') IN ('integer', 'real') " +
		"THEN json_extract(c.summary, '$.status_counts.error') END, 0) > 0"
	if s.postgres {
		descendantFailed = "COALESCE(CASE WHEN json_typeof(c.summary::json #> '{status_counts,error}') = 'number' " +
			"THEN (c.summary::json #>> '{status_counts,error}')::double precision END, 0) > 0"
	}
	conditions := map[string]string{
		StatusError:           failed,
		StatusRunning:         "(NOT " + failed + " AND c.ended_at IS NULL)",
		StatusDescendantError: "(NOT " + failed + " AND c.ended_at IS NOT NULL AND " + descendantFailed + ")",
		StatusSuccess:         "(NOT " + failed + " AND c.ended_at IS NOT NULL AND NOT (" + descendantFailed + "))",
	}
	var parts []string
	for _, status := range statuses {
		cond, ok := conditions[status]
		if !ok {
			return "", weft.WithFields(ErrInvalidQuery, map[string]any{"param": "filter"},
				"unknown status %q; statuses: %s, %s, %s, %s", clip(status), StatusSuccess, StatusError, StatusRunning, StatusDescendantError)
		}
		if !slices.Contains(parts, cond) {
			parts = append(parts, cond)
		}
	}
	return "(" + strings.Join(parts, " OR ") + ")", nil
}
