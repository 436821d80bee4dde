// Command weftload drives a weft server with traffic and prints what it
// measured.
//
// Scenarios (-scenario):
//
//	mixed         mixed traffic at a fixed rate for a bounded time — batch ingest,
//	              single start/end, stream queries, usage, feedback, object
//	              publish, chat — with throughput, p50/p99 latency and errors per route
//	chat-streams  -streams concurrent streamed chat completions, each held open
//	              for the upstream's whole stream; errors and the server's peak memory
//	stream-query  seeds -calls calls, then streams them all back in one
//	              /calls/stream_query; time to first line, total time, peak memory
//
// With -spawn it builds ./examples/server (run it from the repository root),
// starts it on a fresh database (-database sqlite, postgres — a durable
// throwaway cluster made with the local initdb/pg_ctl — or a URL) with chat
// routed to an in-process mock upstream, and reports the server's peak resident
// memory. Without -spawn it loads -url with -key; chat then needs -chat-model.
//
//	go run ./internal/cmd/weftload -spawn -database postgres -rate 300 -duration 60s
//	go run ./internal/cmd/weftload -spawn -database postgres -scenario chat-streams -streams 1000
//	go run ./internal/cmd/weftload -spawn -database postgres -scenario stream-query -calls 1000000
//
// The mixed load is open-loop: requests are sent on schedule whether or not
// earlier ones have answered (up to -max-in-flight), so a slow server shows up
// as latency and errors rather than as a politely lower rate. Traffic goes only
// to the server under test (loopback when spawned).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"time"
)

func main() {
	var cfg config
	var scenario, database string
	var spawnServer bool
	var streams, calls, chunks int
	var chunkDelay time.Duration
	flag.StringVar(&scenario, "scenario", "mixed", "mixed, chat-streams or stream-query")
	flag.BoolVar(&spawnServer, "spawn", false, "build and start a server of its own (from the repository root)")
	flag.StringVar(&database, "database", "sqlite", "with -spawn: sqlite, postgres, or a database URL")
	flag.StringVar(&cfg.url, "url", "http://127.0.0.1:8080", "base URL of the weft server (without -spawn)")
	flag.StringVar(&cfg.key, "key", os.Getenv("WEFT_API_KEY"), "API key (default $WEFT_API_KEY; without -spawn)")
	flag.StringVar(&cfg.project, "project", "admin/load", "project to write to, <entity>/<project>")
	flag.Float64Var(&cfg.rate, "rate", 200, "mixed: requests per second, all routes together")
	flag.DurationVar(&cfg.duration, "duration", 60*time.Second, "mixed: how long to send")
	flag.IntVar(&cfg.maxInFlight, "max-in-flight", 512, "mixed: requests in flight at most; beyond it a scheduled request is counted as shed")
	flag.StringVar(&cfg.mix, "mix", defaultMix, "mixed: route weights, name=weight,… (routes: "+strings.Join(routeNames(), ", ")+")")
	flag.StringVar(&cfg.chatModel, "chat-model", "", "model name for chat traffic (set by -spawn); empty leaves chat out")
	flag.IntVar(&cfg.batchSize, "batch-size", 50, "calls (start+end pairs) per /call/upsert_batch request")
	flag.IntVar(&streams, "streams", 1000, "chat-streams: concurrent streams")
	flag.IntVar(&chunks, "chunks", 50, "chat-streams: chunks per streamed completion (mock upstream)")
	flag.DurationVar(&chunkDelay, "chunk-delay", 20*time.Millisecond, "chat-streams: delay between chunks (mock upstream)")
	flag.IntVar(&calls, "calls", 1_000_000, "stream-query: calls to seed and stream back")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := runScenario(ctx, scenario, spawnServer, database, cfg, streams, chunks, chunkDelay, calls); err != nil {
		fmt.Fprintln(os.Stderr, "weftload:", err)
		os.Exit(1)
	}
}

func runScenario(ctx context.Context, scenario string, spawnServer bool, database string, cfg config, streams, chunks int, chunkDelay time.Duration, calls int) error {
	var server *spawned
	if spawnServer {
		upstream, err := startMockUpstream(chunks, chunkDelay)
		if err != nil {
			return err
		}
		defer upstream.Close()
		if server, err = spawn(ctx, database, upstream); err != nil {
			return err
		}
		defer server.stop()
		cfg.url, cfg.key, cfg.chatModel = server.URL, server.Key, "load-model"
		fmt.Printf("spawned weft at %s on %s\n", server.URL, database)
	}
	var failed bool
	switch scenario {
	case "mixed":
		rep, err := run(ctx, cfg)
		if err != nil {
			return err
		}
		rep.print(os.Stdout)
		failed = rep.totalErrors() > 0
	case "chat-streams":
		if cfg.chatModel == "" {
			return fmt.Errorf("chat-streams needs -spawn or -chat-model")
		}
		res := runChatStreams(ctx, cfg, streams)
		fmt.Printf("chat-streams: %d streams, %d completed whole, %d failed, %.1f s, p50 first byte %s, p99 first byte %s\n",
			streams, res.completed, res.failed, res.elapsed.Seconds(), res.firstByteP50, res.firstByteP99)
		failed = res.failed > 0
	case "stream-query":
		res, err := runStreamQuery(ctx, cfg, calls)
		if err != nil {
			return err
		}
		fmt.Printf("stream-query: seeded %d calls in %.1f s (%.0f calls/s); streamed %d lines, first line after %s, all after %.1f s\n",
			calls, res.seedTime.Seconds(), float64(calls)/res.seedTime.Seconds(), res.lines, res.firstLine, res.total.Seconds())
		failed = res.lines != calls
	default:
		return fmt.Errorf("unknown scenario %q", scenario)
	}
	if server != nil {
		if rss, err := server.peakRSS(); err == nil {
			fmt.Printf("server peak resident memory: %.1f MiB\n", float64(rss)/(1<<20))
		}
	}
	if failed {
		return fmt.Errorf("%s: errors, see above", scenario)
	}
	return nil
}
