package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/chat"
	"github.com/weftlabs/weft/chat/chatstore"
	"github.com/weftlabs/weft/chat/embeddings"
	"github.com/weftlabs/weft/chat/inprocess"
	"github.com/weftlabs/weft/objects"
	"github.com/weftlabs/weft/trace"
)

// newChatService builds the chat gateway from the routing file at path,
// the model directories served in-process and the embedding models (nil
// when there are none of them: the handler then serves the chat routes
// with no models), tracing completions
// into traces (the server's one trace store, so that its live views see
// them), keeping generated images in db
// there as files, bounding requests to the models served in-process by
// limits where the routing file does not, and serving trained models as LoRA adapters to the callers
// identity lets read them, and the metrics registry it shares with the HTTP
// handler.
func newChatService(path string, models []string, embedders *embeddings.Service, limits chat.LocalLimits, db *weft.DB, identity *weft.Identity, traces trace.Service, trained chatstore.CheckpointResolver, logger *slog.Logger) (chat.Service, *inprocess.Server, *prometheus.Registry, error) {
	registry := prometheus.NewRegistry()
	registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if path == "" && len(models) == 0 && len(embedders.Models()) == 0 {
		return nil, nil, registry, nil
	}
	routing := &chat.Routing{}
	if path != "" {
		var err error
		if routing, err = chat.LoadRouting(path); err != nil {
			return nil, nil, nil, err
		}
	}
	if err := routing.AddLocalModels(models...); err != nil {
		return nil, nil, nil, err
	}
	routing.ApplyLocalLimits(limits)
	files, err := objects.New(objects.Config{DB: db})
	if err != nil {
		return nil, nil, nil, err
	}
	served, err := inprocess.Open(routing, inprocess.Config{Logger: logger})
	if err != nil {
		return nil, nil, nil, err
	}
	service, err := chat.New(chat.Config{
		Routing: routing, Embeddings: embedders, Registerer: registry, Logger: logger,
		Recorder: chatstore.Recorder{Trace: traces}, Files: chatstore.Files{Objects: files},
		Adapters: chatstore.Adapters{Training: trained, Authorizer: identity},
		Backends: map[string]chat.Backend{chat.KindLocal: served},
	})
	if err != nil {
		_ = served.Close()
		return nil, nil, nil, err
	}
	return service, served, registry, nil
}

// closeChat writes the calls still queued for tracing, for at most 10 seconds.
func closeChat(service chat.Service, logger *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := service.Close(ctx); err != nil {
		logger.Warn("chat: calls left untraced at shutdown", "error", err)
	}
}
