package evalrun

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/feedback"
	"github.com/weftlabs/weft/objects"
	"github.com/weftlabs/weft/objects/ref"
	"github.com/weftlabs/weft/trace"
)

// The ops of evaluation runs, as Weave names them.
const (
	evaluateOp        = "Evaluation.evaluate"
	predictAndScoreOp = "Evaluation.predict_and_score"
	summarizeOp       = "Evaluation.summarize"
)

// Placeholder sources of the ops published here: the work they stand for
// ran in the client.
const (
	evaluateSource        = "def evaluate(self, model):\n    \"\"\"Stands for an evaluation run recorded through the v2 API.\"\"\"\n    ...\n"
	predictAndScoreSource = "def predict_and_score(self, model, example):\n    \"\"\"Stands for one example of an evaluation run recorded through the v2 API.\"\"\"\n    ...\n"
	predictSource         = "def predict(self, inputs):\n    \"\"\"Stands for a prediction recorded through the v2 API.\"\"\"\n    ...\n"
	scoreSource           = "def score(self, inputs, output):\n    \"\"\"Stands for a score recorded through the v2 API.\"\"\"\n    ...\n"
)

// Config configures [New].
type Config struct {
	Trace    trace.Service
	Objects  objects.Service
	Feedback feedback.Service
	// Now is the clock of the calls' times. Defaults to time.Now.
	Now func() time.Time
}

// Store implements [Service] over the three services of its Config.
type Store struct {
	cfg Config
}

var _ Service = (*Store)(nil)

// New returns a Store; every service of cfg is required.
func New(cfg Config) (*Store, error) {
	if cfg.Trace == nil || cfg.Objects == nil || cfg.Feedback == nil {
		return nil, errors.New("evalrun: Config needs Trace, Objects and Feedback")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Store{cfg: cfg}, nil
}

// checkRef parses s as a ref of projectID of one of kinds.
func checkRef(projectID, field, s string, kinds ...ref.Kind) (ref.Ref, error) {
	r, err := ref.Parse(s)
	if err != nil {
		return ref.Ref{}, weft.Errorf(ErrInvalid, "%s: %v", field, err)
	}
	if r.ProjectID() != projectID {
		return ref.Ref{}, weft.Errorf(ErrInvalid, "%s must be a ref of the project %s", field, projectID)
	}
	for _, k := range kinds {
		if r.Kind == k {
			return r, nil
		}
	}
	return ref.Ref{}, weft.Errorf(ErrInvalid, "%s must be a ref of a %s", field, kinds[0])
}

// publishOp publishes an op named name with source as its obj.py, as the
// SDKs publish ops, and returns its ref (the op_name of its calls).
func (s *Store) publishOp(ctx context.Context, projectID, name, source string) (string, error) {
	file, err := s.cfg.Objects.FileCreate(ctx, &objects.FileCreateReq{ProjectID: projectID, Name: "obj.py", Content: []byte(source)})
	if err != nil {
		return "", err
	}
	val, err := json.Marshal(map[string]any{"_type": "CustomWeaveType", "weave_type": map[string]string{"type": "Op"}, "files": map[string]string{"obj.py": file.Digest}})
	if err != nil {
		return "", err
	}
	obj, err := s.cfg.Objects.ObjCreate(ctx, &objects.ObjCreateReq{Obj: objects.ObjSchemaForInsert{ProjectID: projectID, ObjectID: name, Val: val}})
	if err != nil {
		return "", err
	}
	return ref.Op(projectID, name, obj.Digest).WithScheme(ref.SchemeWeave).String(), nil
}

// call is one call to store: started now and, when output is set, ended at
// once.
type call struct {
	id, traceID, parentID, opName string
	attributes, inputs            any
	output                        json.RawMessage
}

// newID is a new call id (a UUIDv7, as the SDKs make them).
func newID() string { return uuid.Must(uuid.NewV7()).String() }

// store starts c and, when it has an output, ends it.
func (s *Store) store(ctx context.Context, projectID string, c call) error {
	attributes, err := json.Marshal(c.attributes)
	if err != nil {
		return err
	}
	inputs, err := json.Marshal(c.inputs)
	if err != nil {
		return err
	}
	start := trace.StartedCall{ProjectID: projectID, ID: c.id, TraceID: c.traceID, OpName: c.opName, StartedAt: s.cfg.Now().UTC(),
		Attributes: attributes, Inputs: inputs}
	if c.parentID != "" {
		start.ParentID = &c.parentID
	}
	if _, err := s.cfg.Trace.CallStart(ctx, &trace.CallStartReq{Start: start}); err != nil {
		return err
	}
	if c.output == nil {
		return nil
	}
	return s.end(ctx, projectID, c.id, c.output, nil)
}

// end ends the call id now with output and summary ({} when nil).
func (s *Store) end(ctx context.Context, projectID, id string, output, summary json.RawMessage) error {
	if summary == nil || string(summary) == "null" {
		summary = json.RawMessage(`{}`)
	}
	_, err := s.cfg.Trace.CallEnd(ctx, &trace.CallEndReq{End: trace.EndedCall{ProjectID: projectID, ID: id, EndedAt: s.cfg.Now().UTC(),
		Output: output, Summary: summary}})
	return err
}

// markers are the string members of a call's attributes.weave, where the
// records of this package keep what they are.
type markers map[string]string

func markersOf(c *trace.Call) markers {
	var attrs struct {
		Weave map[string]json.RawMessage `json:"weave"`
	}
	_ = json.Unmarshal(c.Attributes, &attrs)
	m := markers{}
	for k, v := range attrs.Weave {
		var s string
		if json.Unmarshal(v, &s) == nil {
			m[k] = s
		}
	}
	return m
}

// optional is the marker key, nil when absent.
func (m markers) optional(key string) *string {
	if v, ok := m[key]; ok {
		return &v
	}
	return nil
}

// read reads a live call that carries the marker kind ("evaluation_run",
// "prediction" or "score") set to "true"; ErrNotFound otherwise.
func (s *Store) read(ctx context.Context, projectID, id, kind string) (*trace.Call, markers, error) {
	res, err := s.cfg.Trace.CallRead(ctx, &trace.CallReadReq{ProjectID: projectID, ID: id})
	if err != nil {
		return nil, nil, err
	}
	if res.Call != nil {
		if m := markersOf(res.Call); m[kind] == "true" {
			return res.Call, m, nil
		}
	}
	return nil, nil, weft.Errorf(ErrNotFound, "%s %s not found", strings.ReplaceAll(kind, "_", " "), clip(id))
}

// list streams the calls of filter whose attributes.weave members equal the
// values of match (or one of them, for a list), in start order.
func (s *Store) list(ctx context.Context, projectID string, match map[string]any, filter trace.CallsFilter, limit, offset int, yield func(*trace.Call) error) error {
	var terms []any
	for key, want := range match {
		field := map[string]any{"$getField": "attributes.weave." + key}
		switch want := want.(type) {
		case []string:
			list := make([]any, len(want))
			for i, v := range want {
				list[i] = map[string]any{"$literal": v}
			}
			terms = append(terms, map[string]any{"$in": []any{field, list}})
		default:
			terms = append(terms, map[string]any{"$eq": []any{field, map[string]any{"$literal": want}}})
		}
	}
	query, err := json.Marshal(map[string]any{"$expr": map[string]any{"$and": terms}})
	if err != nil {
		return err
	}
	req := &trace.CallsQueryReq{ProjectID: projectID, Query: query, Limit: limit, Offset: offset, Filter: filter}
	return s.cfg.Trace.CallsQuery(ctx, req, yield)
}

// remove deletes calls.
func (s *Store) remove(ctx context.Context, projectID string, ids []string) (*DeleteRes, error) {
	if len(ids) == 0 {
		return nil, weft.Errorf(ErrInvalid, "name at least one id")
	}
	res, err := s.cfg.Trace.CallsDelete(ctx, &trace.CallsDeleteReq{ProjectID: projectID, CallIDs: ids})
	if err != nil {
		return nil, err
	}
	return &DeleteRes{NumDeleted: res.NumDeleted}, nil
}

// opNameIs tells whether an op_name (a ref or a plain name) names the op
// name, in any version.
func opNameIs(opName, name string) bool {
	if r, err := ref.Parse(opName); err == nil {
		return r.Name == name
	}
	return opName == name
}

// clip shortens text quoted back in an error.
func clip(s string) string {
	if len(s) > 100 {
		return s[:100] + "…"
	}
	return s
}
