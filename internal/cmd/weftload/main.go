// Command weftload drives a running weft server with mixed traffic at a fixed
// rate for a bounded time and prints, per route, throughput, p50/p99 latency and
// errors.
//
//	go run ./internal/cmd/weftload -url http://localhost:8080 -key wf_… -rate 300 -duration 60s
//
// The load is open-loop: requests are sent on schedule whether or not earlier
// ones have answered (up to -max-in-flight), so a slow server shows up as
// latency and errors rather than as a politely lower rate. Traffic goes only to
// -url, which must be a server of your own (by default on loopback).
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
	flag.StringVar(&cfg.url, "url", "http://127.0.0.1:8080", "base URL of the weft server")
	flag.StringVar(&cfg.key, "key", os.Getenv("WEFT_API_KEY"), "API key (default $WEFT_API_KEY)")
	flag.StringVar(&cfg.project, "project", "admin/load", "project to write to, <entity>/<project>")
	flag.Float64Var(&cfg.rate, "rate", 200, "requests per second, all routes together")
	flag.DurationVar(&cfg.duration, "duration", 60*time.Second, "how long to send")
	flag.IntVar(&cfg.maxInFlight, "max-in-flight", 512, "requests in flight at most; beyond it a scheduled request is counted as shed")
	flag.StringVar(&cfg.mix, "mix", defaultMix, "route weights, name=weight,… (routes: "+strings.Join(routeNames(), ", ")+")")
	flag.StringVar(&cfg.chatModel, "chat-model", "", "model name for chat traffic; empty leaves chat out of the mix")
	flag.IntVar(&cfg.batchSize, "batch-size", 50, "calls (start+end pairs) per /call/upsert_batch request")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	report, err := run(ctx, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "weftload:", err)
		os.Exit(1)
	}
	report.print(os.Stdout)
	if report.totalErrors() > 0 {
		os.Exit(2)
	}
}
