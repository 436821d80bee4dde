package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
)

const defaultMix = "ingest=2,start=3,end=3,query=3,usage=2,feedback=3,publish=2,chat=2"

type config struct {
	url, key, project string
	rate              float64
	duration          time.Duration
	maxInFlight       int
	mix               string
	chatModel         string
	batchSize         int
}

// request is one HTTP request a route generator produced.
type request struct {
	method, path string
	body         any
	// after runs on a 2xx answer (to remember ids for later requests).
	after func(body []byte)
}

// generator makes the next request of one route, or nil when it has nothing to
// send yet (an end before any start).
type generator func(s *state) *request

// routes are the traffic kinds, with the request each sends.
var routes = map[string]generator{
	"ingest":   ingestBatch,
	"start":    callStart,
	"end":      callEnd,
	"query":    streamQuery,
	"usage":    usage,
	"feedback": feedbackCreate,
	"publish":  objCreate,
	"chat":     chatCompletion,
}

func routeNames() []string {
	names := make([]string, 0, len(routes))
	for n := range routes {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// state is what the generators share: calls started and not yet ended, and
// traces that exist, to query and end real things.
type state struct {
	cfg  config
	mu   sync.Mutex
	open []string // started call ids awaiting an end
	// traces holds recent trace ids with their root call id.
	traces [][2]string
}

func (s *state) addOpen(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.open) < 100_000 {
		s.open = append(s.open, id)
	}
}

func (s *state) takeOpen() (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.open) == 0 {
		return "", false
	}
	id := s.open[0]
	s.open = s.open[1:]
	return id, true
}

func (s *state) addTrace(traceID, rootID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.traces = append(s.traces, [2]string{traceID, rootID})
	if len(s.traces) > 1000 {
		s.traces = s.traces[len(s.traces)-1000:]
	}
}

func (s *state) someTrace() ([2]string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.traces) == 0 {
		return [2]string{}, false
	}
	return s.traces[rand.IntN(len(s.traces))], true
}

func newID() string { return uuid.Must(uuid.NewV7()).String() }

// timestamp is the current time as the Weave clients write started_at and ended_at.
func timestamp() string { return time.Now().UTC().Format("2006-01-02T15:04:05.000Z") }

func startRecord(s *state, id, traceID, parentID string) map[string]any {
	start := map[string]any{
		"project_id": s.cfg.project, "id": id, "trace_id": traceID, "op_name": "load.step",
		"started_at": timestamp(), "attributes": map[string]any{"load": true},
		"inputs": map[string]any{"prompt": strings.Repeat("lorem ipsum ", 80), "n": rand.IntN(1000)},
	}
	if parentID != "" {
		start["parent_id"] = parentID
	}
	return start
}

func endRecord(s *state, id string) map[string]any {
	return map[string]any{
		"project_id": s.cfg.project, "id": id, "ended_at": timestamp(), "output": map[string]any{"ok": true},
		"summary": map[string]any{"usage": map[string]any{"load-model": map[string]any{
			"requests": 1, "prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}},
	}
}

// ingestBatch sends one trace of cfg.batchSize calls (a root and its children),
// starts and ends in one /call/upsert_batch, as the SDKs do.
func ingestBatch(s *state) *request { return ingestBatchOf(s, s.cfg.batchSize) }

// ingestBatchOf is ingestBatch with n calls.
func ingestBatchOf(s *state, n int) *request {
	traceID, rootID := newID(), newID()
	batch := make([]map[string]any, 0, 2*n)
	batch = append(batch, map[string]any{"mode": "start", "req": map[string]any{"start": startRecord(s, rootID, traceID, "")}})
	ids := []string{rootID}
	for range n - 1 {
		id := newID()
		ids = append(ids, id)
		batch = append(batch, map[string]any{"mode": "start", "req": map[string]any{"start": startRecord(s, id, traceID, rootID)}})
	}
	for i := len(ids) - 1; i >= 0; i-- { // children end before their parent
		batch = append(batch, map[string]any{"mode": "end", "req": map[string]any{"end": endRecord(s, ids[i])}})
	}
	return &request{method: "POST", path: "/call/upsert_batch", body: map[string]any{"batch": batch},
		after: func([]byte) { s.addTrace(traceID, rootID) }}
}

func callStart(s *state) *request {
	id, traceID := newID(), newID()
	return &request{method: "POST", path: "/call/start", body: map[string]any{"start": startRecord(s, id, traceID, "")},
		after: func([]byte) { s.addOpen(id); s.addTrace(traceID, id) }}
}

func callEnd(s *state) *request {
	id, ok := s.takeOpen()
	if !ok {
		return nil
	}
	return &request{method: "POST", path: "/call/end", body: map[string]any{"end": endRecord(s, id)}}
}

func streamQuery(s *state) *request {
	trace, ok := s.someTrace()
	if !ok {
		return nil
	}
	return &request{method: "POST", path: "/calls/stream_query", body: map[string]any{
		"project_id": s.cfg.project, "filter": map[string]any{"trace_ids": []string{trace[0]}}, "limit": 100}}
}

func usage(s *state) *request {
	trace, ok := s.someTrace()
	if !ok {
		return nil
	}
	return &request{method: "POST", path: "/calls/usage", body: map[string]any{
		"project_id": s.cfg.project, "call_ids": []string{trace[1]}}}
}

func feedbackCreate(s *state) *request {
	trace, ok := s.someTrace()
	if !ok {
		return nil
	}
	entity, project, _ := strings.Cut(s.cfg.project, "/")
	return &request{method: "POST", path: "/feedback/create", body: map[string]any{
		"project_id": s.cfg.project, "weave_ref": "weave:///" + entity + "/" + project + "/call/" + trace[1],
		"feedback_type": "custom", "payload": map[string]any{"score": rand.Float64()}}}
}

func objCreate(s *state) *request {
	return &request{method: "POST", path: "/obj/create", body: map[string]any{"obj": map[string]any{
		"project_id": s.cfg.project, "object_id": fmt.Sprintf("load-object-%d", rand.IntN(50)),
		"val": map[string]any{"temperature": rand.Float64(), "prompt": "You are a load test."}}}}
}

func chatCompletion(s *state) *request {
	if s.cfg.chatModel == "" {
		return nil
	}
	return &request{method: "POST", path: "/v1/chat/completions", body: map[string]any{
		"model": s.cfg.chatModel, "max_tokens": 16,
		"messages": []map[string]any{{"role": "user", "content": "Say hello."}}}}
}

// parseMix reads "name=weight,…" into a cumulative weight table.
func parseMix(mix string, chatModel string) (names []string, cumulative []float64, err error) {
	total := 0.0
	for _, part := range strings.Split(mix, ",") {
		name, w, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return nil, nil, fmt.Errorf("mix entry %q is not name=weight", part)
		}
		if _, known := routes[name]; !known {
			return nil, nil, fmt.Errorf("mix names unknown route %q", name)
		}
		weight, err := strconv.ParseFloat(w, 64)
		if err != nil || weight < 0 {
			return nil, nil, fmt.Errorf("mix weight %q of %s is not a non-negative number", w, name)
		}
		if name == "chat" && chatModel == "" {
			continue
		}
		total += weight
		names = append(names, name)
		cumulative = append(cumulative, total)
	}
	if total == 0 {
		return nil, nil, fmt.Errorf("mix has no positive weight")
	}
	for i := range cumulative {
		cumulative[i] /= total
	}
	return names, cumulative, nil
}

// run sends the load and returns what was measured.
func run(ctx context.Context, cfg config) (*report, error) {
	if cfg.rate <= 0 || cfg.duration <= 0 || cfg.maxInFlight <= 0 || cfg.batchSize <= 0 {
		return nil, fmt.Errorf("rate, duration, max-in-flight and batch-size must be positive")
	}
	names, cumulative, err := parseMix(cfg.mix, cfg.chatModel)
	if err != nil {
		return nil, err
	}
	httpClient := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		MaxIdleConns: cfg.maxInFlight, MaxIdleConnsPerHost: cfg.maxInFlight, IdleConnTimeout: 90 * time.Second}}
	auth := "Basic " + base64.StdEncoding.EncodeToString([]byte("api:"+cfg.key))
	s := &state{cfg: cfg}
	rep := newReport()
	inFlight := make(chan struct{}, cfg.maxInFlight)
	var wg sync.WaitGroup

	interval := time.Duration(float64(time.Second) / cfg.rate)
	begin := time.Now()
	deadline := begin.Add(cfg.duration)
	for i := 0; ; i++ {
		next := begin.Add(time.Duration(i) * interval)
		if next.After(deadline) || ctx.Err() != nil {
			break
		}
		if d := time.Until(next); d > 0 {
			time.Sleep(d)
		}
		pick := rand.Float64()
		name := names[sort.SearchFloat64s(cumulative, pick)]
		req := routes[name](s)
		if req == nil {
			req, name = ingestBatch(s), "ingest" // nothing to end or query yet: create something
		}
		select {
		case inFlight <- struct{}{}:
		default:
			rep.shed(name)
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-inFlight }()
			status, latency, body, err := send(ctx, httpClient, cfg.url, auth, req)
			rep.record(name+" "+req.path, status, latency, err)
			if err == nil && status < 300 && req.after != nil {
				req.after(body)
			}
		}()
	}
	wg.Wait()
	rep.elapsed = time.Since(begin)
	return rep, nil
}

func send(ctx context.Context, c *http.Client, base, auth string, r *request) (int, time.Duration, []byte, error) {
	payload, err := json.Marshal(r.body)
	if err != nil {
		return 0, 0, nil, err
	}
	req, err := http.NewRequestWithContext(ctx, r.method, base+r.path, bytes.NewReader(payload))
	if err != nil {
		return 0, 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", auth)
	start := time.Now()
	res, err := c.Do(req)
	if err != nil {
		return 0, time.Since(start), nil, err
	}
	body, err := io.ReadAll(res.Body) // a stream counts until its last line
	res.Body.Close()
	return res.StatusCode, time.Since(start), body, err
}
