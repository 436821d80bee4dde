package trace

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/database"
	"github.com/weftlabs/weft/trace/callquery"
)

// queryCompiler compiles a calls query (package callquery states its
// semantics) into a SQL condition over the calls of one project, read under
// the alias c. Every value of the query is an argument; the SQL text is made
// of fixed fragments and the names the compiler makes.
type queryCompiler struct {
	dialect   database.Dialect
	projectID string
	// expand are the expand_columns of the request: fields under them are
	// values of the objects their refs name, which a query cannot read.
	expand []string
	// names numbers the aliases the compiler makes.
	names int
	// feedback are the feedback fields read by the operation being compiled.
	feedback []feedbackSource
}

// A vkind is the kind of a value.
type vkind int

const (
	kNull vkind = iota
	kBool
	kInt
	kFloat
	kText
	kTime
)

func (k vkind) String() string {
	return [...]string{"null", "boolean", "integer", "double", "text", "time"}[k]
}

// value is a compiled operand.
type value struct {
	database.Expr
	kind vkind
	// field is the field of a bare $getField, lit the value of a $literal.
	field *callquery.Field
	lit   *callquery.Literal
}

// dynamic tells whether v is a bare dynamic or feedback field, which
// comparisons with number and boolean literals convert first.
func (v value) dynamic() bool {
	return v.field != nil && (v.field.Kind == callquery.Dynamic || v.field.Kind == callquery.Feedback)
}

// feedbackSource is a feedback field read from the feedback rows joined under
// alias.
type feedbackSource struct {
	alias string
	field callquery.Field
}

// nullBool is a NULL typed as a condition: PostgreSQL types a bare NULL as
// text where nothing else says what it is.
const nullBool = "CAST(NULL AS BOOLEAN)"

// typedNull is a NULL of kind k.
func (c *queryCompiler) typedNull(k vkind) database.Expr {
	switch k {
	case kBool:
		return database.Expr{SQL: nullBool}
	case kInt:
		return database.Expr{SQL: "CAST(NULL AS BIGINT)"}
	case kFloat:
		return database.Expr{SQL: "CAST(NULL AS " + c.dialect.FloatType() + ")"}
	case kText:
		return database.Expr{SQL: "CAST(NULL AS TEXT)"}
	}
	return database.Expr{SQL: "NULL"}
}

func invalidQueryf(format string, args ...any) error {
	return weft.WithFields(ErrInvalidQuery, map[string]any{"param": "query"}, format, args...)
}

// name is a fresh alias.
func (c *queryCompiler) name(prefix string) string {
	c.names++
	return prefix + strconv.Itoa(c.names)
}

// condition compiles the whole query.
func (c *queryCompiler) condition(q *callquery.Query) (database.Expr, error) {
	return c.cond(q.Expr)
}

// prefilters are cheap conditions that every call the query matches meets:
// for each term of the query's top-level $and that reads a string out of
// a JSON member ($contains of a string literal, $eq or $in with string
// literals), that the member's stored text holds the string. They let the
// database skip reading the JSON of most calls. Only calls the query
// matches (true, not null) need to meet them, which holds of the top-level
// terms alone.
func (c *queryCompiler) prefilters(q *callquery.Query) []database.Expr {
	terms := []callquery.Expr{q.Expr}
	if and, ok := q.Expr.(*callquery.And); ok {
		terms = and.Terms
	}
	var out []database.Expr
	for _, t := range terms {
		if p, ok := c.prefilter(t); ok {
			out = append(out, p)
		}
	}
	return out
}

// prefilter is the prefilter of one top-level term, if it has one.
func (c *queryCompiler) prefilter(t callquery.Expr) (database.Expr, bool) {
	var field callquery.Expr
	var needles []callquery.Expr
	caseInsensitive := false
	switch t := t.(type) {
	case *callquery.Contains:
		field, needles, caseInsensitive = t.Input, []callquery.Expr{t.Substr}, t.CaseInsensitive
	case *callquery.Compare:
		if t.Op != callquery.Eq {
			return database.Expr{}, false
		}
		field, needles = t.Left, []callquery.Expr{t.Right}
		if _, isLiteral := t.Left.(*callquery.Literal); isLiteral {
			field, needles = t.Right, []callquery.Expr{t.Left}
		}
	case *callquery.In:
		field, needles = t.Left, t.List
	default:
		return database.Expr{}, false
	}
	f, ok := field.(*callquery.FieldRef)
	if !ok || f.Field.Kind != callquery.Dynamic || len(needles) == 0 || c.checkExpanded(f.Field.Name) != nil {
		return database.Expr{}, false
	}
	var parts []string
	var args []any
	for _, n := range needles {
		l, ok := n.(*callquery.Literal)
		if !ok {
			return database.Expr{}, false
		}
		s, isString := l.Value.(string)
		if !isString || !verbatimInJSON(s) {
			return database.Expr{}, false
		}
		p := c.dialect.RawTextHolds("c."+f.Field.Root, s, caseInsensitive)
		parts, args = append(parts, p.SQL), append(args, p.Args...)
	}
	return database.Expr{SQL: "(" + strings.Join(parts, " OR ") + ")", Args: args}, true
}

// verbatimInJSON tells whether s, found in the text of a JSON value, is
// found in the JSON text itself unless that text holds a \u or \/ escape:
// s has no character that JSON escapes otherwise (a quote, a backslash, a
// control character) nor any that separates JSON tokens (braces, brackets,
// colons, commas), so that it lies within one token of the value.
func verbatimInJSON(s string) bool {
	return !strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || strings.ContainsRune(`"\{}[]:,`, r) })
}

// cond compiles an expression used as a condition.
func (c *queryCompiler) cond(e callquery.Expr) (database.Expr, error) {
	switch e := e.(type) {
	case *callquery.And, *callquery.Or:
		terms, joiner := andOr(e)
		if len(terms) == 1 {
			return c.cond(terms[0])
		}
		var parts []string
		var args []any
		for _, t := range terms {
			x, err := c.cond(t)
			if err != nil {
				return database.Expr{}, err
			}
			parts = append(parts, x.SQL)
			args = append(args, x.Args...)
		}
		return database.Expr{SQL: "(" + strings.Join(parts, joiner) + ")", Args: args}, nil
	case *callquery.Not:
		x, err := c.cond(e.Term)
		if err != nil {
			return database.Expr{}, err
		}
		return database.Expr{SQL: "(NOT " + x.SQL + ")", Args: x.Args}, nil
	case *callquery.Compare:
		return c.anyRow(func() (database.Expr, error) { return c.compare(e.Op, e.Left, e.Right) })
	case *callquery.In:
		return c.anyRow(func() (database.Expr, error) { return c.in(e) })
	case *callquery.Contains:
		return c.anyRow(func() (database.Expr, error) { return c.contains(e) })
	}
	return c.anyRow(func() (database.Expr, error) {
		v, err := c.value(e)
		if err != nil {
			return database.Expr{}, err
		}
		return c.truth(v)
	})
}

func andOr(e callquery.Expr) ([]callquery.Expr, string) {
	if a, ok := e.(*callquery.And); ok {
		return a.Terms, " AND "
	}
	return e.(*callquery.Or).Terms, " OR "
}

// truth is a value used as a condition: booleans as they are, numbers true
// when not zero, null null. Text and times are no condition.
func (c *queryCompiler) truth(v value) (database.Expr, error) {
	switch v.kind {
	case kNull:
		return database.Expr{SQL: nullBool}, nil
	case kBool:
		return v.Expr, nil
	case kInt, kFloat:
		return database.Expr{SQL: "(" + v.SQL + " <> 0)", Args: v.Args}, nil
	}
	return database.Expr{}, invalidQueryf("a %s value is not a condition; compare it with $eq, $gt, … or $contains", v.kind)
}

// anyRow compiles one operation; when it reads feedback fields, it holds when
// it holds for any of the call's feedback rows of their types (each field
// reading "" when the call has none), and is null when it is null for some
// row and true for none.
func (c *queryCompiler) anyRow(build func() (database.Expr, error)) (database.Expr, error) {
	outer := c.feedback
	c.feedback = nil
	cond, err := build()
	sources := c.feedback
	c.feedback = outer
	if err != nil || len(sources) == 0 {
		return cond, err
	}
	d := c.dialect
	var from strings.Builder
	from.WriteString("(SELECT 1 AS one) AS " + c.name("fbo"))
	var args []any
	args = append(args, cond.Args...)
	args = append(args, cond.Args...)
	for _, s := range sources {
		on := c.feedbackRows(s.alias, s.field.FeedbackType)
		from.WriteString(" LEFT JOIN feedback AS " + s.alias + " ON " + on.SQL)
		args = append(args, on.Args...)
	}
	// Each row's truth is a column of a subquery that max() reads, so that
	// the aggregate belongs to the subquery whatever the condition reads.
	r := c.name("fbr")
	return database.Expr{
		SQL: "(CASE (SELECT max(" + r + ".t) FROM (SELECT CASE WHEN " + cond.SQL + " THEN 2 WHEN NOT " + cond.SQL + " THEN 0 ELSE 1 END AS t FROM " +
			from.String() + ") AS " + r + ") WHEN 2 THEN " + d.True() + " WHEN 0 THEN " + d.False() + " END)",
		Args: args,
	}, nil
}

// feedbackRows is the condition that the feedback row under alias is one of
// the call's (its ref is the call's in either scheme) of type feedbackType
// (any type for callquery.AnyFeedbackType). The project is bound, not taken
// from c, so that Citus sees that the rows come from one shard.
func (c *queryCompiler) feedbackRows(alias, feedbackType string) database.Expr {
	e := database.Expr{
		SQL:  "(" + alias + ".project_id = ? AND " + alias + ".trace_ref IN ('weave:///' || c.project_id || '/call/' || c.id, 'trace:///' || c.project_id || '/call/' || c.id)",
		Args: []any{c.projectID},
	}
	if feedbackType != callquery.AnyFeedbackType {
		e.SQL += " AND " + alias + ".feedback_type = ?"
		e.Args = append(e.Args, feedbackType)
	}
	e.SQL += ")"
	return e
}

// feedbackValue is the text a feedback field reads from the row under alias
// ("" when the row is missing).
func (c *queryCompiler) feedbackValue(alias string, f callquery.Field) database.Expr {
	if f.FeedbackColumn != "payload" {
		return database.Expr{SQL: "coalesce(" + alias + "." + f.FeedbackColumn + ", '')"}
	}
	return c.dialect.JSONText(c.dialect.JSONTextDoc(alias+".payload"), jsonSteps(f.Path), c.name("jv"))
}

func jsonSteps(path []callquery.Step) []database.JSONStep {
	steps := make([]database.JSONStep, len(path))
	for i, s := range path {
		steps[i] = database.JSONStep{Key: s.Key, Index: s.Index}
	}
	return steps
}

// checkExpanded refuses a field read through an expanded ref.
func (c *queryCompiler) checkExpanded(name string) error {
	for _, col := range c.expand {
		if name == col || strings.HasPrefix(name, col+".") {
			return invalidQueryf("%s is read through the expanded ref %s: filtering and sorting through expanded refs is not supported", clip(name), clip(col))
		}
	}
	return nil
}

// fieldValue compiles a bare field.
func (c *queryCompiler) fieldValue(f callquery.Field) (value, error) {
	if err := c.checkExpanded(f.Name); err != nil {
		return value{}, err
	}
	v := value{field: &f}
	switch f.Kind {
	case callquery.Column:
		v.Expr = database.Expr{SQL: "c." + f.Column}
		v.kind = map[callquery.Type]vkind{callquery.Text: kText, callquery.Integer: kInt, callquery.Time: kTime}[f.Type]
	case callquery.Dynamic:
		v.Expr = c.dialect.JSONText(c.dialect.JSONTextDoc("c."+f.Root), jsonSteps(f.Path), c.name("jv"))
		v.kind = kText
	case callquery.Derived:
		v.Expr, v.kind = c.derived(f.Derived)
	case callquery.Feedback:
		alias := c.name("fb")
		c.feedback = append(c.feedback, feedbackSource{alias: alias, field: f})
		v.Expr, v.kind = c.feedbackValue(alias, f), kText
	}
	return v, nil
}

// derived is a summary.weave field as the call's summary shows it.
func (c *queryCompiler) derived(name string) (database.Expr, vkind) {
	switch name {
	case callquery.Status:
		return statusExpr(c.dialect), kText
	case callquery.LatencyMS:
		return database.Expr{SQL: c.dialect.ElapsedMillis("c.started_at", "c.ended_at")}, kInt
	}
	return traceNameExpr(c.dialect), kText
}

// traceNameExpr is summary.weave.trace_name: the display name when there is
// one, else the op's name when op_name is a ref (see opDisplayName), else
// op_name.
func traceNameExpr(d database.Dialect) database.Expr {
	lastSegment := "substr(c.op_name, length(rtrim(c.op_name, replace(c.op_name, '/', ''))) + 1)"
	colon := d.Position(lastSegment, "':'")
	return database.Expr{SQL: "(CASE WHEN c.display_name IS NOT NULL AND c.display_name <> '' THEN c.display_name" +
		" WHEN substr(c.op_name, 1, 9) IN ('weave:///', 'trace:///') THEN CASE WHEN " + colon + " > 0 THEN substr(" + lastSegment + ", 1, " + colon + " - 1) ELSE '' END" +
		" ELSE c.op_name END)"}
}

// literal compiles a literal, typed.
func (c *queryCompiler) literal(l *callquery.Literal) value {
	d := c.dialect
	v := value{lit: l}
	switch x := l.Value.(type) {
	case nil:
		v.Expr, v.kind = database.Expr{SQL: "NULL"}, kNull
	case bool:
		v.Expr, v.kind = database.Expr{SQL: d.False()}, kBool
		if x {
			v.SQL = d.True()
		}
	case int64:
		v.Expr, v.kind = database.Expr{SQL: "CAST(? AS BIGINT)", Args: []any{x}}, kInt
	case float64:
		v.Expr, v.kind = database.Expr{SQL: "CAST(? AS " + d.FloatType() + ")", Args: []any{x}}, kFloat
	case string:
		v.Expr, v.kind = database.Expr{SQL: "CAST(? AS TEXT)", Args: []any{x}}, kText
	}
	return v
}

// value compiles an operand.
func (c *queryCompiler) value(e callquery.Expr) (value, error) {
	switch e := e.(type) {
	case *callquery.Literal:
		return c.literal(e), nil
	case *callquery.FieldRef:
		return c.fieldValue(e.Field)
	case *callquery.Convert:
		in, err := c.value(e.Input)
		if err != nil {
			return value{}, err
		}
		return c.convert(in, e.To)
	}
	x, err := c.cond(e)
	if err != nil {
		return value{}, err
	}
	return value{Expr: x, kind: kBool}, nil
}

// convert is $convert.
func (c *queryCompiler) convert(v value, to callquery.Cast) (value, error) {
	d := c.dialect
	null := func(k vkind) value { return value{Expr: c.typedNull(k), kind: k} }
	wrap := func(sql string, k vkind) value { return value{Expr: database.Expr{SQL: sql, Args: v.Args}, kind: k} }
	let := func(k vkind, body func(x string) string) value {
		x := c.name("cv")
		return value{Expr: d.Let(v.Expr, x, database.Expr{SQL: body(x)}), kind: k}
	}
	switch to {
	case callquery.ToExists:
		if v.field != nil && v.field.Kind == callquery.Dynamic {
			return value{Expr: d.JSONPresent(d.JSONTextDoc("c."+v.field.Root), jsonSteps(v.field.Path)), kind: kBool}, nil
		}
		return wrap("("+v.SQL+" IS NOT NULL)", kBool), nil
	case callquery.ToString:
		switch v.kind {
		case kText:
			return value{Expr: v.Expr, kind: kText}, nil
		case kInt:
			return wrap("CAST("+v.SQL+" AS TEXT)", kText), nil
		case kBool:
			return let(kText, func(x string) string { return "CASE WHEN " + x + " THEN 'true' WHEN NOT " + x + " THEN 'false' END" }), nil
		case kNull:
			return null(kText), nil
		}
		return value{}, invalidQueryf("$convert of a %s value to string is not supported", v.kind)
	case callquery.ToInt:
		switch v.kind {
		case kText:
			return let(kInt, d.IntOfText), nil
		case kInt:
			return value{Expr: v.Expr, kind: kInt}, nil
		case kFloat:
			return let(kInt, func(x string) string { return d.IntOfIntegralFloat(x) }), nil
		}
		return null(kInt), nil
	case callquery.ToDouble:
		switch v.kind {
		case kText:
			return let(kFloat, d.FloatOfText), nil
		case kInt:
			return wrap("CAST("+v.SQL+" AS "+d.FloatType()+")", kFloat), nil
		case kFloat:
			return value{Expr: v.Expr, kind: kFloat}, nil
		}
		return null(kFloat), nil
	case callquery.ToBool:
		inByteRange := func(n string) string { return "CASE WHEN " + n + " BETWEEN 0 AND 255 THEN " + n + " END" }
		switch v.kind {
		case kText:
			return let(kInt, func(x string) string {
				n := c.name("bn")
				return "CASE " + x + " WHEN 'true' THEN 1 WHEN 'false' THEN 0 ELSE " +
					d.Let(database.Expr{SQL: d.IntOfText(x)}, n, database.Expr{SQL: inByteRange(n)}).SQL + " END"
			}), nil
		case kInt:
			return let(kInt, inByteRange), nil
		case kFloat:
			return let(kInt, func(x string) string {
				n := c.name("bn")
				return d.Let(database.Expr{SQL: d.IntOfIntegralFloat(x)}, n, database.Expr{SQL: inByteRange(n)}).SQL
			}), nil
		case kBool:
			return let(kInt, func(x string) string { return "CASE WHEN " + x + " THEN 1 WHEN NOT " + x + " THEN 0 END" }), nil
		}
		return null(kInt), nil
	}
	return value{}, invalidQueryf("$convert to %q is not supported", to)
}

// operands compiles the two sides of a comparison with Weave's conversions:
// a dynamic field compared with a number or boolean literal is converted
// first, and a literal compared with a time column is read as a time.
func (c *queryCompiler) operands(left, right callquery.Expr) (value, value, error) {
	l, err := c.value(left)
	if err != nil {
		return value{}, value{}, err
	}
	r, err := c.value(right)
	if err != nil {
		return value{}, value{}, err
	}
	if l, err = c.inferCast(l, r); err != nil {
		return value{}, value{}, err
	}
	if r, err = c.inferCast(r, l); err != nil {
		return value{}, value{}, err
	}
	return c.timeLiteral(l, r), c.timeLiteral(r, l), nil
}

// inferCast converts v when it is a dynamic field and other a number or
// boolean literal.
func (c *queryCompiler) inferCast(v, other value) (value, error) {
	if cast := callquery.ComparisonCast(other.lit); v.dynamic() && cast != "" {
		return c.convert(v, cast)
	}
	return v, nil
}

// timeLiteral reads the literal v as a time when other is a time column: a
// number as Unix seconds, a string as an ISO 8601 date or date-time. Other
// values, and strings that are no date, stay as they are.
func (c *queryCompiler) timeLiteral(v, other value) value {
	if v.lit == nil || other.kind != kTime || other.field == nil {
		return v
	}
	var t time.Time
	switch x := v.lit.Value.(type) {
	case int64:
		t = time.Unix(x, 0)
	case float64:
		if math.IsNaN(x) || math.Abs(x) > 1e11 {
			return v
		}
		sec, frac := math.Modf(x)
		t = time.Unix(int64(sec), int64(math.Round(frac*1e6))*1000)
	case string:
		var ok bool
		if t, ok = ParseISOTime(x); !ok {
			return v
		}
	default:
		return v
	}
	return value{Expr: database.Expr{SQL: "?", Args: []any{t.UTC()}}, kind: kTime, lit: v.lit}
}

// isoLayouts are the forms of ParseISOTime: a date, or a date and a time (to
// the minute, second or a fraction of one) with an optional zone.
var isoLayouts = []string{
	"2006-01-02", "2006-01-02T15:04", "2006-01-02T15:04:05", "2006-01-02T15:04:05.999999999",
	"2006-01-02T15:04Z07:00", "2006-01-02T15:04:05Z07:00", "2006-01-02T15:04:05.999999999Z07:00",
}

// ParseISOTime reads an ISO 8601 date ("2026-01-02", midnight UTC) or date and
// time ("2026-01-02T03:04:05.678Z"; "T" or a space between them; without a
// zone, UTC), as Weave reads a literal compared with a time column.
func ParseISOTime(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if len(s) > 10 && s[10] == ' ' {
		s = s[:10] + "T" + s[11:]
	}
	if strings.HasSuffix(s, "z") {
		s = s[:len(s)-1] + "Z"
	}
	for _, layout := range isoLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

// numeric is v as a number for comparisons: booleans are 1 and 0.
func (c *queryCompiler) numeric(v value) value {
	if v.kind != kBool {
		return v
	}
	if v.lit != nil {
		b, _ := v.lit.Value.(bool)
		return value{Expr: database.Expr{SQL: map[bool]string{true: "1", false: "0"}[b]}, kind: kInt, lit: v.lit}
	}
	x := c.name("bv")
	return value{Expr: c.dialect.Let(v.Expr, x, database.Expr{SQL: "CASE WHEN " + x + " THEN 1 WHEN NOT " + x + " THEN 0 END"}), kind: kInt}
}

func isNumeric(k vkind) bool { return k == kInt || k == kFloat || k == kBool }

// comparable tells whether values of kinds a and b compare, and compares them
// with op.
func (c *queryCompiler) comparison(op string, l, r value) database.Expr {
	switch {
	case isNumeric(l.kind) && isNumeric(r.kind):
		l, r = c.numeric(l), c.numeric(r)
		return database.Expr{SQL: "(" + l.SQL + " " + op + " " + r.SQL + ")", Args: concat(l.Args, r.Args)}
	case l.kind == kText && r.kind == kText:
		d := c.dialect
		return database.Expr{SQL: "(" + d.ByteOrder(l.SQL) + " " + op + " " + d.ByteOrder(r.SQL) + ")", Args: concat(l.Args, r.Args)}
	case l.kind == kTime && r.kind == kTime:
		return database.Expr{SQL: "(" + l.SQL + " " + op + " " + r.SQL + ")", Args: concat(l.Args, r.Args)}
	}
	return database.Expr{SQL: nullBool}
}

var sqlOps = map[callquery.Op]string{callquery.Eq: "=", callquery.Gt: ">", callquery.Gte: ">=", callquery.Lt: "<", callquery.Lte: "<="}

// compare compiles $eq, $gt, $gte, $lt and $lte.
func (c *queryCompiler) compare(op callquery.Op, left, right callquery.Expr) (database.Expr, error) {
	if isNullLiteral(left) || isNullLiteral(right) {
		other := left
		if isNullLiteral(left) {
			other = right
		}
		if op != callquery.Eq {
			if _, err := c.value(other); err != nil {
				return database.Expr{}, err
			}
			return database.Expr{SQL: nullBool}, nil
		}
		if f, ok := other.(*callquery.FieldRef); ok && f.Field.Kind == callquery.Feedback {
			if err := c.checkExpanded(f.Field.Name); err != nil {
				return database.Expr{}, err
			}
			alias := c.name("fb")
			rows := c.feedbackRows(alias, f.Field.FeedbackType)
			return database.Expr{SQL: "(NOT EXISTS (SELECT 1 FROM feedback AS " + alias + " WHERE " + rows.SQL + "))", Args: rows.Args}, nil
		}
		v, err := c.value(other)
		if err != nil {
			return database.Expr{}, err
		}
		return database.Expr{SQL: "(" + v.SQL + " IS NULL)", Args: v.Args}, nil
	}
	l, r, err := c.operands(left, right)
	if err != nil {
		return database.Expr{}, err
	}
	return c.comparison(sqlOps[op], l, r), nil
}

func isNullLiteral(e callquery.Expr) bool {
	l, ok := e.(*callquery.Literal)
	return ok && l.Value == nil
}

// in compiles $in: null when the operand is null, else true when it equals
// an element, false otherwise.
func (c *queryCompiler) in(e *callquery.In) (database.Expr, error) {
	l, err := c.value(e.Left)
	if err != nil {
		return database.Expr{}, err
	}
	if cast := callquery.ListCast(e.List); l.dynamic() && cast != "" {
		if l, err = c.convert(l, cast); err != nil {
			return database.Expr{}, err
		}
	}
	allLiterals := true
	var items []value
	for _, item := range e.List {
		v, err := c.value(item)
		if err != nil {
			return database.Expr{}, err
		}
		v = c.timeLiteral(v, l)
		if v.kind == kNull {
			continue // equals nothing
		}
		if !(isNumeric(l.kind) && isNumeric(v.kind)) && l.kind != v.kind {
			continue // compares as null: never true
		}
		allLiterals = allLiterals && v.lit != nil
		items = append(items, v)
	}
	if l.kind == kNull {
		return database.Expr{SQL: nullBool}, nil
	}
	if isNumeric(l.kind) {
		l = c.numeric(l)
		for i := range items {
			items[i] = c.numeric(items[i])
		}
	}
	list := func(x string) database.Expr {
		e := database.Expr{SQL: x + " IN ("}
		for i, v := range items {
			if i > 0 {
				e.SQL += ", "
			}
			e.SQL += v.SQL
			e.Args = append(e.Args, v.Args...)
		}
		e.SQL += ")"
		return e
	}
	switch {
	case len(items) == 0:
		x := c.name("iv")
		return c.dialect.Let(l.Expr, x, database.Expr{SQL: "CASE WHEN " + x + " IS NULL THEN " + nullBool + " ELSE " + c.dialect.False() + " END"}), nil
	case allLiterals:
		in := list(l.SQL)
		return database.Expr{SQL: "(" + in.SQL + ")", Args: concat(l.Args, in.Args)}, nil
	}
	x := c.name("iv")
	in := list(x)
	return c.dialect.Let(l.Expr, x, database.Expr{SQL: "CASE WHEN " + x + " IS NULL THEN " + nullBool + " ELSE coalesce(" + in.SQL + ", " + c.dialect.False() + ") END", Args: in.Args}), nil
}

// contains compiles $contains: true or false, false unless both sides are
// text.
func (c *queryCompiler) contains(e *callquery.Contains) (database.Expr, error) {
	input, err := c.value(e.Input)
	if err != nil {
		return database.Expr{}, err
	}
	substr, err := c.value(e.Substr)
	if err != nil {
		return database.Expr{}, err
	}
	if input.kind != kText || substr.kind != kText {
		return database.Expr{SQL: c.dialect.False()}, nil
	}
	x := c.dialect.ContainsText(input.Expr, substr.Expr, e.CaseInsensitive)
	return database.Expr{SQL: "coalesce(" + x.SQL + ", " + c.dialect.False() + ")", Args: x.Args}, nil
}

// concat joins argument lists; nil when both are empty (bun warns of an
// empty list given to SQL without placeholders).
func concat(a, b []any) []any {
	if len(a)+len(b) == 0 {
		return nil
	}
	return append(append([]any{}, a...), b...)
}

// compileQuery compiles the query of a request into the conditions a call
// must meet (none when there is no query): the query itself, after cheaper
// conditions it implies (see prefilters), as separate conditions so that
// the database tests the cheap ones first.
func (s *Store) compileQuery(raw []byte, projectID string, expand []string) ([]database.Expr, error) {
	q, err := callquery.Parse(raw)
	if err != nil {
		return nil, invalidQueryf("%v", err)
	}
	if q == nil {
		return nil, nil
	}
	c := &queryCompiler{dialect: s.dialect, projectID: projectID, expand: expand}
	cond, err := c.condition(q)
	if err != nil {
		return nil, err
	}
	return append(c.prefilters(q), cond), nil
}
