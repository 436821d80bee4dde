package callquery

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Kind is what a field reads.
type Kind int

// Field kinds.
const (
	// Column is a column of the call (Field.Column).
	Column Kind = iota + 1
	// Dynamic is a value inside one of the call's JSON members (Field.Root,
	// Field.Path).
	Dynamic
	// Derived is a member of summary.weave the server derives
	// (Field.Derived).
	Derived
	// Feedback is a value of the call's feedback rows (Field.FeedbackType,
	// Field.FeedbackColumn, Field.Path).
	Feedback
)

// Type is the type of a column's values.
type Type int

// Column types.
const (
	Text Type = iota + 1
	Integer
	Time
)

// Derived fields.
const (
	Status    = "status"
	LatencyMS = "latency_ms"
	TraceName = "trace_name"
)

// AnyFeedbackType is the feedback type of a feedback.[*] field.
const AnyFeedbackType = "*"

// Field is a field of a call, resolved.
type Field struct {
	// Name is the field as written.
	Name string
	Kind Kind
	// Column is the column of a Column field, by its stored name (the pf_
	// spelling for the user and run fields), and Type its type.
	Column string
	Type   Type
	// Root is the JSON member of a Dynamic field: inputs, output, attributes
	// or summary.
	Root string
	// Path is the path inside the JSON value (of a Dynamic field, or of the
	// payload of a Feedback field).
	Path []Step
	// Derived is Status, LatencyMS or TraceName.
	Derived string
	// FeedbackType is the feedback type of a Feedback field, or
	// AnyFeedbackType; FeedbackColumn is payload, runnable_ref or
	// trigger_ref.
	FeedbackType, FeedbackColumn string
}

// Step is one step of a path: an object member (Key), or, when Index is not
// negative, an array element.
type Step struct {
	Key   string
	Index int
}

// IsIndex tells whether the step is an array index.
func (s Step) IsIndex() bool { return s.Index >= 0 }

// columns are the call columns by their names in queries, with their stored
// name and type.
var columns = map[string]struct {
	column string
	typ    Type
}{
	"id": {"id", Text}, "project_id": {"project_id", Text}, "trace_id": {"trace_id", Text},
	"parent_id": {"parent_id", Text}, "thread_id": {"thread_id", Text}, "turn_id": {"turn_id", Text},
	"op_name": {"op_name", Text}, "display_name": {"display_name", Text}, "exception": {"exception", Text},
	"wb_user_id": {"pf_user_id", Text}, "pf_user_id": {"pf_user_id", Text},
	"wb_run_id": {"pf_run_id", Text}, "pf_run_id": {"pf_run_id", Text},
	"wb_run_step": {"pf_run_step", Integer}, "pf_run_step": {"pf_run_step", Integer},
	"wb_run_step_end": {"pf_run_step_end", Integer}, "pf_run_step_end": {"pf_run_step_end", Integer},
	"started_at": {"started_at", Time}, "ended_at": {"ended_at", Time}, "deleted_at": {"deleted_at", Time},
}

// dynamicRoots are the JSON members a dynamic field starts with.
var dynamicRoots = []string{"inputs", "output", "attributes", "summary"}

// notQueryable are fields of Weave's call schema that a query cannot read,
// with why.
var notQueryable = map[string]string{
	"storage_size_bytes":       "storage sizes cannot be filtered or sorted by",
	"total_storage_size_bytes": "storage sizes cannot be filtered or sorted by",
	"input_refs":               "use filter.input_refs",
	"output_refs":              "use filter.output_refs",
	"expire_at":                "calls here do not expire",
	"wb_username":              "use wb_user_id",
}

// feedbackPath is feedback.[<type>].<rest>; the type ends at the first "]."
// as Weave reads it.
var feedbackPath = regexp.MustCompile(`^\[(.+?)\]\.(.+)$`)

// MaxPathSteps bounds the steps of a path.
const MaxPathSteps = 16

// maxIndex bounds an array index.
const maxIndex = 1 << 30

// ParseField resolves a field name; an unknown or malformed one is an
// *Error that says why.
func ParseField(name string) (Field, error) {
	if !utf8.ValidString(name) || strings.ContainsRune(name, 0) {
		return Field{}, errorf("a field name holding NUL or invalid UTF-8 is not supported")
	}
	f := Field{Name: name}
	if c, ok := columns[name]; ok {
		f.Kind, f.Column, f.Type = Column, c.column, c.typ
		return f, nil
	}
	if why, ok := notQueryable[name]; ok {
		return Field{}, errorf("field %s is not allowed here: %s", clip(name), why)
	}
	if rest, ok := strings.CutPrefix(name, "summary.weave."); ok {
		switch rest {
		case Status, LatencyMS, TraceName:
			f.Kind, f.Derived = Derived, rest
			return f, nil
		}
		return Field{}, errorf("summary field %q is not allowed; summary.weave fields: latency_ms, status, trace_name", clip(rest))
	}
	if rest, ok := strings.CutPrefix(name, "feedback."); ok {
		m := feedbackPath.FindStringSubmatch(rest)
		if m == nil {
			return Field{}, errorf("invalid feedback field %s: a feedback field is feedback.[<type>].payload[.<path>], .runnable_ref or .trigger_ref", clip(name))
		}
		f.Kind, f.FeedbackType = Feedback, m[1]
		column, path, hasPath := strings.Cut(m[2], ".")
		switch {
		case column == "payload":
			f.FeedbackColumn = column
			if hasPath {
				steps, err := parsePath(name, path)
				if err != nil {
					return Field{}, err
				}
				f.Path = steps
			}
		case (column == "runnable_ref" || column == "trigger_ref") && !hasPath:
			f.FeedbackColumn = column
		default:
			return Field{}, errorf("invalid feedback field %s: after the type comes payload[.<path>], runnable_ref or trigger_ref", clip(name))
		}
		return f, nil
	}
	root, path, hasPath := strings.Cut(name, ".")
	root = strings.TrimSuffix(root, "_dump")
	if slices.Contains(dynamicRoots, root) {
		f.Kind, f.Root = Dynamic, root
		if hasPath {
			steps, err := parsePath(name, path)
			if err != nil {
				return Field{}, err
			}
			f.Path = steps
		}
		return f, nil
	}
	return Field{}, errorf("field %s is not allowed; fields: call columns (id, op_name, started_at, …), inputs.*, output.*, attributes.*, summary.*, summary.weave.{status,latency_ms,trace_name} and feedback.[<type>].*", clip(name))
}

// DynamicField is the field name reading path (dotted, as in a dynamic
// field) inside the JSON value root: for fields of other documents than a
// call's, which ParseWith's resolver names.
func DynamicField(name, root, path string) (Field, error) {
	steps, err := parsePath(name, path)
	if err != nil {
		return Field{}, err
	}
	return Field{Name: name, Kind: Dynamic, Root: root, Path: steps}, nil
}

// parsePath splits a dotted path into steps: "\." is a dot in a member name,
// a segment of digits only an array index. Empty members, and members
// holding a quote, a backslash or a control character, are not supported.
func parsePath(name, path string) ([]Step, error) {
	var segments []string
	var cur strings.Builder
	for i := 0; i < len(path); i++ {
		switch {
		case path[i] == '\\' && i+1 < len(path) && path[i+1] == '.':
			cur.WriteByte('.')
			i++
		case path[i] == '.':
			segments = append(segments, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(path[i])
		}
	}
	segments = append(segments, cur.String())
	if len(segments) > MaxPathSteps {
		return nil, errorf("field %s: a path has at most %d steps", clip(name), MaxPathSteps)
	}
	steps := make([]Step, len(segments))
	for i, seg := range segments {
		if seg == "" {
			return nil, errorf("field %s: a path member is empty", clip(name))
		}
		if strings.ContainsFunc(seg, func(r rune) bool { return r == '"' || r == '\\' || r < 0x20 }) {
			return nil, errorf("field %s: a path member holding a quote, backslash or control character is not supported", clip(name))
		}
		steps[i] = Step{Key: seg, Index: -1}
		if strings.Trim(seg, "0123456789") == "" {
			n, err := strconv.Atoi(seg)
			if err != nil || n > maxIndex {
				return nil, errorf("field %s: array index %s is too large", clip(name), clip(seg))
			}
			steps[i] = Step{Index: n}
		}
	}
	return steps, nil
}
