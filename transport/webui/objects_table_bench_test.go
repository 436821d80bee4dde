package webui_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/objects"
)

// BenchmarkTable100k measures the server time of pages of a 100,000-row
// table stored through the objects service: the first page in table
// order, a page in the middle, and pages sorted by a member once the
// order is kept (the first, the last, and one in the middle sorted by
// text); and the objects service's query of a first page sorted over every
// row, what the first query of a sort costs. Run it with
//
//	TEST_DATABASE_URL=postgres://… go test ./transport/webui -run '^$' -bench Table100k -benchtime 20x
func BenchmarkTable100k(b *testing.B) {
	const rows = 100_000
	benchDatabases(b, func(b *testing.B, db *weft.DB) {
		u := newBenchUI(b, db)
		vals := make([]json.RawMessage, rows)
		for i := range vals {
			vals[i] = json.RawMessage(fmt.Sprintf(`{"id":"r%d","question":"what is %d squared?","expected":%d,"tags":["math","n%d"]}`, i, i, i*i, i%10))
		}
		table, err := u.objects.TableCreate(u.ctx, &objects.TableCreateReq{Table: objects.TableSchemaForInsert{ProjectID: "bench/p", Rows: vals}})
		if err != nil {
			b.Fatal(err)
		}
		path := "/ui/p/bench/p/tables/" + table.Digest
		for _, page := range []struct{ name, query string }{
			{"first page", ""},
			{"middle page", "?offset=50000"},
			{"sorted first page", "?sort=expected&dir=desc"},
			{"sorted deep page", "?sort=expected&dir=desc&offset=99950"},
			{"sorted by text, middle page", "?sort=question&offset=50000"},
		} {
			b.Run(page.name, func(b *testing.B) {
				u.get(b, path+page.query) // the first query of a sort keeps its order
				for b.Loop() {
					u.get(b, path+page.query)
				}
			})
		}
		// What the first query of a sort costs: the database sorts every row
		// (as it does on every query of a table smaller than
		// objects.DefaultSortedTableRows).
		everyQuery, err := objects.New(objects.Config{DB: db, SortedTableRows: -1})
		if err != nil {
			b.Fatal(err)
		}
		limit := 50
		for _, sort := range []objects.SortBy{{Field: "expected", Direction: "desc"}, {Field: "question"}} {
			b.Run("sorting every row by "+sort.Field, func(b *testing.B) {
				for b.Loop() {
					req := &objects.TableQueryReq{ProjectID: "bench/p", Digest: table.Digest, SortBy: []objects.SortBy{sort}, Limit: &limit}
					if _, err := everyQuery.TableQuery(u.ctx, req); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	})
}
