package httpapi

import (
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/testdb"
)

// A server configured with no chat models still serves the chat routes: they
// authenticate like every route, list no models and answer a completion with
// vLLM's unknown-model 404 in the OpenAI envelope.
func TestChatRoutesWithoutModels(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		f := newFixture(t, db, 1<<20)
		do := func(method, path, auth, body string) (int, map[string]any) {
			t.Helper()
			req, err := http.NewRequest(method, f.server.URL+path, strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			if auth != "" {
				req.Header.Set("Authorization", auth)
			}
			if body != "" {
				req.Header.Set("Content-Type", "application/json")
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			raw, _ := io.ReadAll(res.Body)
			var out map[string]any
			if err := json.Unmarshal(raw, &out); err != nil {
				t.Fatalf("%s %s: %d %s is not a JSON object", method, path, res.StatusCode, raw)
			}
			return res.StatusCode, out
		}
		bearer := "Bearer " + f.aliceKey
		completion := `{"model":"llama-x","messages":[{"role":"user","content":"hi"}]}`
		image := `{"project_id":"alice/p","inputs":{"model":"dall-x","prompt":"a cat"}}`

		for _, r := range []struct{ method, path, body string }{
			{http.MethodPost, "/v1/chat/completions", completion},
			{http.MethodPost, "/v1/chat/completions/", completion},
			{http.MethodGet, "/v1/models", ""},
			{http.MethodPost, "/image/create", image},
		} {
			if status, out := do(r.method, r.path, "", r.body); status != http.StatusUnauthorized {
				t.Errorf("%s %s without a key: %d %v", r.method, r.path, status, out)
			}
		}

		status, out := do(http.MethodGet, "/v1/models", bearer, "")
		if want := map[string]any{"object": "list", "data": []any{}}; status != 200 || !reflect.DeepEqual(out, want) {
			t.Errorf("models: %d %v", status, out)
		}
		for _, path := range []string{"/v1/chat/completions", "/v1/chat/completions/"} {
			status, out = do(http.MethodPost, path, bearer, completion)
			want := map[string]any{"error": map[string]any{
				"message": "The model `llama-x` does not exist.", "type": "NotFoundError", "param": "model", "code": 404.0,
			}}
			if status != http.StatusNotFound || !reflect.DeepEqual(out, want) {
				t.Errorf("%s: %d %v", path, status, out)
			}
		}
		// A malformed request is still vLLM's 400, before the model is looked up.
		status, out = do(http.MethodPost, "/v1/chat/completions", bearer, `{"model":"llama-x","messages":"hi"}`)
		if errBody, _ := out["error"].(map[string]any); status != http.StatusBadRequest || errBody["code"] != 400.0 {
			t.Errorf("malformed completion: %d %v", status, out)
		}
		// /image/create answers in Weave's way: 200, the error inside the response.
		status, out = do(http.MethodPost, "/image/create", bearer, image)
		if want := map[string]any{"response": map[string]any{"error": "The model `dall-x` does not exist."}, "trace_call_id": nil}; status != 200 || !reflect.DeepEqual(out, want) {
			t.Errorf("image: %d %v", status, out)
		}
		if status, out = do(http.MethodPost, "/image/create", bearer, `{"project_id":"admin/p","inputs":{"model":"dall-x","prompt":"a cat"}}`); status != http.StatusForbidden {
			t.Errorf("image in a foreign project: %d %v", status, out)
		}
	})
}
