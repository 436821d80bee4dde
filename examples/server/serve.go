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
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/chat/chatstore"
	"github.com/weftlabs/weft/chat/embeddings"
	"github.com/weftlabs/weft/chat/inprocess"
	"github.com/weftlabs/weft/chat/responses"
	"github.com/weftlabs/weft/datasets"
	"github.com/weftlabs/weft/feedback"
	"github.com/weftlabs/weft/internal/llm/model"
	"github.com/weftlabs/weft/jobs"
	"github.com/weftlabs/weft/monitor"
	"github.com/weftlabs/weft/trace"
	"github.com/weftlabs/weft/training"
	"github.com/weftlabs/weft/transport/httpapi"
	"github.com/weftlabs/weft/transport/webui"
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
	objectsFlag(fs, &opts.maxFileBytes)
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

	cfg := httpapi.Config{
		Identity:        identity,
		MaxBodyBytes:    opts.maxBodyBytes,
		Logger:          logger,
		Health:          db.PingContext,
		RateLimit:       httpapi.RateLimit{PerSecond: opts.rateLimit, Burst: opts.rateBurst},
		BodyReadTimeout: opts.limits.body,
		OTLP:            opts.limits.otlp,
		DatasetLimits:   *opts.datasets,
	}
	// One job queue for the process, shared by every domain that queues
	// work: it starts once they have all registered their workers.
	queue, err := jobs.New(db, jobs.Config{Logger: logger, RescueAfter: opts.training.rescueAfter})
	if err != nil {
		return err
	}
	monitors, err := newMonitors(db, queue, identity, opts.monitors, logger)
	if err != nil {
		return err
	}
	feed := trace.NewFeed()
	// Live views see the calls other servers on the same PostgreSQL
	// database write, too.
	if err := feed.ListenPostgres(ctx, db, logger); err != nil {
		return fmt.Errorf("live updates: %w", err)
	}
	if cfg.Trace, err = newTraceService(db, feed, monitors); err != nil {
		return err
	}
	if cfg.Objects, err = newObjectsService(db, opts.maxFileBytes, monitors); err != nil {
		return err
	}
	// Chat serves trained checkpoints from the training service, which
	// trains the models chat serves in-process: chat is opened first and
	// reads checkpoints through checkpoints once the service exists.
	checkpoints := &lateCheckpoints{}
	embedders, err := newEmbeddings(opts.embedModels, opts.limits.embeddings)
	if err != nil {
		return err
	}
	defer embedders.Close() //nolint:errcheck // shutting down
	var models *inprocess.Server
	if cfg.Chat, models, cfg.Registry, err = newChatService(opts.chatConfig, opts.models, embedders, opts.limits.localLimits(), db, identity, cfg.Trace, checkpoints, logger); err != nil {
		return err
	}
	if models != nil {
		defer models.Close() //nolint:errcheck // shutting down, after chat
	}
	if cfg.Chat != nil {
		defer closeChat(cfg.Chat, logger)
	}
	trainingService, localTrainer, err := newTrainingService(db, queue, opts.training, cfg.Objects, models, logger)
	if err != nil {
		return err
	}
	if localTrainer != nil {
		defer localTrainer.Close() //nolint:errcheck // shutting down
	}
	checkpoints.store = trainingService
	cfg.Training = trainingService
	if err := trainingService.Start(ctx); err != nil {
		return err
	}
	defer func() {
		// Running jobs get the grace too, then are cancelled and retried
		// after the restart.
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), opts.shutdownGrace)
		defer cancel()
		_ = trainingService.Stop(stopCtx)
	}()
	if cfg.Feedback, err = newFeedbackService(db, cfg.Trace, cfg.Objects); err != nil {
		return err
	}
	monitors.SetServices(cfg.Trace, cfg.Objects, cfg.Feedback)
	cfg.Monitors = monitors
	if cfg.Chat != nil {
		monitors.SetChat(cfg.Chat, monitor.ChatModels{Chat: cfg.Chat, Adapters: chatstore.Adapters{Training: checkpoints, Authorizer: identity}})
	}
	if err := queue.Start(ctx); err != nil {
		return fmt.Errorf("job queue: %w", err)
	}
	defer func() {
		// Running jobs get the grace too, then are cancelled and retried
		// after the restart (or by another server).
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), opts.shutdownGrace)
		defer cancel()
		_ = queue.Stop(stopCtx)
	}()
	cfg.Responses = responses.New(responses.Config{Chat: cfg.Chat, DB: db,
		MaxInputItems: int(opts.limits.responseItems), MaxChainDepth: int(opts.limits.responseChain)})
	api, err := httpapi.New(cfg)
	if err != nil {
		return err
	}
	// The web UI answers "/" and /ui/…; every other path is the API's.
	handler, err := webui.New(webui.Config{Identity: identity, Trace: cfg.Trace, Feedback: cfg.Feedback, Objects: cfg.Objects,
		AnnotationSpecs: feedback.ObjectSpecs(cfg.Objects), Feed: feed, Fallback: api, RateLimiter: api, Logger: logger,
		Training: trainingService, Monitors: monitors, Chat: cfg.Chat, BodyReadTimeout: opts.limits.body,
		SecureCookies: opts.cookies.secure, TrustedProxies: opts.cookies.trustedProxies,
		MaxLiveStreams: int(opts.limits.liveStreams), LiveRefreshes: int(opts.limits.liveRefreshes), MaxExportRows: int(opts.limits.exportRows)})
	if err != nil {
		return err
	}

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
	logger.Info("serving", "addr", listener.Addr().String(), "database", redact(opts.databaseURL))
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

// redact hides a password in a database URL for the log.
func redact(url string) string {
	scheme, rest, ok := strings.Cut(url, "://")
	if !ok {
		return url
	}
	userinfo, host, ok := strings.Cut(rest, "@")
	if !ok {
		return url
	}
	user, _, _ := strings.Cut(userinfo, ":")
	return scheme + "://" + user + ":***@" + host
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

// newEmbeddings opens the -embedding-model directories.
func newEmbeddings(dirs modelDirs, cfg embeddings.Config) (*embeddings.Service, error) {
	var models []*embeddings.Model
	for _, dir := range dirs {
		m, err := embeddings.Open("", dir, model.Options{})
		if err != nil {
			for _, open := range models {
				_ = embeddings.New(cfg, open).Close()
			}
			return nil, fmt.Errorf("-embedding-model %s: %w", dir, err)
		}
		models = append(models, m)
	}
	return embeddings.New(cfg, models...), nil
}
