package otlp

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/trace"
)

// Converter turns spans into calls. It is safe for concurrent use.
type Converter struct {
	values values
}

// New returns a Converter for cfg.
func New(cfg Config) *Converter {
	cfg.setDefaults()
	return &Converter{values: values{max: cfg.MaxValueBytes}}
}

// Span is one converted span: its call, or Err.
type Span struct {
	// ProjectID is the project the call belongs to.
	ProjectID string
	// SpanID is the span's hex id, for messages about it.
	SpanID string
	// Call is the span as a completed call of ProjectID.
	Call *trace.CompletedCall
	// Err says why the span is no call; Call is nil then.
	Err error
}

// Limits of the call fields the trace service checks.
const (
	maxOpName      = 128
	maxDisplayName = 1024
	unnamedSpan    = "(unnamed span)"
)

// Convert maps every span of td, in order. defaultProject is the project of
// spans whose resource names none ("" for no default). Logfire's pending
// spans (the start of a span that is sent again when it ends) are left out
// and counted in dropped.
func (c *Converter) Convert(td ptrace.Traces, defaultProject string) (spans []Span, dropped int) {
	spans = make([]Span, 0, td.SpanCount())
	for _, rs := range td.ResourceSpans().All() {
		resource := c.values.mapOf(rs.Resource().Attributes())
		project := projectOf(resource, defaultProject)
		for _, ss := range rs.ScopeSpans().All() {
			scope := map[string]any{"name": ss.Scope().Name(), "version": ss.Scope().Version()}
			if ss.Scope().Attributes().Len() > 0 {
				scope["attributes"] = c.values.mapOf(ss.Scope().Attributes())
			}
			for _, span := range ss.Spans().All() {
				a := c.values.mapOf(span.Attributes())
				if a.str(keyLogfireSpanType) == "pending_span" {
					dropped++
					continue
				}
				spans = append(spans, c.span(project, resource, scope, span, a))
			}
		}
	}
	return spans, dropped
}

// projectOf is the project a resource names, else def.
func projectOf(resource attrs, def string) string {
	entity, project := resource.str(keyWandbEntity), resource.str(keyWandbProject)
	switch {
	case entity != "" && project != "":
		return entity + "/" + project
	case project != "" && strings.Contains(project, "/"):
		return project
	}
	return def
}

func (c *Converter) span(projectID string, resource attrs, scope map[string]any, span ptrace.Span, a attrs) Span {
	out := Span{ProjectID: projectID, SpanID: span.SpanID().String()}
	switch {
	case span.SpanID().IsEmpty():
		out.Err = weft.Errorf(ErrInvalidSpan, "span %q has no span id", clip(span.Name()))
	case span.TraceID().IsEmpty():
		out.Err = weft.Errorf(ErrInvalidSpan, "span %s has no trace id", out.SpanID)
	case span.StartTimestamp() == 0 && span.EndTimestamp() == 0:
		out.Err = weft.Errorf(ErrInvalidSpan, "span %s has no start or end time", out.SpanID)
	case projectID == "":
		out.Err = weft.Errorf(ErrNoProject, "span %s names no project: set the resource attributes %s and %s, or send a project_id header",
			out.SpanID, keyWandbEntity, keyWandbProject)
	}
	if out.Err != nil {
		return out
	}
	started, ended := times(span)
	events := make([]event, 0, span.Events().Len())
	for _, e := range span.Events().All() {
		events = append(events, event{name: e.Name(), attrs: c.values.mapOf(e.Attributes())})
	}
	view := &spanView{name: span.Name(), attrs: a, events: events, model: a.first(modelKeys)}
	inputs, output := content(view)
	if inputs == nil {
		inputs = map[string]any{}
	}

	attributes := map[string]any{"otel_span": c.dump(span, a, events, resource, scope)}
	if kind := a.first(kindKeys); kind != "" {
		attributes["kind"] = kind
	}
	if provider := a.first(providerKeys); provider != "" {
		attributes["provider"] = provider
	}
	if params := modelParameters(a); len(params) > 0 {
		attributes["model_parameters"] = params
	}

	summary := map[string]any{}
	if isModelRequest(a, span.Name()) {
		model := view.model
		if model == "" {
			model = "usage"
		}
		summary["usage"] = map[string]any{model: usageOf(a)}
	}

	call := &trace.CompletedCall{
		ProjectID:  projectID,
		ID:         out.SpanID,
		TraceID:    span.TraceID().String(),
		OpName:     opName(span.Name()),
		StartedAt:  started,
		EndedAt:    ended,
		Attributes: encode(attributes),
		Inputs:     encode(inputs),
		Summary:    encode(summary),
		Output:     encode(output),
		Exception:  exception(span, a, events),
	}
	if !span.ParentSpanID().IsEmpty() {
		parent := span.ParentSpanID().String()
		call.ParentID = &parent
	}
	if name := displayName(a); name != "" {
		call.DisplayName = &name
	}
	if thread := a.first(threadKeys); thread != "" {
		call.ThreadID = &thread
		if is, _ := a[keyWandbIsTurn].(bool); is {
			call.TurnID = &out.SpanID
		}
	}
	out.Call = call
	return out
}

// times are the span's start and end in UTC. A missing end is the start, a
// missing start the end, and an end before the start is clamped to it.
// Nanoseconds beyond int64 (year 2262) are clamped too.
func times(span ptrace.Span) (started, ended time.Time) {
	at := func(ts pcommon.Timestamp) time.Time {
		return time.Unix(0, int64(min(uint64(ts), math.MaxInt64))).UTC()
	}
	startTS, endTS := span.StartTimestamp(), span.EndTimestamp()
	if startTS == 0 {
		startTS = endTS
	}
	if endTS == 0 || endTS < startTS {
		endTS = startTS
	}
	return at(startTS), at(endTS)
}

// opName is the span name, cut to the op name limit with a hash of the
// whole name so that long names that differ stay apart.
func opName(name string) string {
	if name == "" {
		return unnamedSpan
	}
	if utf8.RuneCountInString(name) <= maxOpName {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	suffix := "…" + hex.EncodeToString(sum[:4])
	runes := []rune(name)
	return string(runes[:maxOpName-utf8.RuneCountInString(suffix)]) + suffix
}

func displayName(a attrs) string {
	name := a.first(displayNameKeys)
	if utf8.RuneCountInString(name) > maxDisplayName {
		name = string([]rune(name)[:maxDisplayName-1]) + "…"
	}
	return name
}

// exception is the call's exception: the last "exception" event ("type:
// message" and the stack trace) when the span has one, else the status
// message of an ERROR span, else its error.type.
func exception(span ptrace.Span, a attrs, events []event) *string {
	var last *event
	for i := range events {
		if events[i].name == eventException {
			last = &events[i]
		}
	}
	isError := span.Status().Code() == ptrace.StatusCodeError
	if last == nil && !isError {
		return nil
	}
	var s string
	if last != nil {
		typ, msg := last.attrs.str("exception.type"), last.attrs.str("exception.message")
		switch {
		case typ != "" && msg != "":
			s = typ + ": " + msg
		default:
			s = typ + msg
		}
		// Stacks of some languages (JavaScript, Python's last line) already
		// start with "type: message".
		if stack := last.attrs.str("exception.stacktrace"); strings.HasPrefix(stack, s) {
			s = stack
		} else if stack != "" {
			s += "\n" + stack
		}
	}
	if s == "" {
		s = span.Status().Message()
	}
	if s == "" {
		s = a.str(keyErrorType)
	}
	if s == "" {
		s = "error"
	}
	return &s
}

// modelParameters are the request settings: gen_ai.request.* (but the
// model), OpenInference's llm.invocation_parameters, the AI SDK's
// ai.settings.*.
func modelParameters(a attrs) map[string]any {
	params := map[string]any{}
	if m := mapOf(a[keyOIInvocationParams]); m != nil {
		for k, v := range m {
			params[k] = v
		}
	}
	for k, v := range a {
		for _, prefix := range []string{keyGenAIRequestPrefix, keyAISettingsPrefix} {
			if name, ok := strings.CutPrefix(k, prefix); ok && k != keyGenAIRequestModel {
				params[name] = v
			}
		}
	}
	return params
}

// dump is the raw span, as attributes.otel_span keeps it.
func (c *Converter) dump(span ptrace.Span, a attrs, events []event, resource attrs, scope map[string]any) map[string]any {
	d := map[string]any{
		"name":                 span.Name(),
		"kind":                 span.Kind().String(),
		"trace_id":             span.TraceID().String(),
		"span_id":              span.SpanID().String(),
		"start_time_unix_nano": strconv.FormatUint(uint64(span.StartTimestamp()), 10),
		"end_time_unix_nano":   strconv.FormatUint(uint64(span.EndTimestamp()), 10),
		"status":               map[string]any{"code": span.Status().Code().String(), "message": span.Status().Message()},
		"attributes":           map[string]any(a),
		"resource":             map[string]any{"attributes": map[string]any(resource)},
		"scope":                scope,
	}
	if !span.ParentSpanID().IsEmpty() {
		d["parent_span_id"] = span.ParentSpanID().String()
	}
	if ts := span.TraceState().AsRaw(); ts != "" {
		d["trace_state"] = ts
	}
	if len(events) > 0 {
		evs := make([]any, len(events))
		for i, e := range span.Events().All() {
			evs[i] = map[string]any{"name": e.Name(), "time_unix_nano": strconv.FormatUint(uint64(e.Timestamp()), 10),
				"attributes": map[string]any(events[i].attrs)}
		}
		d["events"] = evs
	}
	if span.Links().Len() > 0 {
		links := make([]any, 0, span.Links().Len())
		for _, l := range span.Links().All() {
			links = append(links, map[string]any{"trace_id": l.TraceID().String(), "span_id": l.SpanID().String(),
				"attributes": map[string]any(c.values.mapOf(l.Attributes()))})
		}
		d["links"] = links
	}
	for name, n := range map[string]uint32{"dropped_attributes_count": span.DroppedAttributesCount(),
		"dropped_events_count": span.DroppedEventsCount(), "dropped_links_count": span.DroppedLinksCount()} {
		if n > 0 {
			d[name] = n
		}
	}
	return d
}

// encode writes v as JSON without HTML escapes. Every value here came from
// a decoded span, so encoding cannot fail; invalid UTF-8 becomes U+FFFD.
func encode(v any) json.RawMessage {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return json.RawMessage("null")
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// clip shortens span text quoted in error messages.
func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}
