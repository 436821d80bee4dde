package webui_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/weftlabs/weft/internal/gobuild"
	"github.com/weftlabs/weft/internal/integration/e2e"
	"github.com/weftlabs/weft/internal/integration/serverproc"
	"github.com/weftlabs/weft/internal/testdb"
)

// chartSteps is the size of the benchmark's training job.
const chartSteps = 10_000

// BenchmarkTrainingChart measures, in Chromium, a 10,000-step training job's
// page: from navigation until every chart of it is drawn (ms/charts, the
// page's own clock), the drawing alone (ms/draw), the server's answer
// (ms/response) and the parsing of the page after it (ms/parse), on SQLite
// and PostgreSQL. Run with:
//
//	cd internal/integration && go test -run '^$' -bench TrainingChart -benchtime 10x ./webui/
func BenchmarkTrainingChart(b *testing.B) {
	if noBrowser != "" {
		b.Skip(noBrowser)
	}
	for _, backend := range testdb.Backends[:2] {
		b.Run(backend.Name, func(b *testing.B) {
			dbURL := backend.URL(b)
			srv := serverproc.Start(b, serverproc.Options{DatabaseURL: dbURL, Args: []string{
				"-trainer-command", gobuild.Binary(b, "./internal/testtrainer"), "-checkpoint-dir", b.TempDir()}})
			key := createUsers(b, dbURL, "alice")[0]
			c := e2e.Client{URL: srv.URL, Auth: e2e.Bearer(key)}
			var model artModel
			c.Call(b, http.MethodPost, "/v1/preview/models", map[string]any{"entity": "alice", "project": "art", "name": "long", "base_model": "Qwen/Qwen3-14B"}, &model)
			// Every trajectory of groups with distinct rewards is one step.
			var job struct{ ID string }
			c.Call(b, http.MethodPost, "/v1/preview/training-jobs", map[string]any{"model_id": model.ID, "trajectory_groups": artGroups(chartSteps/4, "long")}, &job)
			artEvents(b, c, job.ID, 20*time.Minute)
			tb := newTab(b, srv.URL)
			tb.signIn("", key)
			path := "/ui/p/" + artProject + "/training-jobs/" + job.ID
			var charts, draw, server, parsed float64
			for b.Loop() {
				tb.open(path)
				got := value(tb, chromedp.Poll[[]float64](`(() => {
					const root = document.documentElement.dataset;
					const nav = performance.getEntriesByType('navigation')[0];
					return root.chartsAt && nav && nav.responseEnd > 0 ?
					  [Number(root.chartsAt), Number(root.chartsDrawMs), nav.responseEnd - nav.requestStart, nav.domInteractive - nav.responseEnd] : null;
				})()`))
				charts += got[0]
				draw += got[1]
				server += got[2]
				parsed += got[3]
			}
			if n := eval[int](tb, `document.querySelector('.charts').charts.get('loss').data[0].length`); n != chartSteps {
				b.Fatalf("the loss chart draws %d steps, want %d", n, chartSteps)
			}
			b.ReportMetric(charts/float64(b.N), "ms/charts")
			b.ReportMetric(draw/float64(b.N), "ms/draw")
			b.ReportMetric(server/float64(b.N), "ms/response")
			b.ReportMetric(parsed/float64(b.N), "ms/parse")
		})
	}
}
