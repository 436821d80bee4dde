package httpapi

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/testdb"
)

// BenchmarkTraceQueryLanguage: the first page (100 calls, newest first) of
// /calls/stream_query in a project of 1,000,000 calls (10,000 traces of 100,
// ~1 KB of inputs each) for a query with a $contains on an inputs member
// (exact case and case_insensitive) and one with an $eq on a summary member,
// each matching one call in 100, against the same page without a query in the
// same run (the ratio). Medians of 9 rounds. PostgreSQL only:
//
//	go test ./transport/httpapi -run '^$' -bench TraceQueryLanguage -benchtime 1x
func BenchmarkTraceQueryLanguage(b *testing.B) {
	db := testdb.Postgres(b)
	f := newTraceFixture(b, db)
	seedQueryProject(b, db, 10000, 100)
	page := func(query string) string {
		return `{"project_id":"alice/big","sort_by":[{"field":"started_at","direction":"desc"}],"limit":100` + query + `}`
	}
	bodies := map[string]string{
		"plain":       page(``),
		"contains":    page(`,"query":{"$expr":{"$contains":{"input":{"$getField":"inputs.messages.0.content"},"substr":{"$literal":"needle"}}}}`),
		"contains-ci": page(`,"query":{"$expr":{"$contains":{"input":{"$getField":"inputs.messages.0.content"},"substr":{"$literal":"NeedLE"},"case_insensitive":true}}}`),
		"eq":          page(`,"query":{"$expr":{"$eq":[{"$getField":"summary.verdict"},{"$literal":"fail"}]}}`),
	}
	auth := basic("api", f.aliceKey)
	const rounds = 9
	for b.Loop() {
		times := map[string][]float64{}
		for range rounds {
			for _, name := range []string{"plain", "contains", "contains-ci", "eq"} {
				start := time.Now()
				lines := queryLines(b, f, auth, bodies[name])
				times[name] = append(times[name], float64(time.Since(start).Microseconds())/1000)
				if lines != 100 {
					b.Fatalf("%s: %d lines", name, lines)
				}
			}
		}
		median := func(v []float64) float64 {
			s := slices.Clone(v)
			slices.Sort(s)
			return s[len(s)/2]
		}
		plain := median(times["plain"])
		b.ReportMetric(plain, "plain-ms/page")
		for _, name := range []string{"contains", "contains-ci", "eq"} {
			b.ReportMetric(median(times[name]), name+"-ms/page")
			b.ReportMetric(median(times[name])/plain, name+"-ratio")
		}
	}
}

// queryLines posts a stream query and counts the lines of its answer.
func queryLines(b testing.TB, f fixture, auth, body string) int {
	req, _ := http.NewRequest(http.MethodPost, f.server.URL+"/calls/stream_query", strings.NewReader(body))
	req.Header.Set("Authorization", auth)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer res.Body.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(res.Body); err != nil || res.StatusCode != 200 {
		b.Fatalf("%d %v %.300s", res.StatusCode, err, buf.Bytes())
	}
	return bytes.Count(buf.Bytes(), []byte("\n"))
}

// seedQueryProject COPYs traces×perTrace finished calls into alice/big, one
// second apart: inputs of ~1 KB holding "needle" in one call of 100, and a
// summary whose verdict is "fail" in another one of 100.
func seedQueryProject(b testing.TB, db *weft.DB, traces, perTrace int) {
	ctx := context.Background()
	columns := append(slices.Clone(benchColumns), "parent_id")
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	n := 0
	for range traces {
		traceID := uuid.Must(uuid.NewV7()).String()
		rows := make([][]any, perTrace)
		var root string
		for i := range perTrace {
			id := uuid.Must(uuid.NewV7()).String()
			at := base.Add(time.Duration(n) * time.Second)
			content := strings.Repeat("lorem ipsum ", 80)
			if n%100 == 37 {
				content = strings.Repeat("lorem ipsum ", 40) + "needle " + strings.Repeat("lorem ipsum ", 40)
			}
			verdict := "pass"
			if n%100 == 71 {
				verdict = "fail"
			}
			var parent any
			if i == 0 {
				root = id
			} else {
				parent = root
			}
			rows[i] = []any{"alice/big", id, traceID, "weave:///alice/big/op/llm:abc", at, at.Add(time.Second),
				`{"weave":{"source":"js-sdk"}}`,
				fmt.Sprintf(`{"messages":[{"role":"user","content":%q}],"model":"gpt-4o-mini","temperature":0.2}`, content),
				`{"content":"done"}`,
				fmt.Sprintf(`{"usage":{"gpt-4o-mini":{"requests":1,"prompt_tokens":10,"completion_tokens":3}},"verdict":%q}`, verdict),
				"u", parent}
			n++
		}
		if _, err := db.Pool().CopyFrom(ctx, pgx.Identifier{"calls"}, columns, pgx.CopyFromRows(rows)); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := db.ExecContext(ctx, "ANALYZE calls"); err != nil {
		b.Fatal(err)
	}
}
