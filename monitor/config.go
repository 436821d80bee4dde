package monitor

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/chat"
	"github.com/weftlabs/weft/feedback"
	"github.com/weftlabs/weft/jobs"
	"github.com/weftlabs/weft/objects"
	"github.com/weftlabs/weft/trace"
)

// Defaults of [Config]; the server's flags use them too.
const (
	// DefaultWorkers is how many dispatch jobs (which match calls, sample
	// them and run the deterministic scorers) a process runs at once.
	DefaultWorkers = 2
	// DefaultJudgeWorkers is how many judge requests a process has in
	// flight at once, over every monitor.
	DefaultJudgeWorkers = 2
	// DefaultJudgeConcurrency is how many judge requests one monitor has in
	// flight at once in a process.
	DefaultJudgeConcurrency = 1
	// DefaultJudgeRate is how many judge requests one monitor starts per
	// second in a process.
	DefaultJudgeRate = 2.0
	// DefaultMaxAttempts is how many times a judge request is tried before
	// its verdict is an error.
	DefaultMaxAttempts = 3
	// DefaultJobTimeout is the longest one dispatch job or judge request
	// may run.
	DefaultJobTimeout = 5 * time.Minute
	// DefaultBackfillChunk is how many calls of a backfill's range one
	// job reads and dispatches.
	DefaultBackfillChunk = 500
	// DefaultMaxScoreItems is how many answers one request to score
	// (Monitors.Score) may hold: each a judge request when the scorer is a
	// judge.
	DefaultMaxScoreItems = 16
	// DefaultRetryDelay is the wait before a failed attempt's retry,
	// multiplied by the attempt's number.
	DefaultRetryDelay = 2 * time.Second
	// DefaultStatsMaxRange is the longest range one request for a
	// monitor's verdicts per interval may span: a year and a day, as the
	// calls' stats routes allow by default (trace.DefaultStatsMaxRange).
	DefaultStatsMaxRange = 366 * 24 * time.Hour
)

// CallReader reads the calls monitors score. *trace.Store is one.
type CallReader interface {
	CallsQuery(ctx context.Context, req *trace.CallsQueryReq, yield func(*trace.Call) error) error
}

// ObjectReader reads the scorer and model objects monitors name.
// *objects.Store is one.
type ObjectReader interface {
	ObjRead(ctx context.Context, req *objects.ObjReadReq) (*objects.ObjReadRes, error)
}

// FeedbackWriter stores verdicts as feedback. *feedback.Store is one.
type FeedbackWriter interface {
	BatchCreate(ctx context.Context, req feedback.BatchCreateReq) (feedback.BatchCreateRes, error)
}

// PriceReader prices a judge's tokens as the project's calls are priced.
// *trace.Store is one.
type PriceReader interface {
	ModelPrice(ctx context.Context, projectID, model string, at time.Time) (trace.Price, bool, error)
}

// Completer answers a judge's chat completion, traced into the project.
// chat.Service is one.
type Completer interface {
	Complete(ctx context.Context, projectID string, raw []byte) (*chat.Completion, error)
}

// Principals returns a user's current principal: a judge runs with the
// authority of the user who published its monitor. *weft.Identity is one.
type Principals interface {
	PrincipalOfUser(ctx context.Context, userID string) (weft.Principal, error)
}

// ModelAccess decides whether the caller (weft.PrincipalFrom(ctx)) may use
// a chat model; a refusal is any error. [ChatModels] is one.
type ModelAccess interface {
	CheckModel(ctx context.Context, model string) error
}

// Config configures [New].
type Config struct {
	// DB is a migrated weft database. Required.
	DB *weft.DB
	// Jobs is the process's job queue, on which New registers the monitor
	// workers. Required.
	Jobs *jobs.Queue
	// Calls, Objects and Feedback are the services monitors read calls and
	// scorers from and write verdicts to. Required; a process whose stores
	// take the Monitors as their hook (and so are built after it) sets them
	// with [Monitors.SetServices].
	Calls    CallReader
	Objects  ObjectReader
	Feedback FeedbackWriter
	// Prices prices each judge's verdict: its prompt and completion tokens
	// at the price the project's calls of the judge model are charged (a
	// /cost/create price, or a built-in one), stored with the verdict. A
	// model with no price has its tokens stored and no cost. Defaults to
	// Calls when it is a PriceReader.
	Prices PriceReader
	// Principals looks up the publisher of a monitor. Required.
	Principals Principals
	// Chat answers judges. Without it a judge's verdict is an error saying
	// that this server serves no models.
	Chat Completer
	// Models checks, when a monitor is published, that its publisher may
	// use each judge's model. Without it any model name is accepted (and a
	// model the publisher may not use fails each verdict).
	Models ModelAccess
	// Workers is how many dispatch jobs this process runs at once; negative
	// runs none (the jobs wait for another process). Defaults to
	// [DefaultWorkers].
	Workers int
	// JudgeWorkers is how many judge requests this process has in flight at
	// once, over every monitor; negative runs none. Defaults to
	// [DefaultJudgeWorkers].
	JudgeWorkers int
	// JudgeConcurrency is how many judge requests one monitor has in flight
	// at once in this process. Defaults to [DefaultJudgeConcurrency].
	JudgeConcurrency int
	// JudgeRate is how many judge requests one monitor starts per second in
	// this process (a burst of JudgeConcurrency). Defaults to
	// [DefaultJudgeRate].
	JudgeRate float64
	// MaxAttempts is how many times a judge request is tried before its
	// verdict is an error. Defaults to [DefaultMaxAttempts].
	MaxAttempts int
	// JobTimeout bounds one dispatch job or judge request. Defaults to
	// [DefaultJobTimeout].
	JobTimeout time.Duration
	// BackfillChunk is how many calls of a backfill's range one job reads
	// and dispatches: the memory and time of one step. Defaults to
	// [DefaultBackfillChunk].
	BackfillChunk int
	// MaxScoreItems bounds the answers of one [Monitors.Score] request,
	// which a judge answers one after another. Defaults to
	// [DefaultMaxScoreItems].
	MaxScoreItems int
	// RetryDelay is the wait before a retry, times the attempt's number.
	// Defaults to [DefaultRetryDelay].
	RetryDelay time.Duration
	// StatsMaxRange bounds the range of one request for a monitor's
	// verdicts per interval ([StatsReq] with a Granularity, the monitor
	// page's chart): a longer one is [ErrInvalidStats]. Its intervals are
	// bounded by timeseries.MaxBuckets, the time of its one query by the
	// range. Defaults to [DefaultStatsMaxRange].
	StatsMaxRange time.Duration
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// Now is the clock. Defaults to time.Now.
	Now func() time.Time
}

func (cfg *Config) setDefaults() error {
	switch {
	case cfg.DB == nil:
		return errors.New("monitor: Config.DB is required")
	case cfg.Jobs == nil:
		return errors.New("monitor: Config.Jobs is required")
	case cfg.Principals == nil:
		return errors.New("monitor: Config.Principals is required")
	case cfg.JudgeConcurrency < 0, cfg.JudgeRate < 0, cfg.MaxAttempts < 0, cfg.JobTimeout < 0, cfg.RetryDelay < 0, cfg.BackfillChunk < 0, cfg.MaxScoreItems < 0,
		cfg.StatsMaxRange < 0:
		return errors.New("monitor: Config limits must not be negative")
	}
	if cfg.Workers == 0 {
		cfg.Workers = DefaultWorkers
	}
	if cfg.JudgeWorkers == 0 {
		cfg.JudgeWorkers = DefaultJudgeWorkers
	}
	if cfg.JudgeConcurrency == 0 {
		cfg.JudgeConcurrency = DefaultJudgeConcurrency
	}
	if cfg.JudgeRate == 0 {
		cfg.JudgeRate = DefaultJudgeRate
	}
	if cfg.MaxAttempts == 0 {
		cfg.MaxAttempts = DefaultMaxAttempts
	}
	if cfg.JobTimeout == 0 {
		cfg.JobTimeout = DefaultJobTimeout
	}
	if cfg.BackfillChunk == 0 {
		cfg.BackfillChunk = DefaultBackfillChunk
	}
	if cfg.MaxScoreItems == 0 {
		cfg.MaxScoreItems = DefaultMaxScoreItems
	}
	if cfg.RetryDelay == 0 {
		cfg.RetryDelay = DefaultRetryDelay
	}
	if cfg.StatsMaxRange == 0 {
		cfg.StatsMaxRange = DefaultStatsMaxRange
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return nil
}

// setPrices defaults Prices to Calls.
func (cfg *Config) setPrices() {
	if p, ok := cfg.Calls.(PriceReader); ok && cfg.Prices == nil {
		cfg.Prices = p
	}
}
