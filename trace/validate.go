package trace

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/jsontext"
	"github.com/weftlabs/weft/objects/ref"
)

// startFields is a validated start.
type startFields struct {
	projectID, id, traceID, opName string
	parentID, threadID, turnID     *string
	displayName                    *string
	startedAt                      time.Time
	attributes, inputs             string
	inputsText                     string // searchText of inputs
	otelDump, inputRefs            *string
	userID, runID                  *string
	runStep                        *int64
}

// endFields is a validated end.
type endFields struct {
	projectID, id   string
	endedAt         time.Time
	output, summary string
	usage           string // storedUsage of summary
	// usageModel and tokens are usage's one model and its counters summed
	// over its models, indexed as a stored usage array (see usageTotals).
	usageModel  *string
	tokens      [usageCacheCreation + 1]float64
	status      string // callStatus of the ended call
	outputText  string // searchText of output
	outputRefs  *string
	exception   *string
	displayName *string
	runStepEnd  *int64
}

const (
	maxOpNameLength      = 128
	maxDisplayNameLength = 1024
	maxFreeIDLength      = 256
)

// checkStart validates a start and fills generated ids and defaults.
func checkStart(ctx context.Context, in *StartedCall) (*startFields, error) {
	if _, _, err := weft.ParseProjectID(in.ProjectID); err != nil {
		return nil, err
	}
	f := &startFields{projectID: in.ProjectID, id: in.ID, traceID: in.TraceID, opName: in.OpName}
	if f.id == "" {
		f.id = newID()
	} else if err := checkCallID("id", f.id); err != nil {
		return nil, err
	}
	if f.traceID == "" {
		f.traceID = newID()
	} else if err := checkTraceID(f.traceID); err != nil {
		return nil, err
	}
	if in.ParentID != nil && *in.ParentID != "" {
		if err := checkCallID("parent_id", *in.ParentID); err != nil {
			return nil, err
		}
		f.parentID = in.ParentID
	}
	if err := checkOpName(in.OpName); err != nil {
		return nil, err
	}
	if err := checkText("display_name", in.DisplayName, maxDisplayNameLength); err != nil {
		return nil, err
	}
	f.displayName = in.DisplayName
	for _, t := range []struct {
		name  string
		value *string
	}{{"thread_id", in.ThreadID}, {"turn_id", in.TurnID}, {"pf_run_id", in.PfRunID}} {
		if err := checkText(t.name, t.value, maxFreeIDLength); err != nil {
			return nil, err
		}
	}
	f.threadID, f.turnID, f.runID = emptyToNil(in.ThreadID), emptyToNil(in.TurnID), in.PfRunID
	if in.StartedAt.IsZero() {
		return nil, weft.Errorf(ErrInvalidCall, "started_at is required")
	}
	f.startedAt = normalizeTime(in.StartedAt)
	if in.PfRunStep != nil && *in.PfRunStep < 0 {
		return nil, weft.Errorf(ErrInvalidCall, "pf_run_step must be >= 0")
	}
	f.runStep = in.PfRunStep
	var err error
	if f.attributes, err = jsonObject("attributes", in.Attributes, in.decoded); err != nil {
		return nil, err
	}
	if f.inputs, err = jsonObject("inputs", in.Inputs, in.decoded); err != nil {
		return nil, err
	}
	if len(in.OtelDump) > 0 && string(in.OtelDump) != "null" {
		dump, err := jsonObject("otel_dump", in.OtelDump, in.decoded)
		if err != nil {
			return nil, err
		}
		f.otelDump = &dump
	}
	f.inputRefs = refsOf([]byte(f.inputs))
	f.inputsText = searchText([]byte(f.inputs))
	if uid := weft.UserID(ctx); uid != "" {
		f.userID = &uid
	}
	return f, nil
}

// checkEnd validates an end and fills defaults.
func checkEnd(in *EndedCall) (*endFields, error) {
	if _, _, err := weft.ParseProjectID(in.ProjectID); err != nil {
		return nil, err
	}
	if err := checkCallID("id", in.ID); err != nil {
		return nil, err
	}
	if in.EndedAt.IsZero() {
		return nil, weft.Errorf(ErrInvalidCall, "ended_at is required")
	}
	if err := checkText("exception", in.Exception, -1); err != nil {
		return nil, err
	}
	if err := checkText("display_name", in.DisplayName, maxDisplayNameLength); err != nil {
		return nil, err
	}
	if in.PfRunStepEnd != nil && *in.PfRunStepEnd < 0 {
		return nil, weft.Errorf(ErrInvalidCall, "pf_run_step_end must be >= 0")
	}
	f := &endFields{projectID: in.ProjectID, id: in.ID, endedAt: normalizeTime(in.EndedAt),
		exception: in.Exception, displayName: in.DisplayName, runStepEnd: in.PfRunStepEnd}
	var err error
	if f.summary, err = jsonObject("summary", in.Summary, in.decoded); err != nil {
		return nil, err
	}
	members, _ := jsontext.ObjectMembers([]byte(f.summary))
	f.status = callStatus(f.exception, true, descendantErrorCount(members))
	usage := ownUsage([]byte(f.summary))
	f.usage = storedUsage(usage)
	f.usageModel, f.tokens = usageTotals(usage)
	f.output = "null"
	if len(in.Output) > 0 {
		if !in.decoded && !json.Valid(in.Output) {
			return nil, weft.Errorf(ErrInvalidCall, "output is not valid JSON")
		}
		if err := checkJSONText("output", in.Output); err != nil {
			return nil, err
		}
		f.output = string(in.Output)
	}
	f.outputRefs = refsOf(in.Output)
	f.outputText = searchText([]byte(f.output))
	return f, nil
}

func checkOpName(op string) error {
	if op == "" {
		return weft.Errorf(ErrInvalidCall, "op_name is required")
	}
	if _, isRef, err := parseOpRef(op); isRef {
		if err != nil || strings.ContainsRune(op, 0) {
			return weft.Errorf(ErrInvalidCall, "op_name %q looks like a ref but is not an op ref trace:///<entity>/<project>/op/<name>:<digest>", clip(op))
		}
		return nil
	}
	return checkText("op_name", &op, maxOpNameLength)
}

// checkText rejects NUL characters (no database keeps them) and, when max >= 0,
// strings longer than max characters.
func checkText(name string, s *string, max int) error {
	if s == nil {
		return nil
	}
	if strings.IndexByte(*s, 0) >= 0 {
		return weft.Errorf(ErrInvalidCall, "%s must not contain NUL characters", name)
	}
	if max >= 0 && len([]rune(*s)) > max {
		return weft.Errorf(ErrInvalidCall, "%s is longer than %d characters", name, max)
	}
	return nil
}

func emptyToNil(s *string) *string {
	if s == nil || *s == "" {
		return nil
	}
	return s
}

// jsonObject returns raw as text, "{}" when absent, and fails unless it is a
// JSON object.
func jsonObject(name string, raw json.RawMessage, decoded bool) (string, error) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || string(t) == "null" {
		return "{}", nil
	}
	if t[0] != '{' || (!decoded && !json.Valid(t)) {
		return "", weft.Errorf(ErrInvalidCall, "%s must be a JSON object", name)
	}
	if err := checkJSONText(name, t); err != nil {
		return "", err
	}
	return string(raw), nil
}

// checkJSONText refuses a raw member that the database would refuse or that
// no JSON reader could take back: invalid UTF-8, lone surrogate escapes.
// Members decoded from JSON are checked too: whoever decoded them may not have.
func checkJSONText(name string, raw []byte) error {
	if err := jsontext.Check(raw); err != nil {
		return weft.Errorf(ErrInvalidText, "%s: %v", name, err)
	}
	return nil
}

// normalizeTime keeps what both databases store: UTC, microseconds.
func normalizeTime(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

// refsOf lists the distinct ref strings (trace:/// or weave:///) anywhere in
// raw, as a JSON array, or nil when there are none.
func refsOf(raw []byte) *string {
	if !bytes.Contains(raw, []byte(":///")) {
		return nil
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return nil
	}
	seen := map[string]bool{}
	var refs []string
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			// A NUL can be in no ref, and jsonb (the PostgreSQL index) cannot
			// hold it.
			if ref.IsRef(v) && !strings.ContainsRune(v, 0) && !seen[v] {
				seen[v] = true
				refs = append(refs, v)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		case map[string]any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(v)
	if len(refs) == 0 {
		return nil
	}
	b, _ := json.Marshal(refs)
	s := string(b)
	return &s
}
