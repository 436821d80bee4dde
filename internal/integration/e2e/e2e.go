// Package e2e holds what every integration test package shares: its TestMain
// and a client that speaks to a running server (serverproc) the way the
// official clients do.
package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/weftlabs/weft/internal/integration/pgcontainer"
	"github.com/weftlabs/weft/internal/integration/serverproc"
)

// Main is the TestMain of the integration test packages: PostgreSQL comes
// from $TEST_DATABASE_URL, else from a container when a Docker engine
// answers, else from a throwaway local cluster (see internal/testdb).
func Main(m *testing.M) {
	pgcontainer.Register()
	os.Exit(m.Run())
}

// requestTimeout bounds one request, so that a server that hangs fails the
// test instead of stalling it.
const requestTimeout = 60 * time.Second

// Client sends requests to a running weft server. Its methods are safe for
// concurrent use.
type Client struct {
	// URL is the server's base URL.
	URL string
	// Auth is the Authorization header of every request; "" sends none.
	Auth string
	// Header holds other headers of every request (a client's User-Agent).
	Header map[string]string
}

// Admin is a client of srv with the admin key it printed, sent as the Weave
// SDKs send a key.
func Admin(srv *serverproc.Server) Client { return Client{URL: srv.URL, Auth: Basic(srv.Key)} }

// Basic is the Authorization header the Weave SDKs send: user "api", the key
// as password.
func Basic(key string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte("api:"+key))
}

// Bearer is the Authorization header the OpenAI and ART clients send.
func Bearer(key string) string { return "Bearer " + key }

// Response is a server's answer.
type Response struct {
	Status int
	Body   []byte
}

// Do sends one request with the client's headers and header, and reads the
// whole answer. An error means that no answer came. Do never fails a test
// itself, so it may be called from any goroutine.
func (c Client) Do(method, path, contentType string, body []byte, header map[string]string) (Response, error) {
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, c.URL+path, bytes.NewReader(body))
	if err != nil {
		return Response{}, err
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if c.Auth != "" {
		req.Header.Set("Authorization", c.Auth)
	}
	for _, h := range []map[string]string{c.Header, header} {
		for k, v := range h {
			req.Header.Set(k, v)
		}
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return Response{}, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return Response{}, err
	}
	return Response{Status: res.StatusCode, Body: b}, nil
}

// Send is Do in a test: a request that gets no answer fails t.
func (c Client) Send(t testing.TB, method, path, contentType string, body []byte) (status int, answer []byte) {
	t.Helper()
	res, err := c.Do(method, path, contentType, body, nil)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	return res.Status, res.Body
}

// Post sends body as JSON (a string or []byte as it is, any other value
// marshalled) and returns the answer, whatever its status.
func (c Client) Post(t testing.TB, path string, body any) (status int, answer []byte) {
	t.Helper()
	return c.Send(t, http.MethodPost, path, "application/json", jsonBody(t, body))
}

// Call sends a JSON body (nil sends none), requires a 200 and decodes the
// answer into out unless out is nil. It returns the answer.
func (c Client) Call(t testing.TB, method, path string, body, out any) []byte {
	t.Helper()
	var payload []byte
	if body != nil {
		payload = jsonBody(t, body)
	}
	status, answer := c.Send(t, method, path, "application/json", payload)
	if status != http.StatusOK {
		t.Fatalf("%s %s %s: %d %s", method, path, payload, status, answer)
	}
	if out != nil {
		if err := json.Unmarshal(answer, out); err != nil {
			t.Fatalf("%s %s: %v in %s", method, path, err, answer)
		}
	}
	return answer
}

// Upload stores content as a file of project the way the SDKs do (a
// multipart /file/create) and returns its digest.
func (c Client) Upload(t testing.TB, project, name string, content []byte) string {
	t.Helper()
	var form bytes.Buffer
	w := multipart.NewWriter(&form)
	_ = w.WriteField("project_id", project)
	part, _ := w.CreateFormFile("file", name)
	_, _ = part.Write(content)
	_ = w.Close()
	status, answer := c.Send(t, http.MethodPost, "/file/create", w.FormDataContentType(), form.Bytes())
	if status != http.StatusOK {
		t.Fatalf("file/create: %d %s", status, answer)
	}
	var res struct{ Digest string }
	if err := json.Unmarshal(answer, &res); err != nil {
		t.Fatalf("file/create: %v in %s", err, answer)
	}
	return res.Digest
}

func jsonBody(t testing.TB, body any) []byte {
	switch b := body.(type) {
	case string:
		return []byte(b)
	case []byte:
		return b
	}
	raw, err := json.Marshal(body)
	if err != nil {
		t.Fatal(fmt.Errorf("marshal request body: %w", err))
	}
	return raw
}
