package httpapi

import (
	"testing"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/testdb"
)

// BenchmarkCitus measures the figures the scale-out work names, on a Citus
// cluster (a coordinator and two workers) against plain PostgreSQL in the same
// run, on the same machine: ingest through /call/upsert_batch (20,000 calls, 4
// clients), the first line of /calls/stream_query by trace in a project of
// 100,000 calls, and /calls/usage on a 10,000-call trace. Each figure is
// printed for both and as the ratio Citus / PostgreSQL.
//
//	go test ./transport/httpapi -run '^$' -bench Citus -benchtime 1x
func BenchmarkCitus(b *testing.B) {
	const traces, perTrace, repeats = 1000, 100, 20
	type figures struct{ ingest, firstLineMs, usageMs float64 }
	measure := func(db *weft.DB) figures {
		f := newTraceFixture(b, db)
		var out figures
		out.ingest = ingestRate(b, f)
		streamBody := seedStreamProject(b, db, traces, perTrace)
		usageBody := seedUsageTrace(b, db)
		auth := basic("api", f.aliceKey)
		firstLine(b, f, streamBody, perTrace) // warm both paths once
		usage(b, f, auth, usageBody)
		var stream, sum time.Duration
		for range repeats {
			stream += firstLine(b, f, streamBody, perTrace)
			start := time.Now()
			usage(b, f, auth, usageBody)
			sum += time.Since(start)
		}
		out.firstLineMs = float64(stream.Microseconds()) / 1000 / repeats
		out.usageMs = float64(sum.Microseconds()) / 1000 / repeats
		return out
	}
	for b.Loop() {
		pg := measure(testdb.Postgres(b))
		citus := measure(testdb.Citus(b))
		b.ReportMetric(pg.ingest, "pg-calls/s")
		b.ReportMetric(citus.ingest, "citus-calls/s")
		b.ReportMetric(citus.ingest/pg.ingest, "ingest-ratio")
		b.ReportMetric(pg.firstLineMs, "pg-ms/first-line")
		b.ReportMetric(citus.firstLineMs, "citus-ms/first-line")
		b.ReportMetric(citus.firstLineMs/pg.firstLineMs, "first-line-ratio")
		b.ReportMetric(pg.usageMs, "pg-ms/usage")
		b.ReportMetric(citus.usageMs, "citus-ms/usage")
		b.ReportMetric(citus.usageMs/pg.usageMs, "usage-ratio")
	}
}
