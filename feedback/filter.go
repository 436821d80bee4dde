package feedback

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/database"
)

// A filter is compiled to a SQL condition whose every client value travels as a
// bun placeholder argument; column names come only from columnOf. No argument
// can carry a NUL character (the query builder refuses it, and neither database
// stores one in text), so a NUL in a literal, a field name or a payload path is
// refused: such a value cannot match anything stored.

// columnOf maps a queryable field name (and its Weave alias) to its column.
func columnOf(field string) (string, bool) {
	switch field {
	case "weave_ref":
		return "trace_ref", true
	case "wb_user_id":
		return "pf_user_id", true
	case "id", "trace_ref", "pf_user_id", "creator", "created_at", "feedback_type",
		"annotation_ref", "runnable_ref", "call_ref", "trigger_ref", "queue_id",
		"scorer_trace_id", "span_agent_name", "span_agent_version", "span_status_code",
		"span_conversation_id", "span_trace_id":
		return field, true
	}
	return "", false
}

// sqlExpr is a SQL fragment and the arguments of its placeholders.
type sqlExpr struct {
	sql  string
	args []any
}

// compiler turns filter expressions into SQL for one dialect.
type compiler struct {
	dialect database.Dialect
}

var comparisons = map[string]string{"$eq": "=", "$gt": ">", "$gte": ">=", "$lt": "<", "$lte": "<="}

// flipped is the operator with its operands swapped.
var flipped = map[string]string{"=": "=", ">": "<", ">=": "<=", "<": ">", "<=": ">="}

func invalidQuery(format string, args ...any) error {
	return weft.Errorf(ErrInvalidQuery, format, args...)
}

// condition compiles one boolean expression.
func (c compiler) condition(raw json.RawMessage) (sqlExpr, error) {
	op, arg, err := singleKey(raw)
	if err != nil {
		return sqlExpr{}, err
	}
	switch op {
	case "$and", "$or":
		var parts []json.RawMessage
		if err := json.Unmarshal(arg, &parts); err != nil {
			return sqlExpr{}, invalidQuery("%s takes a list of expressions", op)
		}
		if len(parts) == 0 {
			return sqlExpr{sql: map[string]string{"$and": "1 = 1", "$or": "1 = 0"}[op]}, nil
		}
		joined := sqlExpr{}
		var sqls []string
		for _, part := range parts {
			e, err := c.condition(part)
			if err != nil {
				return sqlExpr{}, err
			}
			sqls = append(sqls, "("+e.sql+")")
			joined.args = append(joined.args, e.args...)
		}
		joined.sql = strings.Join(sqls, map[string]string{"$and": " AND ", "$or": " OR "}[op])
		return joined, nil
	case "$not":
		var parts []json.RawMessage
		if err := json.Unmarshal(arg, &parts); err != nil || len(parts) != 1 {
			return sqlExpr{}, invalidQuery("$not takes a list of one expression")
		}
		e, err := c.condition(parts[0])
		if err != nil {
			return sqlExpr{}, err
		}
		return sqlExpr{sql: "NOT COALESCE((" + e.sql + "), FALSE)", args: e.args}, nil
	case "$in":
		var operands []json.RawMessage
		if err := json.Unmarshal(arg, &operands); err != nil || len(operands) != 2 {
			return sqlExpr{}, invalidQuery("$in takes [field, [values…]]")
		}
		field, err := fieldOperand(operands[0])
		if err != nil {
			return sqlExpr{}, err
		}
		var values []json.RawMessage
		if err := json.Unmarshal(operands[1], &values); err != nil {
			return sqlExpr{}, invalidQuery("$in takes a list of values")
		}
		if len(values) == 0 {
			return sqlExpr{sql: "1 = 0"}, nil
		}
		var sqls []string
		var args []any
		for _, v := range values {
			lit, err := literalOperand(v)
			if err != nil {
				return sqlExpr{}, err
			}
			e, err := c.compare(field, "=", lit)
			if err != nil {
				return sqlExpr{}, err
			}
			sqls = append(sqls, "("+e.sql+")")
			args = append(args, e.args...)
		}
		return sqlExpr{sql: strings.Join(sqls, " OR "), args: args}, nil
	}
	sqlOp, ok := comparisons[op]
	if !ok {
		return sqlExpr{}, invalidQuery("unknown operator %q", truncate(op))
	}
	var operands []json.RawMessage
	if err := json.Unmarshal(arg, &operands); err != nil || len(operands) != 2 {
		return sqlExpr{}, invalidQuery("%s takes two operands", op)
	}
	fieldAt, literalAt := 0, 1
	if first, _, _ := singleKey(operands[0]); first == "$literal" {
		// {"$literal"} first and the field second: swap the comparison.
		fieldAt, literalAt, sqlOp = 1, 0, flipped[sqlOp]
	}
	field, err := fieldOperand(operands[fieldAt])
	if err != nil {
		return sqlExpr{}, err
	}
	lit, err := literalOperand(operands[literalAt])
	if err != nil {
		return sqlExpr{}, err
	}
	return c.compare(field, sqlOp, lit)
}

// singleKey splits {"<op>": <arg>}.
func singleKey(raw json.RawMessage) (string, json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || len(m) != 1 {
		return "", nil, invalidQuery("an expression is an object with one operator")
	}
	for k, v := range m {
		return k, v, nil
	}
	panic("unreachable")
}

// fieldRef is a resolved {"$getField": …}: a column, or a path in the payload.
type fieldRef struct {
	column string   // set for columns
	path   []string // set for payload paths (empty for the whole payload)
}

func fieldOperand(raw json.RawMessage) (fieldRef, error) {
	op, arg, err := singleKey(raw)
	if err != nil || op != "$getField" {
		return fieldRef{}, invalidQuery(`an operand must be {"$getField": <name>} or {"$literal": <value>}`)
	}
	var name string
	if err := json.Unmarshal(arg, &name); err != nil {
		return fieldRef{}, invalidQuery("$getField takes a field name")
	}
	return resolveField(name)
}

func resolveField(name string) (fieldRef, error) {
	if column, ok := columnOf(name); ok {
		return fieldRef{column: column}, nil
	}
	if name == "payload" {
		return fieldRef{path: []string{}}, nil
	}
	if rest, ok := strings.CutPrefix(name, "payload."); ok {
		path := strings.Split(rest, ".")
		for _, seg := range path {
			if seg == "" || strings.ContainsAny(seg, "\"\\\x00") {
				return fieldRef{}, invalidQuery("Unknown field: %q is not a payload path", truncate(name))
			}
		}
		return fieldRef{path: path}, nil
	}
	return fieldRef{}, invalidQuery("Unknown field: %q", truncate(name))
}

// literal is a decoded {"$literal": …} value: string, float64, bool or nil.
type literal struct{ value any }

func literalOperand(raw json.RawMessage) (literal, error) {
	op, arg, err := singleKey(raw)
	if err != nil || op != "$literal" {
		return literal{}, invalidQuery(`an operand must be {"$getField": <name>} or {"$literal": <value>}`)
	}
	var v any
	if err := json.Unmarshal(arg, &v); err != nil {
		return literal{}, invalidQuery("bad $literal")
	}
	switch v := v.(type) {
	case string:
		if strings.IndexByte(v, 0) >= 0 {
			return literal{}, invalidQuery("$literal strings must not contain NUL characters (\\u0000)")
		}
		return literal{v}, nil
	case float64, bool, nil:
		return literal{v}, nil
	}
	return literal{}, invalidQuery("$literal must be a string, number, boolean or null")
}

// compare compiles `field op literal`.
func (c compiler) compare(f fieldRef, op string, lit literal) (sqlExpr, error) {
	if f.column != "" {
		return compareColumn(f.column, op, lit)
	}
	if lit.value == nil {
		if op != "=" {
			return sqlExpr{}, invalidQuery("null can only be compared with $eq")
		}
		typ := c.jsonType(f.path)
		return sqlExpr{sql: "COALESCE(" + typ.sql + ", 'null') = 'null'", args: typ.args}, nil
	}
	value := c.typedValue(f.path, lit.value)
	return sqlExpr{sql: "(" + value.sql + ") " + op + " ?", args: append(value.args, lit.value)}, nil
}

func compareColumn(column, op string, lit literal) (sqlExpr, error) {
	switch v := lit.value.(type) {
	case nil:
		if op != "=" {
			return sqlExpr{}, invalidQuery("null can only be compared with $eq")
		}
		return sqlExpr{sql: column + " IS NULL"}, nil
	case string:
		if column == "created_at" {
			t, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				return sqlExpr{}, invalidQuery("created_at compares with an RFC 3339 time, not %q", truncate(v))
			}
			return sqlExpr{sql: column + " " + op + " ?", args: []any{t.UTC()}}, nil
		}
		return sqlExpr{sql: column + " " + op + " ?", args: []any{v}}, nil
	case float64:
		if column == "created_at" {
			sec := int64(v)
			t := time.Unix(sec, int64((v-float64(sec))*1e9)).UTC()
			return sqlExpr{sql: column + " " + op + " ?", args: []any{t}}, nil
		}
	}
	return sqlExpr{}, invalidQuery("%s compares with a string, not %v", column, lit.value)
}

// payloadDoc is the stored payload as the dialect's JSON document.
func (c compiler) payloadDoc() database.Expr { return c.dialect.JSONDoc("payload") }

// jsonType is the JSON type of the value at path ("string", "number",
// "boolean", "null", "object", "array"), NULL when absent.
func (c compiler) jsonType(path []string) sqlExpr {
	return exprOf(c.dialect.JSONType(c.payloadDoc(), path))
}

// typedValue is the value at path as a SQL value of the literal's type, NULL
// when the stored value has another JSON type (so "5" never equals 5).
func (c compiler) typedValue(path []string, like any) sqlExpr {
	kind := "boolean"
	switch like.(type) {
	case string:
		kind = "string"
	case float64:
		kind = "number"
	}
	return exprOf(c.dialect.JSONScalar(c.payloadDoc(), path, kind))
}

// sortValue is the value at path for ORDER BY.
func (c compiler) sortValue(path []string) sqlExpr {
	return exprOf(c.dialect.JSONValue(c.payloadDoc(), path))
}

func exprOf(e database.Expr) sqlExpr { return sqlExpr{sql: e.SQL, args: e.Args} }
