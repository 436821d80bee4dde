package httpapi

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/feedback"
	"github.com/weftlabs/weft/internal/jsontext"
	"github.com/weftlabs/weft/objects"
	"github.com/weftlabs/weft/objects/ref"
	"github.com/weftlabs/weft/trace"
)

// hydrateBatch is how many calls of a stream are hydrated together: one read
// of refs per expanded column and one feedback query per batch.
const hydrateBatch = 100

// callHydrator adds to the calls of a query what Weave's calls query adds
// beyond the stored calls: the objects that refs at expand_columns name, and
// the feedback of each call in summary.weave.feedback.
type callHydrator struct {
	h         *Handler
	projectID string
	// expand holds the expand_columns, shallowest first, as Weave expands
	// them: a column is expanded only once the columns above it have been.
	expand [][]string
	// feedback asks for summary.weave.feedback.
	feedback bool
	// readable caches the authorization of the projects refs name.
	readable map[string]bool
}

func (h *Handler) newCallHydrator(projectID string, expandColumns []string, includeFeedback bool) *callHydrator {
	hy := &callHydrator{h: h, projectID: projectID, feedback: includeFeedback, readable: map[string]bool{}}
	if h.cfg.Objects == nil {
		expandColumns = nil // no object is readable: nothing expands
	}
	for _, col := range expandColumns {
		hy.expand = append(hy.expand, strings.Split(col, "."))
	}
	slices.SortStableFunc(hy.expand, func(a, b []string) int { return cmp.Compare(len(a), len(b)) })
	return hy
}

// active tells whether the hydrator changes anything.
func (hy *callHydrator) active() bool { return len(hy.expand) > 0 || hy.feedback }

// hydrate expands refs and attaches feedback in calls, in place.
func (hy *callHydrator) hydrate(ctx context.Context, calls []*trace.Call) error {
	for _, col := range hy.expand {
		if err := hy.expandColumn(ctx, calls, col); err != nil {
			return err
		}
	}
	if hy.feedback {
		return hy.attachFeedback(ctx, calls)
	}
	return nil
}

// callField is the JSON member of a call that an expand column starts with;
// nil for any other first segment.
func callField(c *trace.Call, name string) *json.RawMessage {
	switch name {
	case "attributes":
		return &c.Attributes
	case "summary":
		return &c.Summary
	case "inputs":
		return &c.Inputs
	case "output":
		return &c.Output
	}
	return nil
}

// expandColumn replaces, in every call, the object or op ref found at col (a
// field, then member names) by the value it names, and records the ref beside
// it as "_ref" ({"_ref": ref} when the value is not an object), as Weave
// does. Refs of projects the caller may not read stay as they are.
func (hy *callHydrator) expandColumn(ctx context.Context, calls []*trace.Call, col []string) error {
	type site struct {
		field *json.RawMessage
		ref   string
	}
	var sites []site
	var refs []string
	for _, c := range calls {
		field := callField(c, col[0])
		if field == nil || !truthy(*field) {
			continue
		}
		value, ok := nestedMember(*field, col[1:])
		if !ok {
			continue
		}
		var s string
		if json.Unmarshal(value, &s) != nil || !ref.IsRef(s) {
			continue
		}
		r, err := objects.ParseObjectRef(s)
		if err != nil {
			continue
		}
		readable, err := hy.canRead(ctx, r.ProjectID())
		if err != nil {
			return err
		}
		if !readable {
			continue
		}
		sites = append(sites, site{field: field, ref: s})
		if !slices.Contains(refs, s) {
			refs = append(refs, s)
		}
	}
	if len(sites) == 0 {
		return nil
	}
	vals := map[string]json.RawMessage{}
	for chunk := range slices.Chunk(refs, objects.MaxRefsPerBatch) {
		res, err := hy.h.cfg.Objects.RefsReadBatch(ctx, &objects.RefsReadBatchReq{Refs: chunk})
		if err != nil {
			return err
		}
		for i, v := range res.Vals {
			vals[chunk[i]] = v
		}
	}
	refKey := append(slices.Clone(col[1:]), "_ref")
	for _, s := range sites {
		val, found := vals[s.ref]
		if !found || val == nil {
			val = json.RawMessage("null")
		}
		quoted, _ := json.Marshal(s.ref)
		if len(col) == 1 {
			*s.field = setNestedMember(val, []string{"_ref"}, quoted)
			continue
		}
		*s.field = setNestedMember(setNestedMember(*s.field, col[1:], val), refKey, quoted)
	}
	return nil
}

// canRead tells whether the caller may read projectID; a refusal is an
// answer, any other failure an error.
func (hy *callHydrator) canRead(ctx context.Context, projectID string) (bool, error) {
	if ok, seen := hy.readable[projectID]; seen {
		return ok, nil
	}
	err := hy.h.authorize(ctx, projectID, false)
	if err != nil && !errors.Is(err, weft.ErrForbidden) && !errors.Is(err, weft.ErrNotFound) {
		return false, err
	}
	hy.readable[projectID] = err == nil
	return err == nil, nil
}

// feedbackFields are the feedback columns Weave puts in summary.weave.feedback.
var feedbackFields = []string{"feedback_type", "weave_ref", "payload", "creator", "created_at", "wb_user_id",
	"runnable_ref", "call_ref", "trigger_ref", "annotation_ref"}

// attachFeedback sets summary.weave.feedback of every call to the feedback
// rows whose ref is the call's (in either ref scheme), oldest first; [] for a
// call without any.
func (hy *callHydrator) attachFeedback(ctx context.Context, calls []*trace.Call) error {
	byCall := map[string][]any{}
	if hy.h.cfg.Feedback != nil && len(calls) > 0 {
		var literals []map[string]string
		for _, c := range calls {
			for _, scheme := range []string{ref.SchemeWeave, ref.SchemeTrace} {
				literals = append(literals, map[string]string{"$literal": scheme + ":///" + c.ProjectID + "/call/" + c.ID})
			}
		}
		expr, _ := json.Marshal(map[string]any{"$in": []any{map[string]string{"$getField": "weave_ref"}, literals}})
		res, err := hy.h.cfg.Feedback.Query(ctx, feedback.QueryReq{ProjectID: hy.projectID, Fields: feedbackFields, Query: &feedback.Query{Expr: expr}})
		if err != nil {
			return err
		}
		for _, row := range res.Result {
			weaveRef, _ := row["weave_ref"].(string)
			_, callID, _ := strings.Cut(weaveRef, "/call/")
			byCall[callID] = append(byCall[callID], row)
		}
	}
	for _, c := range calls {
		rowsOf := byCall[c.ID]
		if rowsOf == nil {
			rowsOf = []any{}
		}
		rows, err := json.Marshal(rowsOf)
		if err != nil {
			return err
		}
		summary := c.Summary
		if !truthy(summary) {
			summary = json.RawMessage("{}")
		}
		c.Summary = setNestedMember(summary, []string{"weave", "feedback"}, rows)
	}
	return nil
}

// truthy is Python's truth of a JSON value: false for null, false, 0, "", {}
// and [].
func truthy(v json.RawMessage) bool {
	var x any
	if json.Unmarshal(v, &x) != nil {
		return false
	}
	switch x := x.(type) {
	case nil:
		return false
	case bool:
		return x
	case float64:
		return x != 0
	case string:
		return x != ""
	case map[string]any:
		return len(x) > 0
	case []any:
		return len(x) > 0
	}
	return true
}

// nestedMember is the value at keys in obj, following object members (the
// last of repeated keys, as a decoded object keeps); ok is false when there
// is none, or when the value is falsy (Weave skips those).
func nestedMember(obj json.RawMessage, keys []string) (json.RawMessage, bool) {
	v := obj
	for _, key := range keys {
		members, ok := jsontext.ObjectMembers(v)
		if !ok {
			return nil, false
		}
		found := false
		for i := len(members) - 1; i >= 0; i-- {
			if members[i].Key == key {
				v, found = members[i].RawValue, true
				break
			}
		}
		if !found {
			return nil, false
		}
	}
	return v, truthy(v)
}

// setNestedMember sets the value at keys in obj to val, as Weave's
// set_nested_key does: a missing member, or one that is not an object on the
// way, becomes an object. Every other member keeps its bytes.
func setNestedMember(obj json.RawMessage, keys []string, val json.RawMessage) json.RawMessage {
	members, ok := jsontext.ObjectMembers(obj)
	if !ok {
		members = nil
	}
	at := -1
	for i := len(members) - 1; i >= 0; i-- {
		if members[i].Key == keys[0] {
			at = i
			break
		}
	}
	next := val
	if len(keys) > 1 {
		child := json.RawMessage("{}")
		if at >= 0 {
			if _, isObject := jsontext.ObjectMembers(members[at].RawValue); isObject {
				child = members[at].RawValue
			}
		}
		next = setNestedMember(child, keys[1:], val)
	}
	if at >= 0 {
		members[at].RawValue = next
	} else {
		members = append(members, jsontext.NewMember(keys[0], next))
	}
	return jsontext.Object(members)
}
