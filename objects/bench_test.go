package objects_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/weftlabs/weft/internal/testdb"
	"github.com/weftlabs/weft/objects"
)

// Benchmarks run on PostgreSQL (one on SQLite) only with -bench, e.g.
//
//	go test ./objects -run '^$' -bench . -benchtime 20x

// BenchmarkObjCreateRead publishes a new version of an object and reads it back.
func BenchmarkObjCreateRead(b *testing.B) {
	svc := newService(b, testdb.Postgres(b), objects.Config{})
	ctx := userCtx()
	var createTotal, readTotal time.Duration
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		res, err := svc.ObjCreate(ctx, &objects.ObjCreateReq{Obj: objects.ObjSchemaForInsert{ProjectID: project, ObjectID: "bench",
			Val: json.RawMessage(fmt.Sprintf(`{"_type":"Model","_class_name":"Model","_bases":["Object","BaseModel"],"name":"m","i":%d,"temperature":0.7}`, i))}})
		if err != nil {
			b.Fatal(err)
		}
		mid := time.Now()
		if _, err := svc.ObjRead(ctx, &objects.ObjReadReq{ProjectID: project, ObjectID: "bench", Digest: res.Digest}); err != nil {
			b.Fatal(err)
		}
		createTotal += mid.Sub(start)
		readTotal += time.Since(mid)
	}
	b.ReportMetric(float64(createTotal.Microseconds())/float64(b.N), "µs/create")
	b.ReportMetric(float64(readTotal.Microseconds())/float64(b.N), "µs/read")
}

func benchRows(n, seed int) []json.RawMessage {
	rows := make([]json.RawMessage, n)
	for i := range rows {
		rows[i] = json.RawMessage(fmt.Sprintf(`{"input":{"question":"what is %d + %d?","context":"table %d"},"expected":%d,"score":%d.5}`, i, seed, seed, i+seed, i))
	}
	return rows
}

// BenchmarkTableCreate10k creates a table of 10,000 new rows (goal: ≤ 1 s).
func BenchmarkTableCreate10k(b *testing.B) {
	svc := newService(b, testdb.Postgres(b), objects.Config{})
	ctx := userCtx()
	tables := make([][]json.RawMessage, b.N)
	for i := range tables {
		tables[i] = benchRows(10_000, i)
	}
	b.ResetTimer()
	for i := range b.N {
		if _, err := svc.TableCreate(ctx, &objects.TableCreateReq{Table: objects.TableSchemaForInsert{ProjectID: project, Rows: tables[i]}}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/table")
}

// BenchmarkTableStats10k asks for the statistics of a 10,000-row table (goal: ≤ 10 ms).
func BenchmarkTableStats10k(b *testing.B) {
	svc := newService(b, testdb.Postgres(b), objects.Config{})
	ctx := userCtx()
	table, err := svc.TableCreate(ctx, &objects.TableCreateReq{Table: objects.TableSchemaForInsert{ProjectID: project, Rows: benchRows(10_000, 0)}})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		res, err := svc.TableQueryStatsBatch(ctx, &objects.TableQueryStatsBatchReq{ProjectID: project, Digests: []string{table.Digest}, IncludeStorageSize: true})
		if err != nil || len(res.Tables) != 1 || res.Tables[0].Count != 10_000 {
			b.Fatalf("%+v %v", res, err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/1000, "ms/stats")
}

// BenchmarkTableCreateBesideWrites creates, on SQLite (one writer at a time),
// a table of 600,000 small rows — about what one 32 MiB table/create body
// holds — while another tenant publishes small objects in a loop, and
// reports how long the table took, the longest any of the other writes
// waited, beside the longest of the same writes for two seconds before with
// nothing else running (the baseline), and how many of them failed:
//
//	go test ./objects -run '^$' -bench TableCreateBesideWrites -benchtime 1x
//
// It takes minutes, so it runs only when -bench names it.
func BenchmarkTableCreateBesideWrites(b *testing.B) {
	if !strings.Contains(flag.Lookup("test.bench").Value.String(), "TableCreateBesideWrites") {
		b.Skip("600,000 rows: run it by name, -bench TableCreateBesideWrites")
	}
	svc := newService(b, testdb.SQLite(b), objects.Config{})
	ctx := userCtx()
	rows := make([]json.RawMessage, 600_000)
	for i := range rows {
		rows[i] = json.RawMessage(fmt.Sprintf(`{"q":"question %d","a":%d}`, i, i%97))
	}
	// otherTenant publishes a small object every 10 ms until stop closes.
	otherTenant := func(stop <-chan struct{}) (slowest time.Duration, writes, failed int) {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return slowest, writes, failed
			default:
			}
			start := time.Now()
			_, err := svc.ObjCreate(ctx, &objects.ObjCreateReq{Obj: objects.ObjSchemaForInsert{ProjectID: "other/proj", ObjectID: "note",
				Val: json.RawMessage(fmt.Sprintf(`{"n":%d}`, i))}})
			slowest = max(slowest, time.Since(start))
			writes++
			if err != nil {
				failed++
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	stop := make(chan struct{})
	time.AfterFunc(2*time.Second, func() { close(stop) })
	idle, _, _ := otherTenant(stop)

	var slowest time.Duration
	var writes, failed int
	b.ResetTimer()
	for i := range b.N {
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			s, w, f := otherTenant(stop)
			slowest, writes, failed = max(slowest, s), writes+w, failed+f
		}()
		rows[0] = json.RawMessage(fmt.Sprintf(`{"q":"first of table %d"}`, i)) // a new table each time
		_, err := svc.TableCreate(ctx, &objects.TableCreateReq{Table: objects.TableSchemaForInsert{ProjectID: project, Rows: rows}})
		close(stop)
		<-done
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/table")
	b.ReportMetric(float64(slowest.Milliseconds()), "ms-longest-other-write")
	b.ReportMetric(float64(idle.Milliseconds()), "ms-longest-other-write-idle")
	b.ReportMetric(float64(failed), "other-writes-failed")
	b.ReportMetric(float64(writes), "other-writes")
}
