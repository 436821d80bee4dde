package objects_test

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/testdb"
	"github.com/weftlabs/weft/objects"
)

// sortCellValues are the values a row of the sort test may hold at a path:
// numbers of every shape (equal numbers written apart, huge, tiny,
// negative), strings that sort apart by byte and by number ("10" and "9"),
// accents and emoji, booleans, null, objects and arrays.
var sortCellValues = []string{
	`0`, `-0.0`, `3`, `3.0`, `2.5`, `-7`, `10`, `9`, `1e20`, `-1e-5`, `123456789012`, `1E+300`,
	`""`, `"a"`, `"B"`, `"b"`, `"10"`, `"9"`, `"é"`, `"z"`, `"😀"`, `"a b"`,
	`true`, `false`, `null`, `{"k":1}`, `[1,2]`, `[]`,
}

// TestTableQuerySortedMatchesAnIndependentSort sorts a table of mixed
// values in the database by one and by two keys, each way, whole and page
// by page, and compares every order with the same rows sorted here: once
// sorted on every query, once through the kept orders (the table counts
// as large), whose pages cross the kept chunks' bounds.
func TestTableQuerySortedMatchesAnIndependentSort(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(16, 2026))
	cell := func() (string, bool) {
		if rng.IntN(8) == 0 {
			return "", false // no such member
		}
		return sortCellValues[rng.IntN(len(sortCellValues))], true
	}
	var rows []json.RawMessage
	for i := range 2100 {
		var members []string
		if v, ok := cell(); ok {
			members = append(members, `"a":`+v)
		}
		if v, ok := cell(); ok {
			members = append(members, `"s":{"n":`+v+`}`)
		}
		// An array at the path's first member: s2.0 names no value (paths
		// follow object members only).
		members = append(members, fmt.Sprintf(`"s2":[%d]`, i), fmt.Sprintf(`"i":%d`, i))
		rows = append(rows, json.RawMessage("{"+strings.Join(members, ",")+"}"))
	}
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		svc := newService(t, db, objects.Config{SortedTableRows: -1})
		kept := newService(t, db, objects.Config{SortedTableRows: 1})
		ctx := userCtx()
		created := must[*objects.TableCreateRes](t)(svc.TableCreate(ctx, &objects.TableCreateReq{Table: objects.TableSchemaForInsert{ProjectID: project, Rows: rows}}))
		queryWith := func(svc objects.Service, req objects.TableQueryReq) []int {
			t.Helper()
			req.ProjectID, req.Digest = project, created.Digest
			res := must[*objects.TableQueryRes](t)(svc.TableQuery(ctx, &req))
			out := make([]int, len(res.Rows))
			for i, r := range res.Rows {
				if !bytes.Equal(r.Val, rows[r.OriginalIndex]) {
					t.Fatalf("row %d reads back as %s, stored %s", r.OriginalIndex, r.Val, rows[r.OriginalIndex])
				}
				out[i] = r.OriginalIndex
			}
			return out
		}
		query := func(req objects.TableQueryReq) []int { return queryWith(svc, req) }
		for _, keys := range [][]objects.SortBy{
			{{Field: "a"}},
			{{Field: "a", Direction: "desc"}},
			{{Field: "s.n", Direction: "DESC"}},
			{{Field: "s2.0"}},
			{{Field: "a", Direction: "desc"}, {Field: "s.n"}},
			{{Field: "s.n"}, {Field: "a", Direction: "desc"}},
		} {
			want := independentSort(t, rows, keys)
			for name, svc := range map[string]objects.Service{"sorted on each query": svc, "kept": kept} {
				// The first query of a page keeps the order; the whole
				// table then reads through it.
				first := queryWith(svc, objects.TableQueryReq{SortBy: keys, Offset: ptr(1000), Limit: ptr(50)})
				if !slices.Equal(first, want[1000:1050]) {
					t.Fatalf("%s, sorted by %v, rows 1000 to 1049:\n got %v\nwant %v", name, keys, first, want[1000:1050])
				}
				if got := queryWith(svc, objects.TableQueryReq{SortBy: keys}); !slices.Equal(got, want) {
					t.Fatalf("%s, sorted by %v:\n got %v\nwant %v", name, keys, got, want)
				}
				var paged []int
				for offset := 0; offset < len(rows)+700; offset += 700 {
					paged = append(paged, queryWith(svc, objects.TableQueryReq{SortBy: keys, Offset: ptr(offset), Limit: ptr(700)})...)
				}
				if !slices.Equal(paged, want) {
					t.Fatalf("%s, sorted by %v, 700 rows a page:\n got %v\nwant %v", name, keys, paged, want)
				}
			}
		}
		var keptChunks int
		if err := db.NewSelect().Table("obj_table_sort_orders").ColumnExpr("COUNT(*)").Where("project_id = ?", project).Scan(ctx, &keptChunks); err != nil || keptChunks != 6*3 {
			t.Fatalf("kept chunks: %d (%v); want 3 for each of 6 sorts", keptChunks, err)
		}
		// The row filter applies before the sort and the page.
		chosen := []string{created.RowDigests[5], created.RowDigests[17], created.RowDigests[90], created.RowDigests[91]}
		keys := []objects.SortBy{{Field: "a", Direction: "desc"}}
		var want []int
		for _, i := range independentSort(t, rows, keys) {
			if slices.Contains(chosen, created.RowDigests[i]) {
				want = append(want, i)
			}
		}
		if got := query(objects.TableQueryReq{SortBy: keys, Filter: &objects.TableRowFilter{RowDigests: chosen}, Offset: ptr(1)}); !slices.Equal(got, want[1:]) {
			t.Fatalf("filtered, sorted, from the second: %v; want %v", got, want[1:])
		}
		for _, field := range []string{`a"b`, `a\b`, "a\x00", "a\nb", strings.Repeat("a.", 16) + "a"} {
			_, err := svc.TableQuery(ctx, &objects.TableQueryReq{ProjectID: project, Digest: created.Digest, SortBy: []objects.SortBy{{Field: field}}})
			wantErr(t, err, weft.ErrInvalid)
		}
		_, err := svc.TableQuery(ctx, &objects.TableQueryReq{ProjectID: project, Digest: created.Digest, SortBy: keys, Offset: ptr(-1)})
		wantErr(t, err, weft.ErrInvalid)
	})
}

// independentSort is the documented order, computed here: per key, numbers
// (by value), then strings (by code point), then booleans (false first),
// then objects and arrays (tied), then no value or null, the type order
// fixed and the values in the key's direction; ties in table order.
func independentSort(t *testing.T, rows []json.RawMessage, keys []objects.SortBy) []int {
	type cell struct {
		rank int
		num  *big.Float
		str  string
	}
	cells := make([][]cell, len(rows))
	for i, raw := range rows {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var doc any
		if err := dec.Decode(&doc); err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			v, ok := doc, true
			for _, m := range strings.Split(k.Field, ".") {
				obj, isObj := v.(map[string]any)
				if !isObj {
					ok = false
					break
				}
				if v, ok = obj[m]; !ok {
					break
				}
			}
			var c cell
			switch x := v.(type) {
			case json.Number:
				f, _, err := big.ParseFloat(string(x), 10, 256, big.ToNearestEven)
				if err != nil {
					t.Fatal(err)
				}
				c = cell{rank: 0, num: f}
			case string:
				c = cell{rank: 1, str: x}
			case bool:
				c = cell{rank: 2, num: big.NewFloat(0)}
				if x {
					c.num = big.NewFloat(1)
				}
			case map[string]any, []any:
				c = cell{rank: 3}
			default:
				c = cell{rank: 4}
			}
			if !ok {
				c = cell{rank: 4}
			}
			cells[i] = append(cells[i], c)
		}
	}
	order := make([]int, len(rows))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(x, y int) int {
		for j, k := range keys {
			a, b := cells[x][j], cells[y][j]
			if c := cmp.Compare(a.rank, b.rank); c != 0 {
				return c
			}
			c := 0
			if a.num != nil {
				c = a.num.Cmp(b.num)
			} else {
				c = strings.Compare(a.str, b.str)
			}
			if strings.EqualFold(k.Direction, "desc") {
				c = -c
			}
			if c != 0 {
				return c
			}
		}
		return cmp.Compare(x, y)
	})
	return order
}
