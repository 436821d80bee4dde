package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/datasets"
	"github.com/weftlabs/weft/monitor"
	"github.com/weftlabs/weft/objects"
	"github.com/weftlabs/weft/training"
	"github.com/weftlabs/weft/transport/httpapi"
)

type serveOptions struct {
	addr          string
	databaseURL   string
	maxBodyBytes  int64
	maxFileBytes  int64
	logLevel      string
	adminUser     string
	shutdownGrace time.Duration
	chatConfig    string
	models        modelDirs
	embedModels   modelDirs
	rateLimit     float64
	rateBurst     int
	limits        serverLimits
	cookies       cookieOptions
	training      *trainingOptions
	monitors      *monitorOptions
	datasets      *datasets.Limits
}

func serveCommand() *command {
	return &command{
		name:    "serve",
		summary: "run the server (the default command)",
		about: "Run the HTTP server. On first start with an empty database it creates the admin\n" +
			"user and prints its API key once. It also works training jobs: those of the\n" +
			"models it serves in-process with its built-in trainer, others with -trainer-command.",
		setup: func(fs *flag.FlagSet) action {
			opts := serveFlags(fs)
			return func(ctx context.Context, out io.Writer, _ []string) error { return serve(ctx, out, opts) }
		},
	}
}

func serveFlags(fs *flag.FlagSet) *serveOptions {
	opts := &serveOptions{}
	fs.StringVar(&opts.addr, "addr", ":8080", "address to listen on")
	databaseFlag(fs, &opts.databaseURL)
	fs.Int64Var(&opts.maxFileBytes, "max-file-bytes", objects.DefaultMaxFileBytes, "largest file /file/create accepts, and the largest generated image kept; larger ones get 413 (also bounded by -max-body-bytes)")
	fs.Int64Var(&opts.maxBodyBytes, "max-body-bytes", httpapi.DefaultMaxBodyBytes, "largest request body accepted; larger ones get 413")
	logLevelFlag(fs, &opts.logLevel)
	fs.StringVar(&opts.adminUser, "admin-user", "admin", "name of the admin user created on first start with an empty database")
	fs.StringVar(&opts.chatConfig, "chat-config", "", "routing file (YAML or JSON) mapping chat model names to upstream servers; empty serves no models (the chat routes answer that a model does not exist)")
	fs.Var(&opts.embedModels, "embedding-model", "a sentence-transformers model directory (modules.json and its Pooling module: Qwen3-Embedding's last-token pooling, mean pooling) whose vectors /v1/embeddings serves in-process under its name (repeatable; the environment variable takes a "+string(os.PathListSeparator)+"-separated list)")
	fs.Var(&opts.models, "model", "a Hugging Face model directory (or a GGUF file, a directory holding one, an Ollama model manifest) to serve in-process under its name, beside -chat-config's models (repeat the flag for several; the environment variable takes a "+string(os.PathListSeparator)+"-separated list)")
	fs.DurationVar(&opts.shutdownGrace, "shutdown-grace", 30*time.Second, "how long in-flight requests may take to finish on shutdown")
	fs.Float64Var(&opts.rateLimit, "rate-limit", 0, "requests per second allowed per API key (0: unlimited); over it, 429 with Retry-After")
	fs.IntVar(&opts.rateBurst, "rate-burst", 0, "requests one key may send at once (default: the rate, rounded up)")
	limitFlags(fs, &opts.limits)
	cookieFlags(fs, &opts.cookies)
	opts.training = trainingFlags(fs, 1)
	opts.monitors = monitorFlags(fs)
	opts.datasets = datasetFlags(fs)
	return opts
}

func serve(ctx context.Context, out io.Writer, opts *serveOptions) error {
	logger, err := newLogger(opts.logLevel)
	if err != nil {
		return err
	}
	db, err := openDatabase(ctx, opts.databaseURL)
	if err != nil {
		return err
	}
	defer db.Close()

	identity, err := weft.NewIdentity(weft.IdentityConfig{DB: db})
	if err != nil {
		return err
	}
	// The admin key is shown once, so the first start creates it only when
	// nothing else can fail: the address is bound and every model and
	// service is open first.
	listener, err := net.Listen("tcp", opts.addr)
	if err != nil {
		return err
	}
	defer listener.Close() //nolint:errcheck // closed by Serve when serving started
	var services wiring
	defer func() {
		// Running jobs and queued traces get the grace too, then jobs are
		// cancelled and retried after the restart (or by another server).
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), opts.shutdownGrace)
		defer cancel()
		services.stop(stopCtx)
	}()
	if err := services.wire(ctx, db, identity, opts, logger); err != nil {
		return err
	}
	handler := services.handler

	key, err := identity.Bootstrap(ctx, opts.adminUser)
	if err != nil {
		return fmt.Errorf("bootstrap: %w", err)
	}
	if key != "" {
		fmt.Fprintf(out, "Created admin user %q with entity %q. Its API key is shown only this once (if it is lost, `weft key create %s` prints a new one):\n", opts.adminUser, opts.adminUser, opts.adminUser)
		fmt.Fprintf(out, "WEFT_API_KEY=%s\n", key)
	}
	server := &http.Server{Handler: handler, ReadHeaderTimeout: opts.limits.header, IdleTimeout: opts.limits.idle}
	server.RegisterOnShutdown(handler.CloseStreams)
	logger.Info("serving", "addr", listener.Addr().String(), "database", redacted(opts.databaseURL))
	fmt.Fprintf(out, "weft listening on http://%s\n", listener.Addr())

	served := make(chan error, 1)
	go func() { served <- server.Serve(listener) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	// Stop accepting, let in-flight requests finish.
	logger.Info("shutting down", "grace", opts.shutdownGrace)
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), opts.shutdownGrace)
	defer cancel()
	if err := server.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// openDatabase opens and migrates the database, creating the directory of a
// relative SQLite file first.
func openDatabase(ctx context.Context, url string) (*weft.DB, error) {
	if path, ok := strings.CutPrefix(url, "sqlite:"); ok && path != ":memory:" && !strings.HasPrefix(path, "//") {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, err
		}
	}
	db, err := weft.Open(ctx, url)
	if err != nil {
		return nil, err
	}
	if err := weft.Migrate(ctx, db, training.MigrateQueue(db)); err != nil {
		_ = db.Close()
		return nil, err
	}
	return db, nil
}

// databaseFlag is the flag every command that opens the database shares.
func databaseFlag(fs *flag.FlagSet, url *string) {
	fs.StringVar(url, "database-url", "sqlite:data/weft.db",
		"database: postgres://user:pass@host/db or sqlite:path/file.db (a relative sqlite path is created under the working directory)")
}

func logLevelFlag(fs *flag.FlagSet, level *string) {
	fs.StringVar(level, "log-level", "info", "debug, info, warn or error")
}

func newLogger(level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, usagef("-log-level: %v", err)
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: l})), nil
}

// redacted is a database URL for the log, its password hidden.
func redacted(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return "(a database URL that does not parse)"
	}
	return u.Redacted()
}

// modelDirs is the repeatable -model flag.
type modelDirs []string

func (m *modelDirs) String() string { return strings.Join(*m, string(os.PathListSeparator)) }

// Set adds one directory, or several separated by the path list separator
// (as the environment variable gives them).
func (m *modelDirs) Set(v string) error {
	for _, dir := range filepath.SplitList(v) {
		if dir != "" {
			*m = append(*m, dir)
		}
	}
	return nil
}

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
