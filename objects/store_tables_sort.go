package objects

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/uptrace/bun"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/database"
)

// maxSortKeys bounds the sort keys of one table query.
const maxSortKeys = 8

// sortPath is a parsed sort key: the path's members and the direction.
type sortPath struct {
	members []string
	desc    bool
}

// sortPaths parses a table query's sort keys: dotted paths of member names
// (see database.CheckMemberPath) and "asc" or "desc" (any case; anything
// else reads as "asc", as Weave's server reads it).
func sortPaths(sortBy []SortBy) ([]sortPath, error) {
	if len(sortBy) > maxSortKeys {
		return nil, weft.Errorf(ErrInvalidRequest, "at most %d sort keys", maxSortKeys)
	}
	paths := make([]sortPath, 0, len(sortBy))
	for _, sb := range sortBy {
		members := strings.Split(sb.Field, ".")
		if err := database.CheckMemberPath(members); err != nil {
			return nil, weft.Errorf(ErrInvalidRequest, "sort field %q must be a dotted path of member names: %v", clipField(sb.Field), err)
		}
		paths = append(paths, sortPath{members: members, desc: strings.EqualFold(sb.Direction, "desc")})
	}
	return paths, nil
}

// clipField shortens a field quoted back in an error.
func clipField(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

// sortedTableRows reads a page of a table's rows sorted by paths, in the
// database. Each key orders values by type first — numbers, strings,
// booleans, objects and arrays, then rows without a value (or with null) —
// in that order whichever the direction, as Weave's table query puts
// numbers before other values and missing values last; then by value in the
// key's direction (numbers by value, strings by code point, false before
// true; objects and arrays tie). Rows that tie on every key keep their table
// order, so the order is total and pages neither repeat nor skip a row.
//
// A table of Config.SortedTableRows rows or more is sorted once per sort:
// the order is kept (obj_table_sort_orders) and each page is read from its
// ranks. Smaller tables, and queries that filter rows, sort on every query.
func (s *Store) sortedTableRows(ctx context.Context, req *TableQueryReq, paths []sortPath, rowCount int64) ([]joinedRow, error) {
	filtered := req.Filter != nil && len(req.Filter.RowDigests) > 0
	if filtered || s.cfg.SortedTableRows < 0 || rowCount < s.cfg.SortedTableRows {
		return s.sortRows(ctx, req, paths)
	}
	return s.keptSortRows(ctx, req, paths, rowCount)
}

// sortKeys is the SQL that sorts a table's rows: With, a WITH clause that
// defines "keys" (position, row_digest and the sort keys of every row of the
// table, or of its filtered rows), its arguments, and OrderBy, the order of
// keys' columns.
type sortKeys struct {
	With    string
	Args    []any
	OrderBy string
}

// sortKeysOf builds the sortKeys of a query. The values are read from each
// row once (a materialized CTE: inlined, the database would read them once
// per term of the order) and sorted as small keys.
func (s *Store) sortKeysOf(req *TableQueryReq, paths []sortPath) sortKeys {
	d := database.DialectOf(s.db)
	doc := d.JSONDoc("r.val")
	var (
		values, keys, order []string
		args                []any
	)
	for i, p := range paths {
		member := d.JSONMember(doc, p.members)
		values = append(values, fmt.Sprintf("%s AS v%d", member.SQL, i))
		args = append(args, member.Args...)
		key := d.JSONSortKey(fmt.Sprintf("v%d", i))
		keys = append(keys, fmt.Sprintf("%s AS k%d, %s AS n%d, %s AS t%d", key.Kind, i, key.Number, i, key.Text, i))
		dir := ""
		if p.desc {
			dir = " DESC"
		}
		order = append(order, fmt.Sprintf("k%d, n%d%s, t%d%s", i, i, dir, i, dir))
	}
	var b strings.Builder
	b.WriteString("WITH vals AS MATERIALIZED (SELECT e.position, e.row_digest, " + strings.Join(values, ", ") +
		" FROM obj_table_entries AS e JOIN obj_table_rows AS r ON r.project_id = e.project_id AND r.digest = e.row_digest" +
		" WHERE e.project_id = ? AND e.table_digest = ?")
	args = append(args, req.ProjectID, req.Digest)
	if req.Filter != nil && len(req.Filter.RowDigests) > 0 {
		b.WriteString(" AND e.row_digest IN (?)")
		args = append(args, bun.In(req.Filter.RowDigests))
	}
	b.WriteString("), keys AS (SELECT position, row_digest, " + strings.Join(keys, ", ") + " FROM vals)")
	return sortKeys{With: b.String(), Args: args, OrderBy: strings.Join(order, ", ") + ", position"}
}

// sortRows sorts the rows in one statement: the keys are sorted, paged,
// and only the page's rows joined back to their stored text.
func (s *Store) sortRows(ctx context.Context, req *TableQueryReq, paths []sortPath) ([]joinedRow, error) {
	k := s.sortKeysOf(req, paths)
	args := k.Args
	var b strings.Builder
	b.WriteString(k.With + ", page AS (SELECT * FROM keys ORDER BY " + k.OrderBy)
	if req.Limit != nil || req.Offset != nil {
		limit := int64(math.MaxInt64)
		if req.Limit != nil {
			limit = int64(*req.Limit)
		}
		b.WriteString(" LIMIT ?")
		args = append(args, limit)
		if req.Offset != nil {
			b.WriteString(" OFFSET ?")
			args = append(args, *req.Offset)
		}
	}
	// The project is bound again rather than joined from the page, so that
	// a distributed database sees that every table read is of one project.
	b.WriteString(") SELECT page.position, page.row_digest, r.val FROM page" +
		" JOIN obj_table_rows AS r ON r.project_id = ? AND r.digest = page.row_digest ORDER BY " + k.OrderBy)
	args = append(args, req.ProjectID)
	var rows []joinedRow
	err := s.db.NewRaw(b.String(), args...).Scan(ctx, &rows)
	return rows, err
}
