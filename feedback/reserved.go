package feedback

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/weftlabs/weft"
)

// maxPayloadBytes bounds a stored payload.
const maxPayloadBytes = 1 << 20

// maxNoteLength bounds a note, in characters.
const maxNoteLength = 1024

// reservedPrefixes introduce the reserved feedback types: Weave's spelling
// and the neutral one. Both follow the same rules.
var reservedPrefixes = []string{"wandb.", "trace."}

// typeClass is the rule set a feedback type falls under.
type typeClass int

const (
	classPlain typeClass = iota
	classReaction
	classNote
	classAnnotation
	classRunnable
	classAgent // agent monitors: any refs and scorer fields, payload free
)

// classify returns the class of a feedback type and, for annotation and
// runnable types, the name after the class ("wandb.annotation.<name>").
func classify(feedbackType string) (typeClass, string, error) {
	for _, prefix := range reservedPrefixes {
		rest, ok := strings.CutPrefix(feedbackType, prefix)
		if !ok {
			continue
		}
		switch rest {
		case "reaction.1":
			return classReaction, "", nil
		case "note.1":
			return classNote, "", nil
		case "agent_monitor", "agent_user_feedback":
			return classAgent, "", nil
		}
		for _, c := range []struct {
			word  string
			class typeClass
		}{{"annotation", classAnnotation}, {"runnable", classRunnable}} {
			if rest == c.word {
				return 0, "", weft.Errorf(ErrInvalidFeedback, "feedback_type %q must name the %s: %s%s.<name>", feedbackType, c.word, prefix, c.word)
			}
			if name, ok := strings.CutPrefix(rest, c.word+"."); ok {
				if name == "" {
					return 0, "", weft.Errorf(ErrInvalidFeedback, "feedback_type %q must not end with a dot", feedbackType)
				}
				return c.class, name, nil
			}
		}
	}
	return classPlain, "", nil
}

// feedbackRow is one stored feedback row.
type feedbackRow struct {
	bun.BaseModel `bun:"table:feedback"`

	ProjectID               string    `bun:"project_id,pk"`
	ID                      string    `bun:"id,pk"`
	TraceRef                string    `bun:"trace_ref"`
	PFUserID                string    `bun:"pf_user_id"`
	Creator                 *string   `bun:"creator"`
	CreatedAt               time.Time `bun:"created_at"`
	FeedbackType            string    `bun:"feedback_type"`
	Payload                 string    `bun:"payload"`
	AnnotationRef           *string   `bun:"annotation_ref"`
	RunnableRef             *string   `bun:"runnable_ref"`
	CallRef                 *string   `bun:"call_ref"`
	TriggerRef              *string   `bun:"trigger_ref"`
	QueueID                 *string   `bun:"queue_id"`
	ScorerTags              string    `bun:"scorer_tags"`
	ScorerTagReasons        string    `bun:"scorer_tag_reasons"`
	ScorerTagConfidences    string    `bun:"scorer_tag_confidences"`
	ScorerRatings           string    `bun:"scorer_ratings"`
	ScorerRatingReasons     string    `bun:"scorer_rating_reasons"`
	ScorerRatingConfidences string    `bun:"scorer_rating_confidences"`
	ScorerTraceID           *string   `bun:"scorer_trace_id"`
	SpanAgentName           string    `bun:"span_agent_name"`
	SpanAgentVersion        string    `bun:"span_agent_version"`
	SpanStatusCode          string    `bun:"span_status_code"`
	SpanConversationID      *string   `bun:"span_conversation_id"`
	SpanTraceID             *string   `bun:"span_trace_id"`
}

// result is the create answer for a stored row.
func (r *feedbackRow) result() CreateRes {
	return CreateRes{ID: r.ID, CreatedAt: r.CreatedAt, PFUserID: r.PFUserID, WBUserID: r.PFUserID, Payload: json.RawMessage(r.Payload)}
}

// present returns the value of an optional string, nil when absent or empty.
func present(s *string) *string {
	if s == nil || *s == "" {
		return nil
	}
	return s
}

// newRow checks req against every rule that needs no database (queue ids are
// checked by the caller) and returns the row to store.
func (s *Store) newRow(req CreateReq, user string, now time.Time) (*feedbackRow, error) {
	if err := checkProject(req.ProjectID); err != nil {
		return nil, err
	}
	traceRef, err := checkTraceRef(req)
	if err != nil {
		return nil, err
	}
	class, name, err := classify(req.FeedbackType)
	if err != nil {
		return nil, err
	}
	row := &feedbackRow{
		ProjectID: req.ProjectID, TraceRef: traceRef, PFUserID: user, Creator: req.Creator,
		CreatedAt: now, FeedbackType: req.FeedbackType,
		AnnotationRef: present(req.AnnotationRef), RunnableRef: present(req.RunnableRef),
		CallRef: present(req.CallRef), TriggerRef: present(req.TriggerRef), QueueID: present(req.QueueID),
		ScorerTraceID: present(req.ScorerTraceID), SpanConversationID: present(req.SpanConversationID),
		SpanTraceID:   present(req.SpanTraceID),
		SpanAgentName: deref(req.SpanAgentName, ""), SpanAgentVersion: deref(req.SpanAgentVersion, ""),
		SpanStatusCode: deref(req.SpanStatusCode, "UNSET"),
	}
	if row.ID, err = rowID(req.ID); err != nil {
		return nil, err
	}
	if err := checkRefs(req, row, class, name); err != nil {
		return nil, err
	}
	if err := fillScorerColumns(req, row, class); err != nil {
		return nil, err
	}
	payload, err := s.processPayload(req.Payload, class, req.FeedbackType)
	if err != nil {
		return nil, err
	}
	if len(payload) > maxPayloadBytes {
		return nil, weft.Errorf(ErrPayloadTooLarge, "Feedback payload too large (%d bytes, at most %d)", len(payload), maxPayloadBytes)
	}
	row.Payload = string(payload)
	return row, nil
}

func deref(s *string, fallback string) string {
	if s == nil {
		return fallback
	}
	return *s
}

// rowID returns the client's id when it gave a UUID, else a new UUIDv7.
func rowID(id *string) (string, error) {
	if present(id) == nil {
		v7, err := uuid.NewV7()
		return v7.String(), err
	}
	if len(*id) != 36 || uuid.Validate(*id) != nil {
		return "", weft.Errorf(ErrInvalidFeedback, "id %q must be a UUID", truncate(*id))
	}
	return *id, nil
}

// checkTraceRef returns the ref the row is attached to: trace_ref or its alias
// weave_ref, a ref of the request's project of any kind. What it names need
// not exist. A refusal names the field the client sent and the scheme its
// clients write (either scheme is accepted in either field).
func checkTraceRef(req CreateReq) (string, error) {
	traceRef, field, scheme := req.TraceRef, "trace_ref", "trace:///"
	switch {
	case traceRef == "":
		traceRef, field, scheme = req.WeaveRef, "weave_ref", "weave:///"
	case req.WeaveRef != "" && req.WeaveRef != traceRef:
		return "", weft.Errorf(ErrInvalidFeedback, "trace_ref and weave_ref differ; give one of them")
	}
	if traceRef == "" {
		return "", weft.Errorf(ErrInvalidFeedback, "trace_ref is required")
	}
	projectID, ok := anyRefProject(traceRef)
	if !ok {
		return "", weft.Errorf(ErrInvalidFeedback, "%s %q is not a %s%s/<kind>/… ref (a call's is %s%s/call/<call id>)",
			field, truncate(traceRef), scheme, req.ProjectID, scheme, req.ProjectID)
	}
	if projectID != req.ProjectID {
		return "", weft.Errorf(ErrInvalidFeedback, "%s %q is not a ref of project %s", field, truncate(traceRef), req.ProjectID)
	}
	return traceRef, nil
}

// checkRefs applies the ref rules of the type's class.
func checkRefs(req CreateReq, row *feedbackRow, class typeClass, name string) error {
	switch class {
	case classAnnotation:
		if row.RunnableRef != nil || row.CallRef != nil || row.TriggerRef != nil {
			return weft.Errorf(ErrInvalidFeedback, "annotation feedback carries only annotation_ref")
		}
		return checkNamedRef("annotation_ref", row.AnnotationRef, req.ProjectID, name, refObject)
	case classRunnable:
		if row.AnnotationRef != nil {
			return weft.Errorf(ErrInvalidFeedback, "annotation_ref is only allowed on annotation feedback")
		}
		if err := checkNamedRef("runnable_ref", row.RunnableRef, req.ProjectID, name, refOp, refObject); err != nil {
			return err
		}
		runnable, _ := parseRef(*row.RunnableRef)
		if runnable.kind == refOp && row.CallRef == nil {
			return weft.Errorf(ErrInvalidFeedback, "call_ref is required when runnable_ref is an op")
		}
		if err := checkKind("call_ref", row.CallRef, req.ProjectID, refCall); err != nil {
			return err
		}
		return checkKind("trigger_ref", row.TriggerRef, req.ProjectID, refObject)
	case classAgent:
		if err := checkKind("runnable_ref", row.RunnableRef, req.ProjectID, refOp, refObject); err != nil {
			return err
		}
		if err := checkKind("call_ref", row.CallRef, req.ProjectID, refCall); err != nil {
			return err
		}
		return checkKind("trigger_ref", row.TriggerRef, req.ProjectID, refObject)
	}
	for _, field := range []struct {
		name  string
		value *string
	}{{"annotation_ref", row.AnnotationRef}, {"runnable_ref", row.RunnableRef}, {"call_ref", row.CallRef}, {"trigger_ref", row.TriggerRef}} {
		if field.value != nil {
			return weft.Errorf(ErrInvalidFeedback, "%s is not allowed on feedback of type %q", field.name, req.FeedbackType)
		}
	}
	return nil
}

// checkNamedRef requires a versioned ref of one of kinds whose name is name.
func checkNamedRef(field string, value *string, projectID, name string, kinds ...string) error {
	if value == nil {
		return weft.Errorf(ErrInvalidFeedback, "%s is required for this feedback type", field)
	}
	if err := checkKind(field, value, projectID, kinds...); err != nil {
		return err
	}
	r, _ := parseRef(*value)
	if r.digest == "" {
		return weft.Errorf(ErrInvalidFeedback, "%s %q must name a version (<name>:<digest>)", field, truncate(*value))
	}
	if r.name != name {
		return weft.Errorf(ErrInvalidFeedback, "%s names %q but the feedback type names %q", field, r.name, name)
	}
	return nil
}

// checkKind requires an absent value or a ref of the project of one of kinds.
func checkKind(field string, value *string, projectID string, kinds ...string) error {
	if value == nil {
		return nil
	}
	r, ok := parseRef(*value)
	if !ok || !slices.Contains(kinds, r.kind) {
		return weft.Errorf(ErrInvalidFeedback, "%s %q must be a %s ref", field, truncate(*value), strings.Join(kinds, " or "))
	}
	if r.projectID != projectID {
		return weft.Errorf(ErrInvalidFeedback, "%s %q is not a ref of project %s", field, truncate(*value), projectID)
	}
	return nil
}

// fillScorerColumns copies the typed scorer columns, which only runnable and
// agent feedback may carry.
func fillScorerColumns(req CreateReq, row *feedbackRow, class typeClass) error {
	objects := []struct {
		name  string
		value json.RawMessage
		dest  *string
	}{
		{"scorer_tag_reasons", req.ScorerTagReasons, &row.ScorerTagReasons},
		{"scorer_tag_confidences", req.ScorerTagConfidences, &row.ScorerTagConfidences},
		{"scorer_ratings", req.ScorerRatings, &row.ScorerRatings},
		{"scorer_rating_reasons", req.ScorerRatingReasons, &row.ScorerRatingReasons},
		{"scorer_rating_confidences", req.ScorerRatingConfidences, &row.ScorerRatingConfidences},
	}
	given := len(req.ScorerTags) > 0 || row.ScorerTraceID != nil
	for _, o := range objects {
		*o.dest = "{}"
		if isNull(o.value) {
			continue
		}
		if !isObject(o.value) {
			return weft.Errorf(ErrBadPayload, "%s must be a JSON object", o.name)
		}
		*o.dest = string(o.value)
		given = given || string(bytes.TrimSpace(o.value)) != "{}"
	}
	if given && class != classRunnable && class != classAgent {
		return weft.Errorf(ErrInvalidFeedback, "scorer_* fields are only allowed on runnable and agent feedback, not on %q", req.FeedbackType)
	}
	tags := req.ScorerTags
	if tags == nil {
		tags = []string{}
	}
	encoded, err := json.Marshal(tags)
	row.ScorerTags = string(encoded)
	return err
}

// processPayload checks the payload against its type and returns what to store.
func (s *Store) processPayload(payload json.RawMessage, class typeClass, feedbackType string) ([]byte, error) {
	if !isObject(payload) {
		return nil, weft.Errorf(ErrBadPayload, "payload must be a JSON object")
	}
	switch class {
	case classReaction:
		return s.processReaction(payload)
	case classNote:
		var note struct {
			Note *string `json:"note"`
		}
		if json.Unmarshal(payload, &note) != nil || note.Note == nil {
			return nil, weft.Errorf(ErrInvalidFeedback, `note feedback needs a payload {"note": "<text>"}`)
		}
		if n := utf8.RuneCountInString(*note.Note); n < 1 || n > maxNoteLength {
			return nil, weft.Errorf(ErrInvalidFeedback, "note must have 1 to %d characters (has %d)", maxNoteLength, n)
		}
	case classAnnotation:
		if err := requireOnlyKey(payload, "value", feedbackType); err != nil {
			return nil, err
		}
	case classRunnable:
		if err := requireOnlyKey(payload, "output", feedbackType); err != nil {
			return nil, err
		}
	}
	return payload, nil
}

// processReaction checks that the emoji is exactly one emoji and adds its
// alias and skin-tone-free forms to the payload.
func (s *Store) processReaction(payload json.RawMessage) ([]byte, error) {
	var fields map[string]json.RawMessage
	var emoji string
	if json.Unmarshal(payload, &fields) != nil || json.Unmarshal(fields["emoji"], &emoji) != nil {
		return nil, weft.Errorf(ErrInvalidFeedback, `reaction feedback needs a payload {"emoji": "<emoji>"}`)
	}
	alias, ok := s.emojis.alias(emoji)
	if !ok {
		return nil, weft.Errorf(ErrInvalidFeedback, "Value of emoji key in payload must be exactly one emoji")
	}
	detoned := detone(emoji)
	detonedAlias, ok := s.emojis.alias(detoned)
	if !ok {
		detonedAlias = alias
	}
	for key, value := range map[string]string{"alias": alias, "detoned": detoned, "detoned_alias": detonedAlias} {
		fields[key], _ = json.Marshal(value)
	}
	return json.Marshal(fields)
}

// requireOnlyKey requires a payload {"<key>": …} and nothing else.
func requireOnlyKey(payload json.RawMessage, key, feedbackType string) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(payload, &fields); err != nil || len(fields) != 1 || fields[key] == nil {
		return weft.Errorf(ErrInvalidFeedback, `feedback of type %q needs a payload {"%s": …}`, feedbackType, key)
	}
	return nil
}

func isNull(v json.RawMessage) bool {
	t := bytes.TrimSpace(v)
	return len(t) == 0 || string(t) == "null"
}

func isObject(v json.RawMessage) bool {
	t := bytes.TrimSpace(v)
	return len(t) > 0 && t[0] == '{' && json.Valid(t)
}

func truncate(s string) string {
	if len(s) <= 200 {
		return s
	}
	return s[:200] + "…"
}
