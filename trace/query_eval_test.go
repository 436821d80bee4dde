package trace_test

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/weftlabs/weft/trace"
	"github.com/weftlabs/weft/trace/callquery"
)

// This file is an evaluator of the calls query language over calls held in
// memory, written from the semantics package callquery states and apart from
// the SQL compiler: the fuzzer and the Weave cases check that the databases
// answer as it does.

// memCall is a call and its feedback as the evaluator reads them.
type memCall struct {
	trace.CompletedCall
	running  bool
	userID   string
	feedback []memFeedback
}

type memFeedback struct {
	id, kind                string
	payload                 string
	runnableRef, triggerRef *string
	createdAt               time.Time
}

// errEvalInvalid is what the evaluator answers a query the language refuses.
var errEvalInvalid = errors.New("invalid query")

// tri is a three-valued truth: true, false or null.
type tri int8

const (
	triFalse tri = iota
	triNull
	triTrue
)

func triOf(b bool) tri {
	if b {
		return triTrue
	}
	return triFalse
}

// memValue is a value: nil, bool, int64, float64, string or time.Time.
type memValue struct {
	v any
	// field and lit are set for a bare $getField and a $literal.
	field *callquery.Field
	lit   *callquery.Literal
}

func (m memValue) dynamic() bool {
	return m.field != nil && (m.field.Kind == callquery.Dynamic || m.field.Kind == callquery.Feedback)
}

// evaluator evaluates one query over one call. rows binds each feedback
// field read (by its position in the operation) to the row it reads.
type evaluator struct {
	call *memCall
	// bound are the values of the feedback fields of the operation being
	// evaluated, in the order the operation reads them; next is the next one.
	bound []string
	next  int
	// collect, when set, records the feedback fields an operation reads
	// instead of reading them.
	collect *[]callquery.Field
}

// matches evaluates q over call: true, false or null; errEvalInvalid for a
// query the language refuses.
func matches(q *callquery.Query, call *memCall) (tri, error) {
	e := &evaluator{call: call}
	return e.cond(q.Expr)
}

func (e *evaluator) cond(x callquery.Expr) (tri, error) {
	switch x := x.(type) {
	case *callquery.And:
		out := triTrue
		for _, t := range x.Terms {
			v, err := e.cond(t)
			if err != nil {
				return 0, err
			}
			out = min(out, v)
		}
		return out, nil
	case *callquery.Or:
		out := triFalse
		for _, t := range x.Terms {
			v, err := e.cond(t)
			if err != nil {
				return 0, err
			}
			out = max(out, v)
		}
		return out, nil
	case *callquery.Not:
		v, err := e.cond(x.Term)
		if err != nil {
			return 0, err
		}
		return 2 - v, nil
	}
	return e.anyRow(x)
}

// anyRow evaluates an operation for every combination of the feedback rows
// its feedback fields read ("" for a field whose type has no row): true when
// any is true, else null when any is null, else false.
func (e *evaluator) anyRow(x callquery.Expr) (tri, error) {
	var fields []callquery.Field
	probe := &evaluator{call: e.call, collect: &fields}
	if _, err := probe.leaf(x); err != nil {
		return 0, err
	}
	choices := make([][]string, len(fields))
	for i, f := range fields {
		choices[i] = feedbackValues(e.call, f)
	}
	out := triFalse
	bound := make([]string, len(fields))
	var walk func(i int) error
	walk = func(i int) error {
		if i == len(fields) {
			inner := &evaluator{call: e.call, bound: bound}
			v, err := inner.leaf(x)
			out = max(out, v)
			return err
		}
		for _, v := range choices[i] {
			bound[i] = v
			if err := walk(i + 1); err != nil {
				return err
			}
		}
		return nil
	}
	return out, walk(0)
}

// leaf evaluates an operation that is not $and, $or or $not, or an operand
// used as a condition.
func (e *evaluator) leaf(x callquery.Expr) (tri, error) {
	switch x := x.(type) {
	case *callquery.Compare:
		return e.compare(x)
	case *callquery.In:
		return e.in(x)
	case *callquery.Contains:
		in, err := e.value(x.Input)
		if err != nil {
			return 0, err
		}
		sub, err := e.value(x.Substr)
		if err != nil {
			return 0, err
		}
		s, ok1 := in.v.(string)
		t, ok2 := sub.v.(string)
		if !ok1 || !ok2 || !isText(in) || !isText(sub) {
			return triFalse, nil
		}
		if x.CaseInsensitive {
			s, t = asciiLower(s), asciiLower(t)
		}
		return triOf(strings.Contains(s, t)), nil
	}
	v, err := e.value(x)
	if err != nil {
		return 0, err
	}
	return truth(v)
}

func isText(v memValue) bool {
	_, ok := v.v.(string)
	return ok
}

func asciiLower(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'A' && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}, s)
}

func truth(v memValue) (tri, error) {
	switch x := v.v.(type) {
	case typedNull:
		if x.kind == "text" || x.kind == "time" {
			return 0, errEvalInvalid
		}
		return triNull, nil
	case nil:
		return triNull, nil
	case bool:
		return triOf(x), nil
	case int64:
		return triOf(x != 0), nil
	case float64:
		return triOf(x != 0), nil
	}
	return 0, errEvalInvalid
}

// kindOf names the kind of a value as the language types it; the type of a
// NULL value is carried by typed (see value).
func (e *evaluator) value(x callquery.Expr) (memValue, error) {
	switch x := x.(type) {
	case *callquery.Literal:
		return memValue{v: x.Value, lit: x}, nil
	case *callquery.FieldRef:
		v, err := e.field(x.Field)
		return memValue{v: v, field: &x.Field}, err
	case *callquery.Convert:
		in, err := e.value(x.Input)
		if err != nil {
			return memValue{}, err
		}
		return e.convert(in, x.Input, x.To)
	}
	t, err := e.cond(x)
	if err != nil {
		return memValue{}, err
	}
	switch t {
	case triTrue:
		return memValue{v: true}, nil
	case triFalse:
		return memValue{v: false}, nil
	}
	return memValue{v: typedNull{kind: "bool"}}, nil
}

// typedNull is a null value whose kind the language knows (a null column of
// a type, a failed conversion): it decides what the value compares with.
type typedNull struct{ kind string }

func (e *evaluator) field(f callquery.Field) (any, error) {
	c := e.call
	switch f.Kind {
	case callquery.Column:
		return columnValue(c, f), nil
	case callquery.Dynamic:
		return jsonText(memberOf(c, f.Root), f.Path), nil
	case callquery.Derived:
		switch f.Derived {
		case callquery.Status:
			return statusOf(c), nil
		case callquery.LatencyMS:
			if c.running {
				return typedNull{"int"}, nil
			}
			return c.EndedAt.Sub(c.StartedAt).Microseconds() / 1000, nil
		}
		return traceNameOf(c), nil
	case callquery.Feedback:
		if e.collect != nil {
			*e.collect = append(*e.collect, f)
			return "", nil
		}
		v := e.bound[e.next]
		e.next++
		return v, nil
	}
	return nil, errEvalInvalid
}

func columnValue(c *memCall, f callquery.Field) any {
	text := func(p *string) any {
		if p == nil {
			return typedNull{"text"}
		}
		return *p
	}
	integer := func(p *int64) any {
		if p == nil {
			return typedNull{"int"}
		}
		return *p
	}
	switch f.Column {
	case "id":
		return c.ID
	case "project_id":
		return c.ProjectID
	case "trace_id":
		return c.TraceID
	case "op_name":
		return c.OpName
	case "parent_id":
		return text(c.ParentID)
	case "thread_id":
		return text(c.ThreadID)
	case "turn_id":
		return text(c.TurnID)
	case "display_name":
		return text(c.DisplayName)
	case "exception":
		return text(c.Exception)
	case "pf_user_id":
		return c.userID
	case "pf_run_id":
		return text(c.PfRunID)
	case "pf_run_step":
		return integer(c.PfRunStep)
	case "pf_run_step_end":
		if c.running {
			return typedNull{"int"}
		}
		return integer(c.PfRunStepEnd)
	case "started_at":
		return c.StartedAt
	case "ended_at":
		if c.running {
			return typedNull{"time"}
		}
		return c.EndedAt
	case "deleted_at":
		return typedNull{"time"}
	}
	return nil
}

// memberOf is the JSON of a call member as stored; nil when there is none.
func memberOf(c *memCall, root string) []byte {
	switch root {
	case "inputs":
		return c.Inputs
	case "attributes":
		return c.Attributes
	}
	if c.running {
		return nil
	}
	if root == "output" {
		return c.Output
	}
	return c.Summary
}

// jsonAt is the JSON value at path in doc, nil when there is none.
func jsonAt(doc []byte, path []callquery.Step) []byte {
	v := bytes.TrimSpace(doc)
	for _, s := range path {
		if len(v) == 0 {
			return nil
		}
		if s.IsIndex() {
			var arr []json.RawMessage
			if v[0] != '[' || json.Unmarshal(v, &arr) != nil || s.Index >= len(arr) {
				return nil
			}
			v = bytes.TrimSpace(arr[s.Index])
			continue
		}
		var obj map[string]json.RawMessage
		if v[0] != '{' || json.Unmarshal(v, &obj) != nil {
			return nil
		}
		next, ok := obj[s.Key]
		if !ok {
			return nil
		}
		v = bytes.TrimSpace(next)
	}
	return v
}

// jsonText is the language's text of the JSON value at path.
func jsonText(doc []byte, path []callquery.Step) string {
	v := jsonAt(doc, path)
	if len(v) == 0 || string(v) == "null" {
		return ""
	}
	switch v[0] {
	case '"':
		var s string
		_ = json.Unmarshal(v, &s)
		return s
	case '{', '[':
		var b bytes.Buffer
		_ = json.Compact(&b, v)
		return b.String()
	}
	return string(v) // a number as written, true, false
}

func jsonPresent(doc []byte, path []callquery.Step) bool {
	v := jsonAt(doc, path)
	return len(v) > 0 && string(v) != "null"
}

func statusOf(c *memCall) string {
	switch {
	case c.Exception != nil && *c.Exception != "":
		return trace.StatusError
	case c.running:
		return trace.StatusRunning
	}
	var s struct {
		StatusCounts struct {
			Error json.RawMessage `json:"error"`
		} `json:"status_counts"`
	}
	_ = json.Unmarshal(c.Summary, &s)
	if n, err := strconv.ParseFloat(string(s.StatusCounts.Error), 64); err == nil && n > 0 {
		return trace.StatusDescendantError
	}
	return trace.StatusSuccess
}

func traceNameOf(c *memCall) string {
	if c.DisplayName != nil && *c.DisplayName != "" {
		return *c.DisplayName
	}
	if strings.HasPrefix(c.OpName, "weave:///") || strings.HasPrefix(c.OpName, "trace:///") {
		seg := c.OpName[strings.LastIndex(c.OpName, "/")+1:]
		name, _, found := strings.Cut(seg, ":")
		if !found {
			return ""
		}
		return name
	}
	return c.OpName
}

// feedbackValues are the values a feedback field reads on the call: one per
// row of its type, [""] when there is none.
func feedbackValues(c *memCall, f callquery.Field) []string {
	var out []string
	for _, row := range c.feedback {
		if f.FeedbackType != callquery.AnyFeedbackType && row.kind != f.FeedbackType {
			continue
		}
		out = append(out, feedbackText(row, f))
	}
	if out == nil {
		return []string{""}
	}
	return out
}

func feedbackText(row memFeedback, f callquery.Field) string {
	switch f.FeedbackColumn {
	case "runnable_ref":
		return deref(row.runnableRef)
	case "trigger_ref":
		return deref(row.triggerRef)
	}
	return jsonText([]byte(row.payload), f.Path)
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

var (
	intText   = regexp.MustCompile(`^[+-]?([0-9]{1,40})$`)
	floatText = regexp.MustCompile(`^[ \t\r\n]*-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]{1,4})?[ \t\r\n]*$`)
)

func intOfText(s string) any {
	if !intText.MatchString(s) {
		return typedNull{"int"}
	}
	n, err := strconv.ParseInt(strings.TrimPrefix(s, "+"), 10, 64)
	if err != nil {
		return typedNull{"int"}
	}
	return n
}

func floatOfText(s string) any {
	if !floatText.MatchString(s) {
		return typedNull{"float"}
	}
	f, err := strconv.ParseFloat(strings.Trim(s, " \t\r\n"), 64)
	if math.IsInf(f, 0) || (err != nil && !errors.Is(err, strconv.ErrRange)) {
		return typedNull{"float"}
	}
	if math.Abs(f) < 1e-320 {
		return 0.0
	}
	return f
}

func intOfFloat(f float64) any {
	if f != math.Trunc(f) || math.Abs(f) >= 9.2e18 {
		return typedNull{"int"}
	}
	return int64(f)
}

// kind is the language's kind of v: null, bool, int, float, text or time.
func kind(v any) string {
	switch v := v.(type) {
	case typedNull:
		return v.kind
	case nil:
		return "null"
	case bool:
		return "bool"
	case int64:
		return "int"
	case float64:
		return "float"
	case string:
		return "text"
	case time.Time:
		return "time"
	}
	return "?"
}

func (e *evaluator) convert(in memValue, input callquery.Expr, to callquery.Cast) (memValue, error) {
	k := kind(in.v)
	_, isNull := in.v.(typedNull)
	if in.v == nil {
		isNull = true
	}
	out := func(v any) (memValue, error) { return memValue{v: v}, nil }
	switch to {
	case callquery.ToExists:
		if f, ok := input.(*callquery.FieldRef); ok && f.Field.Kind == callquery.Dynamic {
			return out(jsonPresent(memberOf(e.call, f.Field.Root), f.Field.Path))
		}
		return out(!isNull)
	case callquery.ToString:
		switch {
		case k == "text" || k == "null":
			if isNull {
				return out(typedNull{"text"})
			}
			return out(in.v)
		case k == "int":
			if isNull {
				return out(typedNull{"text"})
			}
			return out(strconv.FormatInt(in.v.(int64), 10))
		case k == "bool":
			if isNull {
				return out(typedNull{"text"})
			}
			return out(strconv.FormatBool(in.v.(bool)))
		}
		return memValue{}, errEvalInvalid
	case callquery.ToInt:
		if isNull {
			return out(typedNull{"int"})
		}
		switch v := in.v.(type) {
		case string:
			return out(intOfText(v))
		case int64:
			return out(v)
		case float64:
			return out(intOfFloat(v))
		}
		return out(typedNull{"int"})
	case callquery.ToDouble:
		if isNull {
			return out(typedNull{"float"})
		}
		switch v := in.v.(type) {
		case string:
			return out(floatOfText(v))
		case int64:
			return out(float64(v))
		case float64:
			return out(v)
		}
		return out(typedNull{"float"})
	case callquery.ToBool:
		if isNull {
			return out(typedNull{"int"})
		}
		inRange := func(v any) any {
			if n, ok := v.(int64); ok && n >= 0 && n <= 255 {
				return n
			}
			return typedNull{"int"}
		}
		switch v := in.v.(type) {
		case string:
			switch v {
			case "true":
				return out(int64(1))
			case "false":
				return out(int64(0))
			}
			return out(inRange(intOfText(v)))
		case int64:
			return out(inRange(v))
		case float64:
			return out(inRange(intOfFloat(v)))
		case bool:
			if v {
				return out(int64(1))
			}
			return out(int64(0))
		}
		return out(typedNull{"int"})
	}
	return memValue{}, errEvalInvalid
}

func (e *evaluator) operand(x callquery.Expr, other callquery.Expr) (memValue, error) {
	v, err := e.value(x)
	if err != nil {
		return v, err
	}
	if l, ok := other.(*callquery.Literal); ok && v.dynamic() && callquery.ComparisonCast(l) != "" {
		return e.convert(v, x, callquery.ComparisonCast(l))
	}
	return v, nil
}

// timeLiteral reads a literal compared with a time column as a time.
func timeLiteral(v memValue, other memValue) memValue {
	if v.lit == nil || other.field == nil || kind(other.v) != "time" {
		return v
	}
	switch x := v.lit.Value.(type) {
	case int64:
		return memValue{v: time.Unix(x, 0).UTC(), lit: v.lit}
	case float64:
		if math.Abs(x) > 1e11 {
			return v
		}
		sec, frac := math.Modf(x)
		return memValue{v: time.Unix(int64(sec), int64(math.Round(frac*1e6))*1000).UTC(), lit: v.lit}
	case string:
		if t, ok := trace.ParseISOTime(x); ok {
			return memValue{v: t, lit: v.lit}
		}
	}
	return v
}

func numeric(k string) bool { return k == "int" || k == "float" || k == "bool" }

// compareValues compares l and r: -1, 0 or 1, and whether they compare.
func compareValues(l, r any) (int, bool) {
	kl, kr := kind(l), kind(r)
	_, nl := l.(typedNull)
	_, nr := r.(typedNull)
	if nl || nr || l == nil || r == nil {
		return 0, false
	}
	switch {
	case numeric(kl) && numeric(kr):
		a, b := asNumber(l), asNumber(r)
		if ai, ok := a.(int64); ok {
			if bi, ok := b.(int64); ok {
				return cmp.Compare(ai, bi), true
			}
		}
		return cmp.Compare(asFloat(a), asFloat(b)), true
	case kl == "text" && kr == "text":
		return strings.Compare(l.(string), r.(string)), true
	case kl == "time" && kr == "time":
		return l.(time.Time).Compare(r.(time.Time)), true
	}
	return 0, false
}

func asNumber(v any) any {
	if b, ok := v.(bool); ok {
		if b {
			return int64(1)
		}
		return int64(0)
	}
	return v
}

func asFloat(v any) float64 {
	if n, ok := v.(int64); ok {
		return float64(n)
	}
	return v.(float64)
}

func isNullLit(x callquery.Expr) bool {
	l, ok := x.(*callquery.Literal)
	return ok && l.Value == nil
}

func (e *evaluator) compare(x *callquery.Compare) (tri, error) {
	if isNullLit(x.Left) || isNullLit(x.Right) {
		other := x.Left
		if isNullLit(x.Left) {
			other = x.Right
		}
		if f, ok := other.(*callquery.FieldRef); ok && f.Field.Kind == callquery.Feedback && x.Op == callquery.Eq {
			if e.collect != nil {
				return triNull, nil
			}
			for _, row := range e.call.feedback {
				if f.Field.FeedbackType == callquery.AnyFeedbackType || row.kind == f.Field.FeedbackType {
					return triFalse, nil
				}
			}
			return triTrue, nil
		}
		v, err := e.value(other)
		if err != nil || x.Op != callquery.Eq {
			return triNull, err
		}
		_, isNull := v.v.(typedNull)
		return triOf(isNull || v.v == nil), nil
	}
	l, err := e.operand(x.Left, x.Right)
	if err != nil {
		return 0, err
	}
	r, err := e.operand(x.Right, x.Left)
	if err != nil {
		return 0, err
	}
	l, r = timeLiteral(l, r), timeLiteral(r, l)
	c, ok := compareValues(l.v, r.v)
	if !ok {
		return triNull, nil
	}
	switch x.Op {
	case callquery.Eq:
		return triOf(c == 0), nil
	case callquery.Gt:
		return triOf(c > 0), nil
	case callquery.Gte:
		return triOf(c >= 0), nil
	case callquery.Lt:
		return triOf(c < 0), nil
	}
	return triOf(c <= 0), nil
}

func (e *evaluator) in(x *callquery.In) (tri, error) {
	l, err := e.value(x.Left)
	if err != nil {
		return 0, err
	}
	if cast := callquery.ListCast(x.List); l.dynamic() && cast != "" {
		if l, err = e.convert(l, x.Left, cast); err != nil {
			return 0, err
		}
	}
	var items []memValue
	for _, item := range x.List {
		v, err := e.value(item)
		if err != nil {
			return 0, err
		}
		items = append(items, timeLiteral(v, l))
	}
	if _, isNull := l.v.(typedNull); isNull || l.v == nil {
		return triNull, nil
	}
	for _, v := range items {
		if c, ok := compareValues(l.v, v.v); ok && c == 0 {
			return triTrue, nil
		}
	}
	return triFalse, nil
}

// sortCalls orders calls as a query sorted by sortBy does (id ascending
// breaking ties); errEvalInvalid for a field the language refuses.
func sortCalls(calls []*memCall, sortBy []trace.SortBy) error {
	type term struct {
		key  func(c *memCall) any
		desc bool
		// nullsLast puts null keys last in either direction.
		nullsLast bool
	}
	var terms []term
	for _, sb := range sortBy {
		desc := strings.EqualFold(sb.Direction, "desc")
		f, err := callquery.ParseField(sb.Field)
		if err != nil {
			return errEvalInvalid
		}
		switch f.Kind {
		case callquery.Column:
			nullable := !slices.Contains([]string{"id", "project_id", "trace_id", "op_name", "started_at"}, f.Column)
			terms = append(terms, term{key: func(c *memCall) any { return columnValue(c, f) }, desc: desc, nullsLast: nullable})
		case callquery.Derived:
			e := &evaluator{}
			terms = append(terms, term{key: func(c *memCall) any { e.call = c; v, _ := e.field(f); return v }, desc: desc, nullsLast: true})
		default:
			text := func(c *memCall) string {
				if f.Kind == callquery.Dynamic {
					return jsonText(memberOf(c, f.Root), f.Path)
				}
				return newestFeedback(c, f)
			}
			present := func(c *memCall) bool {
				if f.Kind == callquery.Dynamic {
					return jsonPresent(memberOf(c, f.Root), f.Path)
				}
				return newestFeedback(c, f) != ""
			}
			terms = append(terms,
				term{key: func(c *memCall) any { return triOf(present(c)) }, desc: true},
				term{key: func(c *memCall) any { return floatOfText(text(c)) }, desc: desc, nullsLast: true},
				term{key: func(c *memCall) any { return text(c) }, desc: desc})
		}
	}
	slices.SortStableFunc(calls, func(a, b *memCall) int {
		for _, t := range terms {
			ka, kb := t.key(a), t.key(b)
			_, na := ka.(typedNull)
			_, nb := kb.(typedNull)
			switch {
			case na && nb:
				continue
			case na || nb:
				if t.nullsLast {
					if na {
						return 1
					}
					return -1
				}
				// The database's own place for NULL: first ascending.
				c := 1
				if na {
					c = -1
				}
				if t.desc {
					c = -c
				}
				return c
			}
			var c int
			switch x := ka.(type) {
			case tri:
				c = cmp.Compare(x, kb.(tri))
			default:
				c, _ = compareValues(ka, kb)
			}
			if t.desc {
				c = -c
			}
			if c != 0 {
				return c
			}
		}
		return strings.Compare(a.ID, b.ID)
	})
	return nil
}

// newestFeedback is the value a feedback field sorts by: its newest row's.
func newestFeedback(c *memCall, f callquery.Field) string {
	var newest *memFeedback
	for i, row := range c.feedback {
		if f.FeedbackType != callquery.AnyFeedbackType && row.kind != f.FeedbackType {
			continue
		}
		if newest == nil || row.createdAt.After(newest.createdAt) || row.createdAt.Equal(newest.createdAt) && row.id > newest.id {
			newest = &c.feedback[i]
		}
	}
	if newest == nil {
		return ""
	}
	return feedbackText(*newest, f)
}

// evalQuery is what a calls query with query (raw, nil for none) and sortBy
// returns of calls, in order.
func evalQuery(calls []*memCall, raw []byte, sortBy []trace.SortBy) ([]string, error) {
	q, err := callquery.Parse(raw)
	if err != nil {
		return nil, errEvalInvalid
	}
	var kept []*memCall
	for _, c := range calls {
		if q != nil {
			t, err := matches(q, c)
			if err != nil {
				return nil, err
			}
			if t != triTrue {
				continue
			}
		}
		kept = append(kept, c)
	}
	if sortBy == nil {
		sortBy = []trace.SortBy{{Field: "started_at"}}
	}
	if err := sortCalls(kept, sortBy); err != nil {
		return nil, err
	}
	out := make([]string, len(kept))
	for i, c := range kept {
		out[i] = c.ID
	}
	return out, nil
}
