package httpapi

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/testdb"
	"github.com/weftlabs/weft/trace"
)

// Benchmarks of the figures the tracing issue names. They only run with
// -bench, on PostgreSQL:
//
//	go test ./transport/httpapi -run '^$' -bench Trace -benchtime 1x

const (
	benchBatchPairs = 500
	benchClients    = 4
	benchBatches    = 40 // 20,000 calls per run
)

// benchInputs is ~1 KB of inputs JSON.
var benchInputs = `{"messages":[{"role":"user","content":"` + strings.Repeat("lorem ipsum ", 80) + `"}],"model":"gpt-4o-mini","temperature":0.2}`

// BenchmarkTraceIngest: HTTP ingest through /call/upsert_batch (batches of 500
// start+end pairs, ~1 KB inputs, 4 concurrent clients) into PostgreSQL, and a
// raw COPY of the same rows, 4 concurrent streams of 500, in the same run.
func BenchmarkTraceIngest(b *testing.B) {
	db := testdb.Postgres(b)
	f := newTraceFixture(b, db)
	for b.Loop() {
		httpRate := ingestRate(b, f)
		b.StopTimer()
		copyRate := copyRate(b, db)
		b.StartTimer()
		b.ReportMetric(httpRate, "calls/s")
		b.ReportMetric(copyRate, "copy-calls/s")
		b.ReportMetric(httpRate/copyRate, "ratio-to-copy")
	}
}

// ingestRate sends benchBatches upsert_batch bodies of benchBatchPairs
// start+end pairs from benchClients concurrent clients and returns calls/s.
func ingestRate(b *testing.B, f fixture) float64 {
	auth := basic("api", f.aliceKey)
	bodies := make(chan string, benchBatches)
	for range benchBatches {
		bodies <- ingestBody("alice/http")
	}
	close(bodies)
	return concurrently(b, benchBatches*benchBatchPairs, func() error {
		for body := range bodies {
			req, _ := http.NewRequest(http.MethodPost, f.server.URL+"/call/upsert_batch", strings.NewReader(body))
			req.Header.Set("Authorization", auth)
			req.Header.Set("Content-Type", "application/json")
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				return err
			}
			res.Body.Close()
			if res.StatusCode != 200 {
				return fmt.Errorf("status %d", res.StatusCode)
			}
		}
		return nil
	})
}

// ingestBody is one upsert_batch body of start+end pairs in a fresh trace.
func ingestBody(project string) string {
	var sb strings.Builder
	sb.WriteString(`{"batch":[`)
	traceID := uuid.Must(uuid.NewV7()).String()
	at := time.Now().UTC().Format("2006-01-02T15:04:05.000Z")
	for i := range benchBatchPairs {
		id := uuid.Must(uuid.NewV7()).String()
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `{"mode":"start","req":{"start":{"project_id":%q,"id":%q,"trace_id":%q,"op_name":"weave:///alice/p/op/llm:abc","started_at":%q,"attributes":{"weave":{"source":"js-sdk"}},"inputs":%s}}},`,
			project, id, traceID, at, benchInputs)
		fmt.Fprintf(&sb, `{"mode":"end","req":{"end":{"project_id":%q,"id":%q,"ended_at":%q,"output":{"content":"done"},"summary":{"usage":{"gpt-4o-mini":{"requests":1,"prompt_tokens":10,"completion_tokens":3}}}}}}`,
			project, id, at)
	}
	sb.WriteString(`]}`)
	return sb.String()
}

// concurrently runs work on benchClients goroutines and returns calls/s.
func concurrently(b *testing.B, calls int, work func() error) float64 {
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, benchClients)
	for range benchClients {
		wg.Go(func() {
			if err := work(); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	return float64(calls) / time.Since(start).Seconds()
}

var benchColumns = []string{"project_id", "id", "trace_id", "op_name", "started_at", "ended_at", "attributes", "inputs", "output", "summary", "pf_user_id"}

// copyRows returns n finished calls of one trace as COPY rows.
func copyRows(project, traceID string, n int, parent func(i int, ids []string) *string) [][]any {
	at := time.Now().UTC()
	ids := make([]string, n)
	rows := make([][]any, n)
	for i := range n {
		ids[i] = uuid.Must(uuid.NewV7()).String()
		rows[i] = []any{project, ids[i], traceID, "weave:///alice/p/op/llm:abc", at, at.Add(time.Second),
			`{"weave":{"source":"js-sdk"}}`, benchInputs, `{"content":"done"}`,
			`{"usage":{"gpt-4o-mini":{"requests":1,"prompt_tokens":10,"completion_tokens":3}}}`, "u"}
		if parent != nil {
			rows[i] = append(rows[i], parent(i, ids))
		}
	}
	return rows
}

// copyRate COPYs the same volume of rows into the calls table, 4 streams of
// 500-row batches, and returns calls/s.
func copyRate(b *testing.B, db *weft.DB) float64 {
	batches := make(chan [][]any, benchBatches)
	for range benchBatches {
		batches <- copyRows("alice/copy", uuid.Must(uuid.NewV7()).String(), benchBatchPairs, nil)
	}
	close(batches)
	return concurrently(b, benchBatches*benchBatchPairs, func() error {
		for rows := range batches {
			if _, err := db.Pool().CopyFrom(context.Background(), pgx.Identifier{"calls"}, benchColumns, pgx.CopyFromRows(rows)); err != nil {
				return err
			}
		}
		return nil
	})
}

// BenchmarkTraceUsage: /calls/usage on the root of one 10,000-call trace
// (a root, 99 children, 99 leaves under each), written through the service as
// the ingest routes write it.
func BenchmarkTraceUsage(b *testing.B) {
	db := testdb.Postgres(b)
	f := newTraceFixture(b, db)
	body := seedUsageTrace(b, db)
	auth := basic("api", f.aliceKey)
	b.ResetTimer()
	for b.Loop() {
		usage(b, f, auth, body)
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/usage")
}

// seedUsageTrace writes one 10,000-call trace (a root, 99 children, 99 leaves
// under each) through the service as the ingest routes write it, and returns
// the /calls/usage body that asks for its root.
func seedUsageTrace(b *testing.B, db *weft.DB) string {
	store, err := trace.New(trace.Config{DB: db})
	if err != nil {
		b.Fatal(err)
	}
	ctx := weft.WithPrincipal(context.Background(), weft.Principal{UserID: "u"})
	traceID := uuid.Must(uuid.NewV7()).String()
	ids := make([]string, 10000)
	for i := range ids {
		ids[i] = uuid.Must(uuid.NewV7()).String()
	}
	at := time.Now().UTC()
	var batch []trace.BatchItem
	for i, id := range ids {
		var parent *string
		switch {
		case i == 0:
		case i < 100:
			parent = &ids[0]
		default:
			parent = &ids[1+(i-100)%99]
		}
		batch = append(batch,
			trace.BatchItem{Mode: trace.ModeStart, Start: &trace.StartedCall{ProjectID: "alice/p", ID: id, TraceID: traceID, ParentID: parent,
				OpName: "weave:///alice/p/op/llm:abc", StartedAt: at, Attributes: json.RawMessage(`{"weave":{"source":"js-sdk"}}`), Inputs: json.RawMessage(benchInputs)}},
			trace.BatchItem{Mode: trace.ModeEnd, End: &trace.EndedCall{ProjectID: "alice/p", ID: id, EndedAt: at.Add(time.Second), Output: json.RawMessage(`{"content":"done"}`),
				Summary: json.RawMessage(`{"usage":{"gpt-4o-mini":{"requests":1,"prompt_tokens":10,"completion_tokens":3}}}`)}})
		if len(batch) == 2*benchBatchPairs {
			if _, err := store.UpsertBatch(ctx, &trace.UpsertBatchReq{Batch: batch}); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	if _, err := db.ExecContext(ctx, "ANALYZE calls"); err != nil {
		b.Fatal(err)
	}
	return fmt.Sprintf(`{"project_id":"alice/p","call_ids":[%q]}`, ids[0])
}

// usage asks for the usage of seedUsageTrace's root and checks the answer.
func usage(b *testing.B, f fixture, auth, body string) {
	status, res := post(b, f, auth, "/calls/usage", body)
	if status != 200 || !strings.Contains(string(res), `"requests":10000`) {
		b.Fatalf("%d %.200s", status, res)
	}
}

// BenchmarkTraceStreamFirstLine: time to the first NDJSON line of
// /calls/stream_query by trace_id in a project of 1,000,000 calls (10,000
// traces of 100), seeded with COPY.
func BenchmarkTraceStreamFirstLine(b *testing.B) {
	db := testdb.Postgres(b)
	f := newTraceFixture(b, db)
	const traces, perTrace = 10000, 100
	body := seedStreamProject(b, db, traces, perTrace)
	var total time.Duration
	b.ResetTimer()
	for b.Loop() {
		total += firstLine(b, f, body, perTrace)
	}
	b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "ms/first-line")
}

// seedStreamProject COPYs traces×perTrace calls into project alice/big and
// returns the /calls/stream_query body that asks for one trace of the middle.
func seedStreamProject(b *testing.B, db *weft.DB, traces, perTrace int) string {
	var probe string
	ctx := context.Background()
	for t := range traces {
		traceID := uuid.Must(uuid.NewV7()).String()
		if t == traces/2 {
			probe = traceID
		}
		rows := copyRows("alice/big", traceID, perTrace, nil)
		for _, r := range rows {
			r[7] = `{"q":"small"}`
		}
		if _, err := db.Pool().CopyFrom(ctx, pgx.Identifier{"calls"}, benchColumns, pgx.CopyFromRows(rows)); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := db.ExecContext(ctx, "ANALYZE calls"); err != nil {
		b.Fatal(err)
	}
	return fmt.Sprintf(`{"project_id":"alice/big","filter":{"trace_ids":[%q]}}`, probe)
}

// firstLine streams the query body, checks that perTrace lines come, and
// returns the time to the first one.
func firstLine(b *testing.B, f fixture, body string, perTrace int) time.Duration {
	auth := "Basic " + base64.StdEncoding.EncodeToString([]byte("api:"+f.aliceKey))
	start := time.Now()
	req, _ := http.NewRequest(http.MethodPost, f.server.URL+"/calls/stream_query", strings.NewReader(body))
	req.Header.Set("Authorization", auth)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	reader := bufio.NewReader(res.Body)
	if _, err := reader.ReadBytes('\n'); err != nil {
		b.Fatal(err)
	}
	first := time.Since(start)
	n := 1
	for {
		if _, err := reader.ReadBytes('\n'); err != nil {
			break
		}
		n++
	}
	res.Body.Close()
	if n != perTrace {
		b.Fatalf("%d lines", n)
	}
	return first
}

// BenchmarkTraceBatchDecode: decoding one ingest body (500 start+end pairs)
// with trace.ScanBatch and with the encoding/json one-pass path it replaces.
func BenchmarkTraceBatchDecode(b *testing.B) {
	body := []byte(ingestBody("alice/http"))
	for _, decoder := range []struct {
		name   string
		decode func([]byte) ([]trace.BatchItem, bool)
	}{{"scan", trace.ScanBatch}, {"encoding-json", decodeBatchOnePass}} {
		b.Run(decoder.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				if batch, ok := decoder.decode(body); !ok || len(batch) != 2*benchBatchPairs {
					b.Fatalf("not decoded: %v, %d items", ok, len(batch))
				}
			}
		})
	}
}
