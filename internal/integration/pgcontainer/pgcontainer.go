// Package pgcontainer lets integration tests start PostgreSQL in a container
// when a Docker engine answers (testcontainers), before falling back to the
// local binaries. It lives in the integration module so that the library's
// go.mod never carries testcontainers.
package pgcontainer

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/testcontainers/testcontainers-go"
	tcpostgres "github.com/testcontainers/testcontainers-go/modules/postgres"

	"github.com/weftlabs/weft/internal/testdb"
)

// Register makes testdb try a PostgreSQL container after $TEST_DATABASE_URL.
// Call it from TestMain before m.Run.
func Register() { testdb.SetServer(start) }

func start(ctx context.Context) (url string, err error) {
	if !dockerHealthy(ctx) {
		return "", errors.New("no Docker engine answers")
	}
	ctr, err := tcpostgres.Run(ctx, "postgres:16-alpine",
		tcpostgres.WithDatabase("weft"), tcpostgres.WithUsername("weft"), tcpostgres.WithPassword("weft"),
		tcpostgres.BasicWaitStrategies())
	if err != nil {
		return "", fmt.Errorf("postgres container: %w", err)
	}
	// The container goes when the test binary does (testcontainers' reaper).
	return ctr.ConnectionString(ctx, "sslmode=disable")
}

// dockerHealthy asks the Docker provider for a health check, briefly: most
// machines without Docker answer at once, but a hung socket must not stall tests.
func dockerHealthy(ctx context.Context) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	provider, err := testcontainers.ProviderDocker.GetProvider()
	if err != nil {
		return false
	}
	defer provider.Close()
	return provider.Health(ctx) == nil
}
