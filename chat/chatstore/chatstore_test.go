package chatstore_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/chat"
	"github.com/weftlabs/weft/chat/chatstore"
	"github.com/weftlabs/weft/internal/testdb"
	"github.com/weftlabs/weft/objects"
	"github.com/weftlabs/weft/trace"
)

// A traced completion's usage is counted by the trace service's usage query,
// and generated images land in the objects service as files.
func TestCompletionUsageAndImageFiles(t *testing.T) {
	t.Parallel()
	png := []byte("\x89PNG fake image bytes")
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/v1/chat/completions":
			_, _ = io.WriteString(w, `{"id":"c1","object":"chat.completion","created":1,"model":"up","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":3,"total_tokens":8}}`)
		case "/v1/images/generations":
			fmt.Fprintf(w, `{"created":1,"data":[{"b64_json":%q}],"usage":{"input_tokens":4,"output_tokens":6}}`, base64.StdEncoding.EncodeToString(png))
		}
	}))
	t.Cleanup(upstream.Close)
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		traces, err := trace.New(trace.Config{DB: db})
		if err != nil {
			t.Fatal(err)
		}
		files, err := objects.New(objects.Config{DB: db})
		if err != nil {
			t.Fatal(err)
		}
		routing, err := chat.ParseRouting([]byte(fmt.Sprintf("models: [{name: m, upstreams: [{url: %s/v1}]}]", upstream.URL)), func(string) (string, bool) { return "", false })
		if err != nil {
			t.Fatal(err)
		}
		service, err := chat.New(chat.Config{
			Routing: routing, Recorder: chatstore.Recorder{Trace: traces}, Files: chatstore.Files{Objects: files},
			Logger: slog.New(slog.DiscardHandler),
		})
		if err != nil {
			t.Fatal(err)
		}
		ctx := weft.WithPrincipal(context.Background(), weft.Principal{UserID: "user-1", DefaultEntity: "alice"})
		var ids []string
		for range 2 {
			c, err := service.Complete(ctx, "alice/chat", []byte(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
			if err != nil {
				t.Fatal(err)
			}
			rec := httptest.NewRecorder()
			if err := c.Relay(rec); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, rec.Header().Get(chat.CallIDHeader))
		}
		image, err := service.CreateImage(ctx, chat.ImageRequest{ProjectID: "alice/chat", Inputs: json.RawMessage(`{"model":"m","prompt":"a cat"}`)})
		if err != nil {
			t.Fatal(err)
		}
		if err := service.Close(context.Background()); err != nil {
			t.Fatal(err)
		}

		usage, err := traces.CallsUsage(ctx, &trace.CallsUsageReq{ProjectID: "alice/chat", CallIDs: ids})
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range ids {
			u := usage.CallUsage[id]["m"]
			if u == nil || u.PromptTokens != 5 || u.CompletionTokens != 3 || u.TotalTokens != 8 || u.Requests != 1 {
				t.Fatalf("usage of %s: %+v", id, u)
			}
		}
		read, err := traces.CallRead(ctx, &trace.CallReadReq{ProjectID: "alice/chat", ID: ids[0]})
		if err != nil {
			t.Fatal(err)
		}
		if read.Call.OpName != chat.OpChatCompletion || read.Call.PfUserID == nil || *read.Call.PfUserID != "user-1" {
			t.Fatalf("call %+v", read.Call)
		}

		var response struct {
			Model string
			Usage map[string]float64
			Data  []struct {
				Content struct {
					Files map[string]string
				}
			}
		}
		if err := json.Unmarshal(image.Response, &response); err != nil || image.TraceCallID == nil {
			t.Fatalf("image result %s: %v", image.Response, err)
		}
		if response.Model != "m" || response.Usage["total_tokens"] != 10 || len(response.Data) != 1 {
			t.Fatalf("image response %s", image.Response)
		}
		digest := response.Data[0].Content.Files["image-0.png"]
		stored, err := files.FileContent(ctx, &objects.FileContentReq{ProjectID: "alice/chat", Digest: digest})
		if err != nil || string(stored.Content) != string(png) {
			t.Fatalf("stored file %q: %v", digest, err)
		}
	})
}
