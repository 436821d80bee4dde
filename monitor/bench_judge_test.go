package monitor_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/chat"
	"github.com/weftlabs/weft/chat/chatstore"
	"github.com/weftlabs/weft/chat/inprocess"
	"github.com/weftlabs/weft/internal/llm/llmtest"
	"github.com/weftlabs/weft/internal/testdb"
	"github.com/weftlabs/weft/monitor"
)

// The judge figure the monitors issue names: verdicts/s of an LLM judge on
// the built-in engine serving a model of llama2.c's 15M shape (random
// weights, the 32,000-token SentencePiece tokenizer), against the same
// judge requests sent straight to the gateway from as many goroutines, in
// one run: the ratio is what the queue, the verdict rows and the feedback
// cost on top of the model's own time. On PostgreSQL, with -bench only:
//
//	go test ./monitor -run '^$' -bench JudgeVerdicts -benchtime 2x

const (
	judgeBenchCalls       = 24 // calls judged per measurement
	judgeBenchConcurrency = 4  // judge requests in flight at once
)

func BenchmarkJudgeVerdicts(b *testing.B) {
	llmtest.RequireTokenizer(b, llmtest.TokenizerLlama2)
	dir := llmtest.ModelDir{Dims: llmtest.Llama15M, Tokenizer: llmtest.TokenizerLlama2,
		Files: map[string][]byte{"chat_template.jinja": []byte(llama2Template)}}.Write(b)
	routing, err := chat.ParseRouting([]byte(fmt.Sprintf("models:\n  - name: judge-15m\n    upstreams: [{kind: local, path: %q, "+
		"max_sequences: %d, structured_outputs: {max_string_length: 8, max_nesting: 4, max_whitespace: -1}}]\n",
		dir, judgeBenchConcurrency)), nil, inprocess.Kind)
	if err != nil {
		b.Fatal(err)
	}
	db := testdb.Postgres(b)
	s := newServer(b, db, serverOptions{monitor: func(cfg *monitor.Config) {
		cfg.JudgeWorkers, cfg.JudgeConcurrency, cfg.JudgeRate = judgeBenchConcurrency, judgeBenchConcurrency, 1000
	}})
	models, err := inprocess.Open(routing, inprocess.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	defer models.Close() //nolint:errcheck // the benchmark is over
	gateway, err := chat.New(chat.Config{Routing: routing, Recorder: chatstore.Recorder{Trace: s.trace}, Logger: slog.New(slog.DiscardHandler),
		Adapters: chatstore.Adapters{Training: noCheckpoints{}}, Backends: map[string]chat.Backend{chat.KindLocal: models}})
	if err != nil {
		b.Fatal(err)
	}
	defer gateway.Close(context.Background()) //nolint:errcheck // the benchmark is over
	s.monitors.SetChat(gateway, monitor.ChatModels{Chat: gateway})
	ctx := s.user(b, "alice", "acme")
	const project = "acme/judged"
	judgeRef := s.publish(b, ctx, project, "judge", judgeVal("judge-15m"))
	s.publish(b, ctx, project, "graded", monitorVal(1, nil, true, judgeRef))

	// The request the judge sends for each call: judgeVal's template
	// filled with the harness's call.
	direct, _ := json.Marshal(map[string]any{"model": "judge-15m", "temperature": 1, "max_tokens": 64,
		"messages": []map[string]string{{"role": "system", "content": "You grade answers to questions."},
			{"role": "user", "content": "Question: \"what is 6*7?\"\nAnswer: \"7\"\nIs the answer good?"}},
		"response_format": map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": "verdict",
			"schema": json.RawMessage(verdictSchema), "strict": true}}})

	var verdicts, completions float64
	n := 0
	for ; b.Loop(); n++ {
		completions += completionRate(b, gateway, direct)
		verdicts += verdictRate(b, s, ctx, project, db)
	}
	b.ReportMetric(verdicts/float64(n), "verdicts/s")
	b.ReportMetric(completions/float64(n), "completions/s")
	b.ReportMetric(verdicts/completions, "ratio-verdicts")
}

// completionRate sends judgeBenchCalls requests to the gateway from
// judgeBenchConcurrency goroutines and returns completions/s.
func completionRate(b *testing.B, gateway *chat.Gateway, body []byte) float64 {
	work := make(chan struct{}, judgeBenchCalls)
	for range judgeBenchCalls {
		work <- struct{}{}
	}
	close(work)
	start := time.Now()
	var wg sync.WaitGroup
	for range judgeBenchConcurrency {
		wg.Go(func() {
			for range work {
				c, err := gateway.Complete(context.Background(), "acme/direct", body)
				if err != nil {
					b.Error(err)
					return
				}
				rec := httptest.NewRecorder()
				if err := c.Relay(rec); err != nil || rec.Code != 200 {
					b.Errorf("completion: %d %v %s", rec.Code, err, rec.Body)
					return
				}
			}
		})
	}
	wg.Wait()
	return judgeBenchCalls / time.Since(start).Seconds()
}

// verdictRate ingests judgeBenchCalls calls into the judged project and
// returns verdicts/s, from the ingest to the last verdict stored.
func verdictRate(b *testing.B, s *server, ctx context.Context, project string, db *weft.DB) float64 {
	calls := make([]call, judgeBenchCalls)
	for i := range calls {
		calls[i] = call{id: newID(), op: "weave:///" + project + "/op/answer:abc", output: `"7"`}
	}
	var before int
	count := func() int {
		var n int
		if err := db.NewRaw("SELECT count(*) FROM monitor_verdicts WHERE project_id = ? AND state <> ?", project, monitor.StatePending).
			Scan(context.Background(), &n); err != nil {
			b.Fatal(err)
		}
		return n
	}
	before = count()
	start := time.Now()
	s.ingest(b, ctx, project, calls...)
	for count() < before+judgeBenchCalls {
		if time.Since(start) > 10*time.Minute {
			b.Fatal("the judge gave no verdict for 10 minutes")
		}
		time.Sleep(10 * time.Millisecond)
	}
	var errors int
	if err := db.NewRaw("SELECT count(*) FROM monitor_verdicts WHERE project_id = ? AND state = ?", project, monitor.StateError).
		Scan(context.Background(), &errors); err != nil || errors > 0 {
		b.Fatalf("%d error verdicts (%v)", errors, err)
	}
	return judgeBenchCalls / time.Since(start).Seconds()
}
