package feedback

import (
	"context"
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/weftlabs/weft"
)

// PayloadSchemaReq asks for Weave's /feedback/payload_schema: the leaf paths
// of the payloads of a project's feedback created in a window, and the type
// of value each holds.
type PayloadSchemaReq struct {
	ProjectID string     `json:"project_id"`
	Start     time.Time  `json:"start" doc:"Inclusive start time (UTC, ISO 8601)"`
	End       *time.Time `json:"end,omitempty" doc:"Exclusive end time; now when omitted"`
	// FeedbackType keeps rows of this feedback_type.
	FeedbackType *string `json:"feedback_type,omitempty"`
	// TriggerRef keeps rows of this trigger_ref; one ending in ":*" keeps
	// every version of it (rows whose trigger_ref starts with what precedes
	// the ":*").
	TriggerRef *string `json:"trigger_ref,omitempty"`
	// SampleLimit bounds the payloads read: the newest of each distinct
	// trigger_ref, at most this many (1 to 5,000; default 2,000).
	SampleLimit *int `json:"sample_limit,omitempty" minimum:"1" maximum:"5000"`
}

// PayloadSchemaRes lists the discovered paths, sorted.
type PayloadSchemaRes struct {
	Paths []PayloadPath `json:"paths"`
}

// PayloadPath is a dot path into payloads and the type of what it holds:
// "boolean" when only booleans or null, "numeric" when only numbers (and
// null), else "categorical".
type PayloadPath struct {
	JSONPath  string `json:"json_path"`
	ValueType string `json:"value_type" enum:"numeric,boolean,categorical"`
}

// DefaultPayloadSampleLimit is PayloadSchemaReq.SampleLimit's default.
const DefaultPayloadSampleLimit = 2000

// statsPathPattern is what a payload path of Weave's feedback stats may hold.
var statsPathPattern = regexp.MustCompile(`^[a-zA-Z0-9_. ]+$`)

// PayloadSchema implements [Service].
func (s *Store) PayloadSchema(ctx context.Context, req PayloadSchemaReq) (PayloadSchemaRes, error) {
	if _, _, err := weft.ParseProjectID(req.ProjectID); err != nil {
		return PayloadSchemaRes{}, err
	}
	end := time.Now().UTC()
	if req.End != nil {
		end = req.End.UTC()
	}
	limit := DefaultPayloadSampleLimit
	if req.SampleLimit != nil {
		limit = *req.SampleLimit
	}
	if limit < 1 || limit > 5000 {
		return PayloadSchemaRes{}, weft.Errorf(ErrInvalidQuery, "sample_limit must be from 1 to 5000")
	}
	if req.Start.IsZero() {
		return PayloadSchemaRes{}, weft.Errorf(ErrInvalidQuery, "start is required")
	}
	inner := s.statsWindow(s.db.NewSelect().TableExpr("feedback AS f").Column("f.payload").
		ColumnExpr("row_number() OVER (PARTITION BY f.trigger_ref ORDER BY f.created_at DESC, f.id DESC) AS newest").
		ColumnExpr("f.trigger_ref"), req.ProjectID, req.Start.UTC(), end, req.FeedbackType, req.TriggerRef)
	var payloads []string
	err := s.db.NewSelect().TableExpr("(?) AS sampled", inner).Column("payload").Where("newest = 1").
		OrderExpr("trigger_ref").Limit(int64(limit)).Scan(ctx, &payloads)
	if err != nil {
		return PayloadSchemaRes{}, err
	}
	return PayloadSchemaRes{Paths: discoverPaths(payloads)}, nil
}

// statsWindow keeps the rows of q (over feedback AS f) that a stats request
// selects: the project's, created from start to before end, of the feedback
// type and trigger_ref when given.
func (s *Store) statsWindow(q *bun.SelectQuery, projectID string, start, end time.Time, feedbackType, triggerRef *string) *bun.SelectQuery {
	q = q.Where("f.project_id = ?", projectID).Where("f.created_at >= ?", start).Where("f.created_at < ?", end)
	if feedbackType != nil {
		q = q.Where("f.feedback_type = ?", *feedbackType)
	}
	if triggerRef != nil {
		if prefix, ok := strings.CutSuffix(*triggerRef, ":*"); ok {
			q = q.Where("substr(f.trigger_ref, 1, length(?)) = ?", prefix, prefix)
		} else {
			q = q.Where("f.trigger_ref = ?", *triggerRef)
		}
	}
	return q
}

// discoverPaths is Weave's payload schema discovery: every leaf of each
// payload by its dot path (members whose names hold a dot or are blank left
// out; a list's scalar elements typed at the list's own path, its objects
// and lists at indexed paths, which are left out), paths of characters other
// than letters, digits, "_", "." and " " left out; the types seen at a path
// over all payloads give its value type.
func discoverPaths(payloads []string) []PayloadPath {
	seen := map[string]map[string]bool{}
	var walk func(v any, prefix string)
	note := func(path string, v any) {
		if seen[path] == nil {
			seen[path] = map[string]bool{}
		}
		seen[path][kindOf(v)] = true
	}
	walk = func(v any, prefix string) {
		switch v := v.(type) {
		case nil:
		case map[string]any:
			for k, x := range v {
				if strings.Contains(k, ".") || strings.TrimSpace(k) == "" {
					continue
				}
				path := k
				if prefix != "" {
					path = prefix + "." + k
				}
				switch x.(type) {
				case map[string]any, []any:
					walk(x, path)
				default:
					note(path, x)
				}
			}
		case []any:
			for i, x := range v {
				switch x.(type) {
				case map[string]any, []any:
					walk(x, prefix+"["+strconv.Itoa(i)+"]")
				default:
					note(prefix, x)
				}
			}
		default:
			note(prefix, v)
		}
	}
	for _, p := range payloads {
		var v any
		if strings.TrimSpace(p) == "" || json.Unmarshal([]byte(p), &v) != nil {
			continue
		}
		walk(v, "")
	}
	out := []PayloadPath{}
	for _, path := range slices.Sorted(func(yield func(string) bool) {
		for p := range seen {
			if !yield(p) {
				return
			}
		}
	}) {
		if strings.Contains(path, "[") || !statsPathPattern.MatchString(path) {
			continue
		}
		kinds := seen[path]
		delete(kinds, "null")
		valueType := "categorical"
		switch {
		case len(kinds) == 0 || len(kinds) == 1 && kinds["boolean"]:
			valueType = "boolean"
		case len(kinds) == 1 && kinds["numeric"]:
			valueType = "numeric"
		}
		out = append(out, PayloadPath{JSONPath: path, ValueType: valueType})
	}
	return out
}

func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64:
		return "numeric"
	}
	return "text"
}
