package main

import (
	"flag"
	"log/slog"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/jobs"
	"github.com/weftlabs/weft/monitor"
)

// monitorOptions are the flags of the monitors that score incoming calls.
type monitorOptions struct {
	workers          int
	judgeWorkers     int
	judgeConcurrency int
	judgeRate        float64
	maxAttempts      int
	jobTimeout       time.Duration
	scoreMaxItems    int
}

func monitorFlags(fs *flag.FlagSet) *monitorOptions {
	o := &monitorOptions{}
	fs.IntVar(&o.workers, "monitor-workers", monitor.DefaultWorkers, "monitor jobs (matching ended calls, sampling them, running deterministic scorers) this process runs at once; -1: none (other servers on the database run them)")
	fs.IntVar(&o.judgeWorkers, "monitor-judge-workers", monitor.DefaultJudgeWorkers, "judge requests this process has in flight at once over every monitor; -1: none")
	fs.IntVar(&o.judgeConcurrency, "monitor-judge-concurrency", monitor.DefaultJudgeConcurrency, "judge requests one monitor has in flight at once in this process")
	fs.Float64Var(&o.judgeRate, "monitor-judge-rate", monitor.DefaultJudgeRate, "judge requests one monitor starts per second in this process")
	fs.IntVar(&o.maxAttempts, "monitor-judge-attempts", monitor.DefaultMaxAttempts, "attempts per judge request before its verdict is an error")
	fs.DurationVar(&o.jobTimeout, "monitor-job-timeout", monitor.DefaultJobTimeout, "longest one monitor job (a dispatch, a judge request, a backfill step) may run; a job of a process that died is worked again this long after it started")
	fs.IntVar(&o.scoreMaxItems, "monitor-score-max-items", monitor.DefaultMaxScoreItems, "answers one request to /v2/{entity}/{project}/scorers/score may hold (a judge request each when the scorer is a judge); more get 400")
	return o
}

// newMonitors builds the monitors of db, whose workers run on queue; the
// trace and objects stores take them as their hook, and the services they
// read and write are set once built (SetServices, SetChat).
func newMonitors(db *weft.DB, queue *jobs.Queue, identity *weft.Identity, o *monitorOptions, logger *slog.Logger) (*monitor.Monitors, error) {
	return monitor.New(monitor.Config{DB: db, Jobs: queue, Principals: identity, Workers: o.workers, JudgeWorkers: o.judgeWorkers,
		JudgeConcurrency: o.judgeConcurrency, JudgeRate: o.judgeRate, MaxAttempts: o.maxAttempts, JobTimeout: o.jobTimeout, MaxScoreItems: o.scoreMaxItems, Logger: logger})
}
