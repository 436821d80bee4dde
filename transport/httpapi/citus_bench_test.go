package httpapi

import (
	"slices"
	"testing"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/testdb"
)

// BenchmarkCitus measures the figures the scale-out work names, on a Citus
// cluster (a coordinator and two workers) against plain PostgreSQL in the same
// run, on the same machine: ingest through /call/upsert_batch (20,000 calls, 4
// clients), the first line of /calls/stream_query by trace in a project of
// 100,000 calls, and /calls/usage on a 10,000-call trace. The two databases
// take turns, round after round, so that whatever else the machine does falls
// on both alike; each figure is the median over the rounds, printed for both
// and as the ratio Citus / PostgreSQL.
//
//	go test ./transport/httpapi -run '^$' -bench Citus -benchtime 1x
func BenchmarkCitus(b *testing.B) {
	const traces, perTrace, rounds, repeats = 1000, 100, 5, 10
	type backend struct {
		f                     fixture
		streamBody, usageBody string
		ingest, stream, sum   []float64
		ingestMed, streamMed  float64
		usageMed              float64
	}
	setUp := func(db *weft.DB) *backend {
		be := &backend{f: newTraceFixture(b, db)}
		be.streamBody = seedStreamProject(b, db, traces, perTrace)
		be.usageBody = seedUsageTrace(b, db)
		ingestRate(b, be.f) // warm the server's connections on both paths
		firstLine(b, be.f, be.streamBody, perTrace)
		usage(b, be.f, basic("api", be.f.aliceKey), be.usageBody)
		return be
	}
	round := func(be *backend) {
		be.ingest = append(be.ingest, ingestRate(b, be.f))
		auth := basic("api", be.f.aliceKey)
		var stream, sum time.Duration
		for range repeats {
			stream += firstLine(b, be.f, be.streamBody, perTrace)
			start := time.Now()
			usage(b, be.f, auth, be.usageBody)
			sum += time.Since(start)
		}
		be.stream = append(be.stream, float64(stream.Microseconds())/1000/repeats)
		be.sum = append(be.sum, float64(sum.Microseconds())/1000/repeats)
	}
	median := func(v []float64) float64 {
		s := slices.Clone(v)
		slices.Sort(s)
		return s[len(s)/2]
	}
	for b.Loop() {
		pg, citus := setUp(testdb.Postgres(b)), setUp(testdb.Citus(b))
		for range rounds {
			round(pg)
			round(citus)
		}
		for _, be := range []*backend{pg, citus} {
			be.ingestMed, be.streamMed, be.usageMed = median(be.ingest), median(be.stream), median(be.sum)
		}
		b.ReportMetric(pg.ingestMed, "pg-calls/s")
		b.ReportMetric(citus.ingestMed, "citus-calls/s")
		b.ReportMetric(citus.ingestMed/pg.ingestMed, "ingest-ratio")
		b.ReportMetric(pg.streamMed, "pg-ms/first-line")
		b.ReportMetric(citus.streamMed, "citus-ms/first-line")
		b.ReportMetric(citus.streamMed/pg.streamMed, "first-line-ratio")
		b.ReportMetric(pg.usageMed, "pg-ms/usage")
		b.ReportMetric(citus.usageMed, "citus-ms/usage")
		b.ReportMetric(citus.usageMed/pg.usageMed, "usage-ratio")
	}
}
