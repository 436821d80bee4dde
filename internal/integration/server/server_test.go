package server_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/weftlabs/weft/internal/integration/e2e"
	"github.com/weftlabs/weft/internal/integration/serverproc"
	"github.com/weftlabs/weft/internal/testdb"
)

func TestMain(m *testing.M) { e2e.Main(m) }

// The standalone server starts on an empty database, prints a working admin key
// once, and answers its public routes; on PostgreSQL and SQLite.
func TestServerBootstrap(t *testing.T) {
	t.Parallel()
	for _, tc := range testdb.Backends {
		t.Run(tc.Name, func(t *testing.T) {
			t.Parallel()
			url := tc.URL(t)
			srv := serverproc.Start(t, serverproc.Options{DatabaseURL: url})
			if srv.Key == "" {
				t.Fatalf("no key printed on first start:\n%s", srv.Output())
			}
			for path, want := range map[string]string{
				"/health":       `"ok"`,
				"/openapi.json": `"openapi"`,
				"/server_info":  `trace_server_version`,
			} {
				res, err := http.Get(srv.URL + path)
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(res.Body)
				res.Body.Close()
				if res.StatusCode != 200 || !strings.Contains(string(body), want) {
					t.Fatalf("GET %s = %d %s", path, res.StatusCode, body)
				}
			}
			srv.Stop()

			// A second start on the same database prints no new key.
			again := serverproc.Start(t, serverproc.Options{DatabaseURL: url})
			if again.Key != "" {
				t.Fatalf("second start printed a key again")
			}
		})
	}
}
