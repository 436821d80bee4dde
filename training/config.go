package training

import (
	"errors"
	"log/slog"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/jobs"
	"github.com/weftlabs/weft/training/blob"
)

// Defaults of [Config], exported so that a command line can show and reuse them.
const (
	// DefaultCheckpointDir is where checkpoint files go when Config.Blobs is nil.
	DefaultCheckpointDir = "data/checkpoints"
	// DefaultMaxDataBytes bounds an SFT job's data: 1 GiB, streamed to a
	// scratch file, never held in memory.
	DefaultMaxDataBytes = 1 << 30
	// MaxDataLineBytes bounds one line (one conversation) of SFT data, the
	// most of it held in memory at once: 16 MiB.
	MaxDataLineBytes = 16 << 20
	// DefaultDataTimeout bounds one SFT data download.
	DefaultDataTimeout = 10 * time.Minute
	// DefaultDataHosts is the default of Config.DataHosts, comma-separated as
	// the command line takes it: none. SFT data then comes only from weft's
	// own stored files (trace:/// and wandb-artifact:/// references, as ART
	// publishes it), and an http(s) training_data_url is refused.
	DefaultDataHosts = ""
	// DefaultMaxAttempts is how often a job is tried before it fails.
	DefaultMaxAttempts = 3
	// DefaultRetryDelay is the wait before retry n (times n).
	DefaultRetryDelay = 2 * time.Second
	// DefaultJobTimeout bounds one attempt of a job.
	DefaultJobTimeout = 24 * time.Hour
	// DefaultRescueMargin is how much longer than JobTimeout a job may look
	// running before it is taken to have lost its worker.
	DefaultRescueMargin = 10 * time.Minute
	// DefaultLease is how long a running attempt holds its job without
	// renewing its lease; it renews it every PollInterval.
	DefaultLease = 30 * time.Second
	// DefaultPollInterval is how often idle workers look for jobs.
	DefaultPollInterval = time.Second
	// DefaultWatchdogInterval is how often the watchdog looks for jobs the
	// queue gave up on.
	DefaultWatchdogInterval = 10 * time.Second
)

// Config configures [New].
type Config struct {
	// DB holds the training tables and River's queue (migrate it with
	// weft.Migrate(ctx, db, MigrateQueue(db))). Required.
	DB *weft.DB
	// Jobs is the process's job queue, shared with the other domains that
	// queue work on the database (every process on a database must know every
	// job kind: see package jobs). New registers the training worker on it;
	// its owner starts and stops it once every domain has registered. nil
	// gives the Store a queue of its own, built with PollInterval,
	// RescueAfter and Logger, which Start and Stop run. On a shared queue a
	// job whose worker died is retried after the longer of the queue's
	// RescueAfter and JobTimeout.
	Jobs *jobs.Queue
	// Blobs stores checkpoint files. Defaults to the directory
	// [DefaultCheckpointDir] under the working directory.
	Blobs blob.Store
	// Trainer runs jobs in this process. Required when Workers > 0. A
	// [*TrainerSet] chooses the trainer by the model's base model and also
	// decides which jobs this process accepts: a job whose base model it runs
	// none for fails at once with training_failed (unless OtherWorkers). Any
	// other Trainer runs every base model. nil (a process that only accepts
	// jobs) leaves every job to workers in other processes.
	Trainer Trainer
	// OtherWorkers says that processes other than this one run jobs too (weft
	// worker), possibly with trainers this one lacks: a job this process's
	// TrainerSet does not run is then left queued for them, not failed.
	// Default false.
	OtherWorkers bool
	// Workers is how many jobs this process runs at once. 0 (the default) makes
	// a process that only accepts jobs; workers elsewhere run them.
	Workers int
	// Objects reads SFT data given as object references. Defaults to none: such
	// jobs fail with a message saying so.
	Objects ObjectReader
	// DataHosts lists where SFT data may be downloaded from: an http(s)
	// training_data_url is accepted only when its host matches an entry —
	// a host name (example.com, any port), a host and port
	// (example.com:8443), subdomains (*.example.com), an address (10.0.0.5,
	// [fd00::1]:9000) or a network (10.0.0.0/8). Every connection, to the URL
	// and to each redirect (whose URL must match too), is checked once the
	// name is resolved: it may reach a public address, or a loopback,
	// private, link-local or other non-public one only when an address or
	// network entry covers it (a name entry never opens one). Defaults to
	// none ([DefaultDataHosts]): no URL is fetched.
	DataHosts []string
	// DataTimeout bounds one SFT data download. Defaults to [DefaultDataTimeout].
	DataTimeout time.Duration
	// MaxDataBytes bounds an SFT job's data (downloaded or read from an
	// object): it is checked line by line while it streams to a scratch file
	// (lines of at most [MaxDataLineBytes]), and data over it fails the job
	// once that many bytes have arrived. Defaults to [DefaultMaxDataBytes].
	MaxDataBytes int64
	// MaxAttempts is how often a job is tried before it fails. Defaults to [DefaultMaxAttempts].
	MaxAttempts int
	// RetryDelay is the wait before retry n (times n). Defaults to [DefaultRetryDelay].
	RetryDelay time.Duration
	// JobTimeout bounds one attempt. Defaults to [DefaultJobTimeout].
	JobTimeout time.Duration
	// RescueAfter is how long a job may look running before it is taken to have
	// lost its worker and is retried (River's rescuer). Defaults to
	// JobTimeout + [DefaultRescueMargin]; must exceed JobTimeout.
	RescueAfter time.Duration
	// Lease is how long a running attempt holds its job without renewing it.
	// The attempt renews it every PollInterval; the watchdog (of any process)
	// queues a job whose lease has expired again at once, counting the lost
	// attempt, so a job whose worker was killed is retried within about Lease
	// plus WatchdogInterval, not after RescueAfter. An attempt that finds its
	// lease taken stops. The clocks of the processes sharing a database must
	// agree to well within it. Defaults to [DefaultLease].
	Lease time.Duration
	// PollInterval is how often idle workers look for jobs (PostgreSQL also
	// wakes them on insert) and running attempts renew their lease and look
	// whether their job was cancelled. Defaults to [DefaultPollInterval].
	PollInterval time.Duration
	// WatchdogInterval is how often the watchdog looks for jobs the queue gave
	// up on. Defaults to [DefaultWatchdogInterval].
	WatchdogInterval time.Duration
	// Logger receives job failures and watchdog actions. Defaults to slog.Default().
	Logger *slog.Logger
	// Now is the clock that stamps rows. Defaults to time.Now; times are
	// stored in UTC.
	Now func() time.Time
}

func (cfg *Config) setDefaults() error {
	if cfg.DB == nil {
		return errors.New("training: Config.DB is required")
	}
	if cfg.Workers < 0 {
		return errors.New("training: Config.Workers must not be negative")
	}
	if cfg.Workers > 0 && cfg.Trainer == nil {
		return errors.New("training: Config.Trainer is required when Workers > 0")
	}
	if cfg.Blobs == nil {
		dir, err := blob.NewDir(DefaultCheckpointDir)
		if err != nil {
			return err
		}
		cfg.Blobs = dir
	}
	if cfg.DataTimeout == 0 {
		cfg.DataTimeout = DefaultDataTimeout
	}
	if cfg.MaxDataBytes == 0 {
		cfg.MaxDataBytes = DefaultMaxDataBytes
	}
	if cfg.MaxAttempts == 0 {
		cfg.MaxAttempts = DefaultMaxAttempts
	}
	if cfg.RetryDelay == 0 {
		cfg.RetryDelay = DefaultRetryDelay
	}
	if cfg.JobTimeout == 0 {
		cfg.JobTimeout = DefaultJobTimeout
	}
	if cfg.RescueAfter == 0 {
		cfg.RescueAfter = cfg.JobTimeout + DefaultRescueMargin
	}
	if cfg.RescueAfter <= cfg.JobTimeout {
		return errors.New("training: Config.RescueAfter must exceed JobTimeout")
	}
	if cfg.PollInterval == 0 {
		cfg.PollInterval = DefaultPollInterval
	}
	if cfg.Lease == 0 {
		cfg.Lease = DefaultLease
	}
	if cfg.Lease < 2*cfg.PollInterval {
		return errors.New("training: Config.Lease must be at least twice PollInterval")
	}
	if cfg.WatchdogInterval == 0 {
		cfg.WatchdogInterval = DefaultWatchdogInterval
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return nil
}
