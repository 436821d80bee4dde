package monitor_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weftlabs/weft/internal/testdb"
	"github.com/weftlabs/weft/monitor"
	"github.com/weftlabs/weft/trace"
)

// The figure the monitors issue names: ingest with an active monitor
// (sampling every call, a deterministic scorer, its jobs worked by the same
// process) against ingest into the same database without monitors, in one
// run. On PostgreSQL, with -bench only:
//
//	go test ./monitor -run '^$' -bench IngestWithMonitor -benchtime 3x

const (
	benchPairs   = 500 // start+end pairs per batch
	benchClients = 4
	benchBatches = 40 // 20,000 calls per measurement
)

var benchInputs = `{"messages":[{"role":"user","content":"` + strings.Repeat("lorem ipsum ", 80) + `"}],"model":"gpt-4o-mini"}`

// BenchmarkIngestWithMonitor reports calls/s of three stores on one
// database: without a hook (what ingest costs with monitors off), with the
// monitors' hook in a project that has no monitor, and with the hook in a
// project whose monitor scores every call; and the last two as ratios to
// the first.
func BenchmarkIngestWithMonitor(b *testing.B) {
	db := testdb.Postgres(b)
	s := newServer(b, db, serverOptions{})
	ctx := s.user(b, "alice", "acme")
	jsonRef := s.publish(b, ctx, "acme/monitored", "json_valid", scorerVal(monitor.ClassValidJSON, ""))
	s.publish(b, ctx, "acme/monitored", "every_call", monitorVal(1, nil, true, jsonRef))
	plain, err := trace.New(trace.Config{DB: db})
	if err != nil {
		b.Fatal(err)
	}
	runs := []struct {
		store   *trace.Store
		project string
	}{{plain, "acme/plain"}, {s.trace, "acme/unmonitored"}, {s.trace, "acme/monitored"}}
	var base, idle, monitored float64
	n := 0
	for ; b.Loop(); n++ {
		// Each iteration starts with another store, so that warm-up and the
		// previous measurement's leftover scoring fall on each in turn.
		rates := make([]float64, len(runs))
		for j := range runs {
			k := (n + j) % len(runs)
			rates[k] = ingestRate(b, runs[k].store, runs[k].project)
		}
		base += rates[0]
		idle += rates[1] / rates[0]
		monitored += rates[2] / rates[0]
	}
	// Means over the iterations (-benchtime 3x: each store first once).
	b.ReportMetric(base/float64(n), "calls/s")
	b.ReportMetric(idle/float64(n), "ratio-hook-no-monitor")
	b.ReportMetric(monitored/float64(n), "ratio-monitored")
}

// ingestRate writes benchBatches batches of benchPairs calls into project
// from benchClients goroutines and returns calls/s.
func ingestRate(b *testing.B, store *trace.Store, project string) float64 {
	batches := make(chan *trace.UpsertBatchReq, benchBatches)
	for range benchBatches {
		batches <- benchBatch(project)
	}
	close(batches)
	start := time.Now()
	var wg sync.WaitGroup
	for range benchClients {
		wg.Go(func() {
			for req := range batches {
				if _, err := store.UpsertBatch(context.Background(), req); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	return float64(benchBatches*benchPairs) / time.Since(start).Seconds()
}

func benchBatch(project string) *trace.UpsertBatchReq {
	now := time.Now().UTC()
	req := &trace.UpsertBatchReq{}
	for range benchPairs {
		id := newID()
		req.Batch = append(req.Batch,
			trace.BatchItem{Mode: trace.ModeStart, Start: &trace.StartedCall{ProjectID: project, ID: id, TraceID: id,
				OpName: "weave:///" + project + "/op/answer:abc", StartedAt: now, Inputs: json.RawMessage(benchInputs), Attributes: json.RawMessage(`{}`)}},
			trace.BatchItem{Mode: trace.ModeEnd, End: &trace.EndedCall{ProjectID: project, ID: id, EndedAt: now,
				Output: json.RawMessage(`"{\"answer\": 42}"`), Summary: json.RawMessage(`{}`)}})
	}
	return req
}
