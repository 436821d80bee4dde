package webui_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/weftlabs/weft/transport/webui"
)

// BenchmarkDashboard1M measures the server time of the dashboard over the
// trace list benchmarks' project (benchProject: 1,000,000 calls on
// PostgreSQL, a quarter of them roots, started from 2026-01-01 a second
// apart), its clock set so that the 30-day view holds every trace: the
// 30-day view alone, and broken down by op, by status and by a scorer's
// verdict (which none of its traces has: a probe of the feedback per root). Run it with
//
//	TEST_DATABASE_URL=postgres://… go test ./transport/webui -run '^$' -bench Dashboard1M -benchtime 10x
func BenchmarkDashboard1M(b *testing.B) {
	identity, traces, key := benchProject(b)
	now := time.Date(2026, 1, 20, 0, 0, 0, 0, time.UTC)
	ui, err := webui.New(webui.Config{Identity: identity, Trace: traces, Now: func() time.Time { return now }})
	if err != nil {
		b.Fatal(err)
	}
	cookie := benchSignIn(b, ui, key)
	for _, view := range []struct{ name, query string }{
		{"30 days", "?range=30d"},
		{"30 days by op", "?range=30d&group=op_name"},
		{"30 days by status", "?range=30d&group=status"},
		{"30 days by verdict", "?range=30d&group=verdict&verdict=judge&verdict_path=correct"},
		{"24 hours", "?range=24h"},
	} {
		path := "/ui/p/bench/big/dashboard" + view.query
		b.Run(view.name, func(b *testing.B) {
			for b.Loop() {
				rec := httptest.NewRecorder()
				req := httptest.NewRequest(http.MethodGet, path, nil)
				req.AddCookie(cookie)
				ui.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					b.Fatalf("%s: %d %s", path, rec.Code, rec.Body.String())
				}
			}
		})
	}
}
