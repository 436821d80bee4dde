package monitor

import "github.com/weftlabs/weft"

// Errors of the monitor domain. The HTTP adapter maps each by its class.
var (
	// ErrInvalidMonitor: a Monitor object that cannot run (a bad sampling
	// rate, a scorer that is not a ref of the same project, ...): the
	// publish is refused (400).
	ErrInvalidMonitor = weft.DefineError(weft.ErrInvalid, "InvalidMonitor", "invalid monitor")
	// ErrInvalidScorer: a scorer a monitor names that cannot run (an unknown
	// class, a malformed pattern or template, a schema the judge cannot
	// enforce) (400).
	ErrInvalidScorer = weft.DefineError(weft.ErrInvalid, "InvalidScorer", "invalid scorer")
	// ErrJudgeModel: the judge model of a scorer is not one its publisher
	// may use (400).
	ErrJudgeModel = weft.DefineError(weft.ErrInvalid, "InvalidJudgeModel", "judge model not allowed")
	// ErrMonitorNotFound: no monitor of the project has that object id
	// (404).
	ErrMonitorNotFound = weft.DefineError(weft.ErrNotFound, "MonitorNotFound", "monitor not found")
	// ErrCallNotFound: a scorer's preview names no call of the project
	// (404).
	ErrCallNotFound = weft.DefineError(weft.ErrNotFound, "CallNotFound", "call not found")
	// ErrBackfillNotFound: no backfill of the project has that id (404).
	ErrBackfillNotFound = weft.DefineError(weft.ErrNotFound, "BackfillNotFound", "backfill not found")
	// ErrInvalidScore: a request to score answers that cannot run (too
	// many items, a scorer that is no ref of the project, a bad reward
	// path) (400).
	ErrInvalidScore = weft.DefineError(weft.ErrInvalid, "InvalidScore", "invalid score request")
	// ErrInvalidBackfill: a backfill that cannot run (a range that ends
	// before it starts) (400).
	ErrInvalidBackfill = weft.DefineError(weft.ErrInvalid, "InvalidBackfill", "invalid backfill")
	// ErrInvalidStats: verdicts per interval asked of a range that cannot
	// be cut into intervals (no start, an end before it, too long) (400).
	ErrInvalidStats = weft.DefineError(weft.ErrInvalid, "InvalidMonitorStats", "invalid monitor stats request")
)
