package database

import (
	"fmt"
	"strconv"
	"strings"
)

// The fragments of this file read JSON values the way Weave's calls query
// language reads them (trace/callquery): as text, or as numbers parsed from
// that text. Each takes expressions and returns one; no request text is ever
// part of the SQL, only of the arguments.

// JSONStep is one step of a path into a JSON value: an object member (Key),
// or an array element when Index is not negative.
type JSONStep struct {
	Key   string
	Index int
}

// Let is body evaluated with x standing for value, which is computed once:
// (SELECT body FROM (SELECT value AS x) AS x_). x is trusted text (a name the
// caller makes unique within the statement).
func (d Dialect) Let(value Expr, x string, body Expr) Expr {
	return Expr{
		SQL:  "(SELECT " + body.SQL + " FROM (SELECT " + value.SQL + " AS " + x + ") AS " + x + "_)",
		Args: concatArgs(body.Args, value.Args),
	}
}

// JSONTextDoc is the column of JSON text column as the document JSONText and
// JSONPresent read. column is trusted text. On PostgreSQL it is read as json
// (which keeps numbers as written and members in order); a \u0000 escape,
// which no PostgreSQL text can hold, reads as U+FFFD there.
func (d Dialect) JSONTextDoc(column string) Expr {
	if !d.postgres {
		return Expr{SQL: column}
	}
	return Expr{SQL: `(CASE WHEN strpos(` + column + `, '\u0000') = 0 THEN ` + column +
		` ELSE replace(replace(replace(` + column + `, '\\', chr(1)), '\u0000', '\ufffd'), chr(1), '\\') END)::json`}
}

// jsonNode is the json value at path in doc on PostgreSQL, NULL when there is
// none: member steps step into objects only, index steps into arrays only.
func jsonNode(doc Expr, path []JSONStep) Expr {
	e := Expr{SQL: doc.SQL, Args: concatArgs(doc.Args)}
	for _, s := range path {
		if s.Index >= 0 {
			e.SQL = "(" + e.SQL + " -> " + strconv.Itoa(s.Index) + ")"
			continue
		}
		e.SQL = "(" + e.SQL + " -> ?::text)"
		e.Args = append(e.Args, s.Key)
	}
	return e
}

// sqlitePathOf is the SQLite JSON path of steps. Keys hold no quote (the
// callers' paths refuse them).
func sqlitePathOf(path []JSONStep) string {
	var b strings.Builder
	b.WriteString("$")
	for _, s := range path {
		if s.Index >= 0 {
			fmt.Fprintf(&b, "[%d]", s.Index)
			continue
		}
		fmt.Fprintf(&b, `."%s"`, s.Key)
	}
	return b.String()
}

// compactJSON is the PostgreSQL expression that drops the insignificant
// whitespace of the JSON text x, keeping strings as they are.
func compactJSON(x string) string {
	// No "?" may appear in SQL text (bun reads it as a placeholder): the
	// inner group is a capturing one.
	return `regexp_replace(` + x + `, '("([^"\\]|\\.)*")|[ \t\r\n]+', '\1', 'g')`
}

// JSONText is the text of the value at path in doc (a JSONTextDoc): a string
// as itself, a number as written, true and false as "true" and "false", an
// object or array as its JSON text without insignificant whitespace, and ""
// for null or no value. Never NULL.
func (d Dialect) JSONText(doc Expr, path []JSONStep, x string) Expr {
	if d.postgres {
		return d.Let(jsonNode(doc, path), x, Expr{SQL: "CASE json_typeof(" + x + ") WHEN 'object' THEN " + compactJSON(x+"::text") +
			" WHEN 'array' THEN " + compactJSON(x+"::text") + " ELSE coalesce(" + x + " #>> '{}', '') END"})
	}
	p := sqlitePathOf(path)
	return Expr{
		SQL:  "CASE json_type(" + doc.SQL + ", ?) WHEN 'text' THEN json_extract(" + doc.SQL + ", ?) WHEN 'null' THEN '' ELSE coalesce(" + doc.SQL + " -> ?, '') END",
		Args: concatArgs(doc.Args, []any{p}, doc.Args, []any{p}, doc.Args, []any{p}),
	}
}

// JSONPresent holds when doc (a JSONTextDoc) has a value other than null at
// path.
func (d Dialect) JSONPresent(doc Expr, path []JSONStep) Expr {
	if d.postgres {
		n := jsonNode(doc, path)
		return Expr{SQL: "(coalesce(json_typeof(" + n.SQL + "), 'null') <> 'null')", Args: n.Args}
	}
	return Expr{SQL: "(coalesce(json_type(" + doc.SQL + ", ?), 'null') <> 'null')", Args: concatArgs(doc.Args, []any{sqlitePathOf(path)})}
}

// IntOfText is the integer the text x spells (an optional sign and digits,
// within int64), or NULL. x is a trusted name (see Let).
func (d Dialect) IntOfText(x string) string {
	if d.postgres {
		return "CASE WHEN " + x + " ~ '^[+-]{0,1}[0-9]{1,40}$' THEN CASE WHEN " + x + "::numeric BETWEEN -9223372036854775808 AND 9223372036854775807 THEN " + x + "::numeric::bigint END END"
	}
	digits := "CASE WHEN substr(" + x + ", 1, 1) IN ('+', '-') THEN substr(" + x + ", 2) ELSE " + x + " END"
	// Without leading zeros, an int64 has at most 19 digits; at 19 it is
	// compared as text with the bound of its sign.
	significant := "ltrim(" + digits + ", '0')"
	bound := "CASE WHEN substr(" + x + ", 1, 1) = '-' THEN '9223372036854775808' ELSE '9223372036854775807' END"
	return "CASE WHEN " + digits + " <> '' AND length(" + digits + ") <= 40 AND NOT " + digits + " GLOB '*[^0-9]*' AND (length(" + significant + ") < 19 OR (length(" + significant + ") = 19 AND " + significant + " <= " + bound + "))" +
		" THEN CAST(" + x + " AS INTEGER) END"
}

// FloatOfText is the double the text x spells as a JSON number (surrounding
// JSON whitespace allowed), or NULL; a value beyond the double range is NULL,
// one nearer zero than 1e-320 is 0. x is a trusted name (see Let).
func (d Dialect) FloatOfText(x string) string {
	if d.postgres {
		n := x + "::numeric"
		return "CASE WHEN " + x + ` ~ '^[ \t\r\n]*-{0,1}(0|[1-9][0-9]*)(\.[0-9]+){0,1}([eE][+-]{0,1}[0-9]{1,4}){0,1}[ \t\r\n]*$' THEN` +
			" CASE WHEN abs(" + n + ") > 1.7976931348623157e308 THEN NULL WHEN abs(" + n + ") < 1e-320 THEN 0::float8 ELSE " + n + "::float8 END END"
	}
	v := "CAST(" + x + " AS REAL)"
	// As on PostgreSQL, an exponent has at most four digits.
	return "CASE WHEN json_valid(" + x + ") AND json_type(" + x + ") IN ('integer', 'real') AND NOT " + x + " GLOB '*[eE]*[0-9][0-9][0-9][0-9][0-9]*' THEN" +
		" CASE WHEN abs(" + v + ") > 1.7976931348623157e308 THEN NULL WHEN abs(" + v + ") < 1e-320 THEN 0.0 ELSE " + v + " END END"
}

// ContainsText holds when the text sub occurs in the text s; folding ASCII
// letters only when caseInsensitive. NULL when either is NULL.
func (d Dialect) ContainsText(s, sub Expr, caseInsensitive bool) Expr {
	fold := func(e string) string { return e }
	if caseInsensitive {
		if d.postgres {
			// lower under the C collation folds ASCII letters only, byte by
			// byte; translate of the 26 letters costs ~50 times more per
			// character of a large document.
			fold = func(e string) string { return "lower((" + e + `) COLLATE "C")` }
		} else {
			fold = func(e string) string { return "lower(" + e + ")" } // SQLite's lower folds ASCII only
		}
	}
	return Expr{SQL: "(" + d.Position(fold(s.SQL), fold(sub.SQL)) + " > 0)", Args: concatArgs(s.Args, sub.Args)}
}

// RawTextHolds holds when the JSON text column (NULL: "") holds s, or holds
// an escape that may spell one of s's characters (the caller makes sure s
// holds no character JSON must escape): a \u escape (\u00 when s is ASCII,
// whose characters are all spelled \u00XX), or \/ when s holds a slash.
// Folds ASCII letters only when caseInsensitive. column is trusted text.
//
// It is a prefilter run on every row a query walks: the escapes are looked
// for only in text that holds a backslash, since a search for one byte is
// several times cheaper than one for two (PostgreSQL's search skips by the
// length of what it looks for).
func (d Dialect) RawTextHolds(column, s string, caseInsensitive bool) Expr {
	text := "coalesce(" + column + ", '')"
	hit := d.ContainsText(Expr{SQL: text}, Expr{SQL: "?", Args: []any{s}}, caseInsensitive)
	escape := `'\u'`
	if isASCII(s) {
		escape = `'\u00'`
	}
	escapes := d.Position(text, escape) + " > 0"
	if strings.Contains(s, "/") {
		escapes += " OR " + d.Position(text, `'\/'`) + " > 0"
	}
	return Expr{SQL: "(" + hit.SQL + " OR (" + d.Position(text, `'\'`) + " > 0 AND (" + escapes + ")))", Args: hit.Args}
}

// isASCII tells whether s has only ASCII characters.
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// Position is the 1-based position of the first sub in the text s, 0 when
// there is none. s and sub are trusted text.
func (d Dialect) Position(s, sub string) string {
	if d.postgres {
		return "strpos(" + s + ", " + sub + ")"
	}
	return "instr(" + s + ", " + sub + ")"
}

// ByteLength is the length in bytes of the text x (0 when NULL). x is
// trusted text.
func (d Dialect) ByteLength(x string) string {
	if d.postgres {
		return "coalesce(octet_length(" + x + "), 0)"
	}
	return "coalesce(length(CAST(" + x + " AS BLOB)), 0)"
}

// FloatType is the type of doubles.
func (d Dialect) FloatType() string {
	if d.postgres {
		return "DOUBLE PRECISION"
	}
	return "REAL"
}

// IntOfIntegralFloat is the double x as an integer when it has no fraction
// and lies within int64, else NULL. x is a trusted name (see Let).
func (d Dialect) IntOfIntegralFloat(x string) string {
	if d.postgres {
		return "CASE WHEN " + x + " = trunc(" + x + ") AND abs(" + x + ") < 9.2e18 THEN " + x + "::bigint END"
	}
	return "CASE WHEN " + x + " = CAST(" + x + " AS INTEGER) AND abs(" + x + ") < 9.2e18 THEN CAST(" + x + " AS INTEGER) END"
}

// True is the boolean constant true.
func (d Dialect) True() string {
	if d.postgres {
		return "TRUE"
	}
	return "1"
}

// False is the boolean constant false.
func (d Dialect) False() string {
	if d.postgres {
		return "FALSE"
	}
	return "0"
}

// ElapsedMillis is the whole milliseconds from the timestamp column from to
// the timestamp column to, truncated toward zero (NULL when either is NULL).
// from and to are trusted text.
func (d Dialect) ElapsedMillis(from, to string) string {
	if d.postgres {
		return "trunc(EXTRACT(EPOCH FROM (" + to + " - " + from + ")) * 1000)"
	}
	// SQLite keeps timestamps as text, "YYYY-MM-DD HH:MM:SS[.fraction]+00:00";
	// its date functions keep milliseconds at most, so the fraction is read
	// from the text.
	micros := func(ts string) string {
		frac := "substr(" + ts + ", 21, 6)"
		digits := "(6 - length(ltrim(" + frac + ", '0123456789')))"
		return "(unixepoch(" + ts + ") * 1000000 + CASE WHEN substr(" + ts + ", 20, 1) = '.' THEN CAST(substr(substr(" + frac + ", 1, " + digits + ") || '000000', 1, 6) AS INTEGER) ELSE 0 END)"
	}
	return "((" + micros(to) + " - " + micros(from) + ") / 1000)"
}

// TimeBucket is the number of the interval of a fixed width that the
// timestamp column ts falls in, counted from an origin: the text takes two
// bound values, the origin in Unix seconds and the width in seconds, in that
// order. ts must not be before the origin. ts is trusted text.
func (d Dialect) TimeBucket(ts string) string {
	return "((" + d.EpochSeconds(ts) + " - ?) / ?)"
}

// concatArgs joins argument lists into a new one; nil when all are empty
// (bun warns of an empty list given to SQL without placeholders).
func concatArgs(lists ...[]any) []any {
	var out []any
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}
