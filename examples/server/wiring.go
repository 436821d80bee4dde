package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/chat"
	"github.com/weftlabs/weft/chat/chatstore"
	"github.com/weftlabs/weft/chat/embeddings"
	"github.com/weftlabs/weft/chat/inprocess"
	"github.com/weftlabs/weft/chat/responses"
	"github.com/weftlabs/weft/feedback"
	"github.com/weftlabs/weft/jobs"
	"github.com/weftlabs/weft/monitor"
	"github.com/weftlabs/weft/objects"
	"github.com/weftlabs/weft/trace"
	"github.com/weftlabs/weft/transport/httpapi"
	"github.com/weftlabs/weft/transport/webui"
)

// The wiring of one server: every service of weft over one database,
// built in the order each needs the others. It is the model of embedding
// weft in a program of one's own (the package example of
// github.com/weftlabs/weft shows the same in a few lines):
//
//	jobs queue → monitors → trace, objects → models → training →
//	embeddings, chat → feedback → responses → HTTP API → web UI
//
// Each model served in-process is opened once, by inprocess.Open, and its
// handle given to both the trainer (training) and the gateway (chat); the
// training service exists before chat, which serves its checkpoints.

// wiring is a server's services and what shutting them down takes.
type wiring struct {
	// services are the services wired, as the API serves them.
	services httpapi.Config
	// handler serves the web UI and, behind it, the API.
	handler *webui.Handler
	// stops run last first on shutdown: each service stops after those
	// that use it.
	stops []func(context.Context)
}

// stopAfter runs stop when the server shuts down, after what is wired
// later.
func (w *wiring) stopAfter(stop func(context.Context)) { w.stops = append(w.stops, stop) }

// stop stops every service wired, last first, each running job and
// in-flight call given until ctx ends.
func (w *wiring) stop(ctx context.Context) {
	for i := len(w.stops) - 1; i >= 0; i-- {
		w.stops[i](ctx)
	}
	w.stops = nil
}

// wire builds the services of opts over db. What it built is stopped by
// w.stop, also when it fails half-way.
func (w *wiring) wire(ctx context.Context, db *weft.DB, identity *weft.Identity, opts *serveOptions, logger *slog.Logger) error {
	cfg := httpapi.Config{
		Identity:        identity,
		MaxBodyBytes:    opts.maxBodyBytes,
		Logger:          logger,
		Health:          db.PingContext,
		RateLimit:       httpapi.RateLimit{PerSecond: opts.rateLimit, Burst: opts.rateBurst},
		BodyReadTimeout: opts.limits.body,
		OTLP:            opts.limits.otlp,
		DatasetLimits:   *opts.datasets,
		Registry:        prometheus.NewRegistry(),
	}
	cfg.Registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))

	// One job queue for the process, shared by every domain that queues
	// work: it starts once they have all registered their workers.
	queue, err := jobs.New(db, jobs.Config{Logger: logger, RescueAfter: opts.training.rescueAfter})
	if err != nil {
		return err
	}
	monitors, err := monitor.New(monitor.Config{DB: db, Jobs: queue, Principals: identity, Workers: opts.monitors.workers,
		JudgeWorkers: opts.monitors.judgeWorkers, JudgeConcurrency: opts.monitors.judgeConcurrency, JudgeRate: opts.monitors.judgeRate,
		MaxAttempts: opts.monitors.maxAttempts, JobTimeout: opts.monitors.jobTimeout, MaxScoreItems: opts.monitors.scoreMaxItems,
		StatsMaxRange: opts.limits.statsRange, Logger: logger})
	if err != nil {
		return err
	}
	// Live views see the calls other servers on the same PostgreSQL
	// database write, too. The monitors watch every call started or ended
	// and every object published.
	feed := trace.NewFeed()
	if err := feed.ListenPostgres(ctx, db, logger); err != nil {
		return fmt.Errorf("live updates: %w", err)
	}
	traces, err := trace.New(trace.Config{DB: db, Feed: feed, Hook: monitors, StatsMaxRange: opts.limits.statsRange})
	if err != nil {
		return err
	}
	cfg.Trace = traces
	// One objects service holds every file: uploads, datasets, checkpoints'
	// data and generated images, all bounded by -max-file-bytes.
	files, err := objects.New(objects.Config{DB: db, MaxFileBytes: opts.maxFileBytes, Hook: monitors})
	if err != nil {
		return err
	}
	cfg.Objects = files

	// The models served in-process: opened once, trained by the built-in
	// trainer and served by the gateway.
	routing, err := chatRouting(opts)
	if err != nil {
		return err
	}
	var models *inprocess.Server
	if routing != nil {
		if models, err = inprocess.Open(routing, inprocess.Config{Logger: logger}); err != nil {
			return err
		}
		w.stopAfter(func(context.Context) { _ = models.Close() })
	}
	trainingService, trainer, err := newTrainingService(db, queue, opts.training, files, models, logger)
	if err != nil {
		return err
	}
	if trainer != nil {
		w.stopAfter(func(context.Context) { _ = trainer.Close() })
	}
	cfg.Training = trainingService
	if err := trainingService.Start(ctx); err != nil {
		return err
	}
	// Running jobs get the grace too, then are cancelled and retried after
	// the restart.
	w.stopAfter(func(ctx context.Context) { _ = trainingService.Stop(ctx) })
	embedders, err := newEmbeddings(opts.embedModels, opts.limits.embeddings)
	if err != nil {
		return err
	}
	w.stopAfter(func(context.Context) { _ = embedders.Close() })
	adapters := chatstore.Adapters{Training: trainingService, Authorizer: identity}
	if routing != nil || len(embedders.Models()) > 0 {
		gateway, err := newChatService(routing, models, embedders, files, traces, adapters, &opts.limits, cfg.Registry, logger)
		if err != nil {
			return err
		}
		cfg.Chat = gateway
		w.stopAfter(func(ctx context.Context) {
			// The calls still queued for tracing are written, for at most
			// 10 seconds.
			ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			if err := gateway.Close(ctx); err != nil {
				logger.Warn("chat: calls left untraced at shutdown", "error", err)
			}
		})
	}

	// Feedback and annotation queue items read their calls from the trace
	// store, annotation values are checked against the AnnotationSpec
	// objects.
	if cfg.Feedback, err = feedback.New(feedback.Config{DB: db, Calls: feedback.TraceCalls(traces), AnnotationSpecs: feedback.ObjectSpecs(files),
		StatsMaxRange: opts.limits.statsRange}); err != nil {
		return err
	}
	monitors.SetServices(traces, files, cfg.Feedback)
	cfg.Monitors = monitors
	if cfg.Chat != nil {
		monitors.SetChat(cfg.Chat, monitor.ChatModels{Chat: cfg.Chat, Adapters: adapters})
	}
	if err := queue.Start(ctx); err != nil {
		return fmt.Errorf("job queue: %w", err)
	}
	// Running jobs get the grace too, then are cancelled and retried after
	// the restart (or by another server).
	w.stopAfter(func(ctx context.Context) { _ = queue.Stop(ctx) })
	cfg.Responses = responses.New(responses.Config{Chat: cfg.Chat, DB: db,
		MaxInputItems: int(opts.limits.responseItems), MaxChainDepth: int(opts.limits.responseChain)})

	w.services = cfg
	api, err := httpapi.New(cfg)
	if err != nil {
		return err
	}
	// The web UI answers "/" and /ui/…; every other path is the API's.
	w.handler, err = webui.New(webui.Config{Identity: identity, Trace: traces, Feedback: cfg.Feedback, Objects: files,
		AnnotationSpecs: feedback.ObjectSpecs(files), Feed: feed, Fallback: api, RateLimiter: api, Logger: logger,
		Training: trainingService, Monitors: monitors, Chat: cfg.Chat, BodyReadTimeout: opts.limits.body,
		SecureCookies: opts.cookies.secure, TrustedProxies: opts.cookies.trustedProxies,
		MaxLiveStreams: int(opts.limits.liveStreams), LiveRefreshes: int(opts.limits.liveRefreshes), MaxExportRows: int(opts.limits.exportRows),
		DatasetLimits: cfg.DatasetLimits})
	return err
}

// chatRouting is the routing of -chat-config and the -model directories,
// with the -local-… limits where the routing file sets none; nil when
// there are neither (the chat routes then serve no models).
func chatRouting(opts *serveOptions) (*chat.Routing, error) {
	if opts.chatConfig == "" && len(opts.models) == 0 {
		return nil, nil
	}
	routing := &chat.Routing{}
	if opts.chatConfig != "" {
		var err error
		if routing, err = chat.LoadRouting(opts.chatConfig, inprocess.Kind); err != nil {
			return nil, err
		}
	}
	if err := inprocess.AddModels(routing, opts.models...); err != nil {
		return nil, err
	}
	inprocess.ApplyLimits(routing, opts.limits.localLimits())
	return routing, nil
}

// newChatService is the gateway of routing (nil: embedding models only):
// its models of kind local served by models, the embedding models by
// embedders, completions traced into traces (the server's one trace store,
// so that its live views see them), generated images kept in files,
// trained models served to the callers adapters lets read them, metrics in
// registry.
func newChatService(routing *chat.Routing, models *inprocess.Server, embedders *embeddings.Service, files objects.Service, traces trace.Service,
	adapters chatstore.Adapters, limits *serverLimits, registry prometheus.Registerer, logger *slog.Logger) (*chat.Gateway, error) {
	if routing == nil {
		routing = &chat.Routing{}
	}
	cfg := chat.Config{
		Routing: routing, Embeddings: embedders, Registerer: registry, Logger: logger,
		Recorder: chatstore.Recorder{Trace: traces}, Files: chatstore.Files{Objects: files}, Adapters: adapters,
		MaxCompletionPrompts: int(limits.completionPrompts), MaxCompletionTokens: int64(limits.completionTokens),
	}
	if models != nil {
		cfg.Backends = map[string]chat.Backend{chat.KindLocal: models}
	}
	return chat.New(cfg)
}

// newEmbeddings opens the -embedding-model directories.
func newEmbeddings(dirs modelDirs, cfg embeddings.Config) (*embeddings.Service, error) {
	var models []*embeddings.Model
	for _, dir := range dirs {
		m, err := embeddings.Open("", dir, embeddings.ModelOptions{})
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
