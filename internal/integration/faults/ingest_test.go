package faults

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/weftlabs/weft/internal/integration/e2e"
)

// ingester sends /call/upsert_batch requests until stopped and remembers every
// call the server acknowledged with a 2xx, with what was sent for it.
type ingester struct {
	base, auth, project string
	client              *http.Client

	mu        sync.Mutex
	acked     map[string]sentCall
	statuses  map[int]int
	failures  int // transport errors: refused, reset, timed out
	timeouts  int
	malformed int // 2xx answers that are not one result per item
}

type sentCall struct {
	inputs json.RawMessage
	output json.RawMessage
}

func newIngester(base, key, project string) *ingester {
	return &ingester{
		base: base, project: project,
		auth:     e2e.Basic(key),
		client:   &http.Client{Timeout: 20 * time.Second},
		acked:    map[string]sentCall{},
		statuses: map[int]int{},
	}
}

// run sends batches from workers goroutines until ctx ends.
func (in *ingester) run(ctx context.Context, workers, batch int) {
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := 0; ctx.Err() == nil; i++ {
				in.sendBatch(ctx, batch, fmt.Sprintf("w%d-%d", w, i))
			}
		})
	}
	wg.Wait()
}

func (in *ingester) sendBatch(ctx context.Context, n int, tag string) {
	traceID := uuid.Must(uuid.NewV7()).String()
	items := make([]any, 0, 2*n)
	ids := make([]string, 0, n) // ids[i] owns items 2i (start) and 2i+1 (end)
	calls := map[string]sentCall{}
	now := time.Now().UTC()
	for i := range n {
		id := uuid.Must(uuid.NewV7()).String()
		inputs := json.RawMessage(fmt.Sprintf(`{"tag":%q,"i":%d,"text":"héllo ✓","big":12345678901234567890,"f":1.50}`, tag, i))
		output := json.RawMessage(fmt.Sprintf(`{"answer":%d,"nested":{"list":[1,2,{"k":null}]}}`, i*i))
		ids = append(ids, id)
		calls[id] = sentCall{inputs: inputs, output: output}
		items = append(items,
			map[string]any{"mode": "start", "req": map[string]any{"start": map[string]any{
				"project_id": in.project, "id": id, "trace_id": traceID, "op_name": "fault.step",
				"started_at": now.Format(time.RFC3339Nano), "attributes": map[string]any{}, "inputs": inputs}}},
			map[string]any{"mode": "end", "req": map[string]any{"end": map[string]any{
				"project_id": in.project, "id": id, "ended_at": now.Add(time.Millisecond).Format(time.RFC3339Nano),
				"output": output, "summary": map[string]any{}}}})
	}
	body, _ := json.Marshal(map[string]any{"batch": items})
	req, _ := http.NewRequestWithContext(ctx, "POST", in.base+"/call/upsert_batch", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", in.auth)
	res, err := in.client.Do(req)
	in.mu.Lock()
	defer in.mu.Unlock()
	if err != nil {
		if ctx.Err() == nil {
			in.failures++
			if isTimeout(err) {
				in.timeouts++
			}
		}
		return
	}
	defer res.Body.Close()
	resBody, _ := io.ReadAll(res.Body)
	in.statuses[res.StatusCode]++
	if res.StatusCode/100 != 2 {
		return
	}
	// A 2xx acknowledges each call whose start and end items carry no error.
	var answer struct {
		Res []struct {
			Error json.RawMessage `json:"error"`
		} `json:"res"`
	}
	if err := json.Unmarshal(resBody, &answer); err != nil || len(answer.Res) != len(items) {
		in.malformed++
		return
	}
	for i, id := range ids {
		if answer.Res[2*i].Error == nil && answer.Res[2*i+1].Error == nil {
			in.acked[id] = calls[id]
		}
	}
}

func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}

// verify reads every acknowledged call back and checks it is present and whole.
func verify(t *testing.T, base, key, project string, acked map[string]sentCall) {
	t.Helper()
	ids := make([]string, 0, len(acked))
	for id := range acked {
		ids = append(ids, id)
	}
	c := e2e.Client{URL: base, Auth: e2e.Basic(key)}
	found := 0
	for start := 0; start < len(ids); start += 500 {
		chunk := ids[start:min(start+500, len(ids))]
		answer := c.Call(t, http.MethodPost, "/calls/stream_query", map[string]any{"project_id": project, "filter": map[string]any{"call_ids": chunk}}, nil)
		scanner := bufio.NewScanner(bytes.NewReader(answer))
		scanner.Buffer(make([]byte, 1<<20), 16<<20)
		for scanner.Scan() {
			var call struct {
				ID      string          `json:"id"`
				Inputs  json.RawMessage `json:"inputs"`
				Output  json.RawMessage `json:"output"`
				EndedAt *string         `json:"ended_at"`
			}
			if err := json.Unmarshal(scanner.Bytes(), &call); err != nil {
				t.Fatalf("bad line %q: %v", scanner.Text(), err)
			}
			sent, ok := acked[call.ID]
			if !ok {
				continue
			}
			found++
			if !sameJSON(sent.inputs, call.Inputs) || !sameJSON(sent.output, call.Output) || call.EndedAt == nil {
				t.Errorf("call %s is not whole: inputs %s output %s ended_at %v", call.ID, call.Inputs, call.Output, call.EndedAt)
			}
		}
	}
	if found != len(acked) {
		t.Fatalf("%d of %d acknowledged calls are missing after the fault", len(acked)-found, len(acked))
	}
}

func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	da, db := json.NewDecoder(bytes.NewReader(a)), json.NewDecoder(bytes.NewReader(b))
	da.UseNumber()
	db.UseNumber()
	if da.Decode(&x) != nil || db.Decode(&y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}
