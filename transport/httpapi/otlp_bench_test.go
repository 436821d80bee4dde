package httpapi

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/weftlabs/weft/internal/testdb"
	"github.com/weftlabs/weft/trace"
	"github.com/weftlabs/weft/trace/otlp"
)

// The OTLP ingest figure of its issue. It only runs with -bench, on
// PostgreSQL:
//
//	go test ./transport/httpapi -run '^$' -bench OTLPIngest -benchtime 1x

const (
	otlpBenchSpans   = 512 // spans per export, the SDKs' default batch
	otlpBenchBatches = 40  // per round: 20,480 calls
	otlpBenchRounds  = 5   // of each path, alternating
)

// BenchmarkOTLPIngest: OTLP/protobuf exports of 512 spans with ~1 KB of
// attributes from 4 concurrent exporters, against /call/upsert_batch bodies
// holding the same calls (the converter's own output), in alternating
// rounds of the same run; it reports each path's median rate and their
// ratio.
func BenchmarkOTLPIngest(b *testing.B) {
	db := testdb.Postgres(b)
	store, err := trace.New(trace.Config{DB: db})
	if err != nil {
		b.Fatal(err)
	}
	f := newFixture(b, db, DefaultMaxBodyBytes, func(cfg *Config) { cfg.Trace = store })
	auth := basic("api", f.aliceKey)
	conv := otlp.New(otlp.Config{})
	for b.Loop() {
		var otlpRates, batchRates []float64
		for range otlpBenchRounds {
			exports, batches := otlpBenchBodies(b, conv)
			otlpRates = append(otlpRates, postConcurrently(b, f, auth, "/otel/v1/traces", "application/x-protobuf", exports))
			batchRates = append(batchRates, postConcurrently(b, f, auth, "/call/upsert_batch", "application/json", batches))
		}
		otlpRate, batchRate := median(otlpRates), median(batchRates)
		b.ReportMetric(otlpRate, "otlp-calls/s")
		b.ReportMetric(batchRate, "upsert-batch-calls/s")
		b.ReportMetric(otlpRate/batchRate, "ratio")
	}
}

// otlpBenchBodies builds one round's exports and the upsert_batch bodies of
// the same calls, each span a fresh id.
func otlpBenchBodies(b *testing.B, conv *otlp.Converter) (exports, batches [][]byte) {
	messages := `[{"role":"user","parts":[{"type":"text","content":"` + strings.Repeat("lorem ipsum ", 70) + `"}]}]`
	now := time.Now()
	for range otlpBenchBatches {
		td := ptrace.NewTraces()
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr("wandb.entity", "alice")
		rs.Resource().Attributes().PutStr("wandb.project", "otlp")
		spans := rs.ScopeSpans().AppendEmpty().Spans()
		var traceID pcommon.TraceID
		_, _ = rand.Read(traceID[:])
		for range otlpBenchSpans {
			s := spans.AppendEmpty()
			var id pcommon.SpanID
			_, _ = rand.Read(id[:])
			s.SetTraceID(traceID)
			s.SetSpanID(id)
			s.SetName("chat gpt-4o-mini")
			s.SetKind(ptrace.SpanKindClient)
			s.SetStartTimestamp(pcommon.NewTimestampFromTime(now))
			s.SetEndTimestamp(pcommon.NewTimestampFromTime(now.Add(time.Second)))
			a := s.Attributes()
			a.PutStr("gen_ai.operation.name", "chat")
			a.PutStr("gen_ai.provider.name", "openai")
			a.PutStr("gen_ai.request.model", "gpt-4o-mini")
			a.PutStr("gen_ai.response.model", "gpt-4o-mini-2024-07-18")
			a.PutInt("gen_ai.usage.input_tokens", 10)
			a.PutInt("gen_ai.usage.output_tokens", 3)
			a.PutStr("gen_ai.input.messages", messages)
			a.PutStr("gen_ai.output.messages", `[{"role":"assistant","parts":[{"type":"text","content":"done"}],"finish_reason":"stop"}]`)
		}
		body, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
		if err != nil {
			b.Fatal(err)
		}
		exports = append(exports, body)

		converted, _ := conv.Convert(td, "")
		var sb bytes.Buffer
		sb.WriteString(`{"batch":[`)
		for i, c := range converted {
			startCall, endCall := c.Call.Parts()
			start, _ := json.Marshal(map[string]any{"start": startCall})
			end, _ := json.Marshal(map[string]any{"end": endCall})
			if i > 0 {
				sb.WriteByte(',')
			}
			fmt.Fprintf(&sb, `{"mode":"start","req":%s},{"mode":"end","req":%s}`, start, end)
		}
		sb.WriteString(`]}`)
		batches = append(batches, sb.Bytes())
	}
	return exports, batches
}

// postConcurrently posts the bodies from benchClients clients and returns
// calls/s.
func postConcurrently(b *testing.B, f fixture, auth, path, contentType string, bodies [][]byte) float64 {
	queue := make(chan []byte, len(bodies))
	for _, body := range bodies {
		queue <- body
	}
	close(queue)
	return concurrently(b, len(bodies)*otlpBenchSpans, func() error {
		for body := range queue {
			req, _ := http.NewRequest(http.MethodPost, f.server.URL+path, bytes.NewReader(body))
			req.Header.Set("Authorization", auth)
			req.Header.Set("Content-Type", contentType)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				return err
			}
			var answer bytes.Buffer
			_, _ = answer.ReadFrom(res.Body)
			res.Body.Close()
			if res.StatusCode != http.StatusOK {
				return fmt.Errorf("%s: status %d %.300s", path, res.StatusCode, answer.Bytes())
			}
			if path == "/call/upsert_batch" && bytes.Contains(answer.Bytes(), []byte(`"error"`)) {
				return fmt.Errorf("%s: %.300s", path, answer.Bytes())
			}
			if path == "/otel/v1/traces" {
				res := ptraceotlp.NewExportResponse()
				if err := res.UnmarshalProto(answer.Bytes()); err != nil || res.PartialSuccess().RejectedSpans() != 0 {
					return fmt.Errorf("%s: %v %s", path, err, res.PartialSuccess().ErrorMessage())
				}
			}
		}
		return nil
	})
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}
