package database

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
)

// Dialect is the one answer to "which database is this" at run time. Stores
// ask it for a capability ([Dialect.Has]) or for the fragment of SQL that
// differs between PostgreSQL and SQLite, never for a name.
type Dialect struct{ postgres bool }

// DialectOf returns db's dialect.
func DialectOf(db bun.IDB) Dialect {
	return Dialect{postgres: db.Dialect().Name() == dialect.PG}
}

// A Feature is a capability that only some databases have.
type Feature uint8

const (
	// Copy is bulk loading with COPY FROM STDIN, through pgx.
	Copy Feature = iota
	// Cursors are server-side cursors: a long read streams in pages instead
	// of holding its whole result.
	Cursors
	// AdvisoryLocks are transaction-scoped advisory locks. (SQLite needs
	// none: its write transactions already run one at a time.)
	AdvisoryLocks
	// ExtensionSettings is SET of a setting that an extension defines, such
	// as citus.multi_task_query_log_level: applied when the extension is
	// loaded and an inert placeholder when it is not.
	ExtensionSettings
	// Pgx is the pgx driver underneath, for libraries that speak it directly.
	Pgx
	// PlannerSettings are settings of how a transaction's queries are
	// planned and run (SET LOCAL jit, work_mem), which a large aggregation
	// sets for itself.
	PlannerSettings
)

// Has reports whether the database has f. Every feature above is one of
// PostgreSQL's.
func (d Dialect) Has(f Feature) bool { return d.postgres }

// Expr is a fragment of SQL with its arguments, one per placeholder.
type Expr struct {
	SQL  string
	Args []any
}

// JSONArrayHasAny is a condition with two placeholders, a column of JSON
// array text and a list of strings (bun.List or bun.In), that holds when the
// array has any of the strings as an element.
func (d Dialect) JSONArrayHasAny() string {
	if d.postgres {
		return "EXISTS (SELECT 1 FROM jsonb_array_elements_text(?) AS r(v) WHERE r.v IN (?))"
	}
	return "EXISTS (SELECT 1 FROM json_each(?) AS r WHERE r.value IN (?))"
}

// JSONDoc is a column of JSON text as the document that JSONType, JSONScalar
// and JSONValue read. column is trusted text (a column name in code). On
// PostgreSQL it is read as jsonb, which cannot hold NUL: a \u0000 escape reads
// as U+FFFD there (the text itself is kept as sent). Escaped backslashes are
// set aside first, as chr(1), which JSON text never holds, so that only true
// \u0000 escapes are changed.
func (d Dialect) JSONDoc(column string) Expr {
	if !d.postgres {
		return Expr{SQL: column}
	}
	return Expr{SQL: `(CASE WHEN strpos(` + column + `, '\u0000') = 0 THEN ` + column +
		` ELSE replace(replace(replace(` + column + `, '\\', chr(1)), '\u0000', '\ufffd'), chr(1), '\\') END)::jsonb`}
}

// JSONValue is the value at path in doc (a [Dialect.JSONDoc]), as the
// database compares and sorts JSON values: jsonb on PostgreSQL, the SQL value
// of json_extract on SQLite. An empty path is the whole document.
func (d Dialect) JSONValue(doc Expr, path []string) Expr {
	if d.postgres {
		if len(path) == 0 {
			return doc
		}
		args := append([]any{}, doc.Args...)
		for _, seg := range path {
			args = append(args, seg)
		}
		return Expr{SQL: "jsonb_extract_path(" + doc.SQL + ", " + placeholders(len(path)) + ")", Args: args}
	}
	return Expr{SQL: "json_extract(" + doc.SQL + ", ?)", Args: append(append([]any{}, doc.Args...), sqlitePath(path))}
}

// JSONType is the JSON type of the value at path in doc: "string", "number",
// "boolean", "null", "object" or "array"; NULL when there is none.
func (d Dialect) JSONType(doc Expr, path []string) Expr {
	if d.postgres {
		v := d.JSONValue(doc, path)
		return Expr{SQL: "jsonb_typeof(" + v.SQL + ")", Args: v.Args}
	}
	p := sqlitePath(path)
	args := append(append(append([]any{}, doc.Args...), p), doc.Args...)
	return Expr{
		SQL: "CASE json_type(" + doc.SQL + ", ?) WHEN 'text' THEN 'string' WHEN 'integer' THEN 'number' WHEN 'real' THEN 'number'" +
			" WHEN 'true' THEN 'boolean' WHEN 'false' THEN 'boolean' ELSE json_type(" + doc.SQL + ", ?) END",
		Args: append(args, p),
	}
}

// JSONScalar is the value at path in doc as a SQL value of kind ("string",
// "number" or "boolean"), NULL when the stored value has another JSON type (so
// the string "5" never equals the number 5).
func (d Dialect) JSONScalar(doc Expr, path []string, kind string) Expr {
	typ := d.JSONType(doc, path)
	var value Expr
	if d.postgres {
		value = d.JSONValue(doc, path)
		value.SQL = "(" + value.SQL + " #>> '{}')"
		switch kind {
		case "number":
			value.SQL += "::double precision"
		case "boolean":
			value.SQL += "::boolean"
		}
	} else {
		value = d.JSONValue(doc, path)
	}
	return Expr{
		SQL:  "CASE WHEN " + typ.SQL + " = '" + kindName(kind) + "' THEN " + value.SQL + " END",
		Args: append(append([]any{}, typ.Args...), value.Args...),
	}
}

// kindName keeps JSONScalar's kind, which is spliced into SQL, to the three
// names it documents.
func kindName(kind string) string {
	switch kind {
	case "number", "boolean":
		return kind
	}
	return "string"
}

func placeholders(n int) string { return strings.TrimSuffix(strings.Repeat("?, ", n), ", ") }

// sqlitePath is a JSON path with every key quoted. Callers refuse keys that
// hold quotes or backslashes.
func sqlitePath(path []string) string {
	var b strings.Builder
	b.WriteString("$")
	for _, seg := range path {
		fmt.Fprintf(&b, `."%s"`, seg)
	}
	return b.String()
}

// ByteOrder is the text expression expr compared in byte order (which in
// UTF-8 is code point order), whatever the database's collation: on
// PostgreSQL expr COLLATE "C", on SQLite expr itself (its BINARY collation).
// An index serves such comparisons only when it is built on the same
// expression. expr is trusted text.
func (d Dialect) ByteOrder(expr string) string {
	if d.postgres {
		return "(" + expr + ` COLLATE "C")`
	}
	return expr
}

// minTrigramRunes is the shortest term a trigram index can look up.
const minTrigramRunes = 3

// TextSearch is the condition that holds when term occurs, case-insensitively,
// in any of columns of table (read under alias). It is served by the table's
// text index: on PostgreSQL a pg_trgm GIN index on each column (ILIKE with the
// term's LIKE metacharacters escaped); on SQLite the FTS5 table
// "<table>_search" with the trigram tokenizer, an external-content index of
// the same columns keyed by rowid (a trigram phrase is a substring match).
// Terms shorter than a trigram scan the columns of the one project the query
// names. table, alias and columns are trusted text; term is only ever a bound
// value, and must not be empty.
func (d Dialect) TextSearch(table, alias string, columns []string, term string) Expr {
	var parts []string
	var args []any
	if d.postgres {
		pattern := "%" + likeEscaper.Replace(term) + "%"
		for _, c := range columns {
			parts = append(parts, alias+"."+c+" ILIKE ?")
			args = append(args, pattern)
		}
		return Expr{SQL: "(" + strings.Join(parts, " OR ") + ")", Args: args}
	}
	if utf8.RuneCountInString(term) >= minTrigramRunes {
		phrase := `"` + strings.ReplaceAll(term, `"`, `""`) + `"`
		return Expr{SQL: alias + ".rowid IN (SELECT rowid FROM " + table + "_search WHERE " + table + "_search MATCH ?)", Args: []any{phrase}}
	}
	for _, c := range columns {
		parts = append(parts, "instr(lower("+alias+"."+c+"), lower(?)) > 0")
		args = append(args, term)
	}
	return Expr{SQL: "(" + strings.Join(parts, " OR ") + ")", Args: args}
}

// likeEscaper escapes LIKE's metacharacters with PostgreSQL's default escape
// character, the backslash.
var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// Elapsed is the time from the timestamp column from to the timestamp column
// to, as a number that sorts by length (NULL when either is NULL): seconds on
// PostgreSQL, whole milliseconds on SQLite (whose date functions keep no
// finer time; rounded, so that equal lengths are equal numbers). A number
// rather than an interval so that a page of a list sorted by it can end with
// a cursor value that is read and bound back alike on both databases. from
// and to are trusted text.
func (d Dialect) Elapsed(from, to string) string {
	if d.postgres {
		return "EXTRACT(EPOCH FROM (" + to + " - " + from + "))"
	}
	return "round((julianday(" + to + ") - julianday(" + from + ")) * 86400000)"
}

// EpochSeconds is the whole seconds from the Unix epoch to the timestamp
// column ts, rounded down (NULL when ts is NULL). ts is trusted text.
func (d Dialect) EpochSeconds(ts string) string {
	if d.postgres {
		return "floor(EXTRACT(EPOCH FROM " + ts + "))::bigint"
	}
	return "unixepoch(" + ts + ")"
}

// JSONMembers reads the members of a JSON object text column in a
// subquery: From is the FROM item, Key a member's name and Elem(i) the i-th
// element of a member that is an array of numbers, as a number.
type JSONMembers struct {
	From, Key string
	Elem      func(i int) string
}

// JSONObjectMembers is the JSONMembers of column, a JSON object text column
// (NULL reads as no members). column is trusted text.
func (d Dialect) JSONObjectMembers(column string) JSONMembers {
	if d.postgres {
		return JSONMembers{From: "jsonb_each(" + column + "::jsonb) AS u(k, v)", Key: "u.k",
			Elem: func(i int) string { return fmt.Sprintf("(u.v ->> %d)::double precision", i) }}
	}
	return JSONMembers{From: "json_each(" + column + ") AS u", Key: "u.key",
		Elem: func(i int) string { return fmt.Sprintf("json_extract(u.value, '$[%d]')", i) }}
}

// JSONObjectArraySum is the sum, over the members of the JSON object text in
// column (each an array of numbers), of the element at index; NULL for an
// empty object or NULL column. column is trusted text.
func (d Dialect) JSONObjectArraySum(column string, index int) string {
	m := d.JSONObjectMembers(column)
	return "(SELECT sum(" + m.Elem(index) + ") FROM " + m.From + ")"
}

// DateSuffixed is a condition that holds when the text expression expr ends
// in "-YYYY-MM-DD" (ASCII digits), as dated model names do. expr is trusted
// text.
func (d Dialect) DateSuffixed(expr string) string {
	if d.postgres {
		return "(" + expr + " ~ '-[0-9]{4}-[0-9]{2}-[0-9]{2}$')"
	}
	return "(" + expr + " GLOB '*-[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]')"
}

// maxMemberPathDepth bounds the members of a member path.
const maxMemberPathDepth = 16

// CheckMemberPath reports why path cannot name a JSON value by its object
// members, or nil: at most 16 members, each not empty, UTF-8, and free of
// quotes, backslashes and control characters (which the databases' JSON
// paths would read as syntax, or could not take as text at all). The
// dialect's JSON functions take only paths that pass.
func CheckMemberPath(path []string) error {
	if len(path) > maxMemberPathDepth {
		return fmt.Errorf("deeper than %d members", maxMemberPathDepth)
	}
	for _, member := range path {
		if member == "" || !utf8.ValidString(member) || strings.ContainsFunc(member, func(r rune) bool { return r == '"' || r == '\\' || r < 0x20 }) {
			return errors.New("a member name is not empty, is UTF-8 and holds no quote, backslash or control character")
		}
	}
	return nil
}

// JSONMember is the value at path in doc (a [Dialect.JSONDoc]) following
// object members only (a member of an array or a scalar is no value), as
// JSON that [Dialect.JSONSortKey] reads: jsonb on PostgreSQL, JSON text on
// SQLite; NULL when there is no such value. path must pass
// [CheckMemberPath]; it is a bound value.
func (d Dialect) JSONMember(doc Expr, path []string) Expr {
	var p strings.Builder
	if d.postgres {
		// Strict mode: lax mode would step into arrays.
		p.WriteString("strict ")
	}
	p.WriteString(sqlitePath(path))
	args := append(append([]any{}, doc.Args...), p.String())
	if d.postgres {
		return Expr{SQL: "jsonb_path_query_first(" + doc.SQL + ", ?::jsonpath, '{}'::jsonb, true)", Args: args}
	}
	return Expr{SQL: "(" + doc.SQL + " -> ?)", Args: args}
}

// JSONSortKey is how a JSON value sorts, the same on every database: Kind
// ranks its type (0 number, 1 string, 2 boolean, 3 object or array, 4 null
// or no value), Number orders numbers by value (and false before true), and
// Text orders strings by their code points. Each is an expression over value,
// a trusted column holding a [Dialect.JSONMember]; Number is NULL unless the
// value is a number or a boolean, Text unless it is a string.
type JSONSortKey struct{ Kind, Number, Text string }

// JSONSortKey is the JSONSortKey of the column value (trusted text).
func (d Dialect) JSONSortKey(value string) JSONSortKey {
	if d.postgres {
		typ := "jsonb_typeof(" + value + ")"
		return JSONSortKey{
			Kind: "CASE " + typ + " WHEN 'number' THEN 0 WHEN 'string' THEN 1 WHEN 'boolean' THEN 2 WHEN 'object' THEN 3 WHEN 'array' THEN 3 ELSE 4 END",
			// jsonb keeps numbers as numeric: exact, of any size.
			Number: "CASE " + typ + " WHEN 'number' THEN (" + value + ")::numeric WHEN 'boolean' THEN CASE WHEN (" + value + ")::boolean THEN 1 ELSE 0 END END",
			// The C collation compares bytes, which in UTF-8 is code point order.
			Text: "(CASE WHEN " + typ + " = 'string' THEN " + value + " #>> '{}' END) COLLATE \"C\"",
		}
	}
	typ := "json_type(" + value + ")"
	return JSONSortKey{
		Kind: "CASE " + typ + " WHEN 'integer' THEN 0 WHEN 'real' THEN 0 WHEN 'text' THEN 1 WHEN 'true' THEN 2 WHEN 'false' THEN 2" +
			" WHEN 'object' THEN 3 WHEN 'array' THEN 3 ELSE 4 END",
		// ->> reads numbers as numbers, true as 1 and false as 0.
		Number: "CASE WHEN " + typ + " IN ('integer', 'real', 'true', 'false') THEN " + value + " ->> '$' END",
		// SQLite's BINARY collation compares UTF-8 bytes: code point order.
		Text: "CASE WHEN " + typ + " = 'text' THEN " + value + " ->> '$' END",
	}
}
