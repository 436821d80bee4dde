package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

type chatStreamsResult struct {
	completed, failed          int
	elapsed                    time.Duration
	firstByteP50, firstByteP99 time.Duration
}

// runChatStreams opens n streamed chat completions at once and reads each to
// its [DONE].
func runChatStreams(ctx context.Context, cfg config, n int) chatStreamsResult {
	client := &http.Client{Timeout: 5 * time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: n, MaxConnsPerHost: 0}}
	body, _ := json.Marshal(map[string]any{"model": cfg.chatModel, "stream": true,
		"stream_options": map[string]any{"include_usage": true},
		"messages":       []map[string]any{{"role": "user", "content": "Stream to me."}}})
	var completed, failed atomic.Int64
	firstBytes := make([]time.Duration, n)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range n {
		wg.Go(func() {
			req, _ := http.NewRequestWithContext(ctx, "POST", cfg.url+"/v1/chat/completions", bytes.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+cfg.key)
			req.Header.Set("Content-Type", "application/json")
			sent := time.Now()
			res, err := client.Do(req)
			if err != nil {
				failed.Add(1)
				return
			}
			defer res.Body.Close()
			if res.StatusCode != http.StatusOK {
				failed.Add(1)
				return
			}
			scanner := bufio.NewScanner(res.Body)
			first, done := true, false
			for scanner.Scan() {
				line := scanner.Text()
				if first && strings.HasPrefix(line, "data: ") {
					firstBytes[i], first = time.Since(sent), false
				}
				if strings.Contains(line, `"error"`) {
					break
				}
				if line == "data: [DONE]" {
					done = true
				}
			}
			if done {
				completed.Add(1)
			} else {
				failed.Add(1)
			}
		})
	}
	wg.Wait()
	sort.Slice(firstBytes, func(i, j int) bool { return firstBytes[i] < firstBytes[j] })
	return chatStreamsResult{completed: int(completed.Load()), failed: int(failed.Load()), elapsed: time.Since(start),
		firstByteP50: round(percentile(firstBytes, .5)), firstByteP99: round(percentile(firstBytes, .99))}
}

type streamQueryResult struct {
	seedTime, firstLine, total time.Duration
	lines                      int
}

// runStreamQuery seeds calls through /call/upsert_batch (1,000 calls a request,
// 4 at a time), then streams the whole project back in one query.
func runStreamQuery(ctx context.Context, cfg config, calls int) (streamQueryResult, error) {
	cfg.batchSize = 1000
	s := &state{cfg: cfg}
	client := &http.Client{Timeout: 10 * time.Minute}
	auth := "Basic " + base64.StdEncoding.EncodeToString([]byte("api:"+cfg.key))
	var res streamQueryResult
	start := time.Now()
	batches := make(chan int)
	errs := make(chan error, 4)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for size := range batches {
				s.cfg.batchSize = size
				status, _, _, err := send(ctx, client, cfg.url, auth, ingestBatchOf(s, size))
				if err == nil && status != http.StatusOK {
					err = fmt.Errorf("seeding: status %d", status)
				}
				if err != nil {
					select {
					case errs <- err:
					default:
					}
					return
				}
			}
		})
	}
	for left := calls; left > 0; left -= 1000 {
		select {
		case batches <- min(left, 1000):
		case err := <-errs:
			close(batches)
			wg.Wait()
			return res, err
		}
	}
	close(batches)
	wg.Wait()
	select {
	case err := <-errs:
		return res, err
	default:
	}
	res.seedTime = time.Since(start)

	body, _ := json.Marshal(map[string]any{"project_id": cfg.project})
	req, _ := http.NewRequestWithContext(ctx, "POST", cfg.url+"/calls/stream_query", bytes.NewReader(body))
	req.Header.Set("Authorization", auth)
	req.Header.Set("Content-Type", "application/json")
	queryStart := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return res, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return res, fmt.Errorf("stream_query: status %d", resp.StatusCode)
	}
	reader := bufio.NewReaderSize(resp.Body, 1<<20)
	for {
		line, err := reader.ReadSlice('\n')
		if len(line) > 1 {
			if res.lines == 0 {
				res.firstLine = round(time.Since(queryStart))
			}
			res.lines++
		}
		if err == bufio.ErrBufferFull {
			for err == bufio.ErrBufferFull { // a line longer than the buffer: skip the rest of it
				_, err = reader.ReadSlice('\n')
			}
		}
		if err != nil {
			break
		}
	}
	res.total = time.Since(queryStart)
	return res, nil
}
